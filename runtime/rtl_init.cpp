// Process start and end: options, the CUPTI subscription (from a constructor
// under LD_PRELOAD, from InitializeInjection under CUDA_INJECTION64_PATH),
// the lazily created Session, and the report plus exit status at exit.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>

#include "checker/log_path.h"
#include "runtime/cuda/ops.h"
#include "runtime/host/host_guard.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

// glibc's registration of exit handlers; atexit() is this with the calling
// library's handle.
extern "C" int __cxa_atexit(void (*function)(void*), void* argument, void* dso_handle);

namespace xsc::rt {
namespace {

struct State {
  Options options;
  std::atomic<bool> enabled{true};
  std::atomic<bool> finished{false};
  std::mutex mu;  // the session mutex
  std::unique_ptr<Session> session;
  std::atomic<Session*> published{nullptr};  // `session` once it started
  // Under `mu`, as of the last event fed; kept while the checker runs on
  // its own thread (checker_thread.cpp).
  AllocationView allocations;
  // Set in a forked child: the session, made before the fork, still names
  // the parent's process in its reports and must be told.
  std::atomic<bool> forked{false};
  // This process fed an event since it started or was forked: a forked
  // data-loader worker that never touches CUDA has nothing to order.
  std::atomic<bool> fed_here{false};
  bool session_failed = false;
  std::once_flag subscribe_once;
  std::mutex log_mu;
  bool log_started = false;  // the log file was created by this process
};

// Never destroyed: CUPTI callbacks and adapter calls can still arrive while
// static destructors run.
State& state() {
  static State* instance = new State;
  return *instance;
}

// Writes a block of report text to the configured destination: stderr,
// stdout, or the per-process log file (created on the first write).
void write_report_text(const std::string& text) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.log_mu);
  const std::string path = resolve_log_path(s.options, static_cast<int>(getpid()));
  FILE* out = stderr;
  bool close = false;
  if (path == "stdout") {
    out = stdout;
  } else if (!path.empty() && path != "stderr") {
    out = std::fopen(path.c_str(), s.log_started ? "a" : "w");
    if (out == nullptr) {
      std::fprintf(stderr, "xstream-check: cannot write %s: %s; reporting to stderr\n",
                   path.c_str(), std::strerror(errno));
      out = stderr;
    } else {
      s.log_started = true;
      close = true;
    }
  }
  std::fwrite(text.data(), 1, text.size(), out);
  std::fflush(out);
  if (close) std::fclose(out);
}

// True when CUDA_INJECTION64_PATH names this very library: the driver then
// calls InitializeInjection at cuInit, which is where CUPTI wants the
// subscription made.
bool loaded_for_injection() {
  const char* injection = std::getenv("CUDA_INJECTION64_PATH");
  if (injection == nullptr || *injection == '\0') return false;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&loaded_for_injection), &info) == 0 ||
      info.dli_fname == nullptr)
    return false;
  struct stat ours, theirs;
  if (stat(info.dli_fname, &ours) != 0 || stat(injection, &theirs) != 0) return false;
  return ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
}

void subscribe_once() {
  State& s = state();
  std::call_once(s.subscribe_once, [&s] {
    if (!subscribe_cupti()) s.enabled.store(false);
    startup_times().cupti_end = monotonic_ns();
  });
}

// The exit status of a run with findings. Reports are made from an exit
// handler registered with atexit() in the constructor, which glibc ties to
// this library: it runs when the loader finalizes this library, before the
// libraries loaded after it (libcupti, libcuda, cuBLAS, the program's
// plugins). Ending the process there with _exit would skip their
// destructors, a change to the program's own exit. The status is set from
// a second handler, registered with no library handle: it runs after the
// loader's own exit handler, which __libc_start_main registers later, has
// finalized every library.
std::atomic<int> pending_exit_status{-1};
std::atomic<bool> status_handler_ran{false};

void exit_with_pending_status(void*) {
  status_handler_ran.store(true);
  const int status = pending_exit_status.load();
  if (status < 0) return;
  std::fflush(nullptr);
  _exit(status);
}

// Under the session mutex: a session made before a fork reports, in the
// child, as the child.
void name_this_process(Session& session) {
  State& s = state();
  if (!s.forked.load(std::memory_order_relaxed)) return;
  s.forked.store(false, std::memory_order_relaxed);
  session.set_process(getpid(), launcher_rank());
}

