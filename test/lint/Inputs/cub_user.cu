// CUB from the real toolkit: a device reduction whose temporary storage is
// allocated on one stream, used by the reduction on another, and freed on the
// first without ordering.
#include <cub/cub.cuh>

#ifndef XSC_FLAG
#error "the -D flags of the compile command are kept"
#endif

void reduce_then_free(const float* in, float* out, int n, cudaStream_t producer,
                      cudaStream_t consumer) {
  void* temp = nullptr;
  size_t temp_bytes = 0;
  cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, n, consumer);
  cudaMallocAsync(&temp, temp_bytes, producer);
  cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, consumer);
  cudaFreeAsync(temp, producer);
}
