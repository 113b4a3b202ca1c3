// Leaves while GPU work is still queued. The checker's end-of-program
// processing must neither hang on the unfinished work nor change how the
// process ends.
//
// Usage: exit_without_sync MODE, MODE one of
//   return   return 0 from main
//   exit     std::exit(3)
//   _exit    _exit(4): no atexit handlers, no destructors
//   thread   std::exit(5) from a second host thread while main blocks
#include <unistd.h>

#include <cstring>
#include <thread>

#include "fault_common.h"

namespace {

void enqueue_unfinished_work() {
  cudaStream_t a, b;
  FAULT_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  int* accumulator = nullptr;
  FAULT_CHECK(cudaMalloc(&accumulator, sizeof(int) * 1024));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * 1024, b));
  FAULT_CHECK(cudaStreamSynchronize(b));
  // About 50 ms of work per stream at ~2 GHz, still running when we leave.
  spin_kernel<<<1, 32, 0, a>>>(nullptr, 100000000LL);
  FAULT_CHECK(cudaGetLastError());
  spin_kernel<<<1, 32, 0, b>>>(accumulator, 100000000LL);
  FAULT_CHECK(cudaGetLastError());
  for (int round = 1; round <= 4; ++round) ordered_round_trip(a, b, accumulator, 1024, round);
  std::printf("enqueued, leaving without synchronizing\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s return|exit|_exit|thread\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  enqueue_unfinished_work();
  if (std::strcmp(mode, "return") == 0) return 0;
  if (std::strcmp(mode, "exit") == 0) std::exit(3);
  if (std::strcmp(mode, "_exit") == 0) _exit(4);
  if (std::strcmp(mode, "thread") == 0) {
    std::thread leaver([] { std::exit(5); });
    leaver.join();  // never returns: the process ends first
    return 0;
  }
  std::fprintf(stderr, "unknown mode %s\n", mode);
  return 2;
}
