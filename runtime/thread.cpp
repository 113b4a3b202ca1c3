// Host threads: dense ids (T0, T1, ...) cached in TLS, the per-thread
// default stream of each, and the re-entrancy state of CUPTI callbacks.
#include <atomic>

#include "runtime/rtl.h"
#include "runtime/stream_id.h"

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

StreamId per_thread_stream() { return per_thread_stream_id(current_thread()); }

StreamId resolve(std::uint64_t handle, bool per_thread_default) {
  return resolve_stream_handle(handle, per_thread_default, current_thread());
}

}  // namespace xsc::rt
