// Which CUPTI callbacks carry a runtime API call: the runtime's own, or
// only the driver call nested in it. Each callback costs CUPTI's dispatch,
// and a runtime call the runtime API observes costs four (its entry and
// exit, and its nested driver call's), where its driver call alone costs
// two. So the runtime's callbacks of the busiest calls are calibrated away
// once their nested driver calls were shown to describe them:
//
// - kernel launches, all eight runtime launch ids together (LaunchMode):
//   the nested driver launch names the same stream and no other observed
//   driver call comes inside;
// - copies, memsets, event records, stream waits and event destroys, each
//   runtime callback id on its own (CallMode): the nested driver call
//   feeds exactly what the runtime call feeds (its CallEffect) and is the
//   only observed driver call inside.
//
// After kCalibrationCalls agreeing calls the runtime's callbacks go off;
// one disagreement keeps them on for good. Either way nothing the checker
// is fed changes.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

#include "runtime/cuda/cupti_handlers.h"

namespace xsc::rt::cupti {
namespace {

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name

constexpr int kCalibrationCalls = 64;

// ---- launches -----------------------------------------------------------------

// kCalibrating: runtime and driver launch callbacks are both on, and each
// runtime launch is compared with its nested driver launch. After
// kCalibrationCalls launches that agreed the runtime's launch callbacks are
// turned off (kDriverOnly): a runtime launch is then seen as the
// application's own driver launch. One disagreement (a launch without a
// nested driver launch, another stream, other driver calls inside) keeps
// both for good (kRuntimeToo).
enum LaunchMode : int { kCalibrating, kDriverOnly, kRuntimeToo };
std::atomic<int> launch_mode{kRuntimeToo};
std::atomic<int> agreeing_launches{0};

bool disable_runtime_launch_callbacks() {
  CUpti_CallbackId ids[16];
  std::size_t n = 0;
  for (CUpti_CallbackId cbid : kRuntimeCallbacks)
    if (is_runtime_launch(cbid) && n < std::size(ids)) ids[n++] = cbid;
  return disable_runtime_callbacks({ids, n});
}

// ---- calls ----------------------------------------------------------------------

// Per calibrated runtime callback id. kCallsCalibrating: each call on a
// thread not inside another runtime call is checked (counted in
// `in_flight` from its entry to its exit). kCallsOff: the driver call
// carries the call; the runtime's callbacks are ignored, and turned off
// once no checked call is in flight, so that no checked call loses the
// exit callback that feeds it. kCallsRuntimeToo: both, for good. Neither
// kCallsOff nor kCallsRuntimeToo is ever left: an exit is handled exactly
// when its entry was.
enum CallMode : int { kCallsRuntimeToo, kCallsCalibrating, kCallsOff };
struct CallCalibration {
  std::atomic<int> mode{kCallsRuntimeToo};
  std::atomic<int> agreeing{0};
  std::atomic<int> in_flight{0};
  std::atomic<bool> callbacks_off{false};
};
CallCalibration call_calibrations[CUPTI_RUNTIME_TRACE_CBID_SIZE];

CallCalibration* calibration_of(CUpti_CallbackId cbid) {
  return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE ? &call_calibrations[cbid] : nullptr;
}

}  // namespace

// The calls calibrated one id at a time.
bool calibrated_call(CUpti_CallbackId cbid) {
  switch (cbid) {
    case RT(cudaMemcpy_v3020): case RT(cudaMemcpy_ptds_v7000):
    case RT(cudaMemcpyAsync_v3020): case RT(cudaMemcpyAsync_ptsz_v7000):
    case RT(cudaMemset_v3020): case RT(cudaMemset_ptds_v7000):
    case RT(cudaMemsetAsync_v3020): case RT(cudaMemsetAsync_ptsz_v7000):
    case RT(cudaEventRecord_v3020): case RT(cudaEventRecord_ptsz_v7000):
    case RT(cudaEventRecordWithFlags_v11010): case RT(cudaEventRecordWithFlags_ptsz_v11010):
    case RT(cudaStreamWaitEvent_v3020): case RT(cudaStreamWaitEvent_ptsz_v7000):
    case RT(cudaEventDestroy_v3020):
      return true;
    default:
      return false;
  }
}

namespace {

// What a checked call in progress on this thread has shown so far: the
// runtime call's effect (taken at its entry, where every parameter of
// these calls is already an input) and its nested driver calls'.
struct CallCheck {
  EffectSink runtime;
  EffectSink nested;
  bool nested_fed_at_enter = false;  // the nested call took effect at its entry
  int other_driver_calls = 0;        // observed nested calls of other kinds
  EffectSink* describing = nullptr;  // where effects go instead of the checker
};

CallCheck& call_check(ThreadState& thread) { return *thread_cache<CallCheck>(&thread.call_check); }

// The effects a handler makes while `sink` is set are described there, not fed.
class Describing {
 public:
  Describing(CallCheck& check, EffectSink* sink) : check_(check) { check_.describing = sink; }
  ~Describing() { check_.describing = nullptr; }
  Describing(const Describing&) = delete;
  Describing& operator=(const Describing&) = delete;

