// A C++ file (not .cu) that nvcc compiles: host code that includes the CUDA
// runtime header and queues copies on two streams, as the CUDA samples' .cpp
// files do. nvcc passes its toolkit's include directory and -D__NVCC__ to
// the host compiler; the command in the database names neither.
#include <cuda_runtime.h>

#ifdef __NVCC__
// The copy back on `download` still reads dev when dev goes back to
// upload's pool.
void stage_and_release(float* host, size_t n, cudaStream_t upload, cudaStream_t download) {
  float* dev;
  cudaMallocAsync((void**)&dev, n * sizeof(float), upload);
  cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, upload);
  cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, download);
  cudaFreeAsync(dev, upload);
}
#endif

// The correct twin: upload waits for an event recorded on download.
void stage_and_release_ordered(float* host, size_t n, cudaStream_t upload, cudaStream_t download,
                               cudaEvent_t copied) {
  float* dev;
  cudaMallocAsync((void**)&dev, n * sizeof(float), upload);
  cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, upload);
  cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, download);
  cudaEventRecord(copied, download);
  cudaStreamWaitEvent(upload, copied, 0);
  cudaFreeAsync(dev, upload);
}
