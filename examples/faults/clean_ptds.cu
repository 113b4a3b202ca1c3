// Clean corpus: a program compiled with --default-stream per-thread.
// Every host thread has its own default stream; stream 0, cudaStreamPerThread
// and the implicit stream of a kernel launch all name it. Each thread
// allocates on its default stream, hands the buffer to an explicit stream of
// its own with events, and frees it on the default stream after waiting.
// The checker must treat the threads' default streams as distinct streams and
// the three spellings of one thread's stream as the same one; it must report
// nothing.
#include <thread>
#include <vector>

#include "fault_common.h"

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "build with --default-stream per-thread"
#endif

namespace {

constexpr int kThreads = 4;
constexpr int kN = 4096;
constexpr int kRounds = 20;

long long thread_body(int index) {
  cudaStream_t side;
  FAULT_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  cudaEvent_t filled, used;
  FAULT_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&used, cudaEventDisableTiming));
  int* accumulator = nullptr;
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&accumulator), sizeof(int) * kN, side));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * kN, side));

  for (int round = 0; round < kRounds; ++round) {
    int* buffer = nullptr;
    // Allocated with the explicit per-thread handle, filled on the implicit
    // default stream, freed on stream 0: one stream in three spellings.
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&buffer), sizeof(int) * kN,
                                cudaStreamPerThread));
    fill_kernel<<<4, 128>>>(buffer, kN, index + 1);
    FAULT_CHECK(cudaGetLastError());
    FAULT_CHECK(cudaEventRecord(filled, 0));
    FAULT_CHECK(cudaStreamWaitEvent(side, filled, 0));
    accumulate_kernel<<<4, 128, 0, side>>>(buffer, accumulator, kN);
    FAULT_CHECK(cudaGetLastError());
    FAULT_CHECK(cudaEventRecord(used, side));
    FAULT_CHECK(cudaStreamWaitEvent(cudaStreamPerThread, used, 0));
    FAULT_CHECK(cudaFreeAsync(buffer, 0));
  }
  long long sum = device_sum(accumulator, kN, side);
  FAULT_CHECK(cudaFreeAsync(accumulator, side));
  FAULT_CHECK(cudaStreamSynchronize(side));
  FAULT_CHECK(cudaStreamSynchronize(0));
  FAULT_CHECK(cudaEventDestroy(filled));
  FAULT_CHECK(cudaEventDestroy(used));
  FAULT_CHECK(cudaStreamDestroy(side));
  return sum;
}

}  // namespace

int main() {
  std::vector<long long> sums(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&sums, t] { sums[t] = thread_body(t); });
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) std::printf("thread %d: checksum %lld\n", t, sums[t]);
  return 0;
}
