// Host synchronization between threads: what one thread did and knew
// reaches another through a semaphore or a join, and without these edges
// the other's free of a buffer the first had waited for, or its read of a
// download the first had synchronized with, would look unordered.
//
//   - sem_post releases the semaphore (kSyncRelease, the sem_t's address);
//     a sem_wait, sem_trywait, sem_timedwait or sem_clockwait that took a
//     count acquires it (kSyncAcquire). CPython's locks on Linux are
//     semaphores: a threading.Lock's release, a queue.Queue's handover and a
//     threading.Event's set all post one, and their waits take one.
//   - a thread's return from its start routine releases the thread, and a
//     pthread_join that returns 0 acquires it.
// The checker keeps one clock per object, the join of its releases (as
// ThreadSanitizer's sync objects do), so a wait is ordered after every
// post made before it, whichever post it took.
//
// Only calls from the program's own code are followed: the executable's
// and the Python interpreter's (called_by_program). Edges are followed
// once this process has fed an event (a forked data-loader worker that
// never touches CUDA feeds none), never from inside the runtime's own work
// (its threads, the session lock it holds, a fork it holds that lock
// across), with host_sync=1 (the default), and only when preloaded: loaded
// later (CUDA_INJECTION64_PATH), nothing is interposed. A release or
// acquire that adds nothing to what the checker knows is not fed
// (release() and acquire() say when). Mutexes and condition variables are
// not followed (C++ programs' own handovers); nor are Python 3.13's locks,
// which post a semaphore only when a waiter sleeps.
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <iterator>

#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

// Thread objects are tagged apart from semaphores' addresses.
constexpr EventId kThreadObjectBit = 1ull << 63;

std::atomic<std::uint64_t> releases_fed{0};

// Where the program's own synchronization is called from: the main
// executable's code and the Python interpreter's (libpython, when it is not
// linked into the executable). A library's semaphores (a driver's worker
// threads, posting while they hold a lock of their own that a CUDA call
// under the session lock may want) are its own business, and following
// them could only deadlock.
struct CodeRange {
  std::uintptr_t begin = 0, end = 0;
};
struct ProgramCode {
  CodeRange ranges[8];
  std::size_t count = 0;
  bool contains(std::uintptr_t pc) const {
    for (std::size_t i = 0; i < count; ++i)
      if (pc >= ranges[i].begin && pc < ranges[i].end) return true;
    return false;
  }
};

int note_program_code(struct dl_phdr_info* info, std::size_t, void* raw) {
  auto* code = static_cast<ProgramCode*>(raw);
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  const bool program = name[0] == '\0' && code->count == 0;  // the first object: the executable
  if (!program && std::strncmp(base, "libpython", 9) != 0) return 0;
  for (int i = 0; i < info->dlpi_phnum && code->count < std::size(code->ranges); ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    code->ranges[code->count++] = {begin, begin + ph.p_memsz};
  }
  return 0;
}

bool called_by_program(const void* pc) {
  static const ProgramCode code = [] {
    ProgramCode c;
    dl_iterate_phdr(&note_program_code, &c);
    return c;
  }();
  return code.contains(reinterpret_cast<std::uintptr_t>(pc));
}

// `caller`: the code that called the interposed function; null for the
// runtime's own edges (a started thread's exit).
bool following(const void* caller) {
  return session_started() && enabled() && options().host_sync && fed_in_this_process() &&
         thread_state().guard == 0 && !holding_session_lock() &&
         (caller == nullptr || called_by_program(caller));
}

// A release adds nothing when the thread released the same object last and
// has since fed no event of its own (ThreadState::actions) and acquired
// nothing.
void release(EventId object, const void* caller) {
  if (!following(caller)) return;
  ThreadState& t = thread_state();
  SyncEdges& e = t.sync_edges;
  if (e.last_released == object && e.actions_at_release == t.actions &&
      e.acquires_at_release == e.acquires)
    return;
  const int saved = errno;
  feed_host_edge(EventKind::kSyncRelease, object);
  releases_fed.fetch_add(1, std::memory_order_relaxed);
  ++e.own_releases;
  e.last_released = object;
  e.actions_at_release = t.actions;
  e.acquires_at_release = e.acquires;
  errno = saved;
}

