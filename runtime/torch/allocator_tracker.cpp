#include "runtime/torch/allocator_tracker.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/csrc/profiler/combined_traceback.h>

#include "runtime/torch/adapter_parts.h"
#include "runtime/torch/python_api.h"
#include "runtime/torch/python_stacks.h"
#include "runtime/torch/trace_steps.h"

namespace xsc::torch_adapter {
namespace {

namespace alloc_ns = c10::cuda::CUDACachingAllocator;
using c10::CachingDeviceAllocator::TraceEntry;

const xsc_host_api* g_api = nullptr;
const xsc_host_api* g_parts = nullptr;  // adapter_parts.h
PythonStacks* g_stacks = nullptr;
std::mutex g_install_mu;
std::atomic<bool> g_installed{false};

// The context the allocator stores with each trace entry: the id of a stack
// already interned in the runtime's depot. It derives from PyTorch's own
// traceback type, with no frames of its own, so that a program that takes a
// memory snapshot (torch.cuda.memory._snapshot) while being checked still
// gets a well-formed snapshot, only without frames.
class InternedStackContext final : public torch::CapturedTraceback {
 public:
  explicit InternedStackContext(std::uint32_t stack) : stack_(stack) {}
  std::uint32_t stack() const { return stack_; }

 private:
  std::uint32_t stack_;
};

// One context object per stack id, shared by every entry of that stack: the
// allocator asks for a context at each allocation and free, and a fresh
// object each time would be a heap allocation and release per event. Per
// thread, so without a lock: the stacks this thread used last, direct
// mapped. Leaked with the thread, not destroyed: the allocator asks for
// contexts until the process is gone, after thread-local destructors ran.
struct ContextCache {
  static constexpr std::size_t kEntries = 64;
  struct Entry {
    std::uint32_t stack = 0;
    std::shared_ptr<c10::GatheredContext> context;
  };
  Entry entries[kEntries];
};
thread_local ContextCache* context_cache = nullptr;

std::shared_ptr<c10::GatheredContext> context_for(std::uint32_t stack) {
  // Stack 0 (no Python stack: the runtime captures the host stack) still
  // needs a context of ours, or a free would carry its allocation's.
  static const auto* no_stack =
      new std::shared_ptr<c10::GatheredContext>(std::make_shared<InternedStackContext>(0));
  if (stack == 0) return *no_stack;
  if (context_cache == nullptr) context_cache = new ContextCache;
  ContextCache::Entry& entry = context_cache->entries[stack % ContextCache::kEntries];
  if (entry.stack != stack || !entry.context) {
    entry.stack = stack;
    entry.context = std::make_shared<InternedStackContext>(stack);
  }
  return entry.context;
}

// The allocator's context recorder; runs outside the allocator lock.
int traced_contexts = 0;
int traced_entries = 0;

std::shared_ptr<c10::GatheredContext> record_context() {
  const AdapterPart part(g_parts, XSC_PART_CONTEXT_RECORDER);
  // gettid is a system call: asked for only when tracing.
  if (tracing_steps())
    trace_first(&traced_contexts, 8, "context: capturing on thread",
                static_cast<unsigned long long>(gettid()));
  const std::uint32_t stack = g_stacks->capture();
  trace_first(&traced_contexts, 8, "context: stack", stack);
  return context_for(stack);
}

// The stack id carried by a trace entry. 0 asks the runtime to capture the
// host stack: contexts of another recorder (the program enabled memory
// history itself after we did) cannot be symbolized without the GIL here.
std::uint32_t stack_of(const TraceEntry& entry) {
  auto* ours = dynamic_cast<const InternedStackContext*>(entry.context_.get());
  return ours ? ours->stack() : 0;
}

// Runs under the per-device allocator lock: no GIL, no torch calls, no CUDA.
void on_trace_entry(const TraceEntry& entry) {
  trace_first(&traced_entries, 8, "trace entry action", static_cast<unsigned>(entry.action_));
  const std::uint64_t addr = entry.addr_;
  const auto stream = reinterpret_cast<std::uint64_t>(entry.stream_);
  switch (entry.action_) {
    case TraceEntry::ALLOC:
      g_api->alloc(addr, entry.size_, stream, XSC_ALLOC_CACHING, stack_of(entry));
      break;
    case TraceEntry::FREE_REQUESTED:
      // Every caching-allocator free is reported as deferred: when no stream
      // was recorded, FREE_COMPLETED follows at once and the checker treats
      // the pair as an immediate free; otherwise the block is parked until
      // the allocator's event query succeeds.
      g_api->free(addr, stream, XSC_FREE_CACHING, /*deferred=*/1, stack_of(entry));
      break;
    case TraceEntry::FREE_COMPLETED:
      g_api->free_completed(addr, stack_of(entry));
      break;
    default:
      // Segment (cudaMalloc/cudaFree, map/unmap), snapshot and OOM entries
      // say nothing about the lifetime of the blocks the program uses.
      break;
  }
}

}  // namespace

InstallResult install_allocator_hooks(const xsc_host_api* api, PythonStacks* stacks,
                                      std::string* why) {
  if (g_installed.load(std::memory_order_acquire)) return InstallResult::kInstalled;
  std::lock_guard<std::mutex> lock(g_install_mu);
  if (g_installed.load(std::memory_order_relaxed)) return InstallResult::kInstalled;

  alloc_ns::CUDAAllocator* allocator = alloc_ns::allocator.load();
  trace_step("allocator", reinterpret_cast<std::uintptr_t>(allocator), true);
  if (allocator == nullptr) return InstallResult::kNotInitialized;
  try {
    // Trackers and recorders are attached per device; before CUDA's lazy
    // initialization there are no devices to attach to.
    if (!allocator->initialized()) return InstallResult::kNotInitialized;
    g_api = api;
    g_parts = parts_api(api);
    g_stacks = stacks;
    trace_step("allocator initialized");
    // XSC_PROFILE=no-stacks (a measurement variant, docs/performance-knobs.md)
    // leaves out every stack capture, the Python stacks of allocations and
    // frees included.
    const char* profile = std::getenv("XSC_PROFILE");
    const bool no_stacks = profile != nullptr && std::strcmp(profile, "no-stacks") == 0;
    if (python_usable() && !no_stacks) {
      trace_step("recordHistory");
      // "all" contexts, so that a free carries the stack of the `del`, not
      // of the allocation; one history entry, so the allocator keeps no
      // trace of its own worth mentioning.
      allocator->recordHistory(/*enabled=*/true, &record_context, /*alloc_trace_max_entries=*/1,
                               alloc_ns::RecordContext::ALL, /*clearHistory=*/false,
                               /*skip_actions=*/{});
    }
    trace_step("attachAllocatorTraceTracker");
    allocator->attachAllocatorTraceTracker(&on_trace_entry);
    trace_step("hooks installed");
  } catch (const std::exception& e) {
    // cudaMallocAsync and other backends refuse trace trackers.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));  // c10::Error appends a backtrace
    *why = "the PyTorch CUDA allocator '" + allocator->name() + "' cannot be observed (" + what +
           ")";
    return InstallResult::kFailed;
  }
  g_installed.store(true, std::memory_order_release);
  return InstallResult::kInstalled;
}

}  // namespace xsc::torch_adapter
