// CUPTI: loading the library, subscribing, enabling exactly the callbacks
// the checker needs, and dispatching each by callback id to the files that
// turn calls into events.
//
// Runtime calls are handled at the runtime level (their stream semantics,
// cudaStreamPerThread included, are what the program wrote). The driver
// calls a runtime call makes inside itself are its implementation and are
// ignored, with one exception: a runtime kernel launch takes its function
// handle and arguments from the nested driver launch when one arrives,
// and falls back to the runtime-level data when none does.
//
// Launches are the hot path, and CUPTI's dispatch is most of their cost: a
// runtime launch costs four callbacks (runtime and driver, entry and exit).
// The runtime's launch callbacks are therefore calibrated away (see
// LaunchMode below): once the first launches showed that the nested driver
// launch alone describes each of them, only the driver's are kept.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>  // with the generated *_params structs
#include <dlfcn.h>
#include <glob.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/ops.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

namespace xsc::rt {
namespace {

// ---- CUPTI entry points -----------------------------------------------------

struct CuptiApi {
  void* library = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiActivityGetAttribute) get_activity_attribute = nullptr;
  decltype(&cuptiActivitySetAttribute) set_activity_attribute = nullptr;
};

// The loaded CUPTI and the runtime's subscriber, for the application's own
// cuptiSubscribe (below) to take the slot over.
struct Subscription {
  std::mutex mu;
  CuptiApi api;
  CUpti_SubscriberHandle subscriber = nullptr;  // null: not subscribed
  // CUPTI's own count of activity buffers to pre-allocate per context, to
  // give back to an application that takes the slot; 0 when unchanged.
  std::size_t cupti_preallocated_buffers = 0;
};

Subscription& subscription() {
  static auto* instance = new Subscription;
  return *instance;
}

std::vector<std::string> cupti_candidates() {
  std::vector<std::string> names;
  // An explicit choice is the only candidate: no silent fallback to a
  // different CUPTI than the one asked for.
  if (const char* path = std::getenv("XSC_CUPTI_LIB"); path != nullptr && *path != '\0') {
    names.emplace_back(path);
    return names;
  }
  names.emplace_back("libcupti.so.13");
  names.emplace_back("libcupti.so");
  glob_t found{};
  if (glob("/usr/local/cuda/lib64/libcupti.so*", 0, nullptr, &found) == 0) {
    for (std::size_t i = 0; i < found.gl_pathc; ++i) names.emplace_back(found.gl_pathv[i]);
  }
  globfree(&found);
  return names;
}

bool load_cupti(CuptiApi* api) {
  for (const std::string& name : cupti_candidates()) {
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) continue;
    api->library = library;
    api->unsubscribe =
        reinterpret_cast<decltype(api->unsubscribe)>(dlsym(library, "cuptiUnsubscribe"));
    api->subscribe = reinterpret_cast<decltype(api->subscribe)>(dlsym(library, "cuptiSubscribe"));
    api->enable_callback =
        reinterpret_cast<decltype(api->enable_callback)>(dlsym(library, "cuptiEnableCallback"));
    api->result_string =
        reinterpret_cast<decltype(api->result_string)>(dlsym(library, "cuptiGetResultString"));
    api->get_activity_attribute = reinterpret_cast<decltype(api->get_activity_attribute)>(
        dlsym(library, "cuptiActivityGetAttribute"));
    api->set_activity_attribute = reinterpret_cast<decltype(api->set_activity_attribute)>(
        dlsym(library, "cuptiActivitySetAttribute"));
    if (api->subscribe != nullptr && api->enable_callback != nullptr) return true;
  }
  return false;
}

// Without a CUDA driver no CUDA program can run here: there is nothing to
// check and nothing worth a message (every process under LD_PRELOAD, the
// shell included, would print one).
bool driver_installed() {
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) return false;
  dlclose(library);
  return true;
}

// ---- helpers --------------------------------------------------------------

template <class T>
const T& params(const CUpti_CallbackData* data) {
  return *static_cast<const T*>(data->functionParams);
}

std::uint64_t u64(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

CopyKind copy_kind(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost: return CopyKind::kHostToHost;
    case cudaMemcpyHostToDevice: return CopyKind::kHostToDevice;
    case cudaMemcpyDeviceToHost: return CopyKind::kDeviceToHost;
    case cudaMemcpyDeviceToDevice: return CopyKind::kDeviceToDevice;
    default: return CopyKind::kDefault;
  }
}

StreamFlags stream_flags(unsigned flags) {
  return (flags & cudaStreamNonBlocking) != 0 ? StreamFlags::kNonBlocking : StreamFlags::kBlocking;
}

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

// A conditional node's body graphs: CUDA's array of `size` graph handles.
template <class Graph>
void conditional_node(const Graph* bodies_in, unsigned size) {
  std::vector<std::uint64_t> bodies;
  for (unsigned i = 0; bodies_in != nullptr && i < size; ++i) bodies.push_back(u64(bodies_in[i]));
  on_conditional_node(bodies.data(), static_cast<unsigned>(bodies.size()));
}

// ---- runtime API ------------------------------------------------------------

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name

bool is_runtime_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case RT(cudaLaunchKernel_v7000): case RT(cudaLaunchKernel_ptsz_v7000):
    case RT(__cudaLaunchKernel_v13000): case RT(__cudaLaunchKernel_ptsz_v13000):
    case RT(cudaLaunchKernelExC_v11060): case RT(cudaLaunchKernelExC_ptsz_v11060):
    case RT(cudaLaunchCooperativeKernel_v9000): case RT(cudaLaunchCooperativeKernel_ptsz_v9000):
      return true;
    default:
      return false;
  }
}

// The stream a runtime launch names, resolved at its entry.
StreamId runtime_launch_stream(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  switch (cbid) {
    case RT(cudaLaunchKernel_v7000): case RT(cudaLaunchCooperativeKernel_v9000):
      return resolve(u64(params<cudaLaunchKernel_v7000_params>(data).stream), false);
    case RT(cudaLaunchKernel_ptsz_v7000): case RT(cudaLaunchCooperativeKernel_ptsz_v9000):
      return resolve(u64(params<cudaLaunchKernel_v7000_params>(data).stream), true);
    case RT(__cudaLaunchKernel_v13000):
      return resolve(u64(params<CudaKernelLaunchParams>(data).stream), false);
    case RT(__cudaLaunchKernel_ptsz_v13000):
      return resolve(u64(params<CudaKernelLaunchParams>(data).stream), true);
    case RT(cudaLaunchKernelExC_v11060): case RT(cudaLaunchKernelExC_ptsz_v11060): {
      const auto& p = params<cudaLaunchKernelExC_v11060_params>(data);
      return resolve(p.config != nullptr ? u64(p.config->stream) : 0,
                     cbid == RT(cudaLaunchKernelExC_ptsz_v11060));
    }
    default:
      return kLegacyStream;
  }
}

// A runtime launch no nested driver launch described.
void runtime_launch_fallback(CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                             StreamId stream) {
  switch (cbid) {
    case RT(cudaLaunchKernel_v7000): case RT(cudaLaunchKernel_ptsz_v7000):
    case RT(cudaLaunchCooperativeKernel_v9000): case RT(cudaLaunchCooperativeKernel_ptsz_v9000): {
      const auto& p = params<cudaLaunchKernel_v7000_params>(data);
      on_runtime_launch(p.func, false, p.args, stream);
      break;
    }
    case RT(__cudaLaunchKernel_v13000): case RT(__cudaLaunchKernel_ptsz_v13000): {
      const auto& p = params<CudaKernelLaunchParams>(data);
      on_runtime_launch(p.kernel, true, p.args, stream);
      break;
    }
    case RT(cudaLaunchKernelExC_v11060): case RT(cudaLaunchKernelExC_ptsz_v11060): {
      const auto& p = params<cudaLaunchKernelExC_v11060_params>(data);
      on_runtime_launch(p.func, false, p.args, stream);
      break;
    }
    default:
      break;
  }
}

