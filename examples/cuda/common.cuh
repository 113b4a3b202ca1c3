// Pieces shared by the CUDA example pipelines: error checking, the producer
// and consumer kernels, argument parsing and result verification.
//
// The pipeline mirrors a prefetching training loop: a producer stream fills
// each layer's parameter buffer with the layer number while a consumer stream
// runs a matmul-like reduction over the previous layer's buffer. With x all
// ones, every output element of layer L must equal kHidden * L; a buffer
// refilled too early leaves a larger value behind.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#define XSC_EXAMPLE_CHECK(call)                                                   \
  do {                                                                            \
    cudaError_t xsc_example_err_ = (call);                                        \
    if (xsc_example_err_ != cudaSuccess) {                                        \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,   \
                   cudaGetErrorString(xsc_example_err_));                         \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

namespace xsc_example {

// 2048 x 2048 floats: a 16 MiB parameter block per layer.
inline constexpr int kHidden = 2048;
// Rows of x; each consumer thread keeps one accumulator per row.
inline constexpr int kBatch = 8;
inline constexpr int kLayers = 4;
inline constexpr std::size_t kParamElems = std::size_t(kHidden) * kHidden;
inline constexpr std::size_t kParamBytes = kParamElems * sizeof(float);
inline constexpr std::size_t kOutElems = std::size_t(kBatch) * kHidden;

// Producer: the stand-in for an all-gather writing a layer's parameters.
__global__ void fill_params(float* params, std::size_t n, float value) {
  std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    params[i] = value;
}

// Consumer: out[b][j] = sum_k x[b][k] * W[k][j]. One thread per column j walks
// all kHidden rows of W, so a launch reads the whole block over a long window
// (hundreds of microseconds) while using few SMs: a refill issued on the
// producer stream runs beside it and lands in the middle of the reads.
__global__ void consume_layer(const float* weights, const float* x, float* out) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= kHidden) return;
  float acc[kBatch];
#pragma unroll
  for (int b = 0; b < kBatch; ++b) acc[b] = 0.0f;
  for (int k = 0; k < kHidden; ++k) {
    float w = weights[std::size_t(k) * kHidden + j];
#pragma unroll
    for (int b = 0; b < kBatch; ++b) acc[b] += x[b * kHidden + k] * w;
  }
#pragma unroll
  for (int b = 0; b < kBatch; ++b) out[b * kHidden + j] = acc[b];
}

inline void launch_fill(float* params, float value, cudaStream_t stream) {
  fill_params<<<264, 256, 0, stream>>>(params, kParamElems, value);
  XSC_EXAMPLE_CHECK(cudaGetLastError());
}

inline void launch_consume(const float* weights, const float* x, float* out,
                           cudaStream_t stream) {
  consume_layer<<<kHidden / 128, 128, 0, stream>>>(weights, x, out);
  XSC_EXAMPLE_CHECK(cudaGetLastError());
}

struct Args {
  std::string mode;
  int trials = 0;
};

// Parses `[MODE] [--trials N]`; `modes` lists the accepted MODE values (an
// empty list accepts no MODE at all); without `default_mode` MODE is required.
// Bad input: a usage line and exit 2.
inline Args parse_args(int argc, char** argv, const std::vector<std::string>& modes,
                       const char* default_mode = nullptr, int default_trials = 10) {
  Args args;
  args.trials = default_trials;
  auto usage = [&]() {
    std::string list;
    for (const auto& m : modes) list += (list.empty() ? "" : "|") + m;
    std::fprintf(stderr, "usage: %s %s%s[--trials N]\n", argv[0], list.c_str(),
                 list.empty() ? "" : " ");
    std::exit(2);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--trials") {
      if (i + 1 >= argc) usage();
      char* end = nullptr;
      long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1 || n > 100000) usage();
      args.trials = int(n);
    } else if (args.mode.empty() && std::find(modes.begin(), modes.end(), a) != modes.end()) {
      args.mode = a;
    } else {
      usage();
    }
  }
  if (args.mode.empty()) {
    if (default_mode) args.mode = default_mode;
    else if (!modes.empty()) usage();
  }
  return args;
}

