// Plain C++ loads and stores of pinned memory that a copy still uses, the
// races host_guard=1 catches (runtime/host_guard.cpp), and their twins.
//
//   host_guard read|read-sync|write|write-sync
//
// read: a download into pinned memory (cudaMemcpyAsync device to host on a
// copy stream kept busy by a spin kernel), then the host reads the last
// element with no synchronization: it reads bytes the copy has not written
// yet (use before ready at the read).
// read-sync: cudaStreamSynchronize on the copy stream before the read.
// write: an upload from pinned memory on the busy copy stream, then the host
// overwrites the first element: the copy may send the new value (write
// after read at the write).
// write-sync: an event recorded after the upload is synchronized first.
// Each prints what the host saw or what the device got; it always exits 0.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check_cuda.cuh"

namespace {

constexpr std::size_t kElems = std::size_t(1) << 20;  // 4 MiB of floats
constexpr long long kBusyCycles = 200000000;          // about 0.1 s on an H200

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

__global__ void fill(float* values, std::size_t n, float value) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    values[i] = value;
}

// The host's accesses, out of line so that a report names them.
__attribute__((noinline)) float host_read(const float* p) {
  return *static_cast<const volatile float*>(p);  // xsc: host read
}

__attribute__((noinline)) void host_write(float* p, float value) {
  *static_cast<volatile float*>(p) = value;  // xsc: host write
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "read";
  const bool read = std::strncmp(mode, "read", 4) == 0;
  const bool sync = std::strstr(mode, "-sync") != nullptr;
  if (std::strcmp(mode, "read") != 0 && std::strcmp(mode, "read-sync") != 0 &&
      std::strcmp(mode, "write") != 0 && std::strcmp(mode, "write-sync") != 0) {
    std::fprintf(stderr, "usage: host_guard read|read-sync|write|write-sync\n");
    return 2;
  }
  const std::size_t bytes = kElems * sizeof(float);
  float* host = nullptr;
  float* device = nullptr;
  CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&host), bytes, cudaHostAllocDefault));
  CHECK_CUDA(cudaMalloc(&device, bytes));
  cudaStream_t copy;
  CHECK_CUDA(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
  cudaEvent_t copied;
  CHECK_CUDA(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  std::printf("stream: copy=%p\n", static_cast<void*>(copy));
  std::fflush(stdout);  // before the checker's report at exit

  if (read) {
    fill<<<256, 256>>>(device, kElems, 3.0f);
    CHECK_CUDA(cudaGetLastError());
    std::memset(host, 0, bytes);
    CHECK_CUDA(cudaDeviceSynchronize());
    spin<<<1, 1, 0, copy>>>(kBusyCycles);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, copy));  // xsc: download
    if (sync) CHECK_CUDA(cudaStreamSynchronize(copy));
    const float seen = host_read(host + kElems - 1);
    CHECK_CUDA(cudaStreamSynchronize(copy));
    std::printf("%s: host read %.1f (%s)\n", mode, seen, seen == 3.0f ? "landed" : "stale");
  } else {
    for (std::size_t i = 0; i < kElems; ++i) host[i] = 1.0f;
    spin<<<1, 1, 0, copy>>>(kBusyCycles);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, copy));  // xsc: upload
    CHECK_CUDA(cudaEventRecord(copied, copy));
    if (sync) CHECK_CUDA(cudaEventSynchronize(copied));
    host_write(host, 2.0f);
    CHECK_CUDA(cudaStreamSynchronize(copy));
    float got = 0.0f;
    CHECK_CUDA(cudaMemcpy(&got, device, sizeof got, cudaMemcpyDeviceToHost));
    std::printf("%s: device got %.1f (%s)\n", mode, got, got == 1.0f ? "the old value" : "the new value");
  }
  std::fflush(stdout);

  CHECK_CUDA(cudaEventDestroy(copied));
  CHECK_CUDA(cudaStreamDestroy(copy));
  CHECK_CUDA(cudaFree(device));
  CHECK_CUDA(cudaFreeHost(host));
  return 0;
}
