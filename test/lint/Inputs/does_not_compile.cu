// Nothing here compiles: the linter names the function and exits 2.
#include <cuda_runtime.h>

void broken(cudaStream_t s) {
  float* p;
  cudaMallocAsync(&p, 1024, s);
  undeclared_function(p);
  cudaFreeAsync(p, s);
}
