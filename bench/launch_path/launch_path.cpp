// The runtime's host cost per kernel launch, without a GPU: drives
// libxstream_check.so's CUPTI callback with the four callbacks one
// cudaLaunchKernel makes (runtime enter, driver cuLaunchKernel enter and
// exit, runtime exit), on 4 streams, each launch passing a pointer into a
// live allocation, as bench_launch does on a GPU. BM_LaunchManySites
// launches from 48 different stack depths in turn; BM_LaunchCachingBlock
// passes a caching-allocator block on its own stream. CUPTI's own dispatch is
// not in these numbers (XSC_PROFILE=subscribe-only measures it on a GPU).
//
// Runs itself under LD_PRELOAD=libxstream_check.so with XSC_CUPTI_LIB set to
// a stand-in CUPTI (fake_cupti.cpp) and loads a stand-in libcuda.so.1
// (fake_cuda.cpp). XSC_PROFILE passes through: run it once plain and once
// with XSC_PROFILE=no-stacks to split off stack capture. `launch_path --race`
// makes one cross-stream free instead, so the report shows that launches
// reach the checker.
#include <benchmark/benchmark.h>
#include <cupti.h>
#include <xstream_check/host_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <deque>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::string exe_dir() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return ".";
  path[n] = '\0';
  std::string s(path);
  return s.substr(0, s.rfind('/'));
}

CUpti_CallbackFunc callback = nullptr;
void* callback_userdata = nullptr;

void call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site,
          const void* params, const void* result) {
  CUpti_CallbackData data{};
  data.callbackSite = site;
  data.functionName = "launch_path";
  data.functionParams = params;
  data.functionReturnValue = const_cast<void*>(result);
  callback(callback_userdata, domain, cbid, &data);
}

void runtime_call(CUpti_CallbackId cbid, const void* params) {
  const cudaError_t ok = cudaSuccess;
  call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_ENTER, params, &ok);
  call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, CUPTI_API_EXIT, params, &ok);
}

constexpr int kStreams = 4;
float* const kDevicePtr = reinterpret_cast<float*>(0x7f0000100000);
cudaStream_t streams[kStreams];
int stub;  // stands for a kernel's host stub / CUfunction

bool setup() {
  const std::string lib = exe_dir() + "/../lib/launch_path/";
  // The stand-in driver, found by the runtime through its soname.
  if (dlopen((lib + "libcuda.so.1").c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    std::fprintf(stderr, "launch_path: %s\n", dlerror());
    return false;
  }
  void* cupti = dlopen(std::getenv("XSC_CUPTI_LIB"), RTLD_NOW | RTLD_NOLOAD);
  using Getter = CUpti_CallbackFunc (*)(void**);
  auto get = cupti ? reinterpret_cast<Getter>(dlsym(cupti, "fake_cupti_callback")) : nullptr;
  if (get == nullptr || (callback = get(&callback_userdata)) == nullptr) {
    std::fprintf(stderr, "launch_path: the runtime did not subscribe (is it preloaded?)\n");
    return false;
  }
  void* ptr = kDevicePtr;
  cudaMalloc_v3020_params alloc{&ptr, 1 << 20};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &alloc);
  for (int i = 0; i < kStreams; ++i) {
    streams[i] = reinterpret_cast<cudaStream_t>(0x5000 + 0x100 * i);
    cudaStreamCreateWithFlags_v5000_params create{&streams[i], cudaStreamNonBlocking};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, &create);
  }
  return true;
}

// One cudaLaunchKernel as CUPTI reports it.
void launch_with(float* data, cudaStream_t stream, int i) {
  int n = i;
  void* args[] = {&data, &n};
  cudaLaunchKernel_v7000_params rt{&stub, dim3(1), dim3(32), args, 0, stream};
  cuLaunchKernel_params drv{reinterpret_cast<CUfunction>(&stub), 1, 1, 1, 32, 1, 1, 0,
                            reinterpret_cast<CUstream>(stream), args, nullptr};
  const cudaError_t rt_ok = cudaSuccess;
  const CUresult drv_ok = CUDA_SUCCESS;
  const auto rt_id = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  const auto drv_id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, CUPTI_API_ENTER, &rt, &rt_ok);
  call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, CUPTI_API_ENTER, &drv, &drv_ok);
  call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, CUPTI_API_EXIT, &drv, &drv_ok);
  call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, CUPTI_API_EXIT, &rt, &rt_ok);
}

void launch(int i) { launch_with(kDevicePtr, streams[i % kStreams], i); }