// Calls fed at their entry, before the driver acts. A free (or a stream or
// event destroy) hands its address (handle) back to the driver inside the
// call: another thread's allocation (creation) can get the same value and
// feed its exit callback before this call's own exit callback runs, and a
// free fed after that would retire the new allocation. Fed at entry, the
// free precedes anything that can reuse the address. Returns true when the
// call was fed here (a failure is then noted at its exit).
//
// Everything else stays at exit, where the call's effect is known: CUPTI
// runs a call's exit callback on the calling thread before the call returns,
// so whatever the application orders after the call (a wait on a recorded
// event in another thread, a use of a fresh pointer) is fed after it. Event
// records in particular need neither entry feeding nor a lock held across
// the call.
bool runtime_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  switch (cbid) {
    case RT(cudaFree_v3020):
      on_free(u64(params<cudaFree_v3020_params>(data).devPtr), kLegacyStream,
              FreeKind::kSynchronous);
      return true;
    case RT(cudaFreeAsync_v11020): case RT(cudaFreeAsync_ptsz_v11020): {
      const auto& p = params<cudaFreeAsync_v11020_params>(data);
      on_free(u64(p.devPtr), resolve(u64(p.hStream), cbid != RT(cudaFreeAsync_v11020)),
              FreeKind::kStreamOrdered);
      return true;
    }
    case RT(cudaEventDestroy_v3020):
      on_event_destroy(u64(params<cudaEventDestroy_v3020_params>(data).event));
      return true;
    // Pinned host memory given back. cudaFreeHost synchronizes the device
    // first, as cudaFree does (the CUDA Programming Guide's implicit
    // synchronization; the Runtime API's API synchronization behavior).
    case RT(cudaFreeHost_v3020):
      on_device_sync();
      on_free(u64(params<cudaFreeHost_v3020_params>(data).ptr), kLegacyStream,
              FreeKind::kPinnedHost);
      return true;
    case RT(cudaHostUnregister_v4000):
      on_free(u64(params<cudaHostUnregister_v4000_params>(data).ptr), kLegacyStream,
              FreeKind::kPinnedHost);
      return true;
    case RT(cudaStreamDestroy_v3020): case RT(cudaStreamDestroy_v5050):
      on_stream_destroy(resolve(u64(params<cudaStreamDestroy_v5050_params>(data).stream), false));
      return true;
    default:
      return false;
  }
}

