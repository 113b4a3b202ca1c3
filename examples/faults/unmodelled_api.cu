// Correct use of CUDA APIs the checker models in part or not at all: a 2D
// copy through the runtime (followed, its extent taken as the whole
// allocation), a 3D copy through the driver API and managed-memory
// prefetches (not followed). The checker must say so in at most one line,
// must not report the correctly ordered program, and must not change what
// the calls do.
#include <cuda.h>

#include "fault_common.h"

namespace {

constexpr int kWidth = 64;   // ints per row
constexpr int kHeight = 32;  // rows
constexpr int kDepth = 4;    // slices (3D copy)

}  // namespace

int main() {
  cudaStream_t alloc_stream, copy_stream;
  FAULT_CHECK(cudaStreamCreateWithFlags(&alloc_stream, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&copy_stream, cudaStreamNonBlocking));
  cudaEvent_t ready, done;
  FAULT_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));

  // cudaMemcpy2DAsync between two stream-ordered allocations on two streams.
  const size_t plane = sizeof(int) * kWidth * kHeight;
  int* src = nullptr;
  int* dst = nullptr;
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&src), plane * kDepth, alloc_stream));
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&dst), plane * kDepth, alloc_stream));
  fill_kernel<<<8, 128, 0, alloc_stream>>>(src, kWidth * kHeight * kDepth, 3);
  FAULT_CHECK(cudaMemsetAsync(dst, 0, plane * kDepth, alloc_stream));
  FAULT_CHECK(cudaEventRecord(ready, alloc_stream));
  FAULT_CHECK(cudaStreamWaitEvent(copy_stream, ready, 0));
  FAULT_CHECK(cudaMemcpy2DAsync(dst, sizeof(int) * kWidth, src, sizeof(int) * kWidth,
                                sizeof(int) * kWidth, kHeight, cudaMemcpyDeviceToDevice,
                                copy_stream));
  FAULT_CHECK(cudaEventRecord(done, copy_stream));
  FAULT_CHECK(cudaStreamWaitEvent(alloc_stream, done, 0));
  std::printf("after cudaMemcpy2DAsync: checksum %lld\n",
              device_sum(dst, kWidth * kHeight * kDepth, alloc_stream));

  // cuMemcpy3D (driver API, synchronous) of all slices.
  CUDA_MEMCPY3D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  copy.srcPitch = sizeof(int) * kWidth;
  copy.srcHeight = kHeight;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = reinterpret_cast<CUdeviceptr>(dst);
  copy.dstPitch = sizeof(int) * kWidth;
  copy.dstHeight = kHeight;
  copy.WidthInBytes = sizeof(int) * kWidth;
  copy.Height = kHeight;
  copy.Depth = kDepth;
  CUresult driver_result = cuMemcpy3D(&copy);
  std::printf("cuMemcpy3D -> %d\n", static_cast<int>(driver_result));
  // A device-to-device cuMemcpy3D may still run on the legacy stream when it
  // returns; the non-blocking streams are not ordered after it.
  FAULT_CHECK(cudaDeviceSynchronize());
  std::printf("after cuMemcpy3D: checksum %lld\n",
              device_sum(dst, kWidth * kHeight * kDepth, alloc_stream));
  FAULT_CHECK(cudaFreeAsync(src, alloc_stream));
  FAULT_CHECK(cudaFreeAsync(dst, alloc_stream));

  // Managed memory prefetched to the device on one stream, used on another,
  // prefetched back to the host, read by the host.
  int* managed = nullptr;
  const int n = 1 << 16;
  FAULT_CHECK(cudaMallocManaged(&managed, sizeof(int) * n));
  for (int i = 0; i < n; ++i) managed[i] = 1;
  int device = 0;
  FAULT_CHECK(cudaGetDevice(&device));
  cudaMemLocation on_device{};
  on_device.type = cudaMemLocationTypeDevice;
  on_device.id = device;
  cudaMemLocation on_host{};
  on_host.type = cudaMemLocationTypeHost;
  on_host.id = 0;
  FAULT_CHECK(cudaMemPrefetchAsync(managed, sizeof(int) * n, on_device, 0, alloc_stream));
  FAULT_CHECK(cudaEventRecord(ready, alloc_stream));
  FAULT_CHECK(cudaStreamWaitEvent(copy_stream, ready, 0));
  fill_kernel<<<16, 128, 0, copy_stream>>>(managed, n, 5);
  FAULT_CHECK(cudaGetLastError());
  FAULT_CHECK(cudaMemPrefetchAsync(managed, sizeof(int) * n, on_host, 0, copy_stream));
  FAULT_CHECK(cudaStreamSynchronize(copy_stream));
  long long sum = 0;
  for (int i = 0; i < n; ++i) sum += managed[i];
  std::printf("after cudaMemPrefetchAsync: checksum %lld\n", sum);
  FAULT_CHECK(cudaFree(managed));

  FAULT_CHECK(cudaDeviceSynchronize());
  FAULT_CHECK(cudaEventDestroy(ready));
  FAULT_CHECK(cudaEventDestroy(done));
  FAULT_CHECK(cudaStreamDestroy(alloc_stream));
  FAULT_CHECK(cudaStreamDestroy(copy_stream));
  return 0;
}
