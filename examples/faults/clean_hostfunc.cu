// Clean corpus: host callbacks (cudaLaunchHostFunc) between device work.
// A buffer allocated on the producer stream is copied to pinned memory on the
// consumer stream, a host function sums the copy in stream order, and the
// producer waits for an event recorded after the host function before it
// frees the buffer. The checker must report nothing.
#include "fault_common.h"

namespace {

constexpr int kN = 2048;
constexpr int kRounds = 5;

struct Tally {
  const int* pinned = nullptr;
  long long total = 0;
  int calls = 0;
};

void CUDART_CB tally(void* data) {
  auto* t = static_cast<Tally*>(data);
  for (int i = 0; i < kN; ++i) t->total += t->pinned[i];
  ++t->calls;
}

}  // namespace

int main() {
  cudaStream_t producer, consumer;
  FAULT_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaEvent_t filled, counted;
  FAULT_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&counted, cudaEventDisableTiming));
  int* pinned = nullptr;
  FAULT_CHECK(cudaMallocHost(&pinned, sizeof(int) * kN));
  Tally t;
  t.pinned = pinned;

  for (int round = 1; round <= kRounds; ++round) {
    int* buffer = nullptr;
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&buffer), sizeof(int) * kN, producer));
    fill_kernel<<<4, 256, 0, producer>>>(buffer, kN, round);
    FAULT_CHECK(cudaGetLastError());
    FAULT_CHECK(cudaEventRecord(filled, producer));
    FAULT_CHECK(cudaStreamWaitEvent(consumer, filled, 0));
    FAULT_CHECK(cudaMemcpyAsync(pinned, buffer, sizeof(int) * kN, cudaMemcpyDeviceToHost, consumer));
    FAULT_CHECK(cudaLaunchHostFunc(consumer, tally, &t));
    FAULT_CHECK(cudaEventRecord(counted, consumer));
    FAULT_CHECK(cudaStreamWaitEvent(producer, counted, 0));
    FAULT_CHECK(cudaFreeAsync(buffer, producer));
  }
  FAULT_CHECK(cudaStreamSynchronize(consumer));
  FAULT_CHECK(cudaStreamSynchronize(producer));
  std::printf("host functions: %d calls, total %lld\n", t.calls, t.total);

  FAULT_CHECK(cudaFreeHost(pinned));
  FAULT_CHECK(cudaEventDestroy(filled));
  FAULT_CHECK(cudaEventDestroy(counted));
  FAULT_CHECK(cudaStreamDestroy(producer));
  FAULT_CHECK(cudaStreamDestroy(consumer));
  return 0;
}
