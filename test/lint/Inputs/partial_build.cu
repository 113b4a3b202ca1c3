// Compile errors in some functions of a file: the others are analyzed.
// `stage_weights` does not compile; `late_wait_after_stage` frees before it
// waits; `scaled` is a template whose body has an error of its own; the
// struct has an error outside any function; more at the end.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

struct StageConfig {
  undeclared_depth_t depth;
};

void stage_weights(cudaStream_t s) {
  float* w;
  cudaMallocAsync(&w, 1024, s);
  launch_that_is_not_declared(w, s);
  cudaFreeAsync(w, s);
}

template <typename T>
T scaled(T x) {
  return x * undeclared_scale;
}

void late_wait_after_stage(cudaStream_t producer, cudaStream_t consumer) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  auto twice = [] { return scaled(2); };
  cudaFreeAsync(p, producer);
  cudaStreamWaitEvent(producer, done);
}

// The wait does not compile (a misspelt flag): analyzing what is left would
// report a free that the wait orders. The function is left out instead.
void wait_with_typo(cudaStream_t producer, cudaStream_t consumer) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  cudaStreamWaitEvent(producer, done, cudaEventWaitDefualt);
  cudaFreeAsync(p, producer);
}

// The helper's wait does not compile; its caller would be analyzed with the
// helper inlined minus that wait. Both are left out.
void order_after(cudaStream_t waiting, cudaEvent_t done) {
  cudaStreamWaitEvent(waiting, done, cudaEventWaitDefualt);
}

void free_after_helper(cudaStream_t producer, cudaStream_t consumer) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  order_after(producer, done);
  cudaFreeAsync(p, producer);
}
