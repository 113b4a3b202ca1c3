// The wait exists, but only after the free.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

void late_wait(cudaStream_t producer, cudaStream_t consumer) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  cudaFreeAsync(p, producer);
  cudaStreamWaitEvent(producer, done);
}