void finish_at_exit() {
  State& s = state();
  StartupTimes& times = startup_times();
  const std::uint64_t begin = monotonic_ns();
  std::uint64_t findings = 0;
  std::string report;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.finished.exchange(true)) return;
    times.exit_begin = begin;
    // A process that never used CUDA or the annotations has no report to
    // give (with verbosity=2 it still tells its fixed costs).
    if (s.session != nullptr) {
      checker_catch_up();
      name_this_process(*s.session);
      // Deferred (Python) stacks are resolved before the report needs them.
      s.session->stacks().resolve_pending();
      std::ostringstream out;
      findings = s.session->finish(out);
      // Nothing is checked from here on: pages still guarded are given
      // back to the program's last destructors unprotected.
      host_guard_lift_all();
      report = out.str();
    }
  }
  if (!report.empty()) write_report_text(report);
  if (s.options.verbosity >= 2) {
    times.exit_end = monotonic_ns();
    notice(timing_summary());
    notice(timing_points());
    notice(timing_stacks());
    notice(timing_parts());
    notice(timing_calls());
    notice(timing_symbolizer());
  } else if (profile_parts()) {
    notice(timing_parts());
    notice(timing_calls());
  }
  const int exitcode = s.options.exitcode;
  if (findings > 0 && exitcode != 0) {
    std::fflush(nullptr);
    // The status handler has already run when this library was loaded
    // after start-up (by the driver, for CUDA_INJECTION64_PATH): exit now.
    if (!status_handler_ran.load()) {
      pending_exit_status.store(exitcode);
      return;
    }
    _exit(exitcode);
  }
}

// XSC_PROFILE: unset or empty is the normal mode; an unknown value is
// reported and ignored (a measurement knob never turns checking off).
ProfileMode read_profile_mode() {
  const char* value = std::getenv("XSC_PROFILE");
  if (value == nullptr || *value == '\0') return ProfileMode::kNormal;
  if (std::strcmp(value, "subscribe-only") == 0) return ProfileMode::kSubscribeOnly;
  if (std::strcmp(value, "subscribe-bare") == 0) return ProfileMode::kSubscribeBare;
  if (std::strcmp(value, "no-stacks") == 0) return ProfileMode::kNoStacks;
  if (std::strcmp(value, "parts") == 0) return ProfileMode::kParts;
  // Read by the PyTorch adapter alone (runtime/torch/autograd_nodes.cpp).
  if (std::strcmp(value, "no-backward-stacks") == 0) return ProfileMode::kNormal;
  std::fprintf(stderr,
               "xstream-check: XSC_PROFILE: unknown value '%s' (subscribe-only, subscribe-bare, "
               "no-stacks, no-backward-stacks, parts); ignored\n",
               value);
  return ProfileMode::kNormal;
}

void runtime_init_steps();

__attribute__((constructor)) void runtime_init() {
  StartupTimes& times = startup_times();
  times.constructor_begin = monotonic_ns();
  runtime_init_steps();
  times.constructor_end = monotonic_ns();
}

void runtime_init_steps() {
  State& s = state();
  profile_mode_value = read_profile_mode();
  // First, so that a crash anywhere later (in the runtime, an adapter, or
  // the program) says where it happened.
  install_fatal_signal_report();
  std::string error;
  if (!apply_env_options(&s.options, &error)) {
    std::fprintf(stderr, "xstream-check: XSC_OPTIONS: %s; checking disabled\n", error.c_str());
    s.enabled.store(false);
    return;
  }
  // The report runs when the loader finalizes this library: after the
  // program's exit handlers and its own destructors (the statically linked
  // CUDA runtime's teardown among them) have made their last CUDA calls.
  std::atexit(finish_at_exit);
  __cxa_atexit(exit_with_pending_status, nullptr, nullptr);
  const bool injected = loaded_for_injection();
  init_host_sync(injected);
  if (!injected) subscribe_once();
}

}  // namespace

ProfileMode profile_mode_value = ProfileMode::kNormal;

const Options& options() { return state().options; }

bool enabled() { return state().enabled.load(std::memory_order_relaxed); }

void stop_checking() { state().enabled.store(false); }

void notice(const std::string& message) { write_report_text("xstream-check: " + message + "\n"); }

