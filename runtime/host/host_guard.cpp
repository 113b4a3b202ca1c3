// host_guard=1 (off by default): host loads and stores of pinned memory a
// pending copy reads or writes, caught with page protection.
//
// Copies are seen; the host's own loads and stores of pinned memory are not
// (a C or C++ program touches its buffers with plain instructions). While an
// asynchronous copy between the device and pinned memory may still run, the
// whole pages of its host bytes are protected: PROT_NONE for the destination
// of a device-to-host copy, PROT_READ for the source of a host-to-device
// copy. DMA does not go through the CPU's page tables, so the copy itself
// runs as before (test/gpu/probes/host_guard_probe.cu measures it for each
// way of getting pinned memory). A load or store there faults; the SIGSEGV
// handler below takes faults in guarded pages, feeds the access as a host
// read or write (the x86-64 page-fault error code says which) with the
// faulting instruction's stack, lifts the guards of the pages' copies and
// returns, so that the instruction runs again and the program goes on. The
// checker decides whether the access races: a read of bytes a pending
// device-to-host copy writes is a use before ready, a write of bytes a
// pending host-to-device copy reads a write after read (docs/rules.md).
//
// Guards are lifted when a host thread becomes ordered after the copy
// (stream, event or device synchronization, a successful query, a host
// function; checked after each such event with the checker's clocks), before
// the pinned allocation is freed or unregistered, after a fault in one of
// their pages, and at exit. Faults that are not in guarded pages go to the
// handler that was there before (the fatal-signal report, the default
// action).
//
// What it may change: a system call given a protected page (write(2) of a
// buffer a download still fills) fails with EFAULT instead of faulting, and
// protection is page-wide, so other data on a guarded page faults too (it
// is not reported: only bytes of a copy are; its guard is lifted). Memory
// registered read-only, or mapped without write access, is made writable
// when its guard is lifted. Hence opt-in.
#include "runtime/host/host_guard.h"
#include "runtime/host/signal_context.h"

#include <signal.h>
#include <sched.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/host/host_guard_pages.h"

namespace xsc::rt {

std::atomic<std::size_t> host_guards_up_count{0};

namespace {

using guard::Guard;
using guard::GuardSet;
using guard::PageRange;
using guard::Protect;

constexpr std::size_t kMaxGuards = 1024;
constexpr std::size_t kMaxKnownRanges = 256;

// The fault handler takes this lock too, so nothing allocates while it is
// held (the faulting thread may hold the allocator's own lock).
class SpinLock {
 public:
  void lock() {
    while (flag_.test_and_set(std::memory_order_acquire)) sched_yield();
  }
  void unlock() { flag_.clear(std::memory_order_release); }

 private:
  std::atomic_flag flag_ = ATOMIC_FLAG_INIT;
};

class SpinHold {
 public:
  explicit SpinHold(SpinLock& lock) : lock_(lock) { lock_.lock(); }
  ~SpinHold() { lock_.unlock(); }
  SpinHold(const SpinHold&) = delete;
  SpinHold& operator=(const SpinHold&) = delete;

