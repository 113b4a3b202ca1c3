// Internal interface of libxstream_check.so, shared by its source files.
//
// The runtime observes an unmodified CUDA program through CUPTI callbacks
// and feeds one Session. Every producer (callbacks, annotations, the host
// API used by the PyTorch and NCCL adapters) ends in emit(), which holds the
// one session mutex only while the event is fed.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "checker/engine/allocation_view.h"
#include "checker/engine/event.h"
#include "checker/options.h"
#include "checker/session.h"
#include "runtime/cuda/param_access/declared_params.h"
#include "runtime/cuda/param_access/param_fill.h"
#include "runtime/tracked_pages.h"

namespace xsc::rt {

// ---- process state (rtl_init.cpp) -----------------------------------------

// Options parsed from XSC_OPTIONS in the constructor.
const Options& options();
// False when checking was turned off (bad options, the trace cannot be
// written, another CUPTI tool holds the subscription): producers drop events.
bool enabled();
// Prints "xstream-check: <message>" to the report stream.
void notice(const std::string& message);
// Stops feeding events for good (the application took CUPTI over); the
// report at exit still covers what was seen.
void stop_checking();

// XSC_PROFILE, read once by the constructor: measurement variants that
// split the per-call overhead into its parts (docs/performance-knobs.md).
enum class ProfileMode : int {
  kNormal,
  kSubscribeOnly,  // subscribed, callbacks enabled, each returns at once
  kSubscribeBare,  // subscribed, no callback enabled
  kNoStacks,       // everything but host stack capture
  kParts,          // everything, each part of the runtime timed (timing.h)
};
extern ProfileMode profile_mode_value;
inline ProfileMode profile_mode() { return profile_mode_value; }
inline bool profile_parts() { return profile_mode_value == ProfileMode::kParts; }

// Holds the session mutex; creates the Session on first use so that a
// process that never touches CUDA writes no trace and prints nothing.
class Locked {
 public:
  Locked();
  ~Locked();
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  explicit operator bool() const { return session_ != nullptr; }
  // The session with its checker caught up with every event fed so far:
  // with checker_thread=1 this waits for the checker's thread
  // (checker_thread.cpp). The fast paths ask the two queries below.
  Session& session();
  // The thread-safe name table, without waiting for the checker.
  NameTable& names() { return session_->names(); }
  // The allocations as of the last event fed, never waiting: the checker's
  // own answers (Checker::lookup_allocation, used_off_allocation_stream)
  // when it runs on this thread, else the AllocationView's, which follows
  // the same events as they are fed (the same live set; "another agent
  // took part" answered conservatively).
  bool lookup_allocation(Addr addr, AllocInfo* out, bool* carries_past_uses = nullptr);
  bool used_off_allocation_stream(Addr addr);
  // Feeds one event. Fills in the calling thread; routes work made on a
  // capturing stream into its graph instead of the checker (capture.cpp).
  void emit(Event event);
  // Feeds an event exactly as given (graph replay, thread names).
  void emit_raw(const Event& event);
  // A kernel launch on `stream` whose every word lies on a page whose live
  // blocks are all the stream's caching blocks, untouched by any other
  // agent (AllocationView::stream_pages): its uses need no stack, and the words
  // go to the checker's thread to be looked up there. False, with nothing
  // fed, when that is not so or the checker runs on this thread; the caller
  // then looks the words up itself. No capture may be underway.
  bool emit_own_stream_launch(StreamId stream, NameId name, const std::uint64_t* words,
                              const bool* reads, std::size_t count);

 private:
  // What every event fed through emit() first does to the runtime's state
  // (and the thread's name, fed on its first event).
  void admit(Event& event);
  void feed(const Event& event);

