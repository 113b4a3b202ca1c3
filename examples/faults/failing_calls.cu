// CUDA calls that fail. The checker must pass every error through untouched
// (same return value, same sticky/last-error state) and must not turn a call
// that did nothing into an event.
//
// Usage: failing_calls MODE, MODE one of
//   invalid-handles   null event handles in record / wait / query
//   destroyed-stream  work enqueued on a stream after cudaStreamDestroy
//   huge-alloc        cudaMalloc / cudaMallocAsync of an absurd size
//   destroyed-event   record, query, synchronize on a destroyed event
//   wait-destroyed    cudaStreamWaitEvent on a destroyed event
//   bad-launch        a kernel launch with an invalid configuration
// Each mode then runs ordinary, correctly ordered work and prints a checksum,
// so a checker that broke the context after the failure shows up too.
#include <cstring>

#include "fault_common.h"

namespace {

constexpr int kN = 4096;

// Ordinary work after the fault: proves the process is still healthy.
void healthy_work(const char* mode) {
  cudaStream_t a, b;
  FAULT_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  int* accumulator = nullptr;
  FAULT_CHECK(cudaMalloc(&accumulator, sizeof(int) * kN));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * kN, b));
  for (int round = 1; round <= 3; ++round) ordered_round_trip(a, b, accumulator, kN, round);
  std::printf("%s: checksum %lld\n", mode, device_sum(accumulator, kN, b));
  FAULT_CHECK(cudaDeviceSynchronize());
  FAULT_CHECK(cudaFree(accumulator));
  FAULT_CHECK(cudaStreamDestroy(a));
  FAULT_CHECK(cudaStreamDestroy(b));
}

void invalid_handles() {
  cudaStream_t s;
  FAULT_CHECK(cudaStreamCreate(&s));
  show("cudaEventRecord(null event)", cudaEventRecord(nullptr, s));
  show("cudaGetLastError", cudaGetLastError());
  show("cudaStreamWaitEvent(null event)", cudaStreamWaitEvent(s, nullptr, 0));
  show("cudaGetLastError", cudaGetLastError());
  show("cudaEventQuery(null event)", cudaEventQuery(nullptr));
  show("cudaEventSynchronize(null event)", cudaEventSynchronize(nullptr));
  cudaStream_t unused;
  show("cudaStreamCreateWithFlags(bad flags)", cudaStreamCreateWithFlags(&unused, 0x7fff));
  show("cudaGetLastError", cudaGetLastError());
  FAULT_CHECK(cudaStreamDestroy(s));
}

void destroyed_stream() {
  int* p = nullptr;
  FAULT_CHECK(cudaMalloc(&p, sizeof(int) * kN));
  cudaStream_t s;
  FAULT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  FAULT_CHECK(cudaMemsetAsync(p, 0, sizeof(int) * kN, s));
  FAULT_CHECK(cudaStreamSynchronize(s));
  FAULT_CHECK(cudaStreamDestroy(s));
  show("cudaMemsetAsync(destroyed stream)", cudaMemsetAsync(p, 1, sizeof(int) * kN, s));
  show("cudaGetLastError", cudaGetLastError());
  show("cudaStreamQuery(destroyed stream)", cudaStreamQuery(s));
  show("cudaStreamSynchronize(destroyed stream)", cudaStreamSynchronize(s));
  show("cudaGetLastError", cudaGetLastError());
  FAULT_CHECK(cudaDeviceSynchronize());
  FAULT_CHECK(cudaFree(p));
}

