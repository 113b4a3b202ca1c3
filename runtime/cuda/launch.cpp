// Kernel launches: which live allocations a kernel's arguments point into.
//
// Each launch handle (CUfunction or CUkernel) is described once, on its
// first launch: parameter layout from cuFuncGetParamInfo (cuKernelGetParamInfo
// for CUkernel handles), demangled name, and which parameters its mangled
// name declares as pointers to const (param_access.h), or that the front
// end that compiled it declared read or written whole (declared_params.h):
// a use made only through the first is a read, and the second are known
// writes. Later launches cost a lookup in
// a per-thread cache (no lock), a scan of the argument words and, under the
// session lock, one checker lookup per word that could be an address; no
// allocation on that path. A launch whose words all lie on pages whose live
// blocks are all its stream's untouched caching blocks (most of a PyTorch
// step's) hands them to the checker's thread instead, to be looked up there.
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/cuda/launch_uses.h"
#include "runtime/cuda/ops.h"
#include "runtime/cuda/param_access/param_access.h"
#include "runtime/cuda/param_access/param_fill.h"
#include "runtime/cuda/param_scan.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

struct KernelInfo {
  std::vector<ParamSlot> slots;
  // Per slot: 1 when the kernel only reads through that parameter. Empty
  // when nothing is known: an extern "C" kernel, a name that does not parse,
  // or a signature whose parameter count is not the layout's (then the two
  // cannot be matched up, and no parameter is taken for a read).
  std::vector<std::uint8_t> read_only;
  // Per slot, which words a scan reads (param_fill.h); empty when every
  // parameter is scanned whole.
  std::vector<ParamFill> fills;
  // Parameters its source declares written whole, as array descriptors
  // (declared_params.h); empty for every kernel no front end declared.
  struct DeclaredWrite {
    std::size_t slot = 0;
    DeclaredParam param;
  };
  std::vector<DeclaredWrite> writes;
  NameId name = kNoName;

  // Per slot, the bytes whose words are only read through (an elementwise
  // kernel's inputs after its output, a reduction's src: param_fill.h's
  // kernel_operand_reads); empty when no slot has any.
  std::vector<ReadSpan> read_spans;

  // A kernel of PyTorch's ATen (namespace at): ATen checks that every
  // tensor a CUDA kernel is handed lives on the device, and passes a CPU
  // scalar by value, so none of its words points into host memory. One
  // that does into pinned host memory is a stale word of the host's stack
  // (an OffsetCalculator's sizes and strides past its dims, inside a
  // lambda's captures, where param_fill.h cannot see them): taken for a use,
  // the host's next access of that pinned buffer would be reported against a
  // kernel that never touched it.
  bool device_operands_only = false;

  // A verbose run's note that a launch's captured offset calculator did
  // not read as one (param_fill.h's offset_calculator_at), said once per
  // kernel: its words were scanned whole, stale ones too.
  mutable std::atomic<bool> calculator_miss_noted{false};

  // Whether an argument word that points into `alloc` is taken for a use.
  bool uses(const AllocInfo& alloc) const {
    return !(device_operands_only && alloc.kind == AllocKind::kPinnedHost);
  }

  const ParamFill* fills_or_null() const { return fills.empty() ? nullptr : fills.data(); }

  // Whether the word at byte `at` of parameter `slot` is only read through.
  bool reads_at(std::size_t slot, std::uint32_t at) const {
    return (slot < read_only.size() && read_only[slot] != 0) ||
           (slot < read_spans.size() && read_spans[slot].contains(at));
  }
};

// Matches the signature's parameters to the layout's, one to one: nvcc
// makes each declared parameter one kernel parameter, in order.
std::vector<std::uint8_t> read_only_slots(const std::vector<ParamAccess>& access,
                                          std::size_t slot_count) {
  if (access.size() != slot_count) return {};
  std::vector<std::uint8_t> out(slot_count, 0);
  bool any = false;
  for (std::size_t i = 0; i < slot_count; ++i) {
    out[i] = access[i] == ParamAccess::kRead ? 1 : 0;
    any = any || out[i] != 0;
  }
  if (!any) return {};
  return out;
}