  std::unique_lock<std::mutex> lock_;
  Session* session_ = nullptr;
};

// The lowest start and the highest end of every allocation fed so far (the
// span only widens). A kernel argument word outside it cannot point into a
// tracked allocation: it is dropped before the session lock is taken, which
// matters for kernels whose arguments are mostly sizes and strides.
// launch.cpp tests words against it through an AddressWindow (param_scan.h).
struct AddressSpan {
  std::uint64_t low = 0, high = 0;
};
AddressSpan tracked_address_span();
// The 2 MiB pages that ever held an allocation fed so far (tracked_pages.h):
// a word in the span whose page is not among them is dropped before the
// session lock is taken, like one outside the span.
const TrackedPages& tracked_pages();

// What launches did with the words of their arguments that passed the
// span: `filtered`, dropped by tracked_pages(); `looked_up`, looked up under
// the lock; `missed`, of those, in no live allocation.
struct LaunchWordCounts {
  std::uint64_t filtered = 0, looked_up = 0, missed = 0;
  // Handed to the checker's thread unlooked (Locked::emit_own_stream_launch).
  std::uint64_t handed_over = 0;
};
// Under the session mutex: adds one launch's counts to the process's, which
// xsc_runtime_launch_words (host_api.h) reads.
void count_launch_words(const LaunchWordCounts& launch);

// True once a caching-allocator block was fed (the PyTorch adapter, the
// annotations): from then on a launch asks whether any of its uses can
// appear in a report before it captures its stack (launch.cpp).
bool caching_blocks_seen();

// The session without the lock, for the thread-safe parts (names, stacks).
// Null while checking is disabled.
Session* session_unlocked();
// Whether a session exists already (creates none).
bool session_started();
// Whether this thread holds the session mutex (a Locked is alive on it).
bool holding_session_lock();
// Whether this process fed any event but a host synchronization edge since
// it started or was forked.
bool fed_in_this_process();

// ---- device uses of pinned memory (host/pinned_uses.cpp) ------------------------
// Whether one may still be pending, and the hook that has PyTorch's host
// operators followed while one may.

// True once a device operation (a copy, a memset, a kernel's or a library
// call's argument) used pinned memory the runtime tracks.
bool pinned_device_use_seen();
// Under the session lock, right after a device use of pinned memory was
// fed: the checker has not settled it until it took that event. `may_write`:
// the use writes pinned memory or its access is unknown.
void pinned_use_fed(Locked& locked, bool may_write);
// Once the session lock is let go (the hook takes PyTorch's locks): the
// device use of the pinned memory at `addr` by `what` ("a copy", a
// kernel's name) was fed; the hook is turned on before the call returns.
// `stack`, the use's, is named at verbosity=2.
void note_pinned_device_use(const char* what, Addr addr, bool may_write,
                            StackId stack = kNoStack);
// Feeds a device use that an annotation or the host API reports (a use, a
// collective) and, when it lies in pinned memory, notes it as above; `what`
// names it in the first such use's notice.
void emit_reported_device_use(const Event& use, const char* what);
// Called where the checker runs, after it took events up to `fed` (the
// number fed so far; ~0 inline): turns the hook off once the checker says
// no device use of pinned memory is pending and it took the latest one.
void settle_pinned_uses(const Checker& checker, std::uint64_t fed);
// Whether the hook is on: the checker's thread is then handed a host
// synchronization at once, so that it can turn the hook off soon.
bool pinned_hook_on();
// The adapter's hooks: `pending_hook(1)` when host operators need
// following, `pending_hook(0)` when they no longer do; an older adapter's
// `hook()`, called once, at the first device use.
void set_pinned_memory_hook(void (*hook)(void));
void set_pinned_pending_hook(void (*hook)(int pending));

// ---- the checker's thread (checker_thread.cpp) ---------------------------------

// Under the session mutex: hands `event` to the checker's thread (started
// with the first event) and returns true, or feeds the session at once and
// returns false when checking runs inline (checker_thread=0,
// or the thread could not be started).
bool checker_feed(Session& session, const Event& event);
// Whether events go to the checker's thread in this process.
bool checker_thread_running();
// Under the session mutex, with the checker's thread running: hands over a
// kernel launch's words unlooked (Locked::emit_own_stream_launch). `bare`
// is the launch's use with address 0; the checker's thread looks the words
// up and feeds the launch's uses in their place in the order.
void checker_feed_launch(const Event& bare, const std::uint64_t* words, const bool* reads,
                         std::size_t count);
// Under the session mutex: returns once the checker has taken every event
// fed so far.
void checker_catch_up();
// Under the session mutex: how many events were handed to the checker's
// thread so far, the one just fed included (0 when checking runs inline,
// where the checker has taken each event before its feed returns).
std::uint64_t checker_feed_position();
// fork(): the session mutex held across it (rtl_init.cpp).
void lock_session_for_fork();
void unlock_session_after_fork();

// ---- threads (thread.cpp) ---------------------------------------------------

// What host/host_sync.cpp last fed of a thread's releases and acquires, to
// leave out the ones that add nothing.
struct SyncEdges {
  EventId last_released = 0;
  std::uint64_t actions_at_release = 0;
  std::uint64_t acquires_at_release = 0;
  std::uint64_t acquires = 0;      // acquires this thread fed
  std::uint64_t own_releases = 0;  // releases this thread fed
  EventId last_acquired = 0;
  std::uint64_t others_at_acquire = 0;  // other threads' releases then
  // Mutexes the program's own code locked on this thread and has not
  // unlocked (the last few): a condition variable's wait on one of them,
  // called through the C++ library, is the program's (host_locks.cpp).
  const void* held_locks[4] = {};
  std::uint8_t next_held = 0;
};

struct ThreadState {
  ThreadId id = 0;
  bool has_id = false;
  bool named = false;          // kThreadName emitted
  int guard = 0;               // >0: callbacks on this thread are ignored
  // A handled runtime API is in progress: driver callbacks it causes are
  // its own implementation, not separate calls.
  int runtime_depth = 0;
  std::uint32_t runtime_cbid = 0;
  bool nested_launch_seen = false;
  StreamId runtime_launch_stream = kLegacyStream;
  // While launch callbacks are calibrated: the stream the nested driver
  // launch names by itself, and whether the runtime launch made other
  // observed driver calls.
  StreamId nested_driver_stream = kLegacyStream;
  bool launch_made_other_driver_calls = false;
  // The runtime call in progress is a copy, memset, event record, stream
  // wait or event destroy compared with its nested driver call
  // (cuda/calibration.cpp), which keeps what it saw in `call_check`.
  bool call_checked = false;
  bool adapter_check_due = false;  // try loading the PyTorch adapter
  // The call in progress was fed at its entry (a free, a destroy).
  bool fed_at_enter = false;
  bool driver_fed_at_enter = false;
  // The token of the host function this thread's call in progress wrapped
  // (host_funcs.cpp), for the kHostFunc event its exit feeds.
  EventId host_func_token = 0;
  int session_locks = 0;  // Locked objects alive on this thread
  // Events this thread fed, but host synchronization edges.
  std::uint64_t actions = 0;
  SyncEdges sync_edges;  // host/host_sync.cpp
  // Per-thread caches of launch.cpp and stack.cpp, made on first use and
  // freed when the thread exits (thread_cache). Plain pointers here, read on
  // every launch: a thread_local with a destructor would be reached through
  // its guard variable, which is not initial-exec.
  void* kernel_cache = nullptr;
  void* stack_cache = nullptr;
  void* shape_cache = nullptr;
  void* enqueue_log = nullptr;  // operator_uses.cpp
  void* call_check = nullptr;   // cuda/calibration.cpp
};

// Initial-exec TLS: a %fs-relative load instead of a __tls_get_addr call on
// every callback. The few dozen bytes fit glibc's static TLS surplus, which
// also covers loading the library by dlopen (CUDA_INJECTION64_PATH).
extern constinit thread_local ThreadState current_thread_state
    __attribute__((tls_model("initial-exec")));
inline ThreadState& thread_state() { return current_thread_state; }
ThreadId assign_thread_id(ThreadState& state);
inline ThreadId current_thread() {
  ThreadState& state = thread_state();
  return state.has_id ? state.id : assign_thread_id(state);
}
StreamId per_thread_stream();

// The cache in `slot` (a ThreadState field), made by `make` on the thread's
// first use and handed to `destroy` when the thread exits.
void* thread_cache(void** slot, void* (*make)(), void (*destroy)(void*));
template <class T>
T* thread_cache(void** slot) {
  if (*slot != nullptr) return static_cast<T*>(*slot);
  return static_cast<T*>(thread_cache(
      slot, [] { return static_cast<void*>(new T()); },
      [](void* p) { delete static_cast<T*>(p); }));
}

// Ignores CUPTI callbacks made by the runtime's own CUDA calls.
class ReentrancyGuard {
 public:
  ReentrancyGuard() : state_(thread_state()) { ++state_.guard; }
  ~ReentrancyGuard() { --state_.guard; }
  ReentrancyGuard(const ReentrancyGuard&) = delete;
  ReentrancyGuard& operator=(const ReentrancyGuard&) = delete;

