// The CUDA runtime API's CUPTI callbacks: each call's parameters turned into
// the operations of ops.h, at the call's entry or its exit (the dispatch in
// cupti_callbacks.cpp says which).
#include "runtime/cuda/cupti_handlers.h"

namespace xsc::rt::cupti {

#define RT(name) CUPTI_RUNTIME_TRACE_CBID_##name

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
      on_runtime_launch(p.func, false, p.args, grid_of(p.gridDim), stream);
      break;
    }
    case RT(__cudaLaunchKernel_v13000): case RT(__cudaLaunchKernel_ptsz_v13000): {
      const auto& p = params<CudaKernelLaunchParams>(data);
      on_runtime_launch(p.kernel, true, p.args, grid_of(p.gridDim), stream);
      break;
    }
    case RT(cudaLaunchKernelExC_v11060): case RT(cudaLaunchKernelExC_ptsz_v11060): {
      const auto& p = params<cudaLaunchKernelExC_v11060_params>(data);
      on_runtime_launch(p.func, false, p.args,
                        p.config != nullptr ? grid_of(p.config->gridDim) : LaunchGrid{}, stream);
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
      effect_event_destroy(u64(params<cudaEventDestroy_v3020_params>(data).event));
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
      return runtime_graph_enter(cbid, data);
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
      effect_copy(u64(p.dst), u64(p.src), p.count, copy_kind(p.kind),
              resolve(0, cbid == RT(cudaMemcpy_ptds_v7000)), /*synchronous=*/true);
      break;
    }
    case RT(cudaMemcpyAsync_v3020): case RT(cudaMemcpyAsync_ptsz_v7000): {
      const auto& p = params<cudaMemcpyAsync_v3020_params>(data);
      effect_copy(u64(p.dst), u64(p.src), p.count, copy_kind(p.kind),
              resolve(u64(p.stream), cbid == RT(cudaMemcpyAsync_ptsz_v7000)), false);
      break;
    }
    case RT(cudaMemcpy2D_v3020): case RT(cudaMemcpy2D_ptds_v7000): {
      const auto& p = params<cudaMemcpy2D_v3020_params>(data);
      effect_copy(u64(p.dst), u64(p.src), 0, copy_kind(p.kind),
              resolve(0, cbid == RT(cudaMemcpy2D_ptds_v7000)), true);
      break;
    }
    case RT(cudaMemcpy2DAsync_v3020): case RT(cudaMemcpy2DAsync_ptsz_v7000): {
      const auto& p = params<cudaMemcpy2DAsync_v3020_params>(data);
      effect_copy(u64(p.dst), u64(p.src), 0, copy_kind(p.kind),
              resolve(u64(p.stream), cbid == RT(cudaMemcpy2DAsync_ptsz_v7000)), false);
      break;
    }
    // Copies no driver callback describes (their driver calls are not
    // followed): fed as they are. A 3D copy's extent is not read (the
    // whole allocation, as for 2D copies), and an array's side is none.
    case RT(cudaMemcpyPeerAsync_v4000): {
      const auto& p = params<cudaMemcpyPeerAsync_v4000_params>(data);
      on_copy(u64(p.dst), u64(p.src), p.count, CopyKind::kDeviceToDevice, resolve(u64(p.stream), false),
              false);
      break;
    }
    case RT(cudaMemcpy3DAsync_v3020): case RT(cudaMemcpy3DAsync_ptsz_v7000): {
      const auto& p = params<cudaMemcpy3DAsync_v3020_params>(data);
      if (p.p == nullptr) break;
      on_copy(p.p->dstArray ? 0 : u64(p.p->dstPtr.ptr), p.p->srcArray ? 0 : u64(p.p->srcPtr.ptr), 0,
              copy_kind(p.p->kind), resolve(u64(p.stream), cbid == RT(cudaMemcpy3DAsync_ptsz_v7000)),
              false);
      break;
    }
    case RT(cudaMemcpyBatchAsync_v13000): case RT(cudaMemcpyBatchAsync_ptsz_v13000): {
      const auto& p = params<cudaMemcpyBatchAsync_v13000_params>(data);
      if (p.dsts == nullptr || p.srcs == nullptr || p.sizes == nullptr) break;
      const StreamId stream = resolve(u64(p.stream), cbid == RT(cudaMemcpyBatchAsync_ptsz_v13000));
      for (std::size_t i = 0; i < p.count; ++i)
        on_copy(u64(p.dsts[i]), u64(p.srcs[i]), p.sizes[i], CopyKind::kDefault, stream, false);
      break;
    }
    case RT(cudaMemset_v3020): case RT(cudaMemset_ptds_v7000): {
      const auto& p = params<cudaMemset_v3020_params>(data);
      effect_memset(u64(p.devPtr), p.count, resolve(0, cbid == RT(cudaMemset_ptds_v7000)));
      break;
    }
    case RT(cudaMemsetAsync_v3020): case RT(cudaMemsetAsync_ptsz_v7000): {
      const auto& p = params<cudaMemsetAsync_v3020_params>(data);
      effect_memset(u64(p.devPtr), p.count,
                resolve(u64(p.stream), cbid == RT(cudaMemsetAsync_ptsz_v7000)));
      break;
    }
    case RT(cudaMemset2D_v3020): case RT(cudaMemset2D_ptds_v7000): {
      const auto& p = params<cudaMemset2D_v3020_params>(data);
      effect_memset(u64(p.devPtr), 0, resolve(0, cbid == RT(cudaMemset2D_ptds_v7000)));
      break;
    }
    case RT(cudaMemset2DAsync_v3020): case RT(cudaMemset2DAsync_ptsz_v7000): {
      const auto& p = params<cudaMemset2DAsync_v3020_params>(data);
      effect_memset(u64(p.devPtr), 0,
                resolve(u64(p.stream), cbid == RT(cudaMemset2DAsync_ptsz_v7000)));
      break;
    }

    // Events.
    case RT(cudaEventRecord_v3020): case RT(cudaEventRecord_ptsz_v7000): {
      const auto& p = params<cudaEventRecord_v3020_params>(data);
      effect_event_record(u64(p.event), resolve(u64(p.stream), cbid == RT(cudaEventRecord_ptsz_v7000)));
      break;
    }
    case RT(cudaEventRecordWithFlags_v11010): case RT(cudaEventRecordWithFlags_ptsz_v11010): {
      const auto& p = params<cudaEventRecordWithFlags_v11010_params>(data);
      effect_event_record(u64(p.event),
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
      effect_stream_wait(resolve(u64(p.stream), cbid == RT(cudaStreamWaitEvent_ptsz_v7000)),
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

    default:
      runtime_graph_exit(cbid, data);
      break;
  }
}

namespace {

const CUpti_CallbackId kRuntimeCallbackIds[] = {
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
    RT(cudaMemcpy2DAsync_v3020), RT(cudaMemcpy2DAsync_ptsz_v7000), RT(cudaMemcpyPeerAsync_v4000),
    RT(cudaMemcpy3DAsync_v3020), RT(cudaMemcpy3DAsync_ptsz_v7000),
    RT(cudaMemcpyBatchAsync_v13000), RT(cudaMemcpyBatchAsync_ptsz_v13000),
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
    RT(cudaStreamAddCallback_ptsz_v7000),
};

}  // namespace

const std::span<const CUpti_CallbackId> kRuntimeCallbacks{kRuntimeCallbackIds};

#undef RT

}  // namespace xsc::rt::cupti