struct KernelCache {
  std::mutex mu;
  std::unordered_map<std::uint64_t, const KernelInfo*> by_handle;
  std::unordered_map<const void*, std::uint64_t> by_stub;  // host stub -> CUfunction
  // Failed cudaGetFuncBySymbol lookups of stubs not yet in by_stub.
  std::unordered_map<const void*, int> stub_lookups_failed;
  // What front ends declared of kernels' parameters (declare_kernel_params).
  std::unordered_map<std::uint64_t, std::vector<DeclaredParam>> declared;
};

KernelCache& cache() {
  static auto* instance = new KernelCache;
  return *instance;
}

using ParamInfoFn = int (*)(void*, std::size_t, std::size_t*, std::size_t*);

std::vector<ParamSlot> read_layout(ParamInfoFn get, void* handle) {
  std::vector<ParamSlot> slots;
  if (get == nullptr) return slots;
  for (std::size_t i = 0;; ++i) {
    std::size_t offset = 0, size = 0;
    if (get(handle, i, &offset, &size) != 0) break;
    slots.push_back({static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
  }
  return slots;
}

// What a verbose run says of a kernel whose parameters are read as filled
// in part, so that a run shows which of its kernels the layouts matched.
void note_param_fills(const char* mangled, const std::vector<ParamFill>& fills) {
  std::string kinds;
  for (std::size_t i = 0; i < fills.size(); ++i) {
    const char* kind = nullptr;
    switch (fills[i].kind) {
      case ParamFill::Kind::kWhole: break;
      case ParamFill::Kind::kFixedEntries: kind = "pointer members only"; break;
      case ParamFill::Kind::kGridYEntries: kind = "entries below gridDim.y"; break;
      case ParamFill::Kind::kGridXEntries: kind = "entries below gridDim.x"; break;
      case ParamFill::Kind::kBlockTensors: kind = "tensors of its blocks"; break;
      case ParamFill::Kind::kReduction:
        kind = "offset calculators skipped, dst[1] only with two outputs";
        break;
      case ParamFill::Kind::kLeadingOffsetCalculator:
        kind = "captured offset calculator skipped where set";
        break;
    }
    if (kind == nullptr) continue;
    kinds += (kinds.empty() ? "" : ", ") + std::string("parameter ") + std::to_string(i) + ": " +
             kind;
  }
  notice("kernel parameters filled in part (" + kinds + ") in " + demangle(mangled));
}

// What a front end declared of the kernel's parameters, when it declared
// one entry per parameter of the layout: reads, and the array descriptors
// written whole, whose size must be a descriptor's.
void apply_declared_params(std::uint64_t handle, KernelInfo* info) {
  std::vector<DeclaredParam> declared;
  {
    KernelCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.declared.find(handle);
    if (it == c.declared.end()) return;
    declared = it->second;
  }
  if (declared.size() != info->slots.size()) return;
  std::vector<ParamAccess> access(declared.size(), ParamAccess::kUnknown);
  for (std::size_t i = 0; i < declared.size(); ++i) {
    if (declared[i].access == DeclaredAccess::kRead)
      access[i] = ParamAccess::kRead;
    else if (declared[i].access == DeclaredAccess::kWritesArray &&
             info->slots[i].size == array_descriptor_size(declared[i].ndim))
      info->writes.push_back({i, declared[i]});
  }
  std::vector<std::uint8_t> read_only = read_only_slots(access, info->slots.size());
  if (!read_only.empty()) info->read_only = std::move(read_only);
}

// A launch handle's mangled name (the driver's string), or null. Under a
// ReentrancyGuard: the queries are driver calls.
const char* mangled_name(void* h) {
  const DriverApi& api = driver();
  const char* raw_name = nullptr;
  if (api.cuFuncGetName == nullptr || api.cuFuncGetName(&raw_name, h) != 0) raw_name = nullptr;
  if (raw_name == nullptr && api.cuKernelGetName != nullptr &&
      api.cuKernelGetName(&raw_name, h) != 0)
    raw_name = nullptr;
  return raw_name;
}

const KernelInfo* describe(std::uint64_t handle) {
  auto* info = new KernelInfo;
  const DriverApi& api = driver();
  void* h = reinterpret_cast<void*>(handle);
  ReentrancyGuard guard;
  // Launch handles are CUfunction or CUkernel values; each query family
  // accepts only its own kind, so try both.
  info->slots = read_layout(api.cuFuncGetParamInfo, h);
  if (info->slots.empty()) info->slots = read_layout(api.cuKernelGetParamInfo, h);
  const char* raw_name = mangled_name(h);
  if (Session* session = session_unlocked())
    info->name = session->names().intern(demangle(raw_name));
  if (raw_name != nullptr) {
    info->device_operands_only = std::strncmp(raw_name, "_ZN2at", 6) == 0;
    std::vector<std::uint32_t> sizes;
    for (const ParamSlot& slot : info->slots) sizes.push_back(slot.size);
    std::vector<ParamAccess> access;
    kernel_param_layout(raw_name, sizes.data(), sizes.size(), &access,
                        options().param_fills ? &info->fills : nullptr, &info->read_spans);
    info->read_only = read_only_slots(access, info->slots.size());
    if (!info->fills.empty() && options().verbosity >= 1) note_param_fills(raw_name, info->fills);
  }
  apply_declared_params(handle, info);
  return info;
}

// A per-thread direct-mapped front for the shared cache: a program launches
// a handful of kernels over and over, and the shared map's mutex would be
// taken on every launch by every launching thread. Entries are never freed,
// so a cached pointer stays valid.
struct RecentKernel {
  std::uint64_t handle = 0;
  const KernelInfo* info = nullptr;
};
// A training step launches a hundred or so distinct kernels: fewer entries
// than that miss on most launches and take the shared cache's mutex.
constexpr std::size_t kRecentKernels = 256;
struct RecentKernels {
  RecentKernel entries[kRecentKernels];
};

std::size_t recent_slot(std::uint64_t handle) {
  return static_cast<std::size_t>((handle >> 4) ^ (handle >> 12)) % kRecentKernels;
}

const KernelInfo* shared_kernel_info(std::uint64_t handle) {
  KernelCache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.by_handle.find(handle);
    if (it != c.by_handle.end()) return it->second;
  }
  const KernelInfo* info = describe(handle);
  std::lock_guard<std::mutex> lock(c.mu);
  auto [it, inserted] = c.by_handle.emplace(handle, info);
  if (!inserted) delete info;  // another thread described it first
  return it->second;
}

const KernelInfo* kernel_info(std::uint64_t handle) {
  auto* recent_kernels = thread_cache<RecentKernels>(&thread_state().kernel_cache);
  RecentKernel& recent = recent_kernels->entries[recent_slot(handle)];
  if (recent.handle == handle && recent.info != nullptr) return recent.info;
  const KernelInfo* info = shared_kernel_info(handle);
  recent.handle = handle;
  recent.info = info;
  return info;
}

// cudaLaunchKernel names its kernel by host stub; the runtime maps stubs to
// functions. Only reachable when the CUDA runtime is a shared library.
//
// cudaGetFuncBySymbol is a runtime call made on the application's thread,
// inside its launch: one that fails leaves its error as the thread's last
// error (cudaErrorInvalidDeviceFunction, seen on an H100 in a program whose
// eight threads launch the same kernels at once), which the
// application's next cudaGetLastError returns as if its own call had
// failed. So the lookup is made only while the thread has no error
// pending, and an error it leaves is cleared: the application reads what
// it would have read natively. A failed lookup is not cached but tried again
// at the stub's next launches, up to kStubLookups times (a failure cached
// would leave every later launch of the kernel unscanned).
constexpr int kStubLookups = 8;

std::uint64_t function_of_stub(const void* stub) {
  KernelCache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.by_stub.find(stub);
    if (it != c.by_stub.end()) return it->second;
  }
  using GetFuncBySymbol = int (*)(void**, const void*);
  using LastError = int (*)();
  static auto get = reinterpret_cast<GetFuncBySymbol>(dlsym(RTLD_DEFAULT, "cudaGetFuncBySymbol"));
  static auto peek = reinterpret_cast<LastError>(dlsym(RTLD_DEFAULT, "cudaPeekAtLastError"));
  static auto take = reinterpret_cast<LastError>(dlsym(RTLD_DEFAULT, "cudaGetLastError"));
  void* function = nullptr;
  int failed = 0;
  if (get != nullptr && peek != nullptr && take != nullptr) {
    ReentrancyGuard guard;
    if (peek() != 0) return 0;  // the application's error, not read yet: no call of ours
    failed = get(&function, stub);
    if (failed != 0) {
      take();
      function = nullptr;
    }
  }
  bool first_failure = false;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (failed == 0 || ++c.stub_lookups_failed[stub] >= kStubLookups) {
      // Another thread's lookup may have come first: its answer stands.
      function = reinterpret_cast<void*>(
          c.by_stub.emplace(stub, reinterpret_cast<std::uint64_t>(function)).first->second);
    } else {
      first_failure = c.stub_lookups_failed.size() == 1 && c.stub_lookups_failed[stub] == 1;
    }
  }
  if (first_failure && options().verbosity >= 1)
    notice("cudaGetFuncBySymbol failed on a launch's host stub (error " + std::to_string(failed) +
           "), its error cleared; looked up again at the kernel's next launch");
  return reinterpret_cast<std::uint64_t>(function);
}