void runtime_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  ThreadState& thread = thread_state();
  switch (cbid) {
    // Launches.
    case RT(cudaLaunchKernel_v7000): case RT(cudaLaunchKernel_ptsz_v7000):
    case RT(__cudaLaunchKernel_v13000): case RT(__cudaLaunchKernel_ptsz_v13000):
    case RT(cudaLaunchKernelExC_v11060): case RT(cudaLaunchKernelExC_ptsz_v11060):
    case RT(cudaLaunchCooperativeKernel_v9000): case RT(cudaLaunchCooperativeKernel_ptsz_v9000):
      if (!thread.nested_launch_seen)
        runtime_launch_fallback(cbid, data, thread.runtime_launch_stream);
      break;

    // Allocation and free.
    case RT(cudaMalloc_v3020): {
      const auto& p = params<cudaMalloc_v3020_params>(data);
      if (p.devPtr) on_alloc(u64(*p.devPtr), p.size, kLegacyStream, AllocKind::kSynchronous);
      thread.adapter_check_due = true;
      break;
    }
    case RT(cudaMallocManaged_v6000): {
      const auto& p = params<cudaMallocManaged_v6000_params>(data);
      if (p.devPtr) on_alloc(u64(*p.devPtr), p.size, kLegacyStream, AllocKind::kSynchronous);
      break;
    }
    case RT(cudaMallocPitch_v3020): {
      const auto& p = params<cudaMallocPitch_v3020_params>(data);
      if (p.devPtr && p.pitch)
        on_alloc(u64(*p.devPtr), *p.pitch * p.height, kLegacyStream, AllocKind::kSynchronous);
      break;
    }
    case RT(cudaHostAlloc_v3020): {
      const auto& p = params<cudaHostAlloc_v3020_params>(data);
      if (p.pHost) on_alloc(u64(*p.pHost), p.size, kLegacyStream, AllocKind::kPinnedHost);
      break;
    }
    case RT(cudaMallocHost_v3020): {
      const auto& p = params<cudaMallocHost_v3020_params>(data);
      if (p.ptr) on_alloc(u64(*p.ptr), p.size, kLegacyStream, AllocKind::kPinnedHost);
      break;
    }
    case RT(cudaHostRegister_v4000): {
      const auto& p = params<cudaHostRegister_v4000_params>(data);
      on_alloc(u64(p.ptr), p.size, kLegacyStream, AllocKind::kPinnedHost);
      break;
    }
    case RT(cudaMallocAsync_v11020): case RT(cudaMallocAsync_ptsz_v11020): {
      const auto& p = params<cudaMallocAsync_v11020_params>(data);
      if (p.devPtr)
        on_alloc(u64(*p.devPtr), p.size, resolve(u64(p.hStream), cbid != RT(cudaMallocAsync_v11020)),
                 AllocKind::kStreamOrdered);
      break;
    }
    case RT(cudaMallocFromPoolAsync_v11020): case RT(cudaMallocFromPoolAsync_ptsz_v11020): {
      const auto& p = params<cudaMallocFromPoolAsync_v11020_params>(data);
      if (p.ptr)
        on_alloc(u64(*p.ptr), p.size,
                 resolve(u64(p.stream), cbid != RT(cudaMallocFromPoolAsync_v11020)),
                 AllocKind::kStreamOrdered);
      break;
    }

    // Copies and memsets.
    case RT(cudaMemcpy_v3020): case RT(cudaMemcpy_ptds_v7000): {
      const auto& p = params<cudaMemcpy_v3020_params>(data);
      on_copy(u64(p.dst), u64(p.src), p.count, copy_kind(p.kind),
              resolve(0, cbid == RT(cudaMemcpy_ptds_v7000)), /*synchronous=*/true);
      break;
    }
    case RT(cudaMemcpyAsync_v3020): case RT(cudaMemcpyAsync_ptsz_v7000): {
      const auto& p = params<cudaMemcpyAsync_v3020_params>(data);
      on_copy(u64(p.dst), u64(p.src), p.count, copy_kind(p.kind),
              resolve(u64(p.stream), cbid == RT(cudaMemcpyAsync_ptsz_v7000)), false);
      break;
    }
    case RT(cudaMemcpy2D_v3020): case RT(cudaMemcpy2D_ptds_v7000): {
      const auto& p = params<cudaMemcpy2D_v3020_params>(data);
      on_copy(u64(p.dst), u64(p.src), 0, copy_kind(p.kind),
              resolve(0, cbid == RT(cudaMemcpy2D_ptds_v7000)), true);
      break;
    }
    case RT(cudaMemcpy2DAsync_v3020): case RT(cudaMemcpy2DAsync_ptsz_v7000): {
      const auto& p = params<cudaMemcpy2DAsync_v3020_params>(data);
      on_copy(u64(p.dst), u64(p.src), 0, copy_kind(p.kind),
              resolve(u64(p.stream), cbid == RT(cudaMemcpy2DAsync_ptsz_v7000)), false);
      break;
    }
    case RT(cudaMemset_v3020): case RT(cudaMemset_ptds_v7000): {
      const auto& p = params<cudaMemset_v3020_params>(data);
      on_memset(u64(p.devPtr), p.count, resolve(0, cbid == RT(cudaMemset_ptds_v7000)));
      break;
    }
    case RT(cudaMemsetAsync_v3020): case RT(cudaMemsetAsync_ptsz_v7000): {
      const auto& p = params<cudaMemsetAsync_v3020_params>(data);
      on_memset(u64(p.devPtr), p.count,
                resolve(u64(p.stream), cbid == RT(cudaMemsetAsync_ptsz_v7000)));
      break;
    }
    case RT(cudaMemset2D_v3020): case RT(cudaMemset2D_ptds_v7000): {
      const auto& p = params<cudaMemset2D_v3020_params>(data);
      on_memset(u64(p.devPtr), 0, resolve(0, cbid == RT(cudaMemset2D_ptds_v7000)));
      break;
    }
    case RT(cudaMemset2DAsync_v3020): case RT(cudaMemset2DAsync_ptsz_v7000): {
      const auto& p = params<cudaMemset2DAsync_v3020_params>(data);
      on_memset(u64(p.devPtr), 0,
                resolve(u64(p.stream), cbid == RT(cudaMemset2DAsync_ptsz_v7000)));
      break;
    }

    // Events.
    case RT(cudaEventRecord_v3020): case RT(cudaEventRecord_ptsz_v7000): {
      const auto& p = params<cudaEventRecord_v3020_params>(data);
      on_event_record(u64(p.event), resolve(u64(p.stream), cbid == RT(cudaEventRecord_ptsz_v7000)));
      break;
    }
    case RT(cudaEventRecordWithFlags_v11010): case RT(cudaEventRecordWithFlags_ptsz_v11010): {
      const auto& p = params<cudaEventRecordWithFlags_v11010_params>(data);
      on_event_record(u64(p.event),
                      resolve(u64(p.stream), cbid == RT(cudaEventRecordWithFlags_ptsz_v11010)));
      break;
    }
    case RT(cudaEventSynchronize_v3020):
      on_event_sync(u64(params<cudaEventSynchronize_v3020_params>(data).event));
      break;
    case RT(cudaEventQuery_v3020):  // only a successful query reaches here
      on_event_sync(u64(params<cudaEventQuery_v3020_params>(data).event));
      break;

    // Streams.
    case RT(cudaStreamCreate_v3020): {
      const auto& p = params<cudaStreamCreate_v3020_params>(data);
      if (p.pStream) on_stream_create(u64(*p.pStream), StreamFlags::kBlocking);
      thread.adapter_check_due = true;
      break;
    }
    case RT(cudaStreamCreateWithFlags_v5000): {
      const auto& p = params<cudaStreamCreateWithFlags_v5000_params>(data);
      if (p.pStream) on_stream_create(u64(*p.pStream), stream_flags(p.flags));
      thread.adapter_check_due = true;
      break;
    }
    case RT(cudaStreamCreateWithPriority_v5050): {
      const auto& p = params<cudaStreamCreateWithPriority_v5050_params>(data);
      if (p.pStream) on_stream_create(u64(*p.pStream), stream_flags(p.flags));
      thread.adapter_check_due = true;
      break;
    }
    case RT(cudaStreamWaitEvent_v3020): case RT(cudaStreamWaitEvent_ptsz_v7000): {
      const auto& p = params<cudaStreamWaitEvent_v3020_params>(data);
      on_stream_wait_event(resolve(u64(p.stream), cbid == RT(cudaStreamWaitEvent_ptsz_v7000)),
                           u64(p.event));
      break;
    }
    case RT(cudaStreamSynchronize_v3020): case RT(cudaStreamSynchronize_ptsz_v7000):
      on_stream_sync(resolve(u64(params<cudaStreamSynchronize_v3020_params>(data).stream),
                             cbid == RT(cudaStreamSynchronize_ptsz_v7000)));
      break;
    case RT(cudaStreamQuery_v3020): case RT(cudaStreamQuery_ptsz_v7000):
      on_stream_sync(resolve(u64(params<cudaStreamQuery_v3020_params>(data).stream),
                             cbid == RT(cudaStreamQuery_ptsz_v7000)));
      break;
    case RT(cudaDeviceSynchronize_v3020): case RT(cudaThreadSynchronize_v3020):
    // Freeing an array synchronizes the device first, as cudaFree does (the
    // CUDA Programming Guide's implicit synchronization; the Runtime API's
    // API synchronization behavior); cudaFreeHost too, fed at its entry.
    case RT(cudaFreeArray_v3020):
    case RT(cudaFreeMipmappedArray_v5000):
      on_device_sync();
      break;
    case RT(cudaLaunchHostFunc_v10000): case RT(cudaLaunchHostFunc_ptsz_v10000):
      on_host_func(resolve(u64(params<cudaLaunchHostFunc_v10000_params>(data).stream),
                           cbid == RT(cudaLaunchHostFunc_ptsz_v10000)));
      break;
    case RT(cudaStreamAddCallback_v5000): case RT(cudaStreamAddCallback_ptsz_v7000):
      on_host_func(resolve(u64(params<cudaStreamAddCallback_v5000_params>(data).stream),
                           cbid == RT(cudaStreamAddCallback_ptsz_v7000)));
      break;

    // Capture and graphs.
    // Every way to begin a capture, in any mode (global, thread-local,
    // relaxed: the mode says which other calls the capture forbids, not
    // what the captured work is).
    case RT(cudaStreamBeginCapture_v10000): case RT(cudaStreamBeginCapture_ptsz_v10000):
      on_stream_begin_capture(resolve(u64(params<cudaStreamBeginCapture_v10000_params>(data).stream),
                                      cbid == RT(cudaStreamBeginCapture_ptsz_v10000)),
                              /*to_graph=*/false);
      break;
    case RT(cudaStreamBeginCaptureToGraph_v12030):
    case RT(cudaStreamBeginCaptureToGraph_ptsz_v12030):
      on_stream_begin_capture(
          resolve(u64(params<cudaStreamBeginCaptureToGraph_v12030_params>(data).stream),
                  cbid == RT(cudaStreamBeginCaptureToGraph_ptsz_v12030)),
          /*to_graph=*/true);
      break;
    case RT(cudaStreamEndCapture_v10000): case RT(cudaStreamEndCapture_ptsz_v10000): {
      const auto& p = params<cudaStreamEndCapture_v10000_params>(data);
      on_stream_end_capture(resolve(u64(p.stream), cbid == RT(cudaStreamEndCapture_ptsz_v10000)),
                            p.pGraph ? u64(*p.pGraph) : 0);
      break;
    }
    case RT(cudaGraphInstantiate_v12000): {
      const auto& p = params<cudaGraphInstantiate_v12000_params>(data);
      if (p.pGraphExec) on_graph_instantiate(u64(*p.pGraphExec), u64(p.graph));
      break;
    }
    case RT(cudaGraphInstantiateWithFlags_v11040): {
      const auto& p = params<cudaGraphInstantiateWithFlags_v11040_params>(data);
      if (p.pGraphExec) on_graph_instantiate(u64(*p.pGraphExec), u64(p.graph));
      break;
    }
    case RT(cudaGraphInstantiateWithParams_v12000):
    case RT(cudaGraphInstantiateWithParams_ptsz_v12000): {
      const auto& p = params<cudaGraphInstantiateWithParams_v12000_params>(data);
      if (p.pGraphExec) on_graph_instantiate(u64(*p.pGraphExec), u64(p.graph));
      break;
    }
    case RT(cudaGraphExecUpdate_v10020): {
      const auto& p = params<cudaGraphExecUpdate_v10020_params>(data);
      on_graph_exec_update(u64(p.hGraphExec), u64(p.hGraph));
      break;
    }
    case RT(cudaGraphCreate_v10000): {
      const auto& p = params<cudaGraphCreate_v10000_params>(data);
      if (p.pGraph) on_graph_forget(u64(*p.pGraph));
      break;
    }
    case RT(cudaGraphDestroy_v10000):
      on_graph_forget(u64(params<cudaGraphDestroy_v10000_params>(data).graph));
      break;
    case RT(cudaGraphAddNode_v12030): {
      const auto& p = params<cudaGraphAddNode_v12030_params>(data);
      if (p.nodeParams != nullptr && p.nodeParams->type == cudaGraphNodeTypeConditional)
        conditional_node(p.nodeParams->conditional.phGraph_out, p.nodeParams->conditional.size);
      break;
    }
    case RT(cudaGraphLaunch_v10000): case RT(cudaGraphLaunch_ptsz_v10000): {
      const auto& p = params<cudaGraphLaunch_v10000_params>(data);
      on_graph_exec_launch(u64(p.graphExec),
                           resolve(u64(p.stream), cbid == RT(cudaGraphLaunch_ptsz_v10000)));
      break;
    }
    default:
      break;
  }
}

