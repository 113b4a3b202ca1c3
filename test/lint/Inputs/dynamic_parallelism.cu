// A kernel that launches a kernel (dynamic parallelism) compiles only with
// relocatable device code, which the nvcc command asks for (-rdc=true); the
// host function frees a buffer the child kernel may still use.
#include <cuda_runtime.h>

__global__ void child(float* p) {}

__global__ void parent(float* p) { child<<<1, 32>>>(p); }

void run_tree(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  parent<<<1, 1, 0, consumer>>>(p);
  cudaFreeAsync(p, producer);
}
