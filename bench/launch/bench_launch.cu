// Launch-bound microbenchmark: the host cost of a kernel launch, the number
// the runtime's per-launch overhead is measured against.
//
// Launches empty kernels round-robin over 4 streams, in batches small enough
// that the launch queue never fills (a full queue would time the GPU, not the
// launch path). Each kernel takes a pointer to a live allocation, so the
// runtime's argument scan and allocation lookup are on the measured path.
//
// Usage: bench_launch [LAUNCHES=100000]
// Prints: launches=N streams=4 median_ns_per_launch=X
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__global__ void empty_kernel(float* data, int n) {
  (void)data;
  (void)n;
}

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "bench_launch: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  long launches = 100000;
  if (argc > 1) {
    char* end = nullptr;
    launches = std::strtol(argv[1], &end, 10);
    if (end == argv[1] || *end != '\0' || launches <= 0) {
      std::fprintf(stderr, "bench_launch: LAUNCHES must be a positive integer, got '%s'\n", argv[1]);
      return 2;
    }
  }
  constexpr int kStreams = 4;
  constexpr int kBatch = 256;  // launches between synchronizations

  cudaStream_t streams[kStreams];
  for (auto& s : streams)
    if (!check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate")) return 1;
  float* data = nullptr;
  if (!check(cudaMalloc(&data, 1 << 20), "cudaMalloc")) return 1;

  // Warm-up: module loading and first-launch costs stay out of the numbers.
  for (int i = 0; i < kBatch; ++i) empty_kernel<<<1, 32, 0, streams[i % kStreams]>>>(data, i);
  if (!check(cudaDeviceSynchronize(), "warm-up")) return 1;

  std::vector<double> ns_per_launch;
  ns_per_launch.reserve(launches / kBatch + 1);
  for (long done = 0; done < launches;) {
    const int batch = static_cast<int>(std::min<long>(kBatch, launches - done));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) empty_kernel<<<1, 32, 0, streams[i % kStreams]>>>(data, i);
    const auto stop = std::chrono::steady_clock::now();
    if (!check(cudaGetLastError(), "launch")) return 1;
    ns_per_launch.push_back(std::chrono::duration<double, std::nano>(stop - start).count() / batch);
    done += batch;
    if (!check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")) return 1;
  }
  std::sort(ns_per_launch.begin(), ns_per_launch.end());
  const double median = ns_per_launch[ns_per_launch.size() / 2];
  std::printf("launches=%ld streams=%d median_ns_per_launch=%.1f\n", launches, kStreams, median);

  cudaFree(data);
  for (auto& s : streams) cudaStreamDestroy(s);
  return 0;
}
