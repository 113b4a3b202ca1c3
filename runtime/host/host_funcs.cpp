// Host functions (cuLaunchHostFunc, cuStreamAddCallback and the runtime's
// cudaLaunchHostFunc / cudaStreamAddCallback, which call them): the
// application's function is wrapped, so the checker learns when it runs
// and when it returns.
//
// A host function runs only after all earlier work on its stream, so the
// thread that runs it is ordered after that work (kHostFuncRun). Once it
// has returned, that work is complete: a free issued later by any thread
// cannot race with it, as after a successful cudaEventQuery (kHostFuncDone).
// That covers the common hand-off where the host function sets a flag the
// host waits for before it frees.
//
// The wrap happens at the driver call's entry, by rewriting the function and
// user-data arguments CUPTI passes to the callback (its functionParams point
// at the call's arguments). The driver call made by a runtime call is
// wrapped too, whatever level the application called.
#include <atomic>
#include <mutex>

#include <cuda.h>
#include <cupti.h>  // with the generated *_params structs

#include "runtime/cuda/ops.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

std::atomic<EventId> next_token{1};

// What the wrapper needs: the application's function and data, and the
// token the checker knows the enqueue by. Kept when the host function was
// captured into a graph, which may run it many times.
struct HostFuncCall {
  CUhostFn fn = nullptr;
  CUstreamCallback callback = nullptr;
  void* user_data = nullptr;
  EventId token = 0;
  StreamId stream = kLegacyStream;
  bool keep = false;
};

void emit_run_state(EventKind kind, const HostFuncCall& call) {
  if (!enabled()) return;
  Event event;
  event.kind = kind;
  event.stream = call.stream;
  event.event = call.token;
  Locked locked;
  if (locked) locked.emit(event);
}

void run_host_fn(void* raw) {
  auto* call = static_cast<HostFuncCall*>(raw);
  emit_run_state(EventKind::kHostFuncRun, *call);
  call->fn(call->user_data);
  emit_run_state(EventKind::kHostFuncDone, *call);
  if (!call->keep) delete call;
}

void CUDA_CB run_stream_callback(CUstream stream, CUresult status, void* raw) {
  auto* call = static_cast<HostFuncCall*>(raw);
  emit_run_state(EventKind::kHostFuncRun, *call);
  call->callback(stream, status, call->user_data);
  emit_run_state(EventKind::kHostFuncDone, *call);
  if (!call->keep) delete call;
}

HostFuncCall* new_call(StreamId stream) {
  auto* call = new HostFuncCall;
  call->token = next_token.fetch_add(1, std::memory_order_relaxed);
  call->stream = stream;
  Locked locked;
  // Inside a capture the function becomes a graph node and may run many
  // times: its record lives as long as the process.
  call->keep = !locked || captures_underway(locked);
  return call;
}

}  // namespace

void wrap_host_func(void* params, StreamId stream) {
  if (!enabled()) return;
  auto* p = static_cast<cuLaunchHostFunc_params*>(params);
  if (p->fn == nullptr || p->fn == &run_host_fn) return;
  HostFuncCall* call = new_call(stream);
  call->fn = p->fn;
  call->user_data = p->userData;
  p->fn = &run_host_fn;
  p->userData = call;
  thread_state().host_func_token = call->token;
}

void wrap_stream_callback(void* params, StreamId stream) {
  if (!enabled()) return;
  auto* p = static_cast<cuStreamAddCallback_params*>(params);
  if (p->callback == nullptr || p->callback == &run_stream_callback) return;
  HostFuncCall* call = new_call(stream);
  call->callback = p->callback;
  call->user_data = p->userData;
  p->callback = &run_stream_callback;
  p->userData = call;
  thread_state().host_func_token = call->token;
}

EventId take_host_func_token() {
  ThreadState& thread = thread_state();
  const EventId token = thread.host_func_token;
  thread.host_func_token = 0;
  return token;
}

}  // namespace xsc::rt