Locked::Locked() : lock_(state().mu, std::defer_lock) {
  {
    const PartScope wait(Part::kLockWait);
    lock_.lock();
  }
  ++thread_state().session_locks;
  State& s = state();
  if (s.finished.load(std::memory_order_relaxed) || !s.enabled.load(std::memory_order_relaxed))
    return;
  if (s.session == nullptr && !s.session_failed) {
    auto session = std::make_unique<Session>(s.options);
    std::string error;
    if (!session->start(&error)) {
      s.session_failed = true;
      s.enabled.store(false);
      notice(error + "; checking disabled");
      return;
    }
    install_symbolizer(*session);
    static std::once_flag at_fork;
    std::call_once(at_fork, [] {
      pthread_atfork(nullptr, nullptr, [] {
        state().forked.store(true, std::memory_order_relaxed);
        state().fed_here.store(false, std::memory_order_relaxed);
      });
    });
    s.session = std::move(session);
    s.published.store(s.session.get(), std::memory_order_release);
  }
  session_ = s.session.get();
}

Locked::~Locked() { --thread_state().session_locks; }

bool session_started() { return state().published.load(std::memory_order_acquire) != nullptr; }

bool holding_session_lock() { return thread_state().session_locks > 0; }

bool fed_in_this_process() { return state().fed_here.load(std::memory_order_relaxed); }

Session& Locked::session() {
  checker_catch_up();
  name_this_process(*session_);
  return *session_;
}

bool Locked::lookup_allocation(Addr addr, AllocInfo* out, bool* carries_past_uses) {
  if (checker_thread_running()) return state().allocations.lookup(addr, out, carries_past_uses);
  return session_->checker().lookup_allocation(addr, out, carries_past_uses);
}

bool Locked::used_off_allocation_stream(Addr addr) {
  if (checker_thread_running()) return state().allocations.used_off_allocation_stream(addr);
  return session_->checker().used_off_allocation_stream(addr);
}

void Locked::feed(const Event& event) {
  // The view is kept only while the checker lags behind on its thread;
  // a process that feeds inline asks the checker itself.
  if (checker_feed(*session_, event)) state().allocations.note(event);
}

void Locked::emit_raw(const Event& event) {
  const PartScope part(Part::kChecker);
  feed(event);
}

// Counted as held by the forking thread: other libraries' fork handlers
// run inside the runtime's, on that thread, and what they call (a
// semaphore, a CUDA call) must pass straight through rather than wait for
// the lock it holds.
void lock_session_for_fork() {
  state().mu.lock();
  ++thread_state().session_locks;
}

void unlock_session_after_fork() {
  --thread_state().session_locks;
  state().mu.unlock();
}

namespace {
std::atomic<bool> caching_blocks_fed{false};
std::atomic<std::uint64_t> span_low{~std::uint64_t{0}};
std::atomic<std::uint64_t> span_high{0};
TrackedPages* const pages = new TrackedPages;  // never destroyed, like state()
LaunchWordCounts launch_words;  // under the session mutex (count_launch_words)

// Written under the session lock, read without it.
void note_allocation(const Event& event) {
  if (event.alloc_kind == AllocKind::kCachingAllocator &&
      !caching_blocks_fed.load(std::memory_order_relaxed))
    caching_blocks_fed.store(true, std::memory_order_relaxed);
  const std::uint64_t end = event.addr + (event.size > 0 ? event.size : 1);
  if (event.addr < span_low.load(std::memory_order_relaxed))
    span_low.store(event.addr, std::memory_order_relaxed);
  if (end > span_high.load(std::memory_order_relaxed))
    span_high.store(end, std::memory_order_relaxed);
  pages->add(event.addr, end);
}

}  // namespace

bool caching_blocks_seen() { return caching_blocks_fed.load(std::memory_order_relaxed); }

const TrackedPages& tracked_pages() { return *pages; }

void count_launch_words(const LaunchWordCounts& launch) {
  if (launch.filtered == 0 && launch.looked_up == 0 && launch.handed_over == 0) return;
  launch_words.filtered += launch.filtered;
  launch_words.looked_up += launch.looked_up;
  launch_words.missed += launch.missed;
  launch_words.handed_over += launch.handed_over;
}

AddressSpan tracked_address_span() {
  return {span_low.load(std::memory_order_relaxed), span_high.load(std::memory_order_relaxed)};
}