const CUpti_CallbackId kRuntimeCallbacks[] = {
    RT(cudaLaunchKernel_v7000), RT(cudaLaunchKernel_ptsz_v7000),
    RT(__cudaLaunchKernel_v13000), RT(__cudaLaunchKernel_ptsz_v13000),
    RT(cudaLaunchKernelExC_v11060), RT(cudaLaunchKernelExC_ptsz_v11060),
    RT(cudaLaunchCooperativeKernel_v9000), RT(cudaLaunchCooperativeKernel_ptsz_v9000),
    RT(cudaMalloc_v3020), RT(cudaMallocManaged_v6000), RT(cudaMallocPitch_v3020),
    RT(cudaFree_v3020), RT(cudaMallocAsync_v11020), RT(cudaMallocAsync_ptsz_v11020),
    RT(cudaMallocFromPoolAsync_v11020), RT(cudaMallocFromPoolAsync_ptsz_v11020),
    RT(cudaFreeAsync_v11020), RT(cudaFreeAsync_ptsz_v11020),
    RT(cudaMemcpy_v3020), RT(cudaMemcpy_ptds_v7000), RT(cudaMemcpyAsync_v3020),
    RT(cudaMemcpyAsync_ptsz_v7000), RT(cudaMemcpy2D_v3020), RT(cudaMemcpy2D_ptds_v7000),
    RT(cudaMemcpy2DAsync_v3020), RT(cudaMemcpy2DAsync_ptsz_v7000),
    RT(cudaMemset_v3020), RT(cudaMemset_ptds_v7000), RT(cudaMemsetAsync_v3020),
    RT(cudaMemsetAsync_ptsz_v7000), RT(cudaMemset2D_v3020), RT(cudaMemset2D_ptds_v7000),
    RT(cudaMemset2DAsync_v3020), RT(cudaMemset2DAsync_ptsz_v7000),
    RT(cudaEventRecord_v3020), RT(cudaEventRecord_ptsz_v7000),
    RT(cudaEventRecordWithFlags_v11010), RT(cudaEventRecordWithFlags_ptsz_v11010),
    RT(cudaEventDestroy_v3020), RT(cudaEventSynchronize_v3020), RT(cudaEventQuery_v3020),
    RT(cudaStreamCreate_v3020), RT(cudaStreamCreateWithFlags_v5000),
    RT(cudaStreamCreateWithPriority_v5050), RT(cudaStreamDestroy_v3020),
    RT(cudaStreamDestroy_v5050), RT(cudaStreamWaitEvent_v3020), RT(cudaStreamWaitEvent_ptsz_v7000),
    RT(cudaStreamSynchronize_v3020), RT(cudaStreamSynchronize_ptsz_v7000),
    RT(cudaStreamQuery_v3020), RT(cudaStreamQuery_ptsz_v7000), RT(cudaDeviceSynchronize_v3020),
    RT(cudaThreadSynchronize_v3020), RT(cudaFreeHost_v3020), RT(cudaFreeArray_v3020),
    RT(cudaFreeMipmappedArray_v5000), RT(cudaLaunchHostFunc_v10000),
    RT(cudaHostAlloc_v3020), RT(cudaMallocHost_v3020), RT(cudaHostRegister_v4000),
    RT(cudaHostUnregister_v4000),
    RT(cudaLaunchHostFunc_ptsz_v10000), RT(cudaStreamAddCallback_v5000),
    RT(cudaStreamAddCallback_ptsz_v7000), RT(cudaStreamBeginCapture_v10000),
    RT(cudaStreamBeginCapture_ptsz_v10000), RT(cudaStreamEndCapture_v10000),
    RT(cudaStreamEndCapture_ptsz_v10000),
    RT(cudaGraphInstantiate_v12000), RT(cudaGraphInstantiateWithFlags_v11040),
    RT(cudaGraphInstantiateWithParams_v12000), RT(cudaGraphInstantiateWithParams_ptsz_v12000),
    RT(cudaGraphLaunch_v10000), RT(cudaGraphLaunch_ptsz_v10000),
    RT(cudaStreamBeginCaptureToGraph_v12030), RT(cudaStreamBeginCaptureToGraph_ptsz_v12030),
    RT(cudaGraphExecUpdate_v10020), RT(cudaGraphCreate_v10000), RT(cudaGraphDestroy_v10000),
    RT(cudaGraphAddNode_v12030),
};

#undef RT

// ---- driver API -------------------------------------------------------------

#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

bool is_driver_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case DRV(cuLaunchKernel): case DRV(cuLaunchKernel_ptsz):
    case DRV(cuLaunchKernelEx): case DRV(cuLaunchKernelEx_ptsz):
    case DRV(cuLaunchCooperativeKernel): case DRV(cuLaunchCooperativeKernel_ptsz):
      return true;
    default:
      return false;
  }
}

// A driver launch; `stream_override` is the enclosing runtime launch's
// stream when there is one.
void driver_launch(CUpti_CallbackId cbid, const CUpti_CallbackData* data,
                   const StreamId* stream_override) {
  auto pick = [&](CUstream stream, bool ptsz) {
    const StreamId own = resolve(u64(stream), ptsz);
    if (stream_override == nullptr) return own;
    thread_state().nested_driver_stream = own;  // for the calibration
    return *stream_override;
  };
  switch (cbid) {
    case DRV(cuLaunchKernel): case DRV(cuLaunchKernel_ptsz): {
      const auto& p = params<cuLaunchKernel_params>(data);
      on_kernel_launch(u64(p.f), p.kernelParams, p.extra,
                       pick(p.hStream, cbid == DRV(cuLaunchKernel_ptsz)));
      break;
    }
    case DRV(cuLaunchKernelEx): case DRV(cuLaunchKernelEx_ptsz): {
      const auto& p = params<cuLaunchKernelEx_params>(data);
      on_kernel_launch(u64(p.f), p.kernelParams, p.extra,
                       pick(p.config != nullptr ? p.config->hStream : nullptr,
                            cbid == DRV(cuLaunchKernelEx_ptsz)));
      break;
    }
    case DRV(cuLaunchCooperativeKernel): case DRV(cuLaunchCooperativeKernel_ptsz): {
      const auto& p = params<cuLaunchCooperativeKernel_params>(data);
      on_kernel_launch(u64(p.f), p.kernelParams, nullptr,
                       pick(p.hStream, cbid == DRV(cuLaunchCooperativeKernel_ptsz)));
      break;
    }
    default:
      break;
  }
}

// Wraps the function of a host-function call at its entry; true for those
// calls. Their CUPTI parameters are the call's arguments.
bool wrap_host_function(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  void* params = const_cast<void*>(data->functionParams);
  switch (cbid) {
    case DRV(cuLaunchHostFunc): case DRV(cuLaunchHostFunc_ptsz): {
      ReentrancyGuard guard;
      wrap_host_func(params, resolve(u64(static_cast<cuLaunchHostFunc_params*>(params)->hStream),
                                     cbid == DRV(cuLaunchHostFunc_ptsz)));
      return true;
    }
    case DRV(cuStreamAddCallback): case DRV(cuStreamAddCallback_ptsz): {
      ReentrancyGuard guard;
      wrap_stream_callback(
          params, resolve(u64(static_cast<cuStreamAddCallback_params*>(params)->hStream),
                          cbid == DRV(cuStreamAddCallback_ptsz)));
      return true;
    }
    default:
      return false;
  }
}

// The driver twins of runtime_enter's calls, for the same reason.
bool driver_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  switch (cbid) {
    case DRV(cuMemFree_v2):
      on_free(params<cuMemFree_v2_params>(data).dptr, kLegacyStream, FreeKind::kSynchronous);
      return true;
    case DRV(cuMemFreeHost):  // synchronizes the device, as cudaFreeHost
      on_device_sync();
      on_free(u64(params<cuMemFreeHost_params>(data).p), kLegacyStream, FreeKind::kPinnedHost);
      return true;
    case DRV(cuMemHostUnregister):
      on_free(u64(params<cuMemHostUnregister_params>(data).p), kLegacyStream,
              FreeKind::kPinnedHost);
      return true;
    case DRV(cuMemFreeAsync): case DRV(cuMemFreeAsync_ptsz): {
      const auto& p = params<cuMemFreeAsync_params>(data);
      on_free(p.dptr, resolve(u64(p.hStream), cbid == DRV(cuMemFreeAsync_ptsz)),
              FreeKind::kStreamOrdered);
      return true;
    }
    case DRV(cuEventDestroy_v2):
      on_event_destroy(u64(params<cuEventDestroy_v2_params>(data).hEvent));
      return true;
    case DRV(cuStreamDestroy_v2):
      on_stream_destroy(resolve(u64(params<cuStreamDestroy_v2_params>(data).hStream), false));
      return true;
    default:
      return false;
  }
}

