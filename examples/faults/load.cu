// Load on the checker: many host threads, streams, launches, allocations and
// frees, all correctly ordered. Under the checker it must not crash, deadlock
// or report, and its memory must not grow with the length of the history.
//
// Usage:
//   load threads [LAUNCHES]         8 host threads x 4 streams each, LAUNCHES
//                                   kernel launches in all (default 10^5),
//                                   stream-ordered allocations and frees
//                                   interleaved with synchronous ones
//   load history [LAUNCHES] [LIVE]  LAUNCHES launches (default 10^6) over
//                                   LIVE live allocations (default 10^4);
//                                   prints the resident set size after 10%
//                                   and after all of the launches
// stdout carries only the deterministic result; memory figures go to stderr
// as "load-rss: ..." lines.
#include <sys/resource.h>

#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fault_common.h"

namespace {

constexpr int kThreads = 8;
constexpr int kStreamsPerThread = 4;
constexpr int kInts = 256;  // per buffer

static __global__ void bump_kernel(int* p) { p[threadIdx.x] += 1; }

long resident_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

long peak_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// One host thread: round trips between pairs of its own streams.
long long thread_body(int iterations) {
  cudaStream_t streams[kStreamsPerThread];
  int* accumulators[kStreamsPerThread];
  for (int i = 0; i < kStreamsPerThread; ++i) {
    FAULT_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&accumulators[i]), sizeof(int) * kInts,
                                streams[i]));
    FAULT_CHECK(cudaMemsetAsync(accumulators[i], 0, sizeof(int) * kInts, streams[i]));
  }
  cudaEvent_t filled, used;
  FAULT_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&used, cudaEventDisableTiming));

  for (int it = 0; it < iterations; ++it) {
    cudaStream_t a = streams[it % kStreamsPerThread];
    int consumer = (it + 1) % kStreamsPerThread;
    cudaStream_t b = streams[consumer];
    int* buffer = nullptr;
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&buffer), sizeof(int) * kInts, a));
    fill_kernel<<<1, kInts, 0, a>>>(buffer, kInts, 1);
    FAULT_CHECK(cudaEventRecord(filled, a));
    FAULT_CHECK(cudaStreamWaitEvent(b, filled, 0));
    accumulate_kernel<<<1, kInts, 0, b>>>(buffer, accumulators[consumer], kInts);
    FAULT_CHECK(cudaEventRecord(used, b));
    FAULT_CHECK(cudaStreamWaitEvent(a, used, 0));
    FAULT_CHECK(cudaFreeAsync(buffer, a));
    if (it % 256 == 255) {
      // A synchronous allocation, used on a stream, freed after a host sync.
      int* scratch = nullptr;
      FAULT_CHECK(cudaMalloc(&scratch, sizeof(int) * kInts));
      FAULT_CHECK(cudaMemsetAsync(scratch, 0, sizeof(int) * kInts, b));
      FAULT_CHECK(cudaStreamSynchronize(b));
      FAULT_CHECK(cudaFree(scratch));
    }
  }
  FAULT_CHECK(cudaGetLastError());

  long long sum = 0;
  for (int i = 0; i < kStreamsPerThread; ++i) {
    sum += device_sum(accumulators[i], kInts, streams[i]);
    FAULT_CHECK(cudaFreeAsync(accumulators[i], streams[i]));
    FAULT_CHECK(cudaStreamSynchronize(streams[i]));
    FAULT_CHECK(cudaStreamDestroy(streams[i]));
  }
  FAULT_CHECK(cudaEventDestroy(filled));
  FAULT_CHECK(cudaEventDestroy(used));
  return sum;
}

