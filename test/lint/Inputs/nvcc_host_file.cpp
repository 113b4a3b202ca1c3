// A C++ file (not .cu) that nvcc compiles: host code that includes the CUDA
// runtime header and queues copies on two streams, as the CUDA samples' .cpp
// files do. nvcc passes its toolkit's include directory and -D__NVCC__ to
// the host compiler; the command in the database names neither.
#include <cuda_runtime.h>

#ifdef __NVCC__
// The copy back on `download` may read dev before the copy in on `upload`
// lands, overwrites host while the copy in may still read it, and still
// reads dev when dev goes back to upload's pool.
void stage_and_release(float* host, size_t n, cudaStream_t upload, cudaStream_t download) {
  float* dev;
  cudaMallocAsync((void**)&dev, n * sizeof(float), upload);
  cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, upload);
  cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, download);
  cudaFreeAsync(dev, upload);
}
#endif

// The correct twin: download waits for an event recorded on upload after
// the copy in, and upload for one recorded on download after the copy back.
void stage_and_release_ordered(float* host, size_t n, cudaStream_t upload, cudaStream_t download,
                               cudaEvent_t uploaded, cudaEvent_t copied) {
  float* dev;
  cudaMallocAsync((void**)&dev, n * sizeof(float), upload);
  cudaMemcpyAsync(dev, host, n * sizeof(float), cudaMemcpyHostToDevice, upload);
  cudaEventRecord(uploaded, upload);
  cudaStreamWaitEvent(download, uploaded, 0);
  cudaMemcpyAsync(host, dev, n * sizeof(float), cudaMemcpyDeviceToHost, download);
  cudaEventRecord(copied, download);
  cudaStreamWaitEvent(upload, copied, 0);
  cudaFreeAsync(dev, upload);
}
