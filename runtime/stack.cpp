// Host stacks at allocations, frees, launches and synchronizations.
//
// Capture is the hot part: raw return addresses only, interned into the
// session's StackDepot, symbolized when a report needs them. libunwind's
// unw_backtrace (with its cache) is an order of magnitude faster than
// libgcc's _Unwind_Backtrace, so it is used when a copy can be loaded: the
// system's, or the one placed next to this library at build time. Nothing
// is linked: the runtime loads on machines without libunwind.
#include <dlfcn.h>
#include <link.h>
#include <unwind.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

using BacktraceFn = int (*)(void**, int);

struct UnwindState {
  void** buffer;
  int count;
  int capacity;
};

_Unwind_Reason_Code collect_frame(struct _Unwind_Context* context, void* arg) {
  auto* state = static_cast<UnwindState*>(arg);
  if (state->count >= state->capacity) return _URC_END_OF_STACK;
  const _Unwind_Ptr ip = _Unwind_GetIP(context);
  if (ip == 0) return _URC_END_OF_STACK;
  state->buffer[state->count++] = reinterpret_cast<void*>(ip);
  return _URC_NO_REASON;
}

int libgcc_backtrace(void** buffer, int capacity) {
  UnwindState state{buffer, 0, capacity};
  _Unwind_Backtrace(collect_frame, &state);
  return state.count;
}

std::string own_directory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

BacktraceFn choose_backtrace() {
  const std::string bundled = own_directory() + "/xstream_check/libunwind.so.8";
  for (const std::string& name : {std::string("libunwind.so.8"), bundled}) {
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) continue;
    if (auto fn = reinterpret_cast<BacktraceFn>(dlsym(library, "unw_backtrace"))) return fn;
  }
  return libgcc_backtrace;
}

BacktraceFn backtrace_fn() {
  static const BacktraceFn fn = choose_backtrace();
  return fn;
}

// Code ranges of the tool itself (this library, CUPTI, the driver, a shared
// CUDA runtime): leading frames inside them are dropped, so a stack starts
// at the application's call.
struct Range {
  std::uint64_t begin = 0, end = 0;
};
constexpr std::size_t kMaxRanges = 32;
struct RangeSet {
  std::array<Range, kMaxRanges> ranges{};
  std::size_t count = 0;
};

std::atomic<const RangeSet*> tool_ranges{nullptr};
std::atomic<int> ranges_known_loads{-1};

bool is_tool_module(const char* path) {
  if (path == nullptr) return false;
  const char* base = std::strrchr(path, '/');
  base = base ? base + 1 : path;
  return std::strncmp(base, "libxstream_check", 16) == 0 || std::strncmp(base, "libcupti", 8) == 0 ||
         std::strncmp(base, "libcuda.so", 10) == 0 || std::strncmp(base, "libcudart", 9) == 0;
}

int collect_ranges(struct dl_phdr_info* info, size_t, void* arg) {
  auto* set = static_cast<RangeSet*>(arg);
  if (!is_tool_module(info->dlpi_name)) return 0;
  for (int i = 0; i < info->dlpi_phnum && set->count < kMaxRanges; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    set->ranges[set->count++] = {info->dlpi_addr + ph.p_vaddr,
                                 info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
  }
  return 0;
}

int count_loads(struct dl_phdr_info* info, size_t, void* arg) {
  *static_cast<int*>(arg) = static_cast<int>(info->dlpi_adds);
  return 1;
}

void refresh_tool_ranges() {
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto* set = new RangeSet;  // superseded sets are leaked: readers may hold them
  dl_iterate_phdr(collect_ranges, set);
  tool_ranges.store(set, std::memory_order_release);
}

bool in_tool(const RangeSet* set, std::uint64_t pc) {
  if (set == nullptr) return false;
  for (std::size_t i = 0; i < set->count; ++i)
    if (pc >= set->ranges[i].begin && pc < set->ranges[i].end) return true;
  return false;
}

std::atomic<std::uint32_t (*)(void)> launch_stack_hook{nullptr};

// The stacks this thread interned last. A program repeats its launch sites,
// and a hit skips the depot's mutex and hash lookup. Ids are valid for the
// process (the session is never replaced). On the heap, one pointer in
// TLS: the library uses initial-exec TLS, so its whole TLS block must fit
// the small static TLS surplus glibc keeps for libraries loaded by dlopen.
struct RecentStack {
  std::uint64_t hash = 0;
  std::uint32_t count = 0;
  StackId id = kNoStack;
  std::uint64_t pcs[64];
};
constexpr std::size_t kRecentStacks = 4;
struct RecentStacks {
  RecentStack entries[kRecentStacks];
  Session* session = nullptr;
};
thread_local std::unique_ptr<RecentStacks> recent_stacks;

StackId intern_recent(Session* session, const std::uint64_t* pcs, std::size_t count) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ull ^ count;
  for (std::size_t i = 0; i < count; ++i) hash = (hash ^ pcs[i]) * 0x100000001b3ull;
  if (!recent_stacks) recent_stacks = std::make_unique<RecentStacks>();
  RecentStacks& recent = *recent_stacks;
  if (recent.session != session) {  // a first capture on this thread
    recent = RecentStacks{};
    recent.session = session;
  }
  RecentStack& entry = recent.entries[(hash >> 32) % kRecentStacks];
  if (entry.id != kNoStack && entry.hash == hash && entry.count == count &&
      std::memcmp(entry.pcs, pcs, count * sizeof pcs[0]) == 0)
    return entry.id;
  const StackId id = session->stacks().intern_pcs(pcs, count);
  entry.hash = hash;
  entry.count = static_cast<std::uint32_t>(count);
  entry.id = id;
  std::memcpy(entry.pcs, pcs, count * sizeof pcs[0]);
  return id;
}

}  // namespace

