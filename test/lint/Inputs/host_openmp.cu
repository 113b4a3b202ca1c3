// Host code that includes <omp.h>: nvcc finds it in its host compiler's own
// include directory, which Clang does not search.
#include <cuda_runtime.h>
#include <omp.h>

__global__ void fill(float* p) {}

void per_thread_streams(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  fill<<<1, omp_get_max_threads(), 0, consumer>>>(p);
  cudaFreeAsync(p, producer);
}
