// Kernels launched through the API rather than `<<<...>>>`: the arguments'
// addresses in an array made here (cudaLaunchKernel,
// cudaLaunchCooperativeKernel, cuLaunchKernel), or the arguments
// themselves after a config naming the stream (cudaLaunchKernelEx).
#include <cuda_runtime.h>

__global__ void consume(const float* in, float* out, int n) {
  out[0] = in[0];
}

typedef struct CUfunc_st* CUfunction;
int cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shmem, CUstream stream, void** params, void** extra);

// Launched on the consumer, freed on the producer: reported, each form.
void runtime_launch(cudaStream_t producer, cudaStream_t consumer, float* out, int n) {
  float* in;
  cudaMallocAsync(&in, n * sizeof(float), producer);
  void* args[] = {(void*)&in, &out, &n};
  cudaLaunchKernel((void*)consume, dim3(1), dim3(32), args, 0, consumer);
  cudaFreeAsync(in, producer);
}

void cooperative_launch(cudaStream_t producer, cudaStream_t consumer, float* out, int n) {
  float* in;
  cudaMallocAsync(&in, n * sizeof(float), producer);
  void* args[] = {&in, &out, &n};
  cudaLaunchCooperativeKernel((void*)consume, dim3(1), dim3(32), args, 0, consumer);
  cudaFreeAsync(in, producer);
}

void driver_launch(CUfunction f, cudaStream_t producer, cudaStream_t consumer, float* out, int n) {
  float* in;
  cudaMallocAsync(&in, n * sizeof(float), producer);
  void* args[] = {&in, &out, &n};
  cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, consumer, args, nullptr);
  cudaFreeAsync(in, producer);
}

void launch_ex(cudaStream_t producer, cudaStream_t consumer, float* out, int n) {
  float* in;
  cudaMallocAsync(&in, n * sizeof(float), producer);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(1);
  config.blockDim = dim3(32);
  config.stream = consumer;
  cudaLaunchKernelEx(&config, consume, in, out, n);
  cudaFreeAsync(in, producer);
}

// The kernel's write through its second parameter, read on the producer
// before the consumer's launch is ordered before it.
void launch_writes(cudaStream_t producer, cudaStream_t consumer, const float* in, float* host,
                   int n) {
  float* out;
  cudaMallocAsync(&out, n * sizeof(float), producer);
  void* args[] = {&in, &out, &n};
  cudaLaunchKernel((void*)consume, dim3(1), dim3(32), args, 0, consumer);
  cudaMemcpyAsync(host, out, n * sizeof(float), cudaMemcpyDeviceToHost, producer);
  cudaStreamSynchronize(producer);
  cudaStreamSynchronize(consumer);
  cudaFreeAsync(out, producer);
}

// On the producer itself, and waited for: silent.
void same_stream(cudaStream_t producer, float* out, int n) {
  float* in;
  cudaMallocAsync(&in, n * sizeof(float), producer);
  void* args[] = {&in, &out, &n};
  cudaLaunchKernel((void*)consume, dim3(1), dim3(32), args, 0, producer);
  cudaFreeAsync(in, producer);
}

void waited(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done, float* out, int n) {
  float* in;
  cudaMallocAsync(&in, n * sizeof(float), producer);
  cudaLaunchConfig_t config = {dim3(1), dim3(32), 0, consumer};
  cudaLaunchKernelEx(&config, consume, in, out, n);
  cudaEventRecord(done, consumer);
  cudaStreamWaitEvent(producer, done, 0);
  cudaFreeAsync(in, producer);
}