void driver_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  ThreadState& thread = thread_state();
  switch (cbid) {
    case DRV(cuLaunchKernel): case DRV(cuLaunchKernel_ptsz):
    case DRV(cuLaunchKernelEx): case DRV(cuLaunchKernelEx_ptsz):
    case DRV(cuLaunchCooperativeKernel): case DRV(cuLaunchCooperativeKernel_ptsz):
      driver_launch(cbid, data, nullptr);
      break;

    case DRV(cuMemAlloc_v2): {
      const auto& p = params<cuMemAlloc_v2_params>(data);
      if (p.dptr) on_alloc(*p.dptr, p.bytesize, kLegacyStream, AllocKind::kSynchronous);
      thread.adapter_check_due = true;
      break;
    }
    case DRV(cuMemAllocManaged): {
      const auto& p = params<cuMemAllocManaged_params>(data);
      if (p.dptr) on_alloc(*p.dptr, p.bytesize, kLegacyStream, AllocKind::kSynchronous);
      break;
    }
    // Pinned host memory (cuMemHostAlloc's _v2 id has the same parameters,
    // and so has cuMemHostRegister's first one).
    case DRV(cuMemHostAlloc): case DRV(cuMemHostAlloc_v2): {
      const auto& p = params<cuMemHostAlloc_params>(data);
      if (p.pp) on_alloc(u64(*p.pp), p.bytesize, kLegacyStream, AllocKind::kPinnedHost);
      break;
    }
    case DRV(cuMemAllocHost_v2): {
      const auto& p = params<cuMemAllocHost_v2_params>(data);
      if (p.pp) on_alloc(u64(*p.pp), p.bytesize, kLegacyStream, AllocKind::kPinnedHost);
      break;
    }
    case DRV(cuMemHostRegister): case DRV(cuMemHostRegister_v2): {
      const auto& p = params<cuMemHostRegister_v2_params>(data);
      on_alloc(u64(p.p), p.bytesize, kLegacyStream, AllocKind::kPinnedHost);
      break;
    }
    case DRV(cuMemAllocPitch_v2): {
      const auto& p = params<cuMemAllocPitch_v2_params>(data);
      if (p.dptr && p.pPitch)
        on_alloc(*p.dptr, *p.pPitch * p.Height, kLegacyStream, AllocKind::kSynchronous);
      break;
    }
    case DRV(cuMemAllocAsync): case DRV(cuMemAllocAsync_ptsz): {
      const auto& p = params<cuMemAllocAsync_params>(data);
      if (p.dptr)
        on_alloc(*p.dptr, p.bytesize, resolve(u64(p.hStream), cbid == DRV(cuMemAllocAsync_ptsz)),
                 AllocKind::kStreamOrdered);
      break;
    }
    case DRV(cuMemAllocFromPoolAsync): case DRV(cuMemAllocFromPoolAsync_ptsz): {
      const auto& p = params<cuMemAllocFromPoolAsync_params>(data);
      if (p.dptr)
        on_alloc(*p.dptr, p.bytesize,
                 resolve(u64(p.hStream), cbid == DRV(cuMemAllocFromPoolAsync_ptsz)),
                 AllocKind::kStreamOrdered);
      break;
    }

    // Synchronous copies run on the legacy (or per-thread) default stream.
    case DRV(cuMemcpyHtoD_v2): case DRV(cuMemcpyHtoD_v2_ptds): {
      const auto& p = params<cuMemcpyHtoD_v2_params>(data);
      on_copy(p.dstDevice, u64(p.srcHost), p.ByteCount, CopyKind::kHostToDevice,
              resolve(0, cbid == DRV(cuMemcpyHtoD_v2_ptds)), true);
      break;
    }
    case DRV(cuMemcpyDtoH_v2): case DRV(cuMemcpyDtoH_v2_ptds): {
      const auto& p = params<cuMemcpyDtoH_v2_params>(data);
      on_copy(u64(p.dstHost), p.srcDevice, p.ByteCount, CopyKind::kDeviceToHost,
              resolve(0, cbid == DRV(cuMemcpyDtoH_v2_ptds)), true);
      break;
    }
    case DRV(cuMemcpyDtoD_v2): case DRV(cuMemcpyDtoD_v2_ptds): {
      const auto& p = params<cuMemcpyDtoD_v2_params>(data);
      on_copy(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::kDeviceToDevice,
              resolve(0, cbid == DRV(cuMemcpyDtoD_v2_ptds)), true);
      break;
    }
    case DRV(cuMemcpy): case DRV(cuMemcpy_ptds): {
      const auto& p = params<cuMemcpy_params>(data);
      on_copy(p.dst, p.src, p.ByteCount, CopyKind::kDefault,
              resolve(0, cbid == DRV(cuMemcpy_ptds)), true);
      break;
    }
    case DRV(cuMemcpyHtoDAsync_v2): case DRV(cuMemcpyHtoDAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyHtoDAsync_v2_params>(data);
      on_copy(p.dstDevice, u64(p.srcHost), p.ByteCount, CopyKind::kHostToDevice,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyHtoDAsync_v2_ptsz)), false);
      break;
    }
    case DRV(cuMemcpyDtoHAsync_v2): case DRV(cuMemcpyDtoHAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyDtoHAsync_v2_params>(data);
      on_copy(u64(p.dstHost), p.srcDevice, p.ByteCount, CopyKind::kDeviceToHost,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyDtoHAsync_v2_ptsz)), false);
      break;
    }
    case DRV(cuMemcpyDtoDAsync_v2): case DRV(cuMemcpyDtoDAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyDtoDAsync_v2_params>(data);
      on_copy(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::kDeviceToDevice,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyDtoDAsync_v2_ptsz)), false);
      break;
    }
    case DRV(cuMemcpyAsync): case DRV(cuMemcpyAsync_ptsz): {
      const auto& p = params<cuMemcpyAsync_params>(data);
      on_copy(p.dst, p.src, p.ByteCount, CopyKind::kDefault,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyAsync_ptsz)), false);
      break;
    }
    case DRV(cuMemsetD8_v2): case DRV(cuMemsetD8_v2_ptds): {
      const auto& p = params<cuMemsetD8_v2_params>(data);
      on_memset(p.dstDevice, p.N, resolve(0, cbid == DRV(cuMemsetD8_v2_ptds)));
      break;
    }
    case DRV(cuMemsetD16_v2): case DRV(cuMemsetD16_v2_ptds): {
      const auto& p = params<cuMemsetD16_v2_params>(data);
      on_memset(p.dstDevice, p.N * 2, resolve(0, cbid == DRV(cuMemsetD16_v2_ptds)));
      break;
    }
    case DRV(cuMemsetD32_v2): case DRV(cuMemsetD32_v2_ptds): {
      const auto& p = params<cuMemsetD32_v2_params>(data);
      on_memset(p.dstDevice, p.N * 4, resolve(0, cbid == DRV(cuMemsetD32_v2_ptds)));
      break;
    }
    case DRV(cuMemsetD8Async): case DRV(cuMemsetD8Async_ptsz): {
      const auto& p = params<cuMemsetD8Async_params>(data);
      on_memset(p.dstDevice, p.N, resolve(u64(p.hStream), cbid == DRV(cuMemsetD8Async_ptsz)));
      break;
    }
    case DRV(cuMemsetD16Async): case DRV(cuMemsetD16Async_ptsz): {
      const auto& p = params<cuMemsetD16Async_params>(data);
      on_memset(p.dstDevice, p.N * 2,
                resolve(u64(p.hStream), cbid == DRV(cuMemsetD16Async_ptsz)));
      break;
    }
    case DRV(cuMemsetD32Async): case DRV(cuMemsetD32Async_ptsz): {
      const auto& p = params<cuMemsetD32Async_params>(data);
      on_memset(p.dstDevice, p.N * 4,
                resolve(u64(p.hStream), cbid == DRV(cuMemsetD32Async_ptsz)));
      break;
    }

    case DRV(cuEventRecord): case DRV(cuEventRecord_ptsz): {
      const auto& p = params<cuEventRecord_params>(data);
      on_event_record(u64(p.hEvent), resolve(u64(p.hStream), cbid == DRV(cuEventRecord_ptsz)));
      break;
    }
    case DRV(cuEventRecordWithFlags): case DRV(cuEventRecordWithFlags_ptsz): {
      const auto& p = params<cuEventRecordWithFlags_params>(data);
      on_event_record(u64(p.hEvent),
                      resolve(u64(p.hStream), cbid == DRV(cuEventRecordWithFlags_ptsz)));
      break;
    }
    case DRV(cuEventSynchronize):
      on_event_sync(u64(params<cuEventSynchronize_params>(data).hEvent));
      break;
    case DRV(cuEventQuery):
      on_event_sync(u64(params<cuEventQuery_params>(data).hEvent));
      break;

    case DRV(cuStreamCreate): {
      const auto& p = params<cuStreamCreate_params>(data);
      if (p.phStream) on_stream_create(u64(*p.phStream), stream_flags(p.Flags));
      thread.adapter_check_due = true;
      break;
    }
    case DRV(cuStreamCreateWithPriority): {
      const auto& p = params<cuStreamCreateWithPriority_params>(data);
      if (p.phStream) on_stream_create(u64(*p.phStream), stream_flags(p.flags));
      thread.adapter_check_due = true;
      break;
    }
    case DRV(cuStreamWaitEvent): case DRV(cuStreamWaitEvent_ptsz): {
      const auto& p = params<cuStreamWaitEvent_params>(data);
      on_stream_wait_event(resolve(u64(p.hStream), cbid == DRV(cuStreamWaitEvent_ptsz)),
                           u64(p.hEvent));
      break;
    }
    case DRV(cuStreamSynchronize): case DRV(cuStreamSynchronize_ptsz):
      on_stream_sync(resolve(u64(params<cuStreamSynchronize_params>(data).hStream),
                             cbid == DRV(cuStreamSynchronize_ptsz)));
      break;
    case DRV(cuStreamQuery): case DRV(cuStreamQuery_ptsz):
      on_stream_sync(resolve(u64(params<cuStreamQuery_params>(data).hStream),
                             cbid == DRV(cuStreamQuery_ptsz)));
      break;
    case DRV(cuCtxSynchronize): case DRV(cuCtxSynchronize_v2):
    case DRV(cuLaunchHostFunc): case DRV(cuLaunchHostFunc_ptsz):
      on_host_func(resolve(u64(params<cuLaunchHostFunc_params>(data).hStream),
                           cbid == DRV(cuLaunchHostFunc_ptsz)));
      break;
    case DRV(cuStreamAddCallback): case DRV(cuStreamAddCallback_ptsz):
      on_host_func(resolve(u64(params<cuStreamAddCallback_params>(data).hStream),
                           cbid == DRV(cuStreamAddCallback_ptsz)));
      break;

    case DRV(cuStreamBeginCapture): case DRV(cuStreamBeginCapture_ptsz):
      on_stream_begin_capture(resolve(u64(params<cuStreamBeginCapture_params>(data).hStream),
                                      cbid == DRV(cuStreamBeginCapture_ptsz)),
                              /*to_graph=*/false);
      break;
    case DRV(cuStreamBeginCapture_v2): case DRV(cuStreamBeginCapture_v2_ptsz):
      on_stream_begin_capture(resolve(u64(params<cuStreamBeginCapture_v2_params>(data).hStream),
                                      cbid == DRV(cuStreamBeginCapture_v2_ptsz)),
                              /*to_graph=*/false);
      break;
    case DRV(cuStreamBeginCaptureToGraph): case DRV(cuStreamBeginCaptureToGraph_ptsz):
      on_stream_begin_capture(resolve(u64(params<cuStreamBeginCaptureToGraph_params>(data).hStream),
                                      cbid == DRV(cuStreamBeginCaptureToGraph_ptsz)),
                              /*to_graph=*/true);
      break;
    case DRV(cuGraphExecUpdate): {
      const auto& p = params<cuGraphExecUpdate_params>(data);
      on_graph_exec_update(u64(p.hGraphExec), u64(p.hGraph));
      break;
    }
    case DRV(cuGraphExecUpdate_v2): {
      const auto& p = params<cuGraphExecUpdate_v2_params>(data);
      on_graph_exec_update(u64(p.hGraphExec), u64(p.hGraph));
      break;
    }
    case DRV(cuGraphCreate): {
      const auto& p = params<cuGraphCreate_params>(data);
      if (p.phGraph) on_graph_forget(u64(*p.phGraph));
      break;
    }
    case DRV(cuGraphDestroy):
      on_graph_forget(u64(params<cuGraphDestroy_params>(data).hGraph));
      break;
    case DRV(cuGraphAddNode): {
      const auto& p = params<cuGraphAddNode_params>(data);
      if (p.nodeParams != nullptr && p.nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
        conditional_node(p.nodeParams->conditional.phGraph_out, p.nodeParams->conditional.size);
      break;
    }
    case DRV(cuGraphAddNode_v2): {
      const auto& p = params<cuGraphAddNode_v2_params>(data);
      if (p.nodeParams != nullptr && p.nodeParams->type == CU_GRAPH_NODE_TYPE_CONDITIONAL)
        conditional_node(p.nodeParams->conditional.phGraph_out, p.nodeParams->conditional.size);
      break;
    }
    case DRV(cuStreamEndCapture): case DRV(cuStreamEndCapture_ptsz): {
      const auto& p = params<cuStreamEndCapture_params>(data);
      on_stream_end_capture(resolve(u64(p.hStream), cbid == DRV(cuStreamEndCapture_ptsz)),
                            p.phGraph ? u64(*p.phGraph) : 0);
      break;
    }
    case DRV(cuGraphInstantiateWithFlags): {
      const auto& p = params<cuGraphInstantiateWithFlags_params>(data);
      if (p.phGraphExec) on_graph_instantiate(u64(*p.phGraphExec), u64(p.hGraph));
      break;
    }
    case DRV(cuGraphInstantiateWithParams): case DRV(cuGraphInstantiateWithParams_ptsz): {
      const auto& p = params<cuGraphInstantiateWithParams_params>(data);
      if (p.phGraphExec) on_graph_instantiate(u64(*p.phGraphExec), u64(p.hGraph));
      break;
    }
    case DRV(cuGraphLaunch): case DRV(cuGraphLaunch_ptsz): {
      const auto& p = params<cuGraphLaunch_params>(data);
      on_graph_exec_launch(u64(p.hGraph),
                           resolve(u64(p.hStream), cbid == DRV(cuGraphLaunch_ptsz)));
      break;
    }
    default:
      break;
  }
}