// Words collected before taking the session lock; a launch with more
// candidates than this rescans under the lock.
constexpr std::size_t kMaxCandidates = 128;

// A caching-allocator block used by a launch on its own allocation stream.
// The checker releases a caching block at its allocation stream's point in
// stream order (whatever stream the free names), which every earlier op of
// that stream precedes, and such a block is ready at once: the free of the
// block can never be reported against a use like this. A PyTorch training
// step makes nearly all of its uses so, several per launch, so such a use
// is fed without a stack (a Python stack costs the GIL). It is still fed:
// the memory carries it after the free, and a later occupant first touched
// on another stream that never waited for this one races with it.
//
// Unless another stream takes part in the memory's uses: an earlier
// occupant's use it still carries (this use may be the one that races with
// it: the block freed before its allocation stream waited), or a use or a
// known write of the block itself (a copy may land on this read). Then a
// report may name this use, and needs its stack. The same inside a stream capture: captured work runs
// when its graph is launched, on the stream the graph is launched on.
bool is_own_stream_caching_use(const AllocInfo& alloc, StreamId stream) {
  return alloc.kind == AllocKind::kCachingAllocator && alloc.stream == stream;
}

// Emits the launch's uses of the allocations found (launch_uses.h).
void emit_uses(Locked& locked, const DistinctAllocations& found, StreamId stream, NameId name,
               StackId stack) {
  Event bare = bare_use(stream, UseWhat::kKernel, name);
  bare.stack = stack;
  for_each_launch_use(found, bare, [&](const Event& use) { locked.emit(use); });
}

