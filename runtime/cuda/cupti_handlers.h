// What the CUPTI dispatch (cupti_callbacks.cpp) shares with the handlers of
// each callback domain: runtime_api.cpp (the CUDA runtime API) and
// driver_api.cpp (the driver API). Each handler turns one call's CUPTI
// parameters into the normalized operations of ops.h.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>  // with the generated *_params structs

#include <cstdint>
#include <span>
#include <vector>

#include "runtime/cuda/ops.h"
#include "runtime/rtl.h"

namespace xsc::rt::cupti {

template <class T>
const T& params(const CUpti_CallbackData* data) {
  return *static_cast<const T*>(data->functionParams);
}

inline std::uint64_t u64(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

inline CopyKind copy_kind(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost: return CopyKind::kHostToHost;
    case cudaMemcpyHostToDevice: return CopyKind::kHostToDevice;
    case cudaMemcpyDeviceToHost: return CopyKind::kDeviceToHost;
    case cudaMemcpyDeviceToDevice: return CopyKind::kDeviceToDevice;
    default: return CopyKind::kDefault;
  }
}

inline StreamFlags stream_flags(unsigned flags) {
  return (flags & cudaStreamNonBlocking) != 0 ? StreamFlags::kNonBlocking : StreamFlags::kBlocking;
}

// A launch's grid, from the runtime's dim3 or the driver's three counts.
inline LaunchGrid grid_of(const dim3& g) { return {g.x, g.y, g.z}; }
inline LaunchGrid grid_of(unsigned x, unsigned y, unsigned z) { return {x, y, z}; }

// The layout of __cudaLaunchKernel's parameters (the CUDA 13 entry point of
// <<<>>> launches), which the generated metadata headers do not describe.
struct CudaKernelLaunchParams {
  const void* kernel;  // cudaKernel_t
  dim3 gridDim;
  dim3 blockDim;
  void** args;
  size_t sharedMem;
  cudaStream_t stream;
};

// Whether a call that reached its exit callback succeeded.
inline bool runtime_succeeded(const CUpti_CallbackData* data) {
  return data->functionReturnValue != nullptr &&
         *static_cast<const cudaError_t*>(data->functionReturnValue) == cudaSuccess;
}
inline bool driver_succeeded(const CUpti_CallbackData* data) {
  return data->functionReturnValue != nullptr &&
         *static_cast<const CUresult*>(data->functionReturnValue) == CUDA_SUCCESS;
}

// Launches are the hot path: these two are asked of every callback.
inline bool is_runtime_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000:
    case CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
      return true;
    default:
      return false;
  }
}

inline bool is_driver_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

// ---- which callbacks carry a call (calibration.cpp) -------------------------

// Sets the calibration up as the options say, at subscription.
void start_calibration(const Options& options);
// Whether `cbid` is a runtime API call whose callbacks calibration turns
// off once its driver calls agree (a copy, memset, event record, wait or
// destroy).
bool calibrated_call(CUpti_CallbackId cbid);
// Launches: the runtime's launch callbacks are off (kDriverOnly), or are
// being compared with their driver launches.
bool driver_only_launches();
bool calibrating_launches();
// A runtime launch compared with its nested driver launch (agreed: same
// stream, no other observed driver call inside); may turn the runtime's
// launch callbacks off.
void calibrate_launch(bool agreed, const char* function);
// Turns the runtime API callbacks `ids` off (cupti_callbacks.cpp). False
// when the subscription lock is busy; nothing changed then.
bool disable_runtime_callbacks(std::span<const CUpti_CallbackId> ids);

// What a copy, memset, event record, stream wait or event destroy does, as
// its handler feeds it: what calibrating such a runtime call compares with
// its nested driver call's. Event kinds keep the event in `dst`.
struct CallEffect {
  enum class Kind : std::uint8_t { kNone, kCopy, kMemset, kEventRecord, kStreamWait,
                                   kEventDestroy };
  Kind kind = Kind::kNone;
  CopyKind copy = CopyKind::kDefault;
  bool synchronous = false;
  std::uint64_t dst = 0;
  std::uint64_t src = 0;
  std::uint64_t bytes = 0;
  StreamId stream = 0;
  bool operator==(const CallEffect&) const = default;
};
// The effects one call made while they were described: how many, and the
// first.
struct EffectSink {
  CallEffect first;
  int count = 0;
};
// The handlers' way to ops.h for these five kinds: fed, or described while
// a call is being calibrated.
void effect_copy(Addr dst, Addr src, std::uint64_t bytes, CopyKind kind, StreamId stream,
                 bool synchronous);
void effect_memset(Addr dst, std::uint64_t bytes, StreamId stream);
void effect_event_record(EventId event, StreamId stream);
void effect_stream_wait(StreamId stream, EventId event);
void effect_event_destroy(EventId event);

// Whether a runtime API callback is handled as usual. A copy, memset,
// event record, stream wait or event destroy whose nested driver call
// carries it (its id calibrated away) is not; one being calibrated has its
// effect described at its entry, and its comparison made at its exit.
bool runtime_call_observed(ThreadState& thread, CUpti_CallbackId cbid,
                           const CUpti_CallbackData* data);
// A driver callback inside a runtime call being calibrated: its effect is
// described, not fed.
void describe_nested_call(ThreadState& thread, CUpti_CallbackId cbid,
                          const CUpti_CallbackData* data);

// ---- runtime API (runtime_api.cpp) ------------------------------------------

// The runtime API callbacks enabled.
extern const std::span<const CUpti_CallbackId> kRuntimeCallbacks;
// The stream a runtime launch names, resolved at its entry.
StreamId runtime_launch_stream(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
// Feeds the calls that are fed at their entry (see runtime_api.cpp); true
// for those.
bool runtime_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
// Feeds a runtime call that succeeded, at its exit.
void runtime_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data);

// ---- driver API (driver_api.cpp) --------------------------------------------

// The driver API callbacks enabled.
extern const std::span<const CUpti_CallbackId> kDriverCallbacks;
// A driver launch; `stream_override` is the enclosing runtime launch's
// stream when there is one.
void driver_launch(CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                   const StreamId* stream_override);
// Wraps the function of a host-function call at its entry; true for those
// calls.
bool wrap_host_function(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
// The driver twins of runtime_enter's calls.
bool driver_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
// Feeds a driver call the application made itself that succeeded, at its
// exit.
void driver_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
// The driver calls whose effect is a CallEffect: the twins of the runtime
// calls calibrated one id at a time.
bool is_effect_twin(CUpti_CallbackId cbid);

// ---- capture and graph calls of both APIs (graph_api.cpp) -------------------

// The runtime and driver API callbacks of capture and graph calls enabled,
// and their handlers, which runtime_enter / runtime_exit and driver_enter /
// driver_exit hand the calls they do not know to.
extern const std::span<const CUpti_CallbackId> kRuntimeGraphCallbacks;
extern const std::span<const CUpti_CallbackId> kDriverGraphCallbacks;
bool runtime_graph_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
void runtime_graph_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
bool driver_graph_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
void driver_graph_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data);

}  // namespace xsc::rt::cupti