const CUpti_CallbackId kDriverCallbacks[] = {
    DRV(cuLaunchKernel), DRV(cuLaunchKernel_ptsz), DRV(cuLaunchKernelEx),
    DRV(cuLaunchKernelEx_ptsz), DRV(cuLaunchCooperativeKernel),
    DRV(cuLaunchCooperativeKernel_ptsz), DRV(cuMemAlloc_v2), DRV(cuMemAllocManaged),
    DRV(cuMemAllocPitch_v2), DRV(cuMemFree_v2), DRV(cuMemAllocAsync), DRV(cuMemAllocAsync_ptsz),
    DRV(cuMemAllocFromPoolAsync), DRV(cuMemAllocFromPoolAsync_ptsz), DRV(cuMemFreeAsync),
    DRV(cuMemFreeAsync_ptsz), DRV(cuMemcpyHtoD_v2), DRV(cuMemcpyHtoD_v2_ptds),
    DRV(cuMemcpyDtoH_v2), DRV(cuMemcpyDtoH_v2_ptds), DRV(cuMemcpyDtoD_v2),
    DRV(cuMemcpyDtoD_v2_ptds), DRV(cuMemcpy), DRV(cuMemcpy_ptds), DRV(cuMemcpyHtoDAsync_v2),
    DRV(cuMemcpyHtoDAsync_v2_ptsz), DRV(cuMemcpyDtoHAsync_v2), DRV(cuMemcpyDtoHAsync_v2_ptsz),
    DRV(cuMemcpyDtoDAsync_v2), DRV(cuMemcpyDtoDAsync_v2_ptsz), DRV(cuMemcpyAsync),
    DRV(cuMemcpyAsync_ptsz), DRV(cuMemsetD8_v2), DRV(cuMemsetD8_v2_ptds), DRV(cuMemsetD16_v2),
    DRV(cuMemsetD16_v2_ptds), DRV(cuMemsetD32_v2), DRV(cuMemsetD32_v2_ptds),
    DRV(cuMemsetD8Async), DRV(cuMemsetD8Async_ptsz), DRV(cuMemsetD16Async),
    DRV(cuMemsetD16Async_ptsz), DRV(cuMemsetD32Async), DRV(cuMemsetD32Async_ptsz),
    DRV(cuEventRecord), DRV(cuEventRecord_ptsz), DRV(cuEventRecordWithFlags),
    DRV(cuEventRecordWithFlags_ptsz), DRV(cuEventDestroy_v2), DRV(cuEventSynchronize),
    DRV(cuEventQuery), DRV(cuStreamCreate), DRV(cuStreamCreateWithPriority),
    DRV(cuStreamDestroy_v2), DRV(cuStreamWaitEvent), DRV(cuStreamWaitEvent_ptsz),
    DRV(cuStreamSynchronize), DRV(cuStreamSynchronize_ptsz), DRV(cuStreamQuery),
    DRV(cuStreamQuery_ptsz), DRV(cuCtxSynchronize), DRV(cuCtxSynchronize_v2), DRV(cuMemFreeHost),
    DRV(cuMemHostUnregister), DRV(cuMemHostAlloc), DRV(cuMemHostAlloc_v2), DRV(cuMemAllocHost_v2),
    DRV(cuMemHostRegister), DRV(cuMemHostRegister_v2),
    DRV(cuLaunchHostFunc), DRV(cuLaunchHostFunc_ptsz), DRV(cuStreamAddCallback),
    DRV(cuStreamAddCallback_ptsz), DRV(cuStreamBeginCapture_v2), DRV(cuStreamBeginCapture_v2_ptsz),
    DRV(cuStreamEndCapture), DRV(cuStreamEndCapture_ptsz), DRV(cuGraphInstantiateWithFlags),
    DRV(cuGraphInstantiateWithParams), DRV(cuGraphInstantiateWithParams_ptsz), DRV(cuGraphLaunch),
    DRV(cuGraphLaunch_ptsz), DRV(cuStreamBeginCapture), DRV(cuStreamBeginCapture_ptsz),
    DRV(cuStreamBeginCaptureToGraph), DRV(cuStreamBeginCaptureToGraph_ptsz),
    DRV(cuGraphExecUpdate), DRV(cuGraphExecUpdate_v2), DRV(cuGraphCreate), DRV(cuGraphDestroy),
    DRV(cuGraphAddNode), DRV(cuGraphAddNode_v2),
};