// Looks up every word (`for_each_word` calls its argument on each word and
// whether it came through a read-only parameter) and emits the uses of the
// allocations they point into. Returns a word into pinned host memory (a
// kernel reading or writing it directly), or 0; *pinned_may_write when a
// word into pinned memory is not known to be only read.
template <typename ForEachWord>
Addr emit_launch_uses(Locked& locked, StreamId stream, const KernelInfo& info, StackId stack,
                      bool* pinned_may_write, LaunchWordCounts* counts,
                      ForEachWord&& for_each_word) {
  DistinctAllocations found;
  Addr pinned = 0;
  for_each_word([&](std::uint64_t word, bool read) {
    AllocInfo alloc;
    ++counts->looked_up;
    if (!locked.lookup_allocation(word, &alloc) || !info.uses(alloc)) {
      ++counts->missed;
      return;
    }
    if (alloc.kind == AllocKind::kPinnedHost) {
      pinned = word;
      if (!read) *pinned_may_write = true;
    }
    found.add(alloc.addr, word, read);
  });
  emit_uses(locked, found, stream, info.name, stack);
  return pinned;
}

// Feeds the bytes the launch writes through its declared array
// descriptors, as known writes named by the kernel, after its uses and with
// their stack.
// The bytes of parameter `i` (laid out at `slot`) of a launch: in its
// packed buffer when it has one, else where kernel_params[i] points; null
// when neither holds them.
const unsigned char* launch_param_bytes(const ParamSlot& slot, std::size_t i,
                                        void* const* kernel_params, const void* packed,
                                        std::size_t packed_size) {
  if (packed != nullptr)
    return std::size_t{slot.offset} + slot.size <= packed_size
               ? static_cast<const unsigned char*>(packed) + slot.offset
               : nullptr;
  return kernel_params != nullptr ? static_cast<const unsigned char*>(kernel_params[i]) : nullptr;
}

