// Suppression comments, read the same way by the plugin, xstream-lint and
// clang-tidy. Only free_unsuppressed* keep their warning.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

void free_nolint(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaFreeAsync(p, producer);  // NOLINT(xstream-unordered-free)
}

void free_nolint_all(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaFreeAsync(p, producer);  // NOLINT
}

void free_nolint_glob(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  // NOLINTNEXTLINE(xstream-*)
  cudaFreeAsync(p, producer);
}

void free_unsuppressed_other_check(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaFreeAsync(p, producer);  // NOLINT(xstream-free-before-wait)
}

// NOLINTBEGIN(xstream-unordered-free)
void free_in_region(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaFreeAsync(p, producer);
}
// NOLINTEND(xstream-unordered-free)

void free_unsuppressed_after_region(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaFreeAsync(p, producer);
}