// Rescans the loaded modules when libraries were loaded since the last scan
// (CUPTI and the driver arrive after the first stacks may be taken).
// Cheap: one dl_iterate_phdr step reads the load counter.
static void refresh_tool_ranges_if_needed() {
  int loads = 0;
  dl_iterate_phdr(count_loads, &loads);
  if (loads != ranges_known_loads.load(std::memory_order_relaxed)) {
    ranges_known_loads.store(loads, std::memory_order_relaxed);
    refresh_tool_ranges();
  }
}

StackId capture_stack() {
  if (profile_mode() == ProfileMode::kNoStacks) return kNoStack;
  const int depth = std::min(options().stack_depth, 64);
  if (depth <= 0) return kNoStack;
  Session* session = session_unlocked();
  if (session == nullptr) return kNoStack;
  refresh_tool_ranges_if_needed();
  void* raw[96];
  const int n = backtrace_fn()(raw, std::min(depth + 32, 96));
  const RangeSet* tools = tool_ranges.load(std::memory_order_acquire);
  int first = 0;
  while (first < n && in_tool(tools, reinterpret_cast<std::uint64_t>(raw[first]))) ++first;
  std::uint64_t pcs[64];
  std::size_t count = 0;
  for (int i = first; i < n && count < static_cast<std::size_t>(depth); ++i) {
    // Return addresses point after the call; step back into it so that
    // symbolization names the calling line.
    const auto pc = reinterpret_cast<std::uint64_t>(raw[i]);
    pcs[count++] = pc > 0 ? pc - 1 : 0;
  }
  if (count == 0) return kNoStack;
  return intern_recent(session, pcs, count);
}

int raw_backtrace(void** buffer, int capacity) { return backtrace_fn()(buffer, capacity); }

StackId capture_launch_stack() {
  if (profile_mode() == ProfileMode::kNoStacks) return kNoStack;
  if (auto hook = launch_stack_hook.load(std::memory_order_acquire)) {
    const StackId python = hook();
    if (python != kNoStack) return python;
  }
  return capture_stack();
}

StackId capture_sync_stack() {
  if (profile_mode() == ProfileMode::kNoStacks) return kNoStack;
  if (launch_stack_hook.load(std::memory_order_acquire) != nullptr) {
    // Resolved once a hook exists: the adapter is only loaded into Python
    // processes with PyTorch, so the interpreter is already there.
    using GilCheck = int (*)(void);
    static const auto holds_gil =
        reinterpret_cast<GilCheck>(dlsym(RTLD_DEFAULT, "PyGILState_Check"));
    if (holds_gil != nullptr && holds_gil() != 0) return capture_launch_stack();
  }
  return capture_stack();
}

void set_launch_stack_hook(std::uint32_t (*hook)(void)) {
  launch_stack_hook.store(hook, std::memory_order_release);
}

}  // namespace xsc::rt
