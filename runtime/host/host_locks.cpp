// Locks between a C++ program's threads: what one thread did and knew
// reaches another through a mutex, a condition variable's wait, a
// reader-writer lock or a barrier, as it does through a semaphore
// (host_sync.cpp). Without these edges a thread that frees a buffer, or
// reads a pinned download, after another thread synchronized and handed it
// over through a queue of the program's own (std::mutex and
// std::condition_variable) would look unordered.
//
//   - an unlock releases the lock (kSyncRelease, its address); a lock that
//     was taken acquires it (kSyncAcquire): pthread_mutex_lock, _trylock,
//     _timedlock, _clocklock; the reader-writer lock's rdlock and wrlock in
//     every form, and its unlock;
//   - a condition variable's wait releases its mutex as it goes to sleep
//     and acquires it again when it returns with the mutex held (woken or
//     timed out);
//   - pthread_barrier_wait releases the barrier on arrival and acquires it
//     on leaving: every thread's arrival is ordered before any leaves.
//
// Only the executable's own calls are followed: its global offset table's
// slots for these functions are rewritten at the start (got_patch.h), so a
// library's locks, the runtime's own and a library function that ends in a
// tail call to an unlock never reach the wrappers below. The C++ library's
// condition variable waits (std::condition_variable::wait, wait_for) are
// rewritten too, and followed on a mutex the executable's code locked on
// this thread and still holds (the thread's held_locks). Nothing is
// rewritten in a Python program (program_locks_followed): its locks are
// semaphores, and the interpreter's mutexes are its GIL's, which would
// order every Python thread whatever the program does. When an edge is
// fed (the session lock, the runtime's own threads, host_sync=0) is
// host_sync.cpp's to say.
//
// Not followed: lock-free handovers (atomics, futexes, C++20's semaphores,
// latches and barriers, std::future), spin locks, and locks taken by code
// that dlopen loaded later. OpenMP's regions: openmp_regions.cpp.
#include <pthread.h>

#include <atomic>
#include <cerrno>
#include <ctime>
#include <iterator>

#include "runtime/host/got_patch.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

EventId object_of(const void* lock) { return reinterpret_cast<EventId>(lock); }

// The thread now holds `mutex`, locked by the program's code.
void note_held(const void* mutex) {
  SyncEdges& e = thread_state().sync_edges;
  e.held_locks[e.next_held++ % std::size(e.held_locks)] = mutex;
}

void note_unheld(const void* mutex) {
  SyncEdges& e = thread_state().sync_edges;
  for (const void*& held : e.held_locks)
    if (held == mutex) {
      held = nullptr;
      return;
    }
}

bool held_by_program(const void* mutex) {
  const SyncEdges& e = thread_state().sync_edges;
  for (const void* held : e.held_locks)
    if (held == mutex) return true;
  return false;
}

// A lock the program took: `mutex` marks one a condition variable can wait
// on, held from the first lock on (a wait may follow the first thread's
// start).
void taken(const void* lock, bool mutex) {
  if (mutex) note_held(lock);
  if (following_program_locks()) sync_acquire(object_of(lock), true);
}

void given_back(const void* lock, bool mutex) {
  if (mutex) note_unheld(lock);
  if (following_program_locks()) sync_release(object_of(lock), true);
}

// A lock call's result: one that took the lock acquires it.
int after_lock(int rc, const void* lock, bool mutex) {
  if (rc == 0) taken(lock, mutex);
  return rc;
}

// The executable's calls.
int exe_mutex_lock(pthread_mutex_t* mutex) {
  return after_lock(pthread_mutex_lock(mutex), mutex, true);
}
int exe_mutex_trylock(pthread_mutex_t* mutex) {
  return after_lock(pthread_mutex_trylock(mutex), mutex, true);
}
int exe_mutex_timedlock(pthread_mutex_t* mutex, const struct timespec* abstime) {
  return after_lock(pthread_mutex_timedlock(mutex, abstime), mutex, true);
}
int exe_mutex_clocklock(pthread_mutex_t* mutex, clockid_t clock, const struct timespec* abstime) {
  return after_lock(pthread_mutex_clocklock(mutex, clock, abstime), mutex, true);
}

// Before the unlock: the thread that takes the mutex next feeds its
// acquire after this.
int exe_mutex_unlock(pthread_mutex_t* mutex) {
  given_back(mutex, true);
  return pthread_mutex_unlock(mutex);
}

int exe_rwlock_rdlock(pthread_rwlock_t* lock) {
  return after_lock(pthread_rwlock_rdlock(lock), lock, false);
}
int exe_rwlock_wrlock(pthread_rwlock_t* lock) {
  return after_lock(pthread_rwlock_wrlock(lock), lock, false);
}
int exe_rwlock_tryrdlock(pthread_rwlock_t* lock) {
  return after_lock(pthread_rwlock_tryrdlock(lock), lock, false);
}
int exe_rwlock_trywrlock(pthread_rwlock_t* lock) {
  return after_lock(pthread_rwlock_trywrlock(lock), lock, false);
}
int exe_rwlock_timedrdlock(pthread_rwlock_t* lock, const struct timespec* abstime) {
  return after_lock(pthread_rwlock_timedrdlock(lock, abstime), lock, false);
}
int exe_rwlock_timedwrlock(pthread_rwlock_t* lock, const struct timespec* abstime) {
  return after_lock(pthread_rwlock_timedwrlock(lock, abstime), lock, false);
}
int exe_rwlock_clockrdlock(pthread_rwlock_t* lock, clockid_t clock,
                           const struct timespec* abstime) {
  return after_lock(pthread_rwlock_clockrdlock(lock, clock, abstime), lock, false);
}
int exe_rwlock_clockwrlock(pthread_rwlock_t* lock, clockid_t clock,
                           const struct timespec* abstime) {
  return after_lock(pthread_rwlock_clockwrlock(lock, clock, abstime), lock, false);
}