void BM_Launch(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) launch(i++);
}
BENCHMARK(BM_Launch)->Threads(1)->Threads(4)->UseRealTime();

// Launches from 48 different stack depths in turn: more distinct stacks than
// the runtime's per-thread caches hold, the worst case for stack capture.
__attribute__((noinline)) void launch_at_depth(int depth, int i) {
  if (depth == 0) {
    launch(i);
    return;
  }
  launch_at_depth(depth - 1, i);
  asm volatile("" ::: "memory");  // not a tail call: one frame per level
}

void BM_LaunchManySites(benchmark::State& state) {
  int i = 0;
  for (auto _ : state) {
    launch_at_depth(i % 48, i);
    ++i;
  }
}
BENCHMARK(BM_LaunchManySites)->UseRealTime();

// A caching-allocator block (as the PyTorch adapter or the annotations
// feed them) used on its own allocation stream: the common PyTorch launch,
// which needs no stack. Registered last, since from its first caching block
// on every launch also asks whether it needs a stack.
float* const kCachingBlock = reinterpret_cast<float*>(0x7f0000400000);
bool annotate_caching_block() {
  static const bool annotated = [] {
    using AnnotateAlloc = void (*)(void*, std::size_t, cudaStream_t);
    auto annotate = reinterpret_cast<AnnotateAlloc>(dlsym(RTLD_DEFAULT, "xsc_annotate_alloc"));
    if (annotate == nullptr) return false;
    annotate(kCachingBlock, 1 << 20, streams[0]);
    return true;
  }();
  return annotated;
}

void BM_LaunchCachingBlock(benchmark::State& state) {
  const bool annotated = annotate_caching_block();
  if (!annotated) {
    state.SkipWithError("xsc_annotate_alloc not found (is the runtime preloaded?)");
    return;
  }
  int i = 0;
  for (auto _ : state) launch_with(kCachingBlock, streams[0], i++);
}
BENCHMARK(BM_LaunchCachingBlock)->UseRealTime();

// A PyTorch elementwise kernel's arguments: a kilobyte of sizes and strides
// (an offset calculator) around the operands' data pointers, passed as a
// packed buffer; the operands are a caching block on its own stream.
void BM_LaunchLargeArguments(benchmark::State& state) {
  if (!annotate_caching_block()) {
    state.SkipWithError("xsc_annotate_alloc not found (is the runtime preloaded?)");
    return;
  }
  std::uint64_t args[128];
  for (int i = 0; i < 128; ++i) args[i] = (i % 3 == 0) ? 4096u * (i + 1) : 1u + i;  // sizes, strides
  args[1] = reinterpret_cast<std::uint64_t>(kCachingBlock);
  args[2] = reinterpret_cast<std::uint64_t>(kCachingBlock) + 4096;
  std::size_t size = sizeof args;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  const CUresult ok = CUDA_SUCCESS;
  const auto id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  for (auto _ : state) {
    cuLaunchKernel_params drv{reinterpret_cast<CUfunction>(&stub), 1, 1, 1, 32, 1, 1, 0,
                              reinterpret_cast<CUstream>(streams[0]), nullptr, extra};
    call(CUPTI_CB_DOMAIN_DRIVER_API, id, CUPTI_API_ENTER, &drv, &ok);
    call(CUPTI_CB_DOMAIN_DRIVER_API, id, CUPTI_API_EXIT, &drv, &ok);
  }
}
BENCHMARK(BM_LaunchLargeArguments)->UseRealTime();

// The PyTorch caching allocator's block lifetime as its adapter reports it
// (runtime/torch/allocator_tracker.cpp): an allocation, the free the
// program requested (deferred until the allocator's events complete) and
// its completion, which follows at once when no record_stream was made.
// Each with an interned stack, as the adapter's Python stacks are. A
// training step makes hundreds of these. 64 blocks stay live; a new block
// is one of the 32 most recently freed (the allocator's free lists hand out
// recent blocks of the size asked for), so freed ranges are remembered and
// forgotten again as in a training loop.
// The runtime's host API (the PyTorch adapter's way in), or null with the
// benchmark skipped.
const xsc_host_api* host_api(benchmark::State& state) {
  using HostApi = const xsc_host_api* (*)();
  auto get = reinterpret_cast<HostApi>(dlsym(RTLD_DEFAULT, "xsc_runtime_host_api"));
  const xsc_host_api* api = get != nullptr ? get() : nullptr;
  if (api == nullptr) state.SkipWithError("xsc_runtime_host_api not found (is the runtime preloaded?)");
  return api;
}