void Locked::admit(Event& event) {
  if (event.kind == EventKind::kAlloc) note_allocation(event);
  ThreadState& thread = thread_state();
  if (event.kind != EventKind::kSyncRelease && event.kind != EventKind::kSyncAcquire) {
    ++thread.actions;
    if (!state().fed_here.load(std::memory_order_relaxed))
      state().fed_here.store(true, std::memory_order_relaxed);
  }
  event.thread = current_thread();
  if (!thread.named) {
    thread.named = true;
    char name[64] = {};
    if (pthread_getname_np(pthread_self(), name, sizeof name) == 0 && name[0] != '\0') {
      Event named;
      named.kind = EventKind::kThreadName;
      named.thread = event.thread;
      named.name = session_->names().intern(name);
      feed(named);
    }
  }
  if (event.kind == EventKind::kUse &&
      (event.what == UseWhat::kKernel || event.what == UseWhat::kMemcpy ||
       event.what == UseWhat::kMemset))
    note_enqueued(event);
  // The stream is noted first: one met for the first time may be found
  // capturing already (note_stream asks the driver), and its work is then
  // a graph node.
  switch (event.kind) {
    case EventKind::kFreeCompleted:
    case EventKind::kEventSync:
    case EventKind::kDeviceSync:
    case EventKind::kThreadName:
    case EventKind::kStreamCreate:
    case EventKind::kStreamDestroy:
    case EventKind::kTest:
    case EventKind::kUnchecked:
      break;
    default:
      note_stream(*this, event);
  }
}

void Locked::emit(Event event) {
  const PartScope part(Part::kChecker);
  admit(event);
  // host_guard=1 (host_guard.cpp): a pinned allocation's guards go before
  // it is freed, and a thread's synchronization lifts those of the copies
  // it is ordered after.
  const bool guards = host_guards_up();
  if (guards && event.kind == EventKind::kFree && event.free_kind == FreeKind::kPinnedHost)
    host_guard_before_free(*this, event.addr);
  if (capture_event(*this, event)) return;
  feed(event);
  if (guards) host_guard_after_event(*this, event);
}

bool Locked::emit_own_stream_launch(StreamId stream, NameId name, const std::uint64_t* words,
                                    const bool* reads, std::size_t count) {
  if (count == 0 || !checker_thread_running()) return false;
  const StreamPages& pages = state().allocations.stream_pages();
  const StreamPages::Mark mark = pages.mark_of(stream);
  for (std::size_t i = 0; i < count; ++i)
    if (!pages.only(words[i], mark)) return false;
  const PartScope part(Part::kChecker);
  Event event = bare_use(stream, UseWhat::kKernel, name);
  admit(event);
  // The stream held caching blocks, so it was met before; should it still
  // be found capturing now, its work belongs to the graph.
  if (captures_underway(*this)) return false;
  checker_feed_launch(event, words, reads, count);
  return true;
}

void subscribe_for_injection() { subscribe_once(); }

Session* session_unlocked() {
  if (Session* session = state().published.load(std::memory_order_acquire))
    return enabled() ? session : nullptr;
  Locked locked;  // creates the session
  return locked ? state().session.get() : nullptr;
}

}  // namespace xsc::rt

// CUDA_INJECTION64_PATH entry point: the driver calls it once, from cuInit.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  if (xsc::rt::enabled()) xsc::rt::subscribe_for_injection();
  return 1;
}

extern "C" __attribute__((visibility("default"))) void xsc_runtime_launch_words(
    std::uint64_t* filtered, std::uint64_t* looked_up, std::uint64_t* missed,
    std::uint64_t* handed_over) {
  using namespace xsc::rt;
  std::lock_guard<std::mutex> lock(state().mu);
  if (filtered != nullptr) *filtered = launch_words.filtered;
  if (looked_up != nullptr) *looked_up = launch_words.looked_up;
  if (missed != nullptr) *missed = launch_words.missed;
  if (handed_over != nullptr) *handed_over = launch_words.handed_over;
}

extern "C" __attribute__((visibility("default"))) void xsc_runtime_view_census(
    std::uint64_t* live, std::uint64_t* other, std::uint64_t* other_by_inheritance,
    std::uint64_t* mixed_residue_bytes) {
  using namespace xsc::rt;
  std::lock_guard<std::mutex> lock(state().mu);
  const xsc::AllocationView::Census census = state().allocations.census();
  if (live != nullptr) *live = census.live;
  if (other != nullptr) *other = census.other;
  if (other_by_inheritance != nullptr) *other_by_inheritance = census.other_by_inheritance;
  if (mixed_residue_bytes != nullptr) *mixed_residue_bytes = census.mixed_residue_bytes;
}
