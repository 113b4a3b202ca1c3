// A memset is a known write on its stream: a kernel on another stream that
// reads the buffer before waiting for the memset reads it before it is
// ready.
//
//   memset_ready race|fixed|pitched
//
// race: cudaMemsetAsync clears a 64 MiB buffer on the clear stream; a
// kernel on the reader stream sums its last element without waiting.
// fixed: the reader stream waits on an event recorded after the memset.
// pitched: the same race with cudaMemset2DAsync, whose rows may be
// narrower than their pitch: not a known write, so not reported.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "check_cuda.cuh"

namespace {

__global__ void copy_last(const float* values, std::size_t n, float* out) { *out = values[n - 1]; }

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "race";
  const bool fixed = std::strcmp(mode, "fixed") == 0;
  const bool pitched = std::strcmp(mode, "pitched") == 0;
  if (!fixed && !pitched && std::strcmp(mode, "race") != 0) {
    std::fprintf(stderr, "usage: memset_ready race|fixed|pitched\n");
    return 2;
  }
  const std::size_t n = std::size_t(16) << 20, bytes = n * sizeof(float);
  float *values = nullptr, *last = nullptr;
  CHECK_CUDA(cudaMalloc(&values, bytes));
  CHECK_CUDA(cudaMalloc(&last, sizeof(float)));
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaStream_t clear, reader;
  CHECK_CUDA(cudaStreamCreateWithFlags(&clear, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  cudaEvent_t cleared;
  CHECK_CUDA(cudaEventCreateWithFlags(&cleared, cudaEventDisableTiming));
  std::printf("streams: clear=%p reader=%p\n", static_cast<void*>(clear),
              static_cast<void*>(reader));
  std::fflush(stdout);  // before the checker's report at exit

  if (pitched) {
    const std::size_t pitch = 4096;
    CHECK_CUDA(cudaMemset2DAsync(values, pitch, 0, pitch / 2, bytes / pitch, clear));
  } else {
    CHECK_CUDA(cudaMemsetAsync(values, 0, bytes, clear));  // xsc: memset
  }
  if (fixed) {
    CHECK_CUDA(cudaEventRecord(cleared, clear));
    CHECK_CUDA(cudaStreamWaitEvent(reader, cleared, 0));
  }
  copy_last<<<1, 1, 0, reader>>>(values, n, last);  // xsc: read
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  std::printf("done\n");

  CHECK_CUDA(cudaEventDestroy(cleared));
  CHECK_CUDA(cudaStreamDestroy(reader));
  CHECK_CUDA(cudaStreamDestroy(clear));
  CHECK_CUDA(cudaFree(last));
  CHECK_CUDA(cudaFree(values));
  return 0;
}
