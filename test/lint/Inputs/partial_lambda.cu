// A lambda that calls a function that does not compile, and the functions
// that call the lambda: the analysis inlines the lambda where it is called,
// so they would be analyzed without the wait. They are left out with it.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

template <class F>
void on_stream(cudaStream_t s, F f) {
  f(s);
}

// The wait does not compile (a misspelt flag).
void order_after(cudaStream_t waiting, cudaEvent_t done) {
  cudaStreamWaitEvent(waiting, done, cudaEventWaitDefualt);
}

void free_after_lambda(cudaStream_t producer, cudaStream_t consumer) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  auto wait = [&] { order_after(producer, done); };
  wait();
  cudaFreeAsync(p, producer);
}

void free_after_passed_lambda(cudaStream_t producer, cudaStream_t consumer) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  on_stream(producer, [&](cudaStream_t s) { order_after(s, done); });
  cudaFreeAsync(p, producer);
}

// The lambda is written here but not called: this function is analyzed, and
// its free is reported.
void lambda_not_called(cudaStream_t producer, cudaStream_t consumer) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  auto wait = [&] { order_after(producer, done); };
  cudaFreeAsync(p, producer);
}
