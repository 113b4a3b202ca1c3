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
// (sync_release() and sync_acquire() say when). A C++ program's mutexes, condition
// variables, reader-writer locks and barriers come through
// host_locks.cpp, fed here. Python 3.13's locks are not followed: they
// post a semaphore only when a waiter sleeps.
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

// Where the program's own synchronization is called from: the executable's
// code and the Python interpreter's (libpython, when it is not linked into
// the executable) for semaphores and joins, and the C++ library's for a
// C++ program's joins (std::thread::join). A library's synchronization (a
// driver's worker threads, posting while they hold a lock of their own
// that a CUDA call under the session lock may want) is its own business,
// and following it could only deadlock. (Locks are not told apart by
// return address: host_locks.cpp rewrites the executable's own calls.)
struct CodeRange {
  std::uintptr_t begin = 0, end = 0;
};
struct CodeRanges {
  CodeRange ranges[4];
  std::size_t count = 0;
  bool contains(std::uintptr_t pc) const {
    for (std::size_t i = 0; i < count; ++i)
      if (pc >= ranges[i].begin && pc < ranges[i].end) return true;
    return false;
  }
  void add(const struct dl_phdr_info* info) {
    for (int i = 0; i < info->dlpi_phnum && count < std::size(ranges); ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
      const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
      ranges[count++] = {begin, begin + ph.p_memsz};
    }
  }
};
struct ProgramCode {
  CodeRanges executable, interpreter, cxx_library;
  bool seen_executable = false;
};
ProgramCode program_code;

int note_program_code(struct dl_phdr_info* info, std::size_t, void* raw) {
  auto* code = static_cast<ProgramCode*>(raw);
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  if (!code->seen_executable) {  // the first object: the executable
    code->seen_executable = true;
    code->executable.add(info);
  } else if (std::strncmp(base, "libpython", 9) == 0) {
    code->interpreter.add(info);
  } else if (std::strncmp(base, "libstdc++.so", 12) == 0) {
    code->cxx_library.add(info);
  }
  return 0;
}

bool in(const CodeRanges& code, const void* pc) {
  return code.contains(reinterpret_cast<std::uintptr_t>(pc));
}

// Whether a semaphore call or a join came from the program.
bool called_by_program(const void* pc) {
  return in(program_code.executable, pc) || in(program_code.interpreter, pc);
}

// `from_program`: the caller was judged the program's; the runtime's own
// edges (a started thread's exit) pass true.
bool following(bool from_program) {
  return from_program && session_started() && enabled() && options().host_sync &&
         fed_in_this_process() && thread_state().guard == 0 && !holding_session_lock();
}

}  // namespace

// A release adds nothing when the thread released the same object last and
// has since fed no event of its own (ThreadState::actions) and acquired
// nothing.
void sync_release(EventId object, bool from_program) {
  if (!following(from_program)) return;
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
void sync_acquire(EventId object, bool from_program) {
  if (!following(from_program)) return;
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

namespace {

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
  if (rc == 0) sync_acquire(reinterpret_cast<EventId>(sem), called_by_program(caller));
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
  sync_release(static_cast<EventId>(pthread_self()) | kThreadObjectBit, true);
}

std::atomic<bool> program_locks_followed{false};
std::atomic<bool> program_threads_started{false};

void note_thread_created(const void* caller) {
  if (!program_threads_started.load(std::memory_order_relaxed) &&
      (called_by_program(caller) || called_by_cxx_library(caller)))
    program_threads_started.store(true, std::memory_order_relaxed);
}

void init_host_sync(bool injected) {
  dl_iterate_phdr(&note_program_code, &program_code);
  // An interpreter in the process (the executable, or libpython linked to
  // it) makes it a Python program: its locks are semaphores, followed
  // above, and its mutexes the interpreter's.
  const bool python = dlsym(RTLD_DEFAULT, "Py_IsInitialized") != nullptr;
  if (!options().host_sync || python) return;
  program_locks_followed.store(true, std::memory_order_relaxed);
  // Loaded into a running program, the runtime has not seen which threads
  // it started.
  if (injected) program_threads_started.store(true, std::memory_order_relaxed);
  const std::size_t slots = install_lock_hooks();
  const std::size_t openmp_slots = install_openmp_hooks();
  if (options().verbosity >= 2)
    notice("following the program's locks: " + std::to_string(slots) + " call slots rewritten, " +
           std::to_string(openmp_slots) + " of OpenMP's");
}

bool called_by_cxx_library(const void* pc) { return in(program_code.cxx_library, pc); }

bool following_program_locks() {
  return program_locks_followed.load(std::memory_order_relaxed) &&
         program_threads_started.load(std::memory_order_relaxed);
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
  xsc::rt::sync_release(reinterpret_cast<EventId>(sem),
                   xsc::rt::called_by_program(__builtin_return_address(0)));
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
  // std::thread::join calls it from the C++ library: a C++ program's join.
  const void* caller = __builtin_return_address(0);
  if (rc == 0)
    xsc::rt::sync_acquire(static_cast<EventId>(thread) | xsc::rt::kThreadObjectBit,
                     xsc::rt::called_by_program(caller) ||
                         (xsc::rt::program_locks_followed.load(std::memory_order_relaxed) &&
                          xsc::rt::called_by_cxx_library(caller)));
  return rc;
}