void emit_declared_writes(Locked& locked, const KernelInfo& info, void** kernel_params,
                          const void* packed, std::size_t packed_size, StreamId stream,
                          StackId stack) {
  OperatorUse writes[8];
  std::size_t n = 0;
  for (const KernelInfo::DeclaredWrite& w : info.writes) {
    const ParamSlot& slot = info.slots[w.slot];
    const unsigned char* bytes =
        launch_param_bytes(slot, w.slot, kernel_params, packed, packed_size);
    ArrayWrite extent;
    if (!array_write_extent(bytes, slot.size, w.param, &extent)) continue;
    writes[n++] = {extent.addr, extent.size, Access::kWrite};
    if (n == std::size(writes)) {
      feed_operator_uses_locked(locked, info.name, stream, writes, n, stack);
      n = 0;
    }
  }
  if (n > 0) feed_operator_uses_locked(locked, info.name, stream, writes, n, stack);
}

// Verbose runs: whether each launch's captured offset calculator read as
// one, so that a run shows where the closure layout param_fill.h expects
// is not the one a kernel was compiled with.
void note_calculator_miss(std::uint64_t handle, const KernelInfo& info, void* const* kernel_params,
                          const void* packed, std::size_t packed_size) {
  if (info.calculator_miss_noted.load(std::memory_order_relaxed)) return;
  for (std::size_t i = 0; i < info.fills.size() && i < info.slots.size(); ++i) {
    if (info.fills[i].kind != ParamFill::Kind::kLeadingOffsetCalculator) continue;
    const ParamSlot& slot = info.slots[i];
    const unsigned char* bytes = launch_param_bytes(slot, i, kernel_params, packed, packed_size);
    if (bytes == nullptr || offset_calculator_at(bytes, slot.size)) continue;
    if (info.calculator_miss_noted.exchange(true)) return;
    ReentrancyGuard guard;
    notice("a launch's captured offset calculator (parameter " + std::to_string(i) +
           ") did not read as one; its words were scanned whole in " +
           demangle(mangled_name(reinterpret_cast<void*>(handle))));
    return;
  }
}

}  // namespace

void declare_kernel_params(std::uint64_t func, const DeclaredParam* params, std::size_t n) {
  if (func == 0 || params == nullptr) return;
  KernelCache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.declared[func].assign(params, params + n);
}