// An acquire adds nothing when the thread acquired the same object last and
// no other thread has released anything since: a lock a thread takes and
// gives back in a loop costs nothing after its first round.
void acquire(EventId object, const void* caller) {
  if (!following(caller)) return;
  ThreadState& t = thread_state();
  SyncEdges& e = t.sync_edges;
  const std::uint64_t others = releases_fed.load(std::memory_order_relaxed) - e.own_releases;
  if (e.last_acquired == object && e.others_at_acquire == others) return;
  const int saved = errno;
  feed_host_edge(EventKind::kSyncAcquire, object);
  ++e.acquires;
  e.last_acquired = object;
  e.others_at_acquire = others;
  errno = saved;
}

template <class Fn>
Fn next_symbol(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

// A semaphore wait through `real`: one that took a count acquires it.
template <class Wait, class... Args>
int acquiring(const void* caller, Wait real, sem_t* sem, Args... args) {
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  const int rc = real(sem, args...);
  if (rc == 0) acquire(reinterpret_cast<EventId>(sem), caller);
  return rc;
}

}  // namespace

void feed_host_edge(EventKind kind, EventId object) {
  Event event;
  event.kind = kind;
  event.event = object;
  Locked locked;
  if (locked) locked.emit(event);
}

// Every thread the runtime started for the program (start_thread) releases
// at its exit, whatever code it ran.
void release_thread_exit() {
  release(static_cast<EventId>(pthread_self()) | kThreadObjectBit, nullptr);
}

}  // namespace xsc::rt

using xsc::EventId;

extern "C" __attribute__((visibility("default"))) int sem_post(sem_t* sem) {
  static const auto real = xsc::rt::next_symbol<int (*)(sem_t*)>("sem_post");
  if (real == nullptr) {
    errno = ENOSYS;
    return -1;
  }
  // Before the post: the waiter it wakes feeds its acquire after this.
  xsc::rt::release(reinterpret_cast<EventId>(sem), __builtin_return_address(0));
  return real(sem);
}

extern "C" __attribute__((visibility("default"))) int sem_wait(sem_t* sem) {
  static const auto real = xsc::rt::next_symbol<int (*)(sem_t*)>("sem_wait");
  return xsc::rt::acquiring(__builtin_return_address(0), real, sem);
}

extern "C" __attribute__((visibility("default"))) int sem_trywait(sem_t* sem) {
  static const auto real = xsc::rt::next_symbol<int (*)(sem_t*)>("sem_trywait");
  return xsc::rt::acquiring(__builtin_return_address(0), real, sem);
}

extern "C" __attribute__((visibility("default"))) int sem_timedwait(sem_t* sem,
                                                                   const struct timespec* abstime) {
  static const auto real =
      xsc::rt::next_symbol<int (*)(sem_t*, const struct timespec*)>("sem_timedwait");
  return xsc::rt::acquiring(__builtin_return_address(0), real, sem, abstime);
}

extern "C" __attribute__((visibility("default"))) int sem_clockwait(
    sem_t* sem, clockid_t clock, const struct timespec* abstime) {
  static const auto real =
      xsc::rt::next_symbol<int (*)(sem_t*, clockid_t, const struct timespec*)>("sem_clockwait");
  return xsc::rt::acquiring(__builtin_return_address(0), real, sem, clock, abstime);
}

extern "C" __attribute__((visibility("default"))) int pthread_join(pthread_t thread,
                                                                  void** result) {
  static const auto real = xsc::rt::next_symbol<int (*)(pthread_t, void**)>("pthread_join");
  if (real == nullptr) return ENOSYS;
  const int rc = real(thread, result);
  if (rc == 0)
    xsc::rt::acquire(static_cast<EventId>(thread) | xsc::rt::kThreadObjectBit,
                     __builtin_return_address(0));
  return rc;
}
