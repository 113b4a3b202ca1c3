// Start-up microbenchmark: the fixed cost a checker adds to every CUDA
// program, apart from the per-call costs bench_launch measures. Times the
// phases of the shortest useful program from inside it: context creation
// (cuInit and the primary context, where CUPTI's own initialization lands),
// one allocation, one kernel and a synchronization. The checker's library
// load and its exit-time report fall outside these phases but inside the
// process's wall time, which bench/run_all.py measures.
//
// Usage: bench_startup
// Prints: context_ms=X first_kernel_ms=Y
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

namespace {

__global__ void fill(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = 1.0f;
}

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "bench_startup: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

int main() {
  const auto start = std::chrono::steady_clock::now();
  if (!check(cudaFree(nullptr), "context creation")) return 1;
  const double context_ms = ms_since(start);

  const auto kernel_start = std::chrono::steady_clock::now();
  constexpr int kN = 1 << 16;
  float* data = nullptr;
  if (!check(cudaMalloc(&data, kN * sizeof(float)), "cudaMalloc")) return 1;
  fill<<<(kN + 255) / 256, 256>>>(data, kN);
  if (!check(cudaDeviceSynchronize(), "first kernel")) return 1;
  const double kernel_ms = ms_since(kernel_start);
  if (!check(cudaFree(data), "cudaFree")) return 1;

  std::printf("context_ms=%.2f first_kernel_ms=%.2f\n", context_ms, kernel_ms);
  return 0;
}
