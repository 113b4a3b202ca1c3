// Host threads: dense ids (T0, T1, ...) cached in TLS, the per-thread
// default stream of each, and the re-entrancy state of CUPTI callbacks.
#include <atomic>

#include "runtime/rtl.h"
#include "runtime/cuda/stream_id.h"

namespace xsc::rt {
namespace {
std::atomic<ThreadId> next_thread_id{0};
}  // namespace

constinit thread_local ThreadState current_thread_state
    __attribute__((tls_model("initial-exec")));

ThreadId assign_thread_id(ThreadState& state) {
  state.id = next_thread_id.fetch_add(1, std::memory_order_relaxed);
  state.has_id = true;
  return state.id;
}

namespace {
// Frees a thread's caches at its exit and clears their slots, so that a
// callback arriving later in the thread's teardown makes a new one (left to
// the process) instead of using a freed one.
class ThreadCacheReaper {
 public:
  ~ThreadCacheReaper() {
    reaped_ = true;
    for (int i = 0; i < count_; ++i) {
      void* cache = *entries_[i].slot;
      *entries_[i].slot = nullptr;
      entries_[i].destroy(cache);
    }
  }
  void add(void** slot, void (*destroy)(void*)) {
    if (!reaped_ && count_ < kMaxEntries) entries_[count_++] = {slot, destroy};
  }

 private:
  static constexpr int kMaxEntries = 8;
  struct Entry {
    void** slot;
    void (*destroy)(void*);
  };
  Entry entries_[kMaxEntries]{};
  int count_ = 0;
  bool reaped_ = false;
};
thread_local ThreadCacheReaper reaper;
}  // namespace

void* thread_cache(void** slot, void* (*make)(), void (*destroy)(void*)) {
  if (*slot == nullptr) {
    *slot = make();
    reaper.add(slot, destroy);
  }
  return *slot;
}

StreamId per_thread_stream() { return per_thread_stream_id(current_thread()); }

StreamId resolve(std::uint64_t handle, bool per_thread_default) {
  return resolve_stream_handle(handle, per_thread_default, current_thread());
}

}  // namespace xsc::rt