 private:
  CallCheck& check_;
};

void turn_call_off_when_idle(CallCalibration& cal, CUpti_CallbackId cbid, const char* function) {
  if (cal.callbacks_off.load(std::memory_order_relaxed)) return;
  if (cal.mode.load() != kCallsOff || cal.in_flight.load() != 0) return;
  if (cal.callbacks_off.exchange(true)) return;
  const CUpti_CallbackId ids[1] = {cbid};
  if (!disable_runtime_callbacks(ids)) {
    // The subscription lock is busy: try again at a later callback.
    cal.callbacks_off.store(false);
    return;
  }
  if (options().verbosity >= 1)
    notice(std::string("runtime callbacks of ") + (function != nullptr ? function : "?") +
           " off after " + std::to_string(kCalibrationCalls) +
           " calls that their driver calls described");
}

// Why a checked call's nested driver calls do not describe it; null when
// they do. `skip` is set for a call that says nothing either way.
const char* disagreement(const CallCheck& check, bool* skip) {
  *skip = false;
  if (check.runtime.count != 1) return "it has no single effect";
  if (check.other_driver_calls > 0) return "other driver calls came inside";
  if (check.nested.count == 0) {
    // Zero bytes: the runtime may return without calling the driver, and
    // nothing is touched either way.
    const CallEffect& effect = check.runtime.first;
    if ((effect.kind == CallEffect::Kind::kCopy || effect.kind == CallEffect::Kind::kMemset) &&
        effect.bytes == 0) {
      *skip = true;
      return nullptr;
    }
    return "no driver call came inside";
  }
  if (check.nested.count > 1) return "several driver calls came inside";
  if (!(check.nested.first == check.runtime.first)) return "its driver call did otherwise";
  return nullptr;
}

void calibrate_call(CallCalibration& cal, const CallCheck& check, const char* function) {
  bool skip = false;
  const char* why = disagreement(check, &skip);
  if (skip) return;
  if (why != nullptr) {
    int expected = kCallsCalibrating;
    if (cal.mode.compare_exchange_strong(expected, kCallsRuntimeToo) && options().verbosity >= 1)
      notice(std::string("a runtime call (") + (function != nullptr ? function : "?") +
             ") differs from its driver call (" + why + "); its runtime callbacks stay on");
    return;
  }
  if (cal.agreeing.fetch_add(1, std::memory_order_relaxed) + 1 < kCalibrationCalls) return;
  int expected = kCallsCalibrating;
  cal.mode.compare_exchange_strong(expected, kCallsOff);
}

#undef RT

}  // namespace

// ---- set-up and launches (cupti_handlers.h) -----------------------------------

void start_calibration(const Options& options) {
  launch_mode.store(options.launch_callbacks == LaunchCallbacks::kAuto     ? kCalibrating
                    : options.launch_callbacks == LaunchCallbacks::kDriver ? kDriverOnly
                                                                           : kRuntimeToo);
  const int calls =
      options.call_callbacks == CallCallbacks::kAuto ? kCallsCalibrating : kCallsRuntimeToo;
  // A subscription made again (after the application gave CUPTI back)
  // starts with every callback on: each function is calibrated anew.
  for (CUpti_CallbackId cbid : kRuntimeCallbacks) {
    CallCalibration* cal = calibrated_call(cbid) ? calibration_of(cbid) : nullptr;
    if (cal == nullptr) continue;
    cal->agreeing.store(0);
    cal->callbacks_off.store(false);
    cal->mode.store(calls);
  }
}

bool driver_only_launches() { return launch_mode.load(std::memory_order_relaxed) == kDriverOnly; }

bool calibrating_launches() {
  return launch_mode.load(std::memory_order_relaxed) == kCalibrating;
}

void calibrate_launch(bool agreed, const char* function) {
  if (!agreed) {
    int expected = kCalibrating;
    if (launch_mode.compare_exchange_strong(expected, kRuntimeToo) && options().verbosity >= 1)
      notice(std::string("a runtime launch (") + (function != nullptr ? function : "?") +
             ") differs from its driver launch; runtime launch callbacks stay on");
    return;
  }
  if (agreeing_launches.fetch_add(1, std::memory_order_relaxed) + 1 < kCalibrationCalls) return;
  int expected = kCalibrating;
  if (!launch_mode.compare_exchange_strong(expected, kDriverOnly)) return;
  if (!disable_runtime_launch_callbacks()) {
    // The lock is busy: try again at a later launch.
    launch_mode.store(kCalibrating);
    return;
  }
  if (options().verbosity >= 1)
    notice("runtime launch callbacks off after " + std::to_string(kCalibrationCalls) +
           " launches that their driver launches described");
}

// ---- calls (cupti_handlers.h) -------------------------------------------------

bool runtime_call_observed(ThreadState& thread, CUpti_CallbackId cbid,
                           const CUpti_CallbackData* data) {
  if (!calibrated_call(cbid)) return true;
  CallCalibration* cal = calibration_of(cbid);
  if (cal == nullptr) return true;
  if (data->callbackSite == CUPTI_API_EXIT) {
    if (thread.call_checked && thread.runtime_depth == 1 && thread.runtime_cbid == cbid) {
      thread.call_checked = false;
      // A failed call says nothing about how calls are observed.
      if (runtime_succeeded(data)) calibrate_call(*cal, call_check(thread), data->functionName);
      cal->in_flight.fetch_sub(1);
      turn_call_off_when_idle(*cal, cbid, data->functionName);
      return true;
    }
    // An exit is handled exactly when its entry was: in kCallsRuntimeToo,
    // which is never left once entered.
    return cal->mode.load(std::memory_order_relaxed) == kCallsRuntimeToo;
  }
  int mode = cal->mode.load(std::memory_order_relaxed);
  if (mode == kCallsCalibrating && thread.runtime_depth > 0) {
    // Inside another runtime call: not a call the driver could carry alone.
    if (cal->mode.compare_exchange_strong(mode, kCallsRuntimeToo) && options().verbosity >= 1)
      notice(std::string("a runtime call (") +
             (data->functionName != nullptr ? data->functionName : "?") +
             ") came inside another runtime call; its runtime callbacks stay on");
    mode = cal->mode.load();
  }
  if (mode == kCallsRuntimeToo) return true;
  if (mode == kCallsCalibrating) {
    // Counted before the mode is read again: a thread that turns the id off
    // after reading no call in flight makes this read see kCallsOff.
    cal->in_flight.fetch_add(1);
    mode = cal->mode.load();
    if (mode == kCallsCalibrating) {
      CallCheck& check = call_check(thread);
      check = CallCheck{};
      {
        ReentrancyGuard guard;  // resolving a stream may call the driver
        const Describing describing(check, &check.runtime);
        if (!runtime_enter(cbid, data)) runtime_exit(cbid, data);
      }
      thread.call_checked = true;
      return true;
    }
    cal->in_flight.fetch_sub(1);
    if (mode == kCallsRuntimeToo) return true;
  }
  // kCallsOff: the nested driver call carries this call.
  turn_call_off_when_idle(*cal, cbid, data->functionName);
  return false;
}

void describe_nested_call(ThreadState& thread, CUpti_CallbackId cbid,
                          const CUpti_CallbackData* data) {
  CallCheck& check = call_check(thread);
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (!is_effect_twin(cbid)) return;  // counted at its exit
    const Describing describing(check, &check.nested);
    check.nested_fed_at_enter = driver_enter(cbid, data);
    return;
  }
  if (!driver_succeeded(data) || !is_effect_twin(cbid)) {
    ++check.other_driver_calls;
    return;
  }
  if (check.nested_fed_at_enter) {
    check.nested_fed_at_enter = false;
    return;
  }
  const Describing describing(check, &check.nested);
  driver_exit(cbid, data);
}