void on_kernel_launch(std::uint64_t func, void** kernel_params, void** extra,
                      const LaunchGrid& grid, StreamId stream) {
  if (!enabled()) return;
  if (func == 0) {  // nothing to scan, but an op on its stream all the same
    Locked locked;
    if (locked) locked.emit(bare_use(stream, UseWhat::kKernel));
    return;
  }
  const KernelInfo* info = kernel_info(func);
  const void* packed = nullptr;
  std::size_t packed_size = 0;
  const bool has_packed = packed_param_buffer(extra, &packed, &packed_size);
  if (options().verbosity >= 1 && !info->fills.empty())
    note_calculator_miss(func, *info, kernel_params, has_packed ? packed : nullptr, packed_size);

  std::uint64_t candidates[kMaxCandidates];
  bool candidate_read[kMaxCandidates];
  std::size_t count = 0;
  bool overflow = false;
  const AddressSpan span = tracked_address_span();
  const AddressWindow window(span.low, span.high);
  const TrackedPages& pages = tracked_pages();
  LaunchWordCounts counts;
  // Calls fn(word, read) for each word of the arguments in the window whose
  // page ever held a tracked allocation.
  auto scan = [&](auto&& fn) {
    auto indexed = [&](std::uint64_t word, std::size_t slot, std::uint32_t at) {
      if (!pages.may_hold(word)) {
        ++counts.filtered;
        return;
      }
      fn(word, info->reads_at(slot, at));
    };
    if (has_packed)
      scan_packed_buffer_indexed(packed, packed_size, info->slots.data(), info->slots.size(),
                                 window, indexed, info->fills_or_null(), grid);
    else
      scan_kernel_params_indexed(kernel_params, info->slots.data(), info->slots.size(), window,
                                 indexed, info->fills_or_null(), grid);
  };
  scan([&](std::uint64_t word, bool read) {
    if (count < kMaxCandidates) {
      candidate_read[count] = read;
      candidates[count++] = word;
    } else {
      overflow = true;
    }
  });
  // A kernel whose arguments are all scalars is still an op on its stream
  // (on the legacy stream it orders every blocking stream): one bare use,
  // without a stack, since nothing can be reported against it.
  if (count == 0) {
    Locked locked;
    if (!locked) return;
    count_launch_words(counts);
    locked.emit(bare_use(stream, UseWhat::kKernel, info->name));
    return;
  }

  auto each_candidate = [&](auto&& fn) {
    for (std::size_t i = 0; i < count; ++i) fn(candidates[i], candidate_read[i]);
  };
  // Once caching blocks exist, most launches use nothing but own-stream
  // caching blocks and need no stack. When every word lies on a page that
  // holds only the stream's own blocks, the pages say so without a lookup
  // and the words go to the checker's thread (Locked::emit_own_stream_launch);
  // otherwise find out under the lock and, when none is needed, emit under
  // that same lock. A stack is never captured under the session lock (a
  // Python stack takes the GIL, which must never be waited for while
  // holding it), so a launch that does need one releases the lock,
  // captures, and looks its words up again.
  // A launch with declared writes takes the stack: the write is reported
  // by its launch site, as a copy is.
  const bool declares_writes = !info->writes.empty();
  if (!overflow && caching_blocks_seen() && !declares_writes) {
    Locked locked;
    if (!locked) return;
    const bool keep_own_stream = captures_underway(locked);
    if (!keep_own_stream &&
        locked.emit_own_stream_launch(stream, info->name, candidates, candidate_read, count)) {
      LaunchWordCounts handed = counts;
      handed.handed_over = count;
      count_launch_words(handed);
      return;
    }
    bool needs_stack = false;
    DistinctAllocations own;
    LaunchWordCounts looked = counts;
    for (std::size_t i = 0; i < count && !needs_stack; ++i) {
      AllocInfo alloc;
      bool carries_past_uses = false;
      ++looked.looked_up;
      if (!locked.lookup_allocation(candidates[i], &alloc, &carries_past_uses) ||
          !info->uses(alloc)) {
        ++looked.missed;
        continue;
      }
      // Inside a capture an own-stream use counts where the graph runs,
      // and is reported with the launch's stack like any other.
      if (keep_own_stream || carries_past_uses || !is_own_stream_caching_use(alloc, stream))
        needs_stack = true;
      else
        own.add(alloc.addr, candidates[i], candidate_read[i]);
    }
    if (!needs_stack) {
      count_launch_words(looked);
      emit_uses(locked, own, stream, info->name, kNoStack);
      return;
    }
  }

  const StackId stack = capture_launch_stack();
  Addr pinned = 0;
  bool pinned_may_write = false;
  std::string kernel;  // named in the notice of the first pinned use
  {
    Locked locked;
    if (!locked) return;
    // An overflowing launch scans again: its words are counted once, here.
    if (overflow) counts = LaunchWordCounts{};
    pinned = !overflow ? emit_launch_uses(locked, stream, *info, stack, &pinned_may_write,
                                          &counts, each_candidate)
                       : emit_launch_uses(locked, stream, *info, stack, &pinned_may_write,
                                          &counts, scan);
    count_launch_words(counts);
    if (declares_writes)
      emit_declared_writes(locked, *info, kernel_params, has_packed ? packed : nullptr,
                           packed_size, stream, stack);
    if (pinned != 0) {
      pinned_use_fed(locked, pinned_may_write);
      if (!pinned_device_use_seen() || options().verbosity >= 2)
        kernel = "kernel " + std::string(locked.names().get(info->name));
    }
  }
  if (pinned != 0) note_pinned_device_use(kernel.c_str(), pinned, pinned_may_write, stack);
}

void on_runtime_launch(const void* host_func, bool is_kernel_handle, void** args,
                       const LaunchGrid& grid, StreamId stream) {
  if (!enabled() || host_func == nullptr) return;
  // A cudaKernel_t is a CUkernel.
  const std::uint64_t func = is_kernel_handle ? reinterpret_cast<std::uint64_t>(host_func)
                                              : function_of_stub(host_func);
  on_kernel_launch(func, args, nullptr, grid, stream);
}

}  // namespace xsc::rt