int run_threads(long launches) {
  // Two launches per iteration.
  const int iterations = static_cast<int>(launches / (2 * kThreads));
  std::vector<long long> sums(kThreads);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t)
    workers.emplace_back([&sums, t, iterations] { sums[t] = thread_body(iterations); });
  for (auto& w : workers) w.join();
  long long total = 0;
  for (long long s : sums) total += s;
  std::printf("load threads: %d threads x %d streams, %ld launches, checksum %lld\n", kThreads,
              kStreamsPerThread, 2L * iterations * kThreads, total);
  std::fprintf(stderr, "load-rss: launches=%ld rss_kb=%ld maxrss_kb=%ld\n",
               2L * iterations * kThreads, resident_kb(), peak_kb());
  return 0;
}

// Makes every stream wait for everything enqueued so far on every stream.
void barrier(cudaStream_t* streams, cudaEvent_t* events) {
  for (int j = 0; j < kStreamsPerThread; ++j) FAULT_CHECK(cudaEventRecord(events[j], streams[j]));
  for (int i = 0; i < kStreamsPerThread; ++i)
    for (int j = 0; j < kStreamsPerThread; ++j)
      if (i != j) FAULT_CHECK(cudaStreamWaitEvent(streams[i], events[j], 0));
}

int run_history(long launches, int live) {
  cudaStream_t streams[kStreamsPerThread];
  cudaEvent_t events[kStreamsPerThread];
  for (int i = 0; i < kStreamsPerThread; ++i) {
    FAULT_CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    FAULT_CHECK(cudaEventCreateWithFlags(&events[i], cudaEventDisableTiming));
  }
  constexpr int kBumped = 64;  // ints bumped per launch
  std::vector<int*> buffers(live);
  for (int k = 0; k < live; ++k) {
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&buffers[k]), sizeof(int) * kBumped,
                                streams[0]));
    FAULT_CHECK(cudaMemsetAsync(buffers[k], 0, sizeof(int) * kBumped, streams[0]));
  }
  barrier(streams, events);

  const long rounds = launches / live;
  const long report_after = rounds / 10 > 0 ? rounds / 10 : 1;
  for (long round = 0; round < rounds; ++round) {
    // Each round, every buffer moves to another stream: the barrier orders
    // its new stream after its old one.
    for (int k = 0; k < live; ++k)
      bump_kernel<<<1, kBumped, 0, streams[(k + round) % kStreamsPerThread]>>>(buffers[k]);
    FAULT_CHECK(cudaGetLastError());
    barrier(streams, events);
    if (round + 1 == report_after || round + 1 == rounds) {
      FAULT_CHECK(cudaDeviceSynchronize());
      std::fprintf(stderr, "load-rss: launches=%ld rss_kb=%ld maxrss_kb=%ld\n",
                   (round + 1) * live, resident_kb(), peak_kb());
    }
  }

  std::vector<int> host(kBumped);
  long long sum = 0;
  for (int k = 0; k < live; ++k) {
    FAULT_CHECK(cudaMemcpyAsync(host.data(), buffers[k], sizeof(int) * kBumped,
                                cudaMemcpyDeviceToHost, streams[0]));
    FAULT_CHECK(cudaStreamSynchronize(streams[0]));
    for (int v : host) sum += v;
    FAULT_CHECK(cudaFreeAsync(buffers[k], streams[0]));
  }
  FAULT_CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < kStreamsPerThread; ++i) {
    FAULT_CHECK(cudaEventDestroy(events[i]));
    FAULT_CHECK(cudaStreamDestroy(streams[i]));
  }
  std::printf("load history: %ld launches over %d live allocations, checksum %lld\n",
              rounds * live, live, sum);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "threads") == 0)
    return run_threads(argc >= 3 ? std::atol(argv[2]) : 100000);
  if (argc >= 2 && std::strcmp(argv[1], "history") == 0)
    return run_history(argc >= 3 ? std::atol(argv[2]) : 1000000,
                       argc >= 4 ? std::atoi(argv[3]) : 10000);
  std::fprintf(stderr, "usage: %s threads [LAUNCHES] | history [LAUNCHES] [LIVE]\n", argv[0]);
  return 2;
}
