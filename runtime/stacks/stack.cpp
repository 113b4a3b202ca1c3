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
#include <pthread.h>
#include <unwind.h>

// The replayed-shape fast path below needs libunwind's cursor API (types
// from its header; the functions are still found with dlsym) and x86-64's
// return-address slots.
#if defined(__x86_64__) && __has_include(<libunwind.h>)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define XSC_STACK_SHAPES 1
#else
#define XSC_STACK_SHAPES 0
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "runtime/rtl.h"
#include "runtime/timing.h"

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

#if XSC_STACK_SHAPES
// libunwind's cursor interface, for the first capture of each stack shape:
// unlike unw_backtrace it says where each return address was read from.
struct CursorApi {
  int (*getcontext)(unw_context_t*) = nullptr;
  int (*init_local)(unw_cursor_t*, unw_context_t*) = nullptr;
  int (*step)(unw_cursor_t*) = nullptr;
  int (*get_reg)(unw_cursor_t*, unw_regnum_t, unw_word_t*) = nullptr;
  bool usable() const {
    return getcontext != nullptr && init_local != nullptr && step != nullptr && get_reg != nullptr;
  }
};
#endif

struct Unwinder {
  BacktraceFn backtrace = libgcc_backtrace;
#if XSC_STACK_SHAPES
  CursorApi cursor;
#endif
};

template <class Fn>
void load_symbol(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
}

Unwinder choose_unwinder() {
  Unwinder unwinder;
  const std::string bundled = own_directory() + "/xstream_check/libunwind.so.8";
  for (const std::string& name : {std::string("libunwind.so.8"), bundled}) {
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) continue;
    auto fn = reinterpret_cast<BacktraceFn>(dlsym(library, "unw_backtrace"));
    if (fn == nullptr) continue;
    unwinder.backtrace = fn;
#if XSC_STACK_SHAPES
    // The header maps these names to the local-only x86-64 entry points.
    load_symbol(library, "_Ux86_64_getcontext", &unwinder.cursor.getcontext);
    load_symbol(library, "_ULx86_64_init_local", &unwinder.cursor.init_local);
    load_symbol(library, "_ULx86_64_step", &unwinder.cursor.step);
    load_symbol(library, "_ULx86_64_get_reg", &unwinder.cursor.get_reg);
#endif
    break;
  }
  return unwinder;
}

const Unwinder& unwinder() {
  static const Unwinder instance = choose_unwinder();
  return instance;
}

BacktraceFn backtrace_fn() { return unwinder().backtrace; }

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
// ThreadState: the library uses initial-exec TLS, so its whole TLS block
// must fit the small static TLS surplus glibc keeps for libraries loaded by
// dlopen.
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