#undef DRV

// ---- which callbacks carry launches -----------------------------------------

// kCalibrating: runtime and driver launch callbacks are both on, and each
// runtime launch is compared with its nested driver launch. After
// kCalibrationLaunches launches in which the driver launch named the same
// stream and no other observed driver call came inside, the runtime's
// launch callbacks are turned off (kDriverOnly): a runtime launch is then
// seen as the application's own driver launch. One disagreement (a launch
// without a nested driver launch, another stream, other driver calls
// inside) keeps both for good (kRuntimeToo).
enum LaunchMode : int { kCalibrating, kDriverOnly, kRuntimeToo };
constexpr int kCalibrationLaunches = 64;
std::atomic<int> launch_mode{kRuntimeToo};
std::atomic<int> agreeing_launches{0};

bool driver_only_launches() {
  return launch_mode.load(std::memory_order_relaxed) == kDriverOnly;
}

// Turns the runtime's launch callbacks off. Called from a launch's exit
// callback; the subscription lock is only tried, since the application's
// own cuptiSubscribe holds it while CUPTI may wait for callbacks in flight.
bool disable_runtime_launch_callbacks() {
  Subscription& sub = subscription();
  std::unique_lock<std::mutex> lock(sub.mu, std::try_to_lock);
  if (!lock.owns_lock()) return false;
  if (sub.subscriber == nullptr || sub.api.enable_callback == nullptr) return true;
  ReentrancyGuard guard;
  for (CUpti_CallbackId cbid : kRuntimeCallbacks)
    if (is_runtime_launch(cbid))
      sub.api.enable_callback(0, sub.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  return true;
}

void calibrate_launch(bool agreed, const char* function) {
  if (!agreed) {
    int expected = kCalibrating;
    if (launch_mode.compare_exchange_strong(expected, kRuntimeToo) && options().verbosity >= 1)
      notice(std::string("a runtime launch (") + (function != nullptr ? function : "?") +
             ") differs from its driver launch; runtime launch callbacks stay on");
    return;
  }
  if (agreeing_launches.fetch_add(1, std::memory_order_relaxed) + 1 < kCalibrationLaunches) return;
  int expected = kCalibrating;
  if (!launch_mode.compare_exchange_strong(expected, kDriverOnly)) return;
  if (!disable_runtime_launch_callbacks()) {
    // The lock is busy: try again at a later launch.
    launch_mode.store(kCalibrating);
    return;
  }
  if (options().verbosity >= 1)
    notice("runtime launch callbacks off after " + std::to_string(kCalibrationLaunches) +
           " launches that their driver launches described");
}

// ---- the callback -------------------------------------------------------------

// A free (destroy) fed at entry whose call then failed: the checker has
// retired something the driver did not. Rare (a double free, a bad stream),
// and the application sees the error itself.
void note_failed_after_enter(const char* function) {
  if (options().verbosity >= 1)
    notice(std::string(function != nullptr ? function : "a CUDA call") +
           " failed after the checker took it as done; later reports on its pointer may be wrong");
}

bool runtime_succeeded(const CUpti_CallbackData* data) {
  return data->functionReturnValue != nullptr &&
         *static_cast<const cudaError_t*>(data->functionReturnValue) == cudaSuccess;
}

bool driver_succeeded(const CUpti_CallbackData* data) {
  return data->functionReturnValue != nullptr &&
         *static_cast<const CUresult*>(data->functionReturnValue) == CUDA_SUCCESS;
}

void handle_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* raw) {
  ThreadState& thread = thread_state();
  if (thread.guard > 0) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(raw);
  if (driver_only_launches()) {
    // A runtime launch callback that was already on its way when they were
    // turned off, and the state of a launch whose exit callback will not
    // come: the driver launch carries the launch now.
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && is_runtime_launch(cbid)) return;
    if (thread.runtime_depth > 0 && is_runtime_launch(thread.runtime_cbid)) {
      thread.runtime_depth = 0;
      thread.nested_launch_seen = false;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (data->callbackSite == CUPTI_API_ENTER) {
      if (thread.runtime_depth++ == 0) {
        thread.runtime_cbid = cbid;
        thread.nested_launch_seen = false;
        if (is_runtime_launch(cbid)) {
          // A launch is never fed at entry: only its stream is noted, for
          // the nested driver launch that normally carries everything.
          thread.runtime_launch_stream = runtime_launch_stream(cbid, data);
          thread.launch_made_other_driver_calls = false;
          thread.fed_at_enter = false;
        } else {
          ReentrancyGuard guard;
          thread.fed_at_enter = runtime_enter(cbid, data);
        }
      }
      return;
    }
    if (thread.runtime_depth > 0 && --thread.runtime_depth > 0) return;
    if (thread.nested_launch_seen) {
      // A launch its driver launch already fed (the common case): nothing
      // left but the adapter poll every launch exit makes.
      thread.nested_launch_seen = false;
      if (launch_mode.load(std::memory_order_relaxed) == kCalibrating)
        calibrate_launch(thread.nested_driver_stream == thread.runtime_launch_stream &&
                             !thread.launch_made_other_driver_calls,
                         data->functionName);
      poll_torch_adapter();
      return;
    }
    // A launch that succeeded without a nested driver launch. (A failed one
    // says nothing about how launches are observed.)
    if (is_runtime_launch(cbid) && launch_mode.load(std::memory_order_relaxed) == kCalibrating &&
        runtime_succeeded(data))
      calibrate_launch(false, data->functionName);
    if (thread.fed_at_enter) {
      thread.fed_at_enter = false;
      if (!runtime_succeeded(data)) note_failed_after_enter(data->functionName);
    } else if (runtime_succeeded(data)) {
      ReentrancyGuard guard;
      runtime_exit(cbid, data);
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    // A host function is wrapped at its driver call's entry, also when a
    // runtime call made it (host_funcs.cpp); the kHostFunc event comes from
    // the exit of the call the application made.
    if (data->callbackSite == CUPTI_API_ENTER && wrap_host_function(cbid, data) &&
        thread.runtime_depth > 0)
      return;
    if (thread.runtime_depth == 0) {
      // Driver calls made by the application itself.
      if (data->callbackSite == CUPTI_API_ENTER) {
        ReentrancyGuard guard;
        thread.driver_fed_at_enter = driver_enter(cbid, data);
        return;
      }
      if (thread.driver_fed_at_enter) {
        thread.driver_fed_at_enter = false;
        if (!driver_succeeded(data)) note_failed_after_enter(data->functionName);
        return;
      }
    }
    if (data->callbackSite != CUPTI_API_EXIT || !driver_succeeded(data)) return;
    if (thread.runtime_depth > 0) {
      // Inside a runtime call: only a launch's own driver launch is used.
      const bool in_launch = is_runtime_launch(thread.runtime_cbid);
      if (in_launch && (!is_driver_launch(cbid) || thread.nested_launch_seen))
        thread.launch_made_other_driver_calls = true;
      if (is_driver_launch(cbid) && in_launch && !thread.nested_launch_seen) {
        thread.nested_launch_seen = true;
        ReentrancyGuard guard;
        driver_launch(cbid, data, &thread.runtime_launch_stream);
      }
      return;
    }
    ReentrancyGuard guard;
    driver_exit(cbid, data);
  } else {
    return;
  }
  // Outside the guard: the adapter's attach may make CUDA calls of its own.
  if (thread.adapter_check_due) {
    thread.adapter_check_due = false;
    maybe_attach_torch_adapter();
  }
  // The adapter hooks PyTorch's allocator only after a kernel launch: the
  // allocator makes CUDA calls (device properties and the like) while it is
  // still building its per-device state, and hooking it then would touch
  // entries that do not exist yet. A launch comes only once it is whole.
  const bool launch = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? is_runtime_launch(cbid)
                                                            : is_driver_launch(cbid);
  if (launch) poll_torch_adapter();
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* raw) {
  // The cost of CUPTI's dispatch alone (XSC_PROFILE=subscribe-only).
  if (profile_mode() == ProfileMode::kSubscribeOnly) return;
  if (!callback_timing_on.load(std::memory_order_relaxed)) {
    handle_callback(domain, cbid, raw);
    return;
  }
  const std::uint64_t start = monotonic_ns();
  std::uint64_t none = 0;
  startup_times().first_callback.compare_exchange_strong(none, start, std::memory_order_relaxed);
  handle_callback(domain, cbid, raw);
  note_callback_time(monotonic_ns() - start);
}

// Once subscribed, CUPTI pre-allocates buffers for Activity API records
// (by default 3 of about 3 MB) in every context created from then on. The
// runtime uses callbacks only: on the buggy example those buffers cost
// about 2,350 page faults (9 MB of freshly zeroed memory) per process, and
// driver round trips at context creation. The runtime asks for none; CUPTI
// still allocates buffers when a profiler in the process enables activity
// records, and an application that takes the CUPTI slot gets the old count
// back.
// XSC_CUPTI_DEVICE_BUFFERS=N asks for N instead, to measure the difference.
void limit_activity_buffers(Subscription& sub) {
  CuptiApi& api = sub.api;
  if (api.get_activity_attribute == nullptr || api.set_activity_attribute == nullptr) return;
  std::size_t wanted = 0;
  if (const char* text = std::getenv("XSC_CUPTI_DEVICE_BUFFERS"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(text, &end, 10);
    if (*end != '\0' || value > 64) {
      std::fprintf(stderr,
                   "xstream-check: XSC_CUPTI_DEVICE_BUFFERS: '%s' is not a count from 0 to 64; "
                   "ignored\n",
                   text);
      return;
    }
    wanted = static_cast<std::size_t>(value);
  }
  std::size_t current = 0;
  std::size_t size = sizeof current;
  if (api.get_activity_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &size,
                                 &current) != CUPTI_SUCCESS ||
      current == wanted)
    return;
  size = sizeof wanted;
  if (api.set_activity_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &size,
                                 &wanted) == CUPTI_SUCCESS)
    sub.cupti_preallocated_buffers = current;
}