 private:
  ThreadState& state_;
};

// Application stream handle -> StreamId. `per_thread_default` is true for
// _ptsz/_ptds entry points, where handle 0 means the per-thread stream.
StreamId resolve(std::uint64_t handle, bool per_thread_default);

// ---- streams (stream.cpp) ---------------------------------------------------

// Called under the lock before `event` names its stream: streams created
// before the runtime attached are announced with their real flags.
void note_stream(Locked& locked, const Event& event);
void on_stream_created(Locked& locked, StreamId stream, StreamFlags flags);
void on_stream_destroyed(Locked& locked, StreamId stream);

// ---- stacks (stack.cpp, symbolize.cpp) -------------------------------------

// Captures the calling thread's host stack (without the runtime's, CUPTI's
// and the driver's own frames) and interns it. kNoStack when stacks are off.
StackId capture_stack();
// Stack for a kernel launch, copy or memset: the adapter's Python stack
// when it has one.
StackId capture_launch_stack();
// Stack for an event record, stream wait or synchronization: the adapter's
// Python stack only when this thread already holds the GIL (the caching
// allocator records and queries events under its own mutex, where waiting
// for the GIL could deadlock), else the native stack.
StackId capture_sync_stack();
void set_launch_stack_hook(std::uint32_t (*hook)(void));
// Run in each thread the interposed pthread_create starts, before its start
// routine (runtime/host/thread_start.cpp).
void set_thread_start_hook(void (*hook)(void));
// host/host_sync.cpp: the calling thread, returning from its start
// routine, releases what it did to whoever joins it.
void release_thread_exit();
// At the runtime's start: where the program's code lies, and whether its
// locks are followed (host/host_locks.cpp): a program that is no Python
// interpreter, with host_sync=1. `injected`: loaded into a running program
// (CUDA_INJECTION64_PATH), which may have threads the runtime never saw
// start.
void init_host_sync(bool injected);
extern std::atomic<bool> program_locks_followed;
// Whether the program's code (the executable, libpython, the C++ library)
// started a thread; note_thread_created is told of every pthread_create.
extern std::atomic<bool> program_threads_started;
void note_thread_created(const void* caller);
// host/host_locks.cpp: has the executable's lock calls (and the C++
// library's condition variable waits) reach the runtime; returns how many
// call slots it rewrote.
std::size_t install_lock_hooks();
// host/openmp_regions.cpp: the same for the executable's OpenMP regions,
// barriers and critical sections (GCC's libgomp).
std::size_t install_openmp_hooks();
bool called_by_cxx_library(const void* pc);
// A release or acquire of `object` (a semaphore's or a lock's address, a
// thread, an OpenMP region) by the calling thread, fed when `from_program`
// and the edge adds something.
void sync_release(EventId object, bool from_program);
void sync_acquire(EventId object, bool from_program);
// Whether the program's locks and OpenMP regions feed edges now: followed
// (program_locks_followed) and a thread of the program's own started. A
// lock's edges matter only then: until then the one thread knows
// everything, and a thread it starts begins after all it did.
bool following_program_locks();
// Feeds a host edge of the calling thread: kind (kThreadCreate,
// kThreadStart, kSyncRelease, kSyncAcquire) with its token or object.
void feed_host_edge(EventKind kind, EventId object);
// Return addresses of the calling thread, innermost first, with the unwinder
// capture_stack uses (libunwind when loadable). The first call loads it; the
// fatal-signal report calls it once at install time for that reason.
int raw_backtrace(void** buffer, int capacity);
void install_symbolizer(Session& session);
// `name` demangled (a C++ function's or a kernel's), or as it is when it
// is not a mangled name; "" for nullptr.
std::string demangle(const char* name);

// ---- fatal signals (signals.cpp) -------------------------------------------

// Unless XSC_HANDLE_SEGV=0: for SIGSEGV, SIGBUS, SIGILL, SIGFPE and SIGABRT
// whose disposition is still the default, prints where the process died,
// then dies of the same signal.
void install_fatal_signal_report();

// ---- capture and graphs (capture.cpp, graph.cpp) ----------------------------

// Under the lock: true when `event` was taken into a capture.
bool capture_event(Locked& locked, const Event& event);
// Under the lock: whether a stream is being captured (work enqueued on it
// runs later, when its graph is launched, on the stream it is launched on).
bool captures_underway(Locked& locked);
// Under the lock: whether uses may still arrive from graphs (a capture in
// progress, or a captured graph that can be launched): the checker has not
// seen them yet.
bool graph_uses_pending(Locked& locked);
// Under the lock, for a stream met for the first time: asks the driver
// whether it is capturing (a capture begun before the runtime attached, or
// through an entry point it does not observe) and takes it so.
void note_capture_state(Locked& locked, StreamId stream);
// `to_graph`: cudaStreamBeginCaptureToGraph and its driver twin, which add
// to a graph the application made.
void on_begin_capture(Locked& locked, StreamId stream, bool to_graph);
void on_end_capture(Locked& locked, StreamId stream, std::uint64_t graph);
void on_instantiate(Locked& locked, std::uint64_t exec, std::uint64_t graph);
void on_graph_launch(Locked& locked, std::uint64_t exec, StreamId stream, StackId stack);
void on_event_destroyed(Locked& locked, EventId event);

// ---- CUPTI (cupti_callbacks.cpp) and the driver (driver.cpp) --------------

// Loads CUPTI and subscribes. False (after one notice) when checking must
// be disabled; true also when no CUDA driver exists at all (nothing to
// check, nothing to say).
bool subscribe_cupti();
// InitializeInjection's half of the once-only subscription.
void subscribe_for_injection();
// The application subscribes to CUPTI: give the slot up (cupti_callbacks.cpp).
void yield_cupti_to_application();
void* real_cupti_symbol(const char* name);

// Driver entry points the runtime itself calls (under ReentrancyGuard).
struct DriverApi {
  int (*cuStreamGetFlags)(void* stream, unsigned* flags) = nullptr;
  int (*cuFuncGetParamInfo)(void* func, std::size_t index, std::size_t* offset,
                            std::size_t* size) = nullptr;
  int (*cuKernelGetParamInfo)(void* kernel, std::size_t index, std::size_t* offset,
                              std::size_t* size) = nullptr;
  int (*cuFuncGetName)(const char** name, void* func) = nullptr;
  int (*cuKernelGetName)(const char** name, void* kernel) = nullptr;
  // The CUDA 11.3 form (graph, dependencies and their count may be null),
  // and cuStreamIsCapturing where it is missing.
  int (*cuStreamGetCaptureInfo_v2)(void* stream, int* status, unsigned long long* id,
                                   void** graph, const void** dependencies,
                                   std::size_t* count) = nullptr;
  int (*cuStreamIsCapturing)(void* stream, int* status) = nullptr;
};
// Resolved on first use, once libcuda.so.1 is in the process.
const DriverApi& driver();

// ---- kernel launches (launch.cpp) ------------------------------------------

// `func` is a CUfunction or CUkernel handle; `extra` the cuLaunchKernel
// packed-buffer list (may be null); `grid` the launch's grid (x == 0 when
// the call does not give it), which says how much of a parameter filled in
// part the launch filled (param_access/param_fill.h).
void on_kernel_launch(std::uint64_t func, void** kernel_params, void** extra,
                      const LaunchGrid& grid, StreamId stream);
// A runtime-level launch no driver callback described: `host_func` is the
// host stub (cudaLaunchKernel) or, when `is_kernel_handle`, a cudaKernel_t.
void on_runtime_launch(const void* host_func, bool is_kernel_handle, void** args,
                       const LaunchGrid& grid, StreamId stream);

// What the source of kernel `func` declares of its parameters, one entry
// per parameter in order, from a front end that compiled it (the host API's
// kernel_params: CuPy). Read when the kernel is first described, at its
// first launch; a declaration that comes later, or whose count is not the
// kernel's, changes nothing.
void declare_kernel_params(std::uint64_t func, const DeclaredParam* params, std::size_t n);

// ---- host functions (host_funcs.cpp) ----------------------------------------

// At a cuLaunchHostFunc / cuStreamAddCallback entry: wrap the function its
// CUPTI parameters name (cuLaunchHostFunc_params / cuStreamAddCallback_params).
void wrap_host_func(void* params, StreamId stream);
void wrap_stream_callback(void* params, StreamId stream);
// The token the last wrap on this thread made, once (0: none).
EventId take_host_func_token();

// ---- operator uses (libs/operator_uses.cpp) ----------------------------------

// What one operator touched: a library call (cuBLAS, cuBLASLt, cuDNN) or a
// PyTorch operator. [addr, addr + bytes), with the access.
struct OperatorUse {
  Addr addr = 0;
  std::uint64_t bytes = 0;
  Access access = Access::kUnknown;
};
// Feeds an operator's uses on `stream` as UseWhat::kOperator uses named
// `name`: the parts inside tracked allocations, each cut at its
// allocation's end, with a host stack when one is wanted (see
// operator_uses.cpp). `uses` is rewritten in place. Never under the
// session lock on entry.
void feed_operator_uses(const char* name, StreamId stream, OperatorUse* uses, std::size_t n);
// The same under the session lock, with the stack the caller took: a
// launch's declared writes (launch.cpp), fed after its uses.
void feed_operator_uses_locked(Locked& locked, NameId name, StreamId stream, OperatorUse* uses,
                               std::size_t n, StackId stack);

// Called under the lock for each use of a kernel, copy or memset this
// thread enqueues (captured ones included).
void note_enqueued(const Event& event);
// This thread's count of enqueued work so far.
std::uint64_t enqueue_mark();
// Whether this thread enqueued work on `stream` after `mark`.
bool enqueued_since(StreamId stream, std::uint64_t mark);
// A PyTorch operator's written tensor: [addr, addr + size).
struct OperatorWrite {
  Addr addr = 0;
  std::uint64_t size = 0;
};
// Feeds the writes of an operator that returned, as known writes on
// `stream` (UseWhat::kOperator), each cut to the tracked allocation holding
// it, when this thread enqueued work on `stream` since `mark` (taken at the
// operator's start). Left out: writes outside tracked allocations, and
// writes a copy enqueued since `mark` made already.
void on_operator_writes(const char* name, StreamId stream, std::uint64_t mark,
                        const OperatorWrite* writes, std::size_t n);

// ---- adapters (host_api.cpp) ------------------------------------------------

// Cheap check, called after allocations and stream creations: once PyTorch's
// CUDA library is in the process, load libxstream_torch.so and attach it.
void maybe_attach_torch_adapter();
// Cheap when there is nothing to do: lets an attached adapter that waits for
// PyTorch's lazy CUDA initialization install its hooks (from API exits).
void poll_torch_adapter();

}  // namespace xsc::rt