StackId intern_recent(Session* session, const std::uint64_t* pcs, std::size_t count) {
  std::uint64_t hash = 0x9e3779b97f4a7c15ull ^ count;
  for (std::size_t i = 0; i < count; ++i) hash = (hash ^ pcs[i]) * 0x100000001b3ull;
  RecentStacks& recent = *thread_cache<RecentStacks>(&thread_state().stack_cache);
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

// Raw frames walked per capture: the requested depth plus room for the
// tool's own leading frames, which are dropped.
constexpr int kMaxRawFrames = 96;

#if XSC_STACK_SHAPES
// Stack shapes: the return-address slots of a stack this thread captured
// before, so that capturing the same stack again costs a few compares
// instead of an unwind. A program launches from a handful of places in a
// loop; each time, the stack pointer at the capture and every return
// address on the way out are the same, and they sit at the same places in
// the thread's stack. When the capture's frame address and every remembered
// slot hold what they held, unwinding would walk the same frames and yield
// the same stack: its id is reused. Only slots inside this thread's own
// stack are remembered, so every compare reads mapped memory. (x86-64: a
// frame's return address is the word below its caller's stack pointer.)
// The compare is of values, not of the unwind itself: a different call
// path whose frames differ only where stale words still equal the
// remembered return addresses would be taken for the remembered one. Every
// remembered slot must match, so that needs the same capture frame address
// and the same return address at every position; the cost of a miss is a
// wrong frame in a report, never a wrong finding.
// Only the frames that make up the interned stack are remembered (the
// tool's leading frames and `stack_depth` more): deeper frames never change
// the stack's id.
constexpr std::uint32_t kShapeSlots = 48;
struct StackShape {
  std::uintptr_t anchor = 0;  // capture_native's frame address; 0: empty
  std::uint32_t count = 0;
  StackId id = kNoStack;
  std::uint32_t offset[kShapeSlots];  // slot address - anchor
  std::uint64_t value[kShapeSlots];   // the return address it held
};
// Shapes sit in a set-associative table keyed by the capture's frame
// address (below: two sets per key): a training step's backward pass
// allocates and frees from a hundred-odd places on one thread, each at a
// stack depth of its own.
// About 160 KiB per thread that captures stacks, made at its first capture.
constexpr std::size_t kShapeSets = 32;
constexpr std::size_t kShapeWays = 8;
constexpr std::size_t kCandidateSets = 128;
constexpr std::size_t kCandidateWays = 4;
// Learning a shape walks the stack with libunwind's cursor, about 30 times
// the cost of unw_backtrace (tens of microseconds on a deep stack). Only a
// stack captured twice at the same place earns a walk, and after the first
// kFreeWalks a thread gets at most one walk per kCapturesPerWalk captures,
// so a thread whose stacks never settle costs little more than plain
// unw_backtrace, and one that repeats a hundred stacks learns them within
// a few repetitions.
constexpr std::uint64_t kFreeWalks = 256;
constexpr std::uint64_t kCapturesPerWalk = 32;
struct ShapeCandidate {
  std::uintptr_t anchor = 0;
  std::uint64_t hash = 0;  // of the raw frames
};
struct ThreadShapes {
  StackShape shapes[kShapeSets][kShapeWays];
  // Each shape's anchor again, a set's in one cache line: most lookups
  // are decided by these alone.
  std::uintptr_t anchors[kShapeSets][kShapeWays] = {};
  ShapeCandidate candidates[kCandidateSets][kCandidateWays];
  std::uint64_t captures = 0, walks = 0;
  std::uint64_t random = 0x2545f4914f6cdd1dull;  // xorshift state, for victims
  std::uintptr_t stack_low = 0, stack_high = 0;  // 0, 0: unknown, never remember
  Session* session = nullptr;

  std::uint64_t next_random() {
    random ^= random << 13;
    random ^= random >> 7;
    random ^= random << 17;
    return random;
  }
};

// splitmix64's finisher: every bit of the key moves every bit of the hash
// (anchors of one thread differ in a few middle bits only).
std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Shapes and candidates each have two sets to go to (two choices: a set
// that many keys hash to spills into their other sets). A new entry takes
// an empty way of either set, else a random way of one of them: a fixed
// victim order evicts in a cycle when more keys than ways come round in
// turn, and then none of them ever stays.
struct TwoSets {
  std::size_t first, second;
};
TwoSets two_sets(std::uint64_t key, std::size_t sets) {
  const std::uint64_t hash = mix64(key);
  return {static_cast<std::size_t>(hash % sets), static_cast<std::size_t>((hash >> 32) % sets)};
}
template <typename IsEmpty>
std::pair<std::size_t, std::size_t> pick_way(ThreadShapes* shapes, TwoSets sets, std::size_t ways,
                                             IsEmpty&& is_empty) {
  for (const std::size_t set : {sets.first, sets.second})
    for (std::size_t way = 0; way < ways; ++way)
      if (is_empty(set, way)) return {set, way};
  const std::uint64_t r = shapes->next_random();
  return {(r & 1) != 0 ? sets.first : sets.second, static_cast<std::size_t>((r >> 1) % ways)};
}
// Made once per thread; 0, 0 bounds when the thread's stack is unknown.
struct ThreadShapesWithBounds : ThreadShapes {
  ThreadShapesWithBounds() {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return;
    void* low = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &low, &size) == 0 && low != nullptr) {
      stack_low = reinterpret_cast<std::uintptr_t>(low);
      stack_high = stack_low + size;
    }
    pthread_attr_destroy(&attr);
  }
};