 private:
  SpinLock& lock_;
};

struct GuardState {
  SpinLock mu;
  GuardSet set{kMaxGuards};
  std::uint64_t page_size = 4096;
  std::uint64_t next_id = 1;
  // The pages of pinned allocations that ever had a guard: a fault there
  // that no guard covers any more was lifted by another thread after the
  // fault and before the handler looked (the instruction is run again).
  PageRange known[kMaxKnownRanges];
  std::size_t known_count = 0;
  NameId load_name = kNoName, store_name = kNoName;
  struct sigaction previous {};
  bool failure_said = false;
  bool full_said = false;
};

std::atomic<GuardState*> g_state{nullptr};

// The address of the last fault this thread let run again without a guard
// covering it: the second such fault in a row at one address is not ours.
__thread std::uint64_t t_retried_fault __attribute__((tls_model("initial-exec"))) = 0;

int prot_bits(Protect p) {
  switch (p) {
    case Protect::kNone: return PROT_NONE;
    case Protect::kRead: return PROT_READ;
    case Protect::kReadWrite: break;
  }
  return PROT_READ | PROT_WRITE;
}

// Gives each run of `range` the protection its guards want. False when an
// mprotect failed (the first failing range in *failed).
bool apply(GuardState& s, PageRange range, PageRange* failed = nullptr) {
  bool ok = true;
  s.set.for_each_segment(range, [&](PageRange run, Protect p) {
    if (mprotect(reinterpret_cast<void*>(run.begin), run.end - run.begin, prot_bits(p)) != 0) {
      if (ok && failed != nullptr) *failed = run;
      ok = false;
    }
  });
  return ok;
}

void publish_count(const GuardState& s) {
  host_guards_up_count.store(s.set.size(), std::memory_order_relaxed);
}

bool known_page(const GuardState& s, std::uint64_t page) {
  for (std::size_t i = 0; i < s.known_count; ++i)
    if (s.known[i].contains(page)) return true;
  return false;
}

void note_known(GuardState& s, PageRange pages) {
  for (std::size_t i = 0; i < s.known_count; ++i) {
    PageRange& k = s.known[i];
    if (pages.begin <= k.end && k.begin <= pages.end) {
      k.begin = std::min(k.begin, pages.begin);
      k.end = std::max(k.end, pages.end);
      return;
    }
  }
  if (s.known_count < kMaxKnownRanges) s.known[s.known_count++] = pages;
}

// Whether the fault was a write: bit 1 of the x86-64 page-fault error
// code. Elsewhere unknown, taken for a read (a fault on a read-only page is
// a write whatever this says).
bool fault_was_write(const void* context) {
#if defined(__x86_64__)
  if (context == nullptr) return false;
  const auto* uc = static_cast<const ucontext_t*>(context);
  return (uc->uc_mcontext.gregs[REG_ERR] & 0x2) != 0;
#else
  (void)context;
  return false;
#endif
}

// The faulting instruction, then its callers: the raw frames after the one
// the unwinder found at the faulting pc (the interrupted frame, past the
// signal frame), each stepped back into its call. Only the pc when the
// unwinder did not cross the signal frame.
StackId fault_stack(Session& session, const void* context) {
  const int depth = std::min(options().stack_depth, 64);
  if (depth <= 0) return kNoStack;
  const std::uint64_t pc = faulting_pc(context);
  if (pc == 0) return kNoStack;
  void* raw[96];
  const int n = raw_backtrace(raw, 96);
  std::uint64_t pcs[64];
  std::size_t count = 0;
  pcs[count++] = pc;
  int from = n;
  for (int i = 0; i < n; ++i)
    if (reinterpret_cast<std::uint64_t>(raw[i]) == pc) {
      from = i + 1;
      break;
    }
  for (int i = from; i < n && count < static_cast<std::size_t>(depth); ++i) {
    const auto ret = reinterpret_cast<std::uint64_t>(raw[i]);
    if (ret == 0) break;
    pcs[count++] = ret - 1;
  }
  return session.stacks().intern_pcs(pcs, count);
}

void feed_fault(GuardState& s, std::uint64_t addr, bool write, const void* context) {
  // Never from inside the runtime's own locked work (it touches no pinned
  // memory, but a fault there must not wait for its own lock).
  if (!enabled() || holding_session_lock()) return;
  Session* session = session_unlocked();
  if (session == nullptr) return;
  Event event;
  event.kind = EventKind::kUse;
  event.addr = addr;
  event.size = 1;
  event.stream = kLegacyStream;
  event.what = UseWhat::kHostAccess;
  event.access = write ? Access::kWrite : Access::kRead;
  event.name = write ? s.store_name : s.load_name;
  event.stack = fault_stack(*session, context);
  Locked locked;
  if (locked) locked.emit(event);
}

// True when the fault at `addr` was in a guarded page (handled: the
// instruction may run again).
bool take_fault(std::uint64_t addr, const void* context) {
  GuardState* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr) return false;
  const std::uint64_t page = addr & ~(s->page_size - 1);
  bool write = false;
  bool feed = false;
  {
    SpinHold hold(s->mu);
    if (!s->set.covers(page)) {
      const bool known = known_page(*s, page);
      if (known && t_retried_fault != addr) {
        t_retried_fault = addr;
        return true;
      }
      t_retried_fault = 0;
      return false;
    }
    // A read-only page faults on writes only.
    write = s->set.protection_of(page) == Protect::kRead || fault_was_write(context);
    // Only an access to a copy's own bytes is fed; other data sharing its
    // pages (an allocator's headers next to a registered buffer) is not.
    feed = s->set.holding(addr) != nullptr;
    const PageRange changed = s->set.remove_if([&](const Guard& g) { return g.pages.contains(page); });
    apply(*s, changed);
    publish_count(*s);
  }
  t_retried_fault = 0;
  if (feed) feed_fault(*s, addr, write, context);
  return true;
}

// Hands a fault that is not ours to the handler that was there before, as
// the kernel would have: a handler is called, the default action (or an
// ignored fault, which the kernel does not let pass) is restored and the
// fault happens again as the handler returns; a signal someone sent is
// raised again.
void pass_on(GuardState* s, int sig, siginfo_t* info, void* context) {
  if (s != nullptr) {
    const struct sigaction& previous = s->previous;
    if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
      previous.sa_sigaction(sig, info, context);
      return;
    }
    if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler != SIG_DFL &&
        previous.sa_handler != SIG_IGN && previous.sa_handler != nullptr) {
      previous.sa_handler(sig);
      return;
    }
  }
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  if (info == nullptr || info->si_code <= 0) raise(sig);
}