int exe_rwlock_unlock(pthread_rwlock_t* lock) {
  given_back(lock, false);
  return pthread_rwlock_unlock(lock);
}

// A condition variable's wait, `program` when it is the program's: it
// gives the mutex back as it sleeps and takes it again before it returns
// (woken, or timed out).
template <class Wait>
int waiting(bool program, pthread_mutex_t* mutex, Wait wait) {
  if (program) sync_release(object_of(mutex), true);
  const int rc = wait();
  if (program && (rc == 0 || rc == ETIMEDOUT)) sync_acquire(object_of(mutex), true);
  return rc;
}

int exe_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  return waiting(following_program_locks(), mutex, [&] { return pthread_cond_wait(cond, mutex); });
}
int exe_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                       const struct timespec* abstime) {
  return waiting(following_program_locks(), mutex,
                 [&] { return pthread_cond_timedwait(cond, mutex, abstime); });
}
int exe_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                       const struct timespec* abstime) {
  return waiting(following_program_locks(), mutex,
                 [&] { return pthread_cond_clockwait(cond, mutex, clock, abstime); });
}

// The C++ library's waits: the program's on a mutex its code holds.
bool program_mutex(pthread_mutex_t* mutex) {
  return following_program_locks() && held_by_program(mutex);
}
int cxx_cond_wait(pthread_cond_t* cond, pthread_mutex_t* mutex) {
  return waiting(program_mutex(mutex), mutex, [&] { return pthread_cond_wait(cond, mutex); });
}
int cxx_cond_timedwait(pthread_cond_t* cond, pthread_mutex_t* mutex,
                       const struct timespec* abstime) {
  return waiting(program_mutex(mutex), mutex,
                 [&] { return pthread_cond_timedwait(cond, mutex, abstime); });
}
int cxx_cond_clockwait(pthread_cond_t* cond, pthread_mutex_t* mutex, clockid_t clock,
                       const struct timespec* abstime) {
  return waiting(program_mutex(mutex), mutex,
                 [&] { return pthread_cond_clockwait(cond, mutex, clock, abstime); });
}

// Every thread's arrival before any leaves.
int exe_barrier_wait(pthread_barrier_t* barrier) {
  const bool program = following_program_locks();
  if (program) sync_release(object_of(barrier), true);
  const int rc = pthread_barrier_wait(barrier);
  if (program && (rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD))
    sync_acquire(object_of(barrier), true);
  return rc;
}

void* as_slot(auto function) { return reinterpret_cast<void*>(function); }

const GotHook executable_hooks[] = {
    {"pthread_mutex_lock", as_slot(&exe_mutex_lock)},
    {"pthread_mutex_trylock", as_slot(&exe_mutex_trylock)},
    {"pthread_mutex_timedlock", as_slot(&exe_mutex_timedlock)},
    {"pthread_mutex_clocklock", as_slot(&exe_mutex_clocklock)},
    {"pthread_mutex_unlock", as_slot(&exe_mutex_unlock)},
    {"pthread_rwlock_rdlock", as_slot(&exe_rwlock_rdlock)},
    {"pthread_rwlock_wrlock", as_slot(&exe_rwlock_wrlock)},
    {"pthread_rwlock_tryrdlock", as_slot(&exe_rwlock_tryrdlock)},
    {"pthread_rwlock_trywrlock", as_slot(&exe_rwlock_trywrlock)},
    {"pthread_rwlock_timedrdlock", as_slot(&exe_rwlock_timedrdlock)},
    {"pthread_rwlock_timedwrlock", as_slot(&exe_rwlock_timedwrlock)},
    {"pthread_rwlock_clockrdlock", as_slot(&exe_rwlock_clockrdlock)},
    {"pthread_rwlock_clockwrlock", as_slot(&exe_rwlock_clockwrlock)},
    {"pthread_rwlock_unlock", as_slot(&exe_rwlock_unlock)},
    {"pthread_cond_wait", as_slot(&exe_cond_wait)},
    {"pthread_cond_timedwait", as_slot(&exe_cond_timedwait)},
    {"pthread_cond_clockwait", as_slot(&exe_cond_clockwait)},
    {"pthread_barrier_wait", as_slot(&exe_barrier_wait)},
};

const GotHook cxx_library_hooks[] = {
    {"pthread_cond_wait", as_slot(&cxx_cond_wait)},
    {"pthread_cond_timedwait", as_slot(&cxx_cond_timedwait)},
    {"pthread_cond_clockwait", as_slot(&cxx_cond_clockwait)},
};

}  // namespace

std::size_t install_lock_hooks() {
  return patch_executable_got(executable_hooks, std::size(executable_hooks)) +
         patch_library_got("libstdc++.so", cxx_library_hooks, std::size(cxx_library_hooks));
}

}  // namespace xsc::rt