ThreadShapes* thread_shapes(Session* session) {
  if (!unwinder().cursor.usable()) return nullptr;
  ThreadShapes* shapes = thread_cache<ThreadShapesWithBounds>(&thread_state().shape_cache);
  if (shapes->session != session) {  // ids belong to a session
    for (auto& set : shapes->shapes)
      for (StackShape& shape : set) shape.anchor = 0;
    for (auto& set : shapes->anchors)
      for (std::uintptr_t& anchor : set) anchor = 0;
    shapes->session = session;
  }
  return shapes;
}

bool same_shape(const StackShape& shape, std::uintptr_t anchor) {
  if (shape.anchor != anchor) return false;
  for (std::uint32_t i = 0; i < shape.count; ++i)
    if (*reinterpret_cast<const std::uint64_t*>(anchor + shape.offset[i]) != shape.value[i])
      return false;
  return true;
}

// Unwinds the calling thread with libunwind's cursor: raw[i] is frame i's
// instruction pointer, slots[i] (i >= 1) the address its return address was
// read from. Returns the frame count; *slots_exact is false when a slot
// does not hold its frame's return address (a signal frame, an unusual
// prologue), and such a stack is not remembered.
__attribute__((noinline)) int unwind_with_slots(void** raw, std::uintptr_t* slots, int capacity,
                                                bool* slots_exact) {
  const CursorApi& api = unwinder().cursor;
  *slots_exact = true;
  unw_context_t context;
  unw_cursor_t cursor;
  if (api.getcontext(&context) != 0 || api.init_local(&cursor, &context) != 0) return -1;
  int n = 0;
  while (n < capacity) {
    unw_word_t ip = 0, sp = 0;
    if (api.get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    if (api.get_reg(&cursor, UNW_REG_SP, &sp) != 0) break;
    raw[n] = reinterpret_cast<void*>(ip);
    slots[n] = n == 0 ? 0 : static_cast<std::uintptr_t>(sp) - 8;
    if (n > 0 && *reinterpret_cast<const std::uint64_t*>(slots[n]) != ip) *slots_exact = false;
    ++n;
    if (api.step(&cursor) <= 0) break;
  }
  return n;
}

// Remembers a captured stack's slots above `anchor` (the frames below it
// are the capture's own, gone by now, and the same every time), up to the
// last frame the interned stack keeps: the tool's leading frames, then
// `depth` frames.
void remember_shape(ThreadShapes* shapes, std::uintptr_t anchor, void* const* raw,
                    const std::uintptr_t* slots, int n, int capacity, int depth, StackId id) {
  if (shapes->stack_high == 0 || anchor < shapes->stack_low || anchor >= shapes->stack_high)
    return;
  const RangeSet* tools = tool_ranges.load(std::memory_order_acquire);
  int first = 0;
  while (first < n && in_tool(tools, reinterpret_cast<std::uint64_t>(raw[first]))) ++first;
  const int kept = first + depth;
  if (n == capacity && n < kept) return;  // cut short: the capture may see more
  const int end = std::min(n, kept);
  const auto [set, way] =
      pick_way(shapes, two_sets(anchor, kShapeSets), kShapeWays,
               [&](std::size_t s, std::size_t w) { return shapes->anchors[s][w] == 0; });
  StackShape& shape = shapes->shapes[set][way];
  shapes->anchors[set][way] = 0;  // until complete
  std::uint32_t count = 0;
  bool above = false;
  for (int i = 1; i < end; ++i) {
    if (slots[i] <= anchor) {
      if (above) return;  // an inner slot after an outer one: not a plain stack
      continue;
    }
    above = true;
    if (slots[i] + 8 > shapes->stack_high || count == kShapeSlots) return;
    shape.offset[count] = static_cast<std::uint32_t>(slots[i] - anchor);
    shape.value[count] = reinterpret_cast<std::uint64_t>(raw[i]);
    ++count;
  }
  shape.anchor = anchor;
  shape.count = count;
  shape.id = id;
  shapes->anchors[set][way] = anchor;
}

// A stack just captured by unw_backtrace: the second time it is captured at
// the same place, its shape is learned (within the walk budget).
void learn_shape(ThreadShapes* shapes, std::uintptr_t anchor, void* const* raw, int n,
                 int capacity, int depth, StackId id) {
  std::uint64_t hash = 0xcbf29ce484222325ull ^ static_cast<std::uint64_t>(n);
  for (int i = 0; i < n; ++i) hash = (hash ^ reinterpret_cast<std::uint64_t>(raw[i])) * 0x100000001b3ull;
  const TwoSets sets = two_sets(anchor ^ hash, kCandidateSets);
  ShapeCandidate* seen = nullptr;
  for (const std::size_t set : {sets.first, sets.second})
    for (ShapeCandidate& candidate : shapes->candidates[set])
      if (candidate.anchor == anchor && candidate.hash == hash) seen = &candidate;
  if (seen == nullptr) {
    const auto [set, way] =
        pick_way(shapes, sets, kCandidateWays,
                 [&](std::size_t s, std::size_t w) { return shapes->candidates[s][w].anchor == 0; });
    shapes->candidates[set][way] = {anchor, hash};
    return;
  }
  if (shapes->walks >= kFreeWalks && shapes->walks * kCapturesPerWalk >= shapes->captures) return;
  ++shapes->walks;
  *seen = ShapeCandidate{};
  void* walked[kMaxRawFrames];
  std::uintptr_t slots[kMaxRawFrames];
  bool slots_exact = false;
  const int walked_count = unwind_with_slots(walked, slots, capacity, &slots_exact);
  if (walked_count > 0 && slots_exact)
    remember_shape(shapes, anchor, walked, slots, walked_count, capacity, depth, id);
}
#endif  // XSC_STACK_SHAPES

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

namespace {

// The interned stack of raw frames: the tool's leading frames dropped, at
// most `depth` frames kept.
StackId stack_from_raw(Session* session, void* const* raw, int n, int depth) {
  refresh_tool_ranges_if_needed();
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

}  // namespace

namespace {

StackId capture_native(Session* session, int depth) {
  const int capacity = std::min(depth + 32, kMaxRawFrames);
  void* raw[kMaxRawFrames];
#if XSC_STACK_SHAPES
  if (ThreadShapes* shapes = thread_shapes(session)) {
    const auto anchor = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    ++shapes->captures;
    const TwoSets sets = two_sets(anchor, kShapeSets);
    for (const std::size_t set : {sets.first, sets.second})
      for (std::size_t way = 0; way < kShapeWays; ++way) {
        if (shapes->anchors[set][way] != anchor) continue;
        const StackShape& shape = shapes->shapes[set][way];
        if (same_shape(shape, anchor)) {
          note_stack(StackHow::kShapeHit);
          return shape.id;
        }
      }
    note_stack(StackHow::kUnwind);
    const int n = backtrace_fn()(raw, capacity);
    const StackId id = stack_from_raw(session, raw, n, depth);
    learn_shape(shapes, anchor, raw, n, capacity, depth, id);
    return id;
  }
#endif
  note_stack(StackHow::kUnwind);
  const int n = backtrace_fn()(raw, capacity);
  return stack_from_raw(session, raw, n, depth);
}

// Times `capture` as `part` when timing is on.
template <typename Capture>
StackId timed(Part part, Capture&& capture) {
  const PartScope scope(part);
  return capture();
}

}  // namespace

StackId capture_stack() {
  if (profile_mode() == ProfileMode::kNoStacks) return kNoStack;
  const int depth = std::min(options().stack_depth, 64);
  if (depth <= 0) return kNoStack;
  Session* session = session_unlocked();
  if (session == nullptr) return kNoStack;
  return timed(Part::kNativeStacks, [&] { return capture_native(session, depth); });
}

int raw_backtrace(void** buffer, int capacity) { return backtrace_fn()(buffer, capacity); }

StackId capture_launch_stack() {
  if (profile_mode() == ProfileMode::kNoStacks) return kNoStack;
  if (auto hook = launch_stack_hook.load(std::memory_order_acquire)) {
    const StackId python = timed(Part::kPythonStacks, hook);
    if (python != kNoStack) {
      note_stack(StackHow::kPython);
      return python;
    }
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
