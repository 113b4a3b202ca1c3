// A raw pointer local written only where it is declared names the buffer
// it was made from: what is enqueued or freed through it is that buffer's.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}
__global__ void fill(float* p, int n) {
  p[0] = 0;
}

// A helper the analysis inlines.
void launch_consume(const float* params, int n, cudaStream_t stream) {
  consume<<<1, 32, 0, stream>>>(params, n);
}

// Allocated as void*, used and freed through a typed alias.
void typed_alias(cudaStream_t producer, cudaStream_t consumer, int n) {
  void* block = nullptr;
  cudaMallocAsync(&block, n * sizeof(float), producer);
  auto* params = static_cast<float*>(block);
  launch_consume(params, n, consumer);
  cudaFreeAsync(params, producer);
}

// Used through the alias, freed through the original name.
void freed_by_first_name(cudaStream_t producer, cudaStream_t consumer, int n) {
  float* block = nullptr;
  cudaMallocAsync(&block, n * sizeof(float), producer);
  const float* view = block;
  consume<<<1, 32, 0, consumer>>>(view, n);
  cudaFreeAsync(block, producer);
}

// The same, waited for: silent.
void freed_by_first_name_waited(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done,
                                int n) {
  float* block = nullptr;
  cudaMallocAsync(&block, n * sizeof(float), producer);
  const float* view = block;
  consume<<<1, 32, 0, consumer>>>(view, n);
  cudaEventRecord(done, consumer);
  cudaStreamWaitEvent(producer, done, 0);
  cudaFreeAsync(block, producer);
}

// Two halves, each filled on its own stream: the upper half through an
// offset alias touches a part, so the two are not judged: silent.
void halves(float* d, cudaStream_t a, cudaStream_t b, int n) {
  float* low = d;
  float* high = d + n / 2;
  fill<<<1, 32, 0, a>>>(low, n / 2);
  fill<<<1, 32, 0, b>>>(high, n / 2);
}

// A pointer assigned again is no alias: what it names at the use is not
// known here, and nothing is reported.
void reassigned(cudaStream_t producer, cudaStream_t consumer, float* other, bool swap, int n) {
  float* block = nullptr;
  cudaMallocAsync(&block, n * sizeof(float), producer);
  const float* view = block;
  if (swap) view = other;
  consume<<<1, 32, 0, consumer>>>(view, n);
  cudaFreeAsync(block, producer);
}
