// Shared helpers for the fault-injection and clean-corpus programs.
//
// Every program prints only deterministic text to stdout (error names,
// checksums), so a run under the checker can be compared byte for byte with
// a run without it. Anything that legitimately differs between the two runs
// (RSS, timings) goes to stderr.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

// A call that must succeed failed: the program's behaviour was changed. Print
// it on stdout so the comparison shows it, and stop. Only the first failing
// thread reports and exits; any other parks, so the output stays the same
// from run to run.
[[noreturn]] inline void fault_unexpected(cudaError_t err, const char* call, const char* file,
                                          int line) {
  static std::atomic<bool> failed{false};
  if (failed.exchange(true)) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  std::printf("unexpected %s from %s (%s:%d)\n", cudaGetErrorName(err), call, file, line);
  std::fflush(stdout);
  std::exit(1);
}

// A call that must succeed.
#define FAULT_CHECK(call)                                                            \
  do {                                                                               \
    cudaError_t fault_err_ = (call);                                                 \
    if (fault_err_ != cudaSuccess) fault_unexpected(fault_err_, #call, __FILE__, __LINE__); \
  } while (0)

// A call whose failure is the point: print what it returned.
inline void show(const char* what, cudaError_t err) {
  std::printf("%s -> %s\n", what, cudaGetErrorName(err));
}

static __global__ void fill_kernel(int* p, int n, int value) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = value;
}

static __global__ void accumulate_kernel(const int* src, int* dst, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] += src[i];
}

// Spins for roughly `cycles` GPU clock cycles, so later host calls really
// run ahead of the device.
static __global__ void spin_kernel(int* p, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0 && p != nullptr) p[0] += 1;
}

// Sum of `n` ints at device address `p`, read after `stream` drains.
inline long long device_sum(const int* p, int n, cudaStream_t stream) {
  std::vector<int> host(n);
  FAULT_CHECK(cudaMemcpyAsync(host.data(), p, sizeof(int) * n, cudaMemcpyDeviceToHost, stream));
  FAULT_CHECK(cudaStreamSynchronize(stream));
  long long sum = 0;
  for (int v : host) sum += v;
  return sum;
}

// The legal producer/consumer pattern on two streams: `buffer` is allocated on
// `alloc_stream`, filled there, read on `use_stream` after an event, and freed
// on `alloc_stream` only after waiting for the use. Adds n * value to the
// sum of `accumulator`.
inline void ordered_round_trip(cudaStream_t alloc_stream, cudaStream_t use_stream, int* accumulator,
                               int n, int value) {
  int* buffer = nullptr;
  cudaEvent_t filled, used;
  FAULT_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&used, cudaEventDisableTiming));
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&buffer), sizeof(int) * n, alloc_stream));
  fill_kernel<<<4, 128, 0, alloc_stream>>>(buffer, n, value);
  FAULT_CHECK(cudaGetLastError());
  FAULT_CHECK(cudaEventRecord(filled, alloc_stream));
  FAULT_CHECK(cudaStreamWaitEvent(use_stream, filled, 0));
  accumulate_kernel<<<4, 128, 0, use_stream>>>(buffer, accumulator, n);
  FAULT_CHECK(cudaGetLastError());
  FAULT_CHECK(cudaEventRecord(used, use_stream));
  FAULT_CHECK(cudaStreamWaitEvent(alloc_stream, used, 0));
  FAULT_CHECK(cudaFreeAsync(buffer, alloc_stream));
  FAULT_CHECK(cudaEventDestroy(filled));
  FAULT_CHECK(cudaEventDestroy(used));
}