void BM_CachingBlockLifetime(benchmark::State& state) {
  const xsc_host_api* api = host_api(state);
  if (api == nullptr) return;
  const xsc_frame alloc_frame{"forward", "train.py", 40};
  const xsc_frame free_frame{"step", "train.py", 77};
  const std::uint32_t alloc_stack = api->intern_frames(&alloc_frame, 1);
  const std::uint32_t free_stack = api->intern_frames(&free_frame, 1);
  constexpr std::uint64_t kBase = 0x7f1000000000, kBlock = 1 << 16;
  constexpr std::size_t kLive = 64, kRecent = 32;
  const auto stream = reinterpret_cast<std::uint64_t>(streams[1]);
  std::deque<std::uint64_t> live;
  std::vector<std::uint64_t> freed;  // most recent last
  std::uint64_t fresh = kBase;
  std::uint32_t pick = 1;
  auto allocate = [&] {
    std::uint64_t addr;
    if (freed.empty()) {
      addr = fresh;
      fresh += kBlock;
    } else {
      pick = pick * 1664525u + 1013904223u;  // a fixed pseudo-random sequence
      const std::size_t back = (pick >> 8) % std::min(kRecent, freed.size());
      addr = freed[freed.size() - 1 - back];
      freed.erase(freed.end() - 1 - static_cast<std::ptrdiff_t>(back));
    }
    api->alloc(addr, kBlock, stream, XSC_ALLOC_CACHING, alloc_stack);
    live.push_back(addr);
  };
  for (std::size_t i = 0; i < kLive; ++i) allocate();
  for (auto _ : state) {
    const std::uint64_t oldest = live.front();
    live.pop_front();
    api->free(oldest, stream, XSC_FREE_CACHING, /*deferred=*/1, free_stack);
    api->free_completed(oldest, free_stack);
    freed.push_back(oldest);
    allocate();
  }
  for (const std::uint64_t addr : live)  // nothing left live for a later repetition
    api->free(addr, stream, XSC_FREE_CACHING, 0, free_stack);
}
BENCHMARK(BM_CachingBlockLifetime)->UseRealTime();

// An optimizer's foreach update as the PyTorch adapter reports it
// (runtime/torch/operator_access.cpp): one in-place operator over 150
// parameters, each a caching block on the compute stream, whose kernel was
// enqueued there while it ran; the operator's written tensors come whole,
// one write each. Per iteration: the launch and the operator's writes.
void BM_OperatorWrites(benchmark::State& state) {
  const xsc_host_api* api = host_api(state);
  if (api == nullptr) return;
  constexpr std::uint64_t kBase = 0x7f3000000000, kBlock = 1 << 16;
  constexpr std::size_t kParams = 150;
  const auto stream = reinterpret_cast<std::uint64_t>(streams[2]);
  std::vector<xsc_operator_write> writes(kParams);
  for (std::size_t i = 0; i < kParams; ++i) {
    writes[i] = xsc_operator_write{kBase + i * kBlock, kBlock};
    api->alloc(writes[i].addr, kBlock, stream, XSC_ALLOC_CACHING, 0);
  }
  int i = 0;
  for (auto _ : state) {
    const std::uint64_t mark = api->enqueue_mark();
    launch_with(reinterpret_cast<float*>(kBase), streams[2], i++);
    api->operator_writes("aten::_foreach_mul_", stream, mark, writes.data(), writes.size());
  }
  for (const xsc_operator_write& w : writes)
    api->free(w.addr, stream, XSC_FREE_CACHING, 0, 0);
}
BENCHMARK(BM_OperatorWrites)->UseRealTime();

