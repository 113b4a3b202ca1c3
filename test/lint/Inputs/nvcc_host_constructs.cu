// Host code nvcc compiles and Clang's CUDA headers alone reject, next to a
// buffer freed before its stream waits for the consumer.
//  - max(float, float) and min(unsigned, int) from host functions: nvcc's
//    headers declare them for host and device, Clang's for the device only
//    (the nvcc prelude gives host code nvcc's overloads);
//  - an initialized variable-length array, a GNU extension nvcc's host
//    compiler accepts and Clang does not (no prelude can help).
#include <cuda_runtime.h>

__global__ void scale(float* p, int n) {}

float speedup(float serial_ms, float overlapped_ms) {
  return serial_ms / max(overlapped_ms, 1e-3f);
}

unsigned grid_for(unsigned blocks, int sms) {
  return min(blocks, 8 * sms);
}

float first_chunk(int chunks, float value) {
  float partial[chunks] = {0};
  partial[0] = value;
  return partial[0];
}

void pipeline(cudaStream_t producer, cudaStream_t consumer, int n) {
  cudaEvent_t done;
  float* p;
  cudaMallocAsync(&p, n * sizeof(float), producer);
  scale<<<n / 256, 256, 0, consumer>>>(p, n);
  cudaEventRecord(done, consumer);
  cudaFreeAsync(p, producer);
  cudaStreamWaitEvent(producer, done);
}
