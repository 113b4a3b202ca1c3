// Thread starts: a thread begins after what the thread that created it did
// before pthread_create, so its frees are ordered after the work its
// creator had synchronized with (kThreadCreate, kThreadStart). Without the
// edge a new thread would know nothing, and its free of a buffer the
// creator had already waited for would look unordered: a false report.
//
// pthread_create is interposed when the runtime is preloaded (LD_PRELOAD);
// loaded later (CUDA_INJECTION64_PATH) it is not seen, and new threads
// start knowing nothing, as before. Only threads started once a checking
// session exists get the edge: before that there is nothing to order.
#include <dlfcn.h>
#include <cerrno>
#include <pthread.h>

#include <atomic>

#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

std::atomic<EventId> next_token{1};
// The PyTorch adapter's: run in each started thread before its own start
// routine (it marks the thread for the operator-write kernels).
std::atomic<void (*)(void)> thread_start_hook{nullptr};

struct ThreadStart {
  void* (*start)(void*) = nullptr;
  void* arg = nullptr;
  EventId token = 0;
};

void* start_thread(void* raw) {
  const ThreadStart start = *static_cast<ThreadStart*>(raw);
  delete static_cast<ThreadStart*>(raw);
  if (enabled()) feed_host_edge(EventKind::kThreadStart, start.token);
  if (auto hook = thread_start_hook.load(std::memory_order_acquire)) hook();
  void* result = start.start(start.arg);
  // What the thread did is the joiner's to know (host_sync.cpp).
  release_thread_exit();
  return result;
}

PthreadCreate real_pthread_create() {
  static const auto real = reinterpret_cast<PthreadCreate>(dlsym(RTLD_NEXT, "pthread_create"));
  return real;
}

}  // namespace

void set_thread_start_hook(void (*hook)(void)) {
  thread_start_hook.store(hook, std::memory_order_release);
}

}  // namespace xsc::rt

extern "C" __attribute__((visibility("default"))) int pthread_create(
    pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
  using namespace xsc::rt;
  const PthreadCreate real = real_pthread_create();
  if (real == nullptr) return EAGAIN;
  note_thread_created(__builtin_return_address(0));
  // Nothing to order before a session exists; never from inside the
  // runtime's own work (a CUDA call it makes, the session lock it holds).
  if (!session_started() || !enabled() || thread_state().guard > 0 || holding_session_lock())
    return real(thread, attr, start, arg);
  auto* box = new ThreadStart{start, arg, next_token.fetch_add(1, std::memory_order_relaxed)};
  feed_host_edge(xsc::EventKind::kThreadCreate, box->token);
  const int rc = real(thread, attr, &start_thread, box);
  if (rc != 0) delete box;
  return rc;
}