// A training step's mix, in the process it runs in: 2,048 caching blocks
// live on two streams, and per iteration an allocation (one of the recently
// freed blocks), a launch reading two live blocks and writing the new one,
// the oldest block's free and completion, every 16th iteration an event
// recorded on the side stream and waited for on the compute stream, and
// the program's own work between launches: 256 KiB of a 64 MiB buffer read,
// which evicts the runtime's data from the caches as PyTorch's dispatcher
// and Python do (the in-process cost on the GPU is 2 to 3 times the
// engine's on a replayed trace, docs/performance.md). Compare
// checker_thread=0 and 1 (XSC_OPTIONS) by time or, with callgrind's cache
// simulation, by the misses left on the program's thread.
void BM_StepShape(benchmark::State& state) {
  const xsc_host_api* api = host_api(state);
  if (api == nullptr) return;
  const xsc_frame alloc_frame{"forward", "train.py", 40};
  const std::uint32_t alloc_stack = api->intern_frames(&alloc_frame, 1);
  constexpr std::uint64_t kBase = 0x7f2000000000, kBlock = 1 << 16;
  constexpr std::size_t kLive = 2048, kRecent = 64, kProgramBytes = 64u << 20,
                        kTouchPerLaunch = 256u << 10;
  cudaStream_t compute = streams[2], side = streams[3];
  std::vector<unsigned char> program(kProgramBytes, 1);
  std::size_t cursor = 0;
  std::deque<std::uint64_t> live;
  std::vector<std::uint64_t> freed;
  std::uint64_t fresh = kBase;
  std::uint32_t pick = 7;
  auto next = [&] {
    pick = pick * 1664525u + 1013904223u;
    return pick >> 8;
  };
  auto allocate = [&](cudaStream_t stream) {
    std::uint64_t addr;
    if (freed.size() < kRecent) {
      addr = fresh;
      fresh += kBlock;
    } else {
      const std::size_t back = next() % kRecent;
      addr = freed[freed.size() - 1 - back];
      freed.erase(freed.end() - 1 - static_cast<std::ptrdiff_t>(back));
    }
    api->alloc(addr, kBlock, reinterpret_cast<std::uint64_t>(stream), XSC_ALLOC_CACHING,
               alloc_stack);
    live.push_back(addr);
    return addr;
  };
  for (std::size_t i = 0; i < kLive; ++i) allocate(i % 2 ? compute : side);
  std::uint64_t event = 0xe0000;
  int i = 0;
  unsigned sink = 0;
  for (auto _ : state) {
    const bool on_side = next() % 4 == 0;
    cudaStream_t stream = on_side ? side : compute;
    const std::uint64_t out = allocate(stream);
    auto* a = reinterpret_cast<float*>(live[next() % live.size()]);
    auto* b = reinterpret_cast<float*>(live[next() % live.size()]);
    int n = i;
    auto* o = reinterpret_cast<float*>(out);
    void* args[] = {&a, &b, &o, &n};
    cuLaunchKernel_params drv{reinterpret_cast<CUfunction>(&stub), 1, 1, 1, 32, 1, 1, 0,
                              reinterpret_cast<CUstream>(stream), args, nullptr};
    const CUresult ok = CUDA_SUCCESS;
    call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER, &drv,
         &ok);
    call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_EXIT, &drv,
         &ok);
    const std::uint64_t oldest = live.front();
    live.pop_front();
    api->free(oldest, reinterpret_cast<std::uint64_t>(compute), XSC_FREE_CACHING, 1, 0);
    api->free_completed(oldest, 0);
    freed.push_back(oldest);
    if (freed.size() > 4 * kRecent) freed.erase(freed.begin(), freed.begin() + kRecent);
    if (++i % 16 == 0) {
      cudaEventRecord_v3020_params record{reinterpret_cast<cudaEvent_t>(event), side};
      runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &record);
      cudaStreamWaitEvent_v3020_params wait{compute, reinterpret_cast<cudaEvent_t>(event), 0};
      runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &wait);
    }
    for (std::size_t k = 0; k < kTouchPerLaunch; k += 64) sink += program[(cursor + k) % kProgramBytes];
    cursor = (cursor + kTouchPerLaunch) % kProgramBytes;
  }
  benchmark::DoNotOptimize(sink);
  for (const std::uint64_t addr : live)
    api->free(addr, reinterpret_cast<std::uint64_t>(compute), XSC_FREE_CACHING, 0, 0);
}
BENCHMARK(BM_StepShape)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("XSC_CUPTI_LIB") == nullptr) {
    // Re-run under the runtime with the stand-in CUPTI.
    const std::string dir = exe_dir();
    setenv("XSC_CUPTI_LIB", (dir + "/../lib/launch_path/libfake_cupti.so").c_str(), 1);
    setenv("LD_PRELOAD", (dir + "/../lib/libxstream_check.so").c_str(), 1);
    if (std::getenv("XSC_OPTIONS") == nullptr) setenv("XSC_OPTIONS", "exitcode=0", 1);
    execv("/proc/self/exe", argv);
    std::perror("launch_path: execv");
    return 1;
  }
  if (!setup()) return 1;
  if (argc > 1 && std::string(argv[1]) == "--race") {
    // Self-check that launches reach the checker: a launch on stream 1, then
    // a stream-ordered free on stream 0 with no ordering: one finding.
    launch(1);
    void* ptr = kDevicePtr;
    cudaFreeAsync_v11020_params free_params{ptr, streams[0]};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &free_params);
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