void huge_alloc() {
  const size_t absurd = size_t{1} << 60;
  void* p = nullptr;
  show("cudaMalloc(2^60)", cudaMalloc(&p, absurd));
  std::printf("pointer after failed cudaMalloc is %s\n", p == nullptr ? "null" : "set");
  show("cudaGetLastError", cudaGetLastError());
  show("cudaGetLastError", cudaGetLastError());

  cudaStream_t s;
  FAULT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  void* q = nullptr;
  show("cudaMallocAsync(2^60)", cudaMallocAsync(&q, absurd, s));
  show("cudaPeekAtLastError", cudaPeekAtLastError());
  show("cudaGetLastError", cudaGetLastError());
  // Freeing what the failed calls left behind: null, a no-op for CUDA.
  show("cudaFree(result of failed cudaMalloc)", cudaFree(p));
  show("cudaFreeAsync(result of failed cudaMallocAsync)", cudaFreeAsync(q, s));
  show("cudaMallocHost(2^60)", cudaMallocHost(&p, absurd));
  show("cudaGetLastError", cudaGetLastError());
  FAULT_CHECK(cudaStreamSynchronize(s));
  FAULT_CHECK(cudaStreamDestroy(s));
}

void destroyed_event() {
  cudaStream_t s;
  FAULT_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e;
  FAULT_CHECK(cudaEventCreate(&e));
  FAULT_CHECK(cudaEventRecord(e, s));
  FAULT_CHECK(cudaEventSynchronize(e));
  FAULT_CHECK(cudaEventDestroy(e));
  show("cudaEventRecord(destroyed event)", cudaEventRecord(e, s));
  show("cudaGetLastError", cudaGetLastError());
  show("cudaEventQuery(destroyed event)", cudaEventQuery(e));
  show("cudaEventSynchronize(destroyed event)", cudaEventSynchronize(e));
  show("cudaGetLastError", cudaGetLastError());
  // A fresh event may reuse the destroyed one's handle value: it must be a
  // new event to the checker, with no history.
  cudaEvent_t fresh;
  FAULT_CHECK(cudaEventCreate(&fresh));
  FAULT_CHECK(cudaEventRecord(fresh, s));
  FAULT_CHECK(cudaEventSynchronize(fresh));
  FAULT_CHECK(cudaEventDestroy(fresh));
  FAULT_CHECK(cudaStreamDestroy(s));
}

void wait_destroyed() {
  cudaStream_t producer, consumer;
  FAULT_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaEvent_t e;
  FAULT_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventRecord(e, producer));
  FAULT_CHECK(cudaEventDestroy(e));
  show("cudaStreamWaitEvent(destroyed event)", cudaStreamWaitEvent(consumer, e, 0));
  show("cudaGetLastError", cudaGetLastError());
  FAULT_CHECK(cudaDeviceSynchronize());
  FAULT_CHECK(cudaStreamDestroy(producer));
  FAULT_CHECK(cudaStreamDestroy(consumer));
}

void bad_launch() {
  int* p = nullptr;
  FAULT_CHECK(cudaMalloc(&p, sizeof(int) * kN));
  // 4096 threads per block exceeds every GPU's limit of 1024.
  fill_kernel<<<1, 4096>>>(p, kN, 1);
  show("cudaPeekAtLastError after bad launch", cudaPeekAtLastError());
  show("cudaGetLastError after bad launch", cudaGetLastError());
  show("cudaGetLastError again", cudaGetLastError());
  // A launch that is too big in shared memory.
  fill_kernel<<<1, 32, size_t{1} << 30>>>(p, kN, 1);
  show("cudaGetLastError after oversized shared memory", cudaGetLastError());
  FAULT_CHECK(cudaDeviceSynchronize());
  FAULT_CHECK(cudaFree(p));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODE\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  struct {
    const char* name;
    void (*run)();
  } const modes[] = {
      {"invalid-handles", invalid_handles}, {"destroyed-stream", destroyed_stream},
      {"huge-alloc", huge_alloc},           {"destroyed-event", destroyed_event},
      {"wait-destroyed", wait_destroyed},   {"bad-launch", bad_launch},
  };
  for (const auto& m : modes) {
    if (std::strcmp(m.name, mode) == 0) {
      m.run();
      healthy_work(mode);
      return 0;
    }
  }
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