// Gives an application that takes the CUPTI slot CUPTI's own pre-allocation
// back, for the contexts it creates from then on.
void restore_activity_buffers(Subscription& sub) {
  if (sub.cupti_preallocated_buffers == 0 || sub.api.set_activity_attribute == nullptr) return;
  std::size_t size = sizeof sub.cupti_preallocated_buffers;
  sub.api.set_activity_attribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, &size,
                                 &sub.cupti_preallocated_buffers);
  sub.cupti_preallocated_buffers = 0;
}

}  // namespace

bool subscribe_cupti() {
  Subscription& sub = subscription();
  std::lock_guard<std::mutex> lock(sub.mu);
  CuptiApi& api = sub.api;
  StartupTimes& times = startup_times();
  times.cupti_begin = monotonic_ns();
  // Callback handling is timed only when asked: two clock reads per callback
  // are a measurable part of a launch.
  callback_timing_on.store(options().verbosity >= 2, std::memory_order_relaxed);
  if (!load_cupti(&api)) {
    if (!driver_installed()) return true;
    std::fprintf(stderr,
                 "xstream-check: cannot load CUPTI (libcupti.so.13; set XSC_CUPTI_LIB to its "
                 "path); checking disabled\n");
    return false;
  }
  times.cupti_loaded = monotonic_ns();
  CUpti_SubscriberHandle subscriber = nullptr;
  const CUptiResult result =
      api.subscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_callback), nullptr);
  times.cupti_subscribed = monotonic_ns();
  if (result != CUPTI_SUCCESS) {
    if (!driver_installed()) return true;
    const char* text = nullptr;
    if (api.result_string == nullptr || api.result_string(result, &text) != CUPTI_SUCCESS)
      text = nullptr;
    if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      std::fprintf(stderr,
                   "xstream-check: another CUPTI tool (a profiler or sanitizer) holds the "
                   "callback subscription; checking disabled\n");
    } else {
      std::fprintf(stderr, "xstream-check: cuptiSubscribe failed (%s); checking disabled\n",
                   text != nullptr ? text : "unknown error");
    }
    return false;
  }
  limit_activity_buffers(sub);
  // XSC_PROFILE=subscribe-bare: what the subscription costs by itself,
  // apart from the callbacks enabled on it.
  if (profile_mode() == ProfileMode::kSubscribeBare) {
    sub.subscriber = subscriber;
    return true;
  }
  const LaunchCallbacks launches = options().launch_callbacks;
  launch_mode.store(launches == LaunchCallbacks::kAuto     ? kCalibrating
                    : launches == LaunchCallbacks::kDriver ? kDriverOnly
                                                           : kRuntimeToo);
  int failed = 0;
  for (CUpti_CallbackId cbid : kRuntimeCallbacks) {
    if (launches == LaunchCallbacks::kDriver && is_runtime_launch(cbid)) continue;
    failed += api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) != CUPTI_SUCCESS;
  }
  for (CUpti_CallbackId cbid : kDriverCallbacks)
    failed += api.enable_callback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid) != CUPTI_SUCCESS;
  if (failed > 0 && options().verbosity > 0)
    std::fprintf(stderr, "xstream-check: %d CUPTI callbacks could not be enabled\n", failed);
  sub.subscriber = subscriber;
  return true;
}

// CUPTI has one subscriber slot. An application that subscribes itself
// gets it: the runtime unsubscribes and stops feeding events (a partial view
// would report false races), and the report at exit covers what was seen.
void yield_cupti_to_application() {
  Subscription& sub = subscription();
  std::lock_guard<std::mutex> lock(sub.mu);
  if (sub.subscriber == nullptr) return;
  if (sub.api.unsubscribe != nullptr) {
    ReentrancyGuard guard;
    sub.api.unsubscribe(sub.subscriber);
    restore_activity_buffers(sub);
  }
  sub.subscriber = nullptr;
  stop_checking();
  notice("the application subscribes to CUPTI itself; checking stops here");
}

// The real CUPTI entry point `name`: from the CUPTI the runtime loaded, or
// the next definition after this library (the application's libcupti).
void* real_cupti_symbol(const char* name) {
  void* library = nullptr;
  {
    Subscription& sub = subscription();
    std::lock_guard<std::mutex> lock(sub.mu);
    library = sub.api.library;
  }
  void* symbol = library != nullptr ? dlsym(library, name) : nullptr;
  if (symbol == nullptr) symbol = dlsym(RTLD_NEXT, name);
  return symbol;
}

}  // namespace xsc::rt

// Interposed (LD_PRELOAD) CUPTI subscription entry points: see
// yield_cupti_to_application. The application's call and result are passed
// through untouched.
extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
  xsc::rt::yield_cupti_to_application();
  auto real = reinterpret_cast<decltype(&cuptiSubscribe)>(
      xsc::rt::real_cupti_symbol("cuptiSubscribe"));
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return real(subscriber, callback, userdata);
}

extern "C" __attribute__((visibility("default"))) CUptiResult CUPTIAPI
cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata,
                  CUpti_SubscriberParams* params) {
  xsc::rt::yield_cupti_to_application();
  auto real = reinterpret_cast<decltype(&cuptiSubscribe_v2)>(
      xsc::rt::real_cupti_symbol("cuptiSubscribe_v2"));
  if (real == nullptr) return CUPTI_ERROR_NOT_INITIALIZED;
  return real(subscriber, callback, userdata, params);
}