// ---- effects (cupti_handlers.h) -----------------------------------------------

namespace {

// Where this thread's effects are described, or null when they are fed.
EffectSink* describing_sink() {
  ThreadState& thread = thread_state();
  if (thread.call_check == nullptr) return nullptr;
  return static_cast<CallCheck*>(thread.call_check)->describing;
}

bool described(const CallEffect& effect) {
  EffectSink* sink = describing_sink();
  if (sink == nullptr) return false;
  if (sink->count++ == 0) sink->first = effect;
  return true;
}

}  // namespace

void effect_copy(Addr dst, Addr src, std::uint64_t bytes, CopyKind kind, StreamId stream,
                 bool synchronous) {
  if (described({CallEffect::Kind::kCopy, kind, synchronous, dst, src, bytes, stream})) return;
  on_copy(dst, src, bytes, kind, stream, synchronous);
}

void effect_memset(Addr dst, std::uint64_t bytes, StreamId stream) {
  if (described({CallEffect::Kind::kMemset, CopyKind::kDefault, false, dst, 0, bytes, stream}))
    return;
  on_memset(dst, bytes, stream);
}

void effect_event_record(EventId event, StreamId stream) {
  if (described({CallEffect::Kind::kEventRecord, CopyKind::kDefault, false, event, 0, 0, stream}))
    return;
  on_event_record(event, stream);
}

void effect_stream_wait(StreamId stream, EventId event) {
  if (described({CallEffect::Kind::kStreamWait, CopyKind::kDefault, false, event, 0, 0, stream}))
    return;
  on_stream_wait_event(stream, event);
}

void effect_event_destroy(EventId event) {
  if (described({CallEffect::Kind::kEventDestroy, CopyKind::kDefault, false, event, 0, 0, 0}))
    return;
  on_event_destroy(event);
}

}  // namespace xsc::rt::cupti