// Buffers every pipeline shares: x (all ones) and one output per layer. They
// are allocated once, synchronously, and outlive every trial.
struct Fixture {
  float* x = nullptr;
  float* out = nullptr;  // kLayers blocks of kOutElems

  Fixture() {
    XSC_EXAMPLE_CHECK(cudaMalloc(&x, kOutElems * sizeof(float)));
    XSC_EXAMPLE_CHECK(cudaMalloc(&out, kLayers * kOutElems * sizeof(float)));
    fill_params<<<64, 256>>>(x, kOutElems, 1.0f);
    XSC_EXAMPLE_CHECK(cudaGetLastError());
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  }
  ~Fixture() {
    cudaFree(out);
    cudaFree(x);
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  float* out_for(int layer) { return out + std::size_t(layer - 1) * kOutElems; }

  // Largest deviation from kHidden * layer over every layer's output. Call
  // after the device is synchronized.
  double max_diff() {
    std::vector<float> host(kLayers * kOutElems);
    XSC_EXAMPLE_CHECK(cudaMemcpy(host.data(), out, host.size() * sizeof(float),
                                 cudaMemcpyDeviceToHost));
    double worst = 0.0;
    for (int layer = 1; layer <= kLayers; ++layer) {
      double expected = double(kHidden) * layer;
      const float* o = host.data() + std::size_t(layer - 1) * kOutElems;
      for (std::size_t i = 0; i < kOutElems; ++i)
        worst = std::max(worst, std::fabs(double(o[i]) - expected));
    }
    return worst;
  }

  // Poisons the outputs so a consumer that never ran cannot pass.
  void clear_outputs() {
    XSC_EXAMPLE_CHECK(cudaMemset(out, 0xff, kLayers * kOutElems * sizeof(float)));
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  }
};

// Counts corrupted trials and distinct parameter blocks, and prints the
// verdict line. The example always exits 0: deciding is the checker's job.
class TrialReport {
 public:
  explicit TrialReport(const char* title) { std::printf("=== %s ===\n", title); }

  void note_block(const void* p) { blocks_.insert(p); }

  void end_trial(int trial, double diff) {
    max_blocks_ = std::max(max_blocks_, blocks_.size());
    blocks_.clear();
    ++trials_;
    if (diff > 1e-6) {
      if (++corrupted_ <= 3)
        std::printf("  trial %2d: CORRUPT  max_diff=%.1f  (expected 0)\n", trial, diff);
    }
  }

  void finish() const {
    std::printf("  [%s] %d/%d trials corrupted, at most %zu param blocks per run (%d layers)\n",
                corrupted_ == 0 ? "PASS" : "FAIL", corrupted_, trials_, max_blocks_, kLayers);
    std::fflush(stdout);
  }

 private:
  std::set<const void*> blocks_;
  std::size_t max_blocks_ = 0;
  int trials_ = 0;
  int corrupted_ = 0;
};

// Prints the stream handles so reports can be matched against them; flushed
// at once because the checker's report is written to stderr at exit.
inline void print_streams(cudaStream_t producer, cudaStream_t consumer) {
  std::printf("streams: producer=%p consumer=%p\n", static_cast<void*>(producer),
              static_cast<void*>(consumer));
  std::fflush(stdout);
}

// A cudaStreamWaitEvent on a fresh event recorded on `from`: what
// torch.cuda.Stream.wait_stream does.
inline void wait_stream(cudaStream_t waiter, cudaStream_t from) {
  cudaEvent_t ev;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  XSC_EXAMPLE_CHECK(cudaEventRecord(ev, from));
  XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(waiter, ev, 0));
  XSC_EXAMPLE_CHECK(cudaEventDestroy(ev));
}

// The default memory pool, told to keep freed memory cached so that
// cudaMallocAsync hands freed blocks back out the way a caching allocator does.
inline void keep_pool_memory() {
  int device = 0;
  XSC_EXAMPLE_CHECK(cudaGetDevice(&device));
  cudaMemPool_t pool;
  XSC_EXAMPLE_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t threshold = UINT64_MAX;
  XSC_EXAMPLE_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
}

}  // namespace xsc_example
