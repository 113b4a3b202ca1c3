// Measures which host calls issued between two commands on different
// non-blocking streams keep the later command from starting before the
// earlier one ends: the "implicit synchronization" of the CUDA Programming
// Guide. The checker's rules for memsets and allocations rest on it
// (docs/rules.md), so the measurement is kept with the tests.
//
//   nvcc -O2 -o implicit_sync implicit_sync.cu && ./implicit_sync
//
// A spin kernel on stream A sets a flag when it ends, about 20 ms after its
// launch; a reader kernel on stream B, launched after the call under test,
// copies the flag. "ordered" counts the rounds where the reader saw the flag
// set; "host waited" those where the call itself blocked the host until the
// spin kernel ended.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CHECK(call)                                                              \
  do {                                                                           \
    cudaError_t err_ = (call);                                                   \
    if (err_ != cudaSuccess) {                                                   \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_then_set(volatile int* flag, unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
  __threadfence_system();
  *flag = 1;
}

__global__ void copy_flag(const volatile int* flag, int* seen) { *seen = *flag; }

int main() {
  cudaStream_t a, b, c;
  CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  int *flag, *seen, *scratch;
  CHECK(cudaMalloc(&flag, sizeof(int)));
  CHECK(cudaMalloc(&seen, sizeof(int)));
  CHECK(cudaMalloc(&scratch, 1 << 20));
  CHECK(cudaDeviceSynchronize());

  std::vector<void*> keep;
  struct Probe {
    std::string name;
    std::function<void()> call;
  };
  const std::vector<Probe> probes = {
      {"nothing", [] {}},
      {"cudaMalloc 4 KiB", [&] { void* p; CHECK(cudaMalloc(&p, 4096)); keep.push_back(p); }},
      {"cudaMalloc 25 KiB", [&] { void* p; CHECK(cudaMalloc(&p, 25 << 10)); keep.push_back(p); }},
      {"cudaMalloc 64 MiB", [&] { void* p; CHECK(cudaMalloc(&p, 64 << 20)); keep.push_back(p); }},
      {"cudaMallocHost 4 KiB", [&] { void* p; CHECK(cudaMallocHost(&p, 4096)); }},
      {"cudaMemset (sync) 1 MiB", [&] { CHECK(cudaMemset(scratch, 0, 1 << 20)); }},
      {"cudaMemsetAsync on a third stream", [&] { CHECK(cudaMemsetAsync(scratch, 0, 1 << 20, c)); }},
      {"cudaMallocAsync on a third stream", [&] {
         void* p; CHECK(cudaMallocAsync(&p, 4096, c)); CHECK(cudaFreeAsync(p, c)); }},
      {"cudaFree of a 4 KiB block", [&] {
         void* p; CHECK(cudaMalloc(&p, 4096)); CHECK(cudaFree(p)); }},
  };
  const int rounds = 10;
  for (const Probe& probe : probes) {
    int ordered = 0, host_waited = 0;
    for (int round = 0; round < rounds; ++round) {
      CHECK(cudaMemset(flag, 0, sizeof(int)));
      CHECK(cudaMemset(seen, 0xff, sizeof(int)));
      CHECK(cudaDeviceSynchronize());
      spin_then_set<<<1, 1, 0, a>>>(flag, 20ull * 1000 * 1000);
      const auto before = std::chrono::steady_clock::now();
      probe.call();
      const double call_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count();
      copy_flag<<<1, 1, 0, b>>>(flag, seen);
      CHECK(cudaGetLastError());
      CHECK(cudaDeviceSynchronize());
      int value = -1;
      CHECK(cudaMemcpy(&value, seen, sizeof(int), cudaMemcpyDeviceToHost));
      ordered += value == 1;
      host_waited += call_ms > 15.0;
    }
    std::printf("%-36s ordered %2d/%d  host waited %2d/%d\n", probe.name.c_str(), ordered, rounds,
                host_waited, rounds);
  }
  for (void* p : keep) CHECK(cudaFree(p));
  return 0;
}