void on_segv(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (info != nullptr && info->si_code == SEGV_ACCERR &&
      take_fault(reinterpret_cast<std::uint64_t>(info->si_addr), context)) {
    errno = saved_errno;
    return;
  }
  errno = saved_errno;
  pass_on(g_state.load(std::memory_order_acquire), sig, info, context);
}

// Made at the first guard, under the session lock: the state, the names
// fed with faults, and the handler (installed in front of whatever handles
// SIGSEGV then: the fatal-signal report, the program's own).
GuardState* guard_state(Locked& locked) {
  if (GuardState* s = g_state.load(std::memory_order_acquire)) return s;
  auto* s = new GuardState;  // never freed: the handler may run until exit
  const long page = sysconf(_SC_PAGESIZE);
  if (page > 0) s->page_size = static_cast<std::uint64_t>(page);
  s->load_name = locked.names().intern("host load (host_guard)");
  s->store_name = locked.names().intern("host store (host_guard)");
  // The unwinder is loaded now: loading it inside the handler could deadlock.
  void* warm[4];
  (void)raw_backtrace(warm, 4);
  struct sigaction action {};
  action.sa_sigaction = on_segv;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  if (sigaction(SIGSEGV, &action, &s->previous) != 0) {
    notice(std::string("host_guard: cannot install a SIGSEGV handler (") + std::strerror(errno) +
           "); host loads and stores are not guarded");
    delete s;
    return nullptr;
  }
  g_state.store(s, std::memory_order_release);
  return s;
}

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

void host_guard_copy(Locked& locked, Addr host, std::uint64_t bytes, bool host_written,
                     StreamId stream) {
  if (!options().host_guard || bytes == 0 || host == 0) return;
  // A captured copy runs when its graph is launched, not now.
  if (captures_underway(locked)) return;
  AllocInfo info;
  if (!locked.lookup_allocation(host, &info) || info.kind != AllocKind::kPinnedHost) return;
  // Only the copy's bytes inside the allocation.
  const std::uint64_t end = info.addr + info.size;
  if (bytes > end - host) bytes = end - host;
  static std::atomic<bool> failed{false};
  if (failed.load(std::memory_order_relaxed)) return;
  GuardState* s = guard_state(locked);
  if (s == nullptr) {
    failed.store(true, std::memory_order_relaxed);
    return;
  }
  const Checker::StreamPoint point = locked.session().checker().stream_point(stream);
  Guard g;
  g.pages = guard::pages_of(host, bytes, s->page_size);
  g.bytes_begin = host;
  g.bytes_end = host + bytes;
  g.host_written = host_written;
  g.protect = host_written ? Protect::kNone : Protect::kRead;
  g.agent = point.agent;
  g.epoch = point.epoch;
  g.allocation = info.addr;
  bool say_full = false, say_failure = false;
  int error = 0;
  PageRange failed_run;
  {
    SpinHold hold(s->mu);  // nothing allocates under it
    g.id = s->next_id++;
    note_known(*s, guard::pages_of(info.addr, info.size, s->page_size));
    if (!s->set.add(g)) {
      say_full = !s->full_said;
      s->full_said = true;
    } else if (!apply(*s, g.pages, &failed_run)) {
      error = errno;
      const PageRange changed = s->set.remove_if([&](const Guard& o) { return o.id == g.id; });
      apply(*s, changed);
      say_failure = !s->failure_said;
      s->failure_said = true;
    }
    publish_count(*s);
  }
  if (say_full)
    notice("host_guard: " + std::to_string(kMaxGuards) +
           " copies are guarded already; later ones are not until some are done");
  if (say_failure)
    notice("host_guard: mprotect of pinned memory at " + hex(failed_run.begin) + " (" +
           std::to_string(failed_run.end - failed_run.begin) + " bytes) failed (" +
           std::strerror(error) + "); copies there are not guarded");
}

void host_guard_after_event(Locked& locked, const Event& event) {
  switch (event.kind) {
    case EventKind::kStreamSync:
    case EventKind::kEventSync:
    case EventKind::kDeviceSync:
    case EventKind::kFree:  // a synchronous free waits for the device
    case EventKind::kHostFuncRun:
    case EventKind::kHostFuncDone:
    case EventKind::kThreadStart:
    case EventKind::kSyncAcquire:
      break;
    default:
      return;
  }
  GuardState* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr) return;
  // The checker is asked with the spin lock released (its lookups may
  // allocate); the guards change only under the session lock, held here,
  // and in the fault handler, which only removes them.
  static Guard snapshot[kMaxGuards];  // guarded by the session lock
  static std::uint64_t lifted[kMaxGuards];
  std::size_t count = 0;
  {
    SpinHold hold(s->mu);
    for (std::size_t i = 0; i < s->set.size(); ++i) snapshot[count++] = s->set.at(i);
  }
  if (count == 0) return;
  // Asks the checker itself: this waits for its thread to catch up, which
  // happens only while a guarded copy is pending.
  const Checker& checker = locked.session().checker();
  std::size_t n_lifted = 0;
  for (std::size_t i = 0; i < count; ++i)
    if (checker.thread_ordered_after(event.thread,
                                     Checker::StreamPoint{snapshot[i].agent, snapshot[i].epoch}))
      lifted[n_lifted++] = snapshot[i].id;
  if (n_lifted == 0) return;
  SpinHold hold(s->mu);
  const PageRange changed = s->set.remove_if([&](const Guard& g) {
    for (std::size_t i = 0; i < n_lifted; ++i)
      if (lifted[i] == g.id) return true;
    return false;
  });
  apply(*s, changed);
  publish_count(*s);
}

void host_guard_before_free(Locked& locked, Addr addr) {
  GuardState* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr) return;
  AllocInfo info;
  if (!locked.lookup_allocation(addr, &info)) return;
  SpinHold hold(s->mu);
  const PageRange changed =
      s->set.remove_if([&](const Guard& g) { return g.allocation == info.addr; });
  apply(*s, changed);
  publish_count(*s);
}

void host_guard_lift_all() {
  GuardState* s = g_state.load(std::memory_order_acquire);
  if (s == nullptr) return;
  SpinHold hold(s->mu);
  const PageRange changed = s->set.remove_if([](const Guard&) { return true; });
  apply(*s, changed);
  publish_count(*s);
}

}  // namespace xsc::rt
