// The CUDA driver API's CUPTI callbacks: the calls an application makes to
// the driver itself, and the driver launch nested in a runtime launch
// (cupti_callbacks.cpp says when each is used).
#include "runtime/cuda/cupti_handlers.h"

namespace xsc::rt::cupti {

#define DRV(name) CUPTI_DRIVER_TRACE_CBID_##name

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
                       grid_of(p.gridDimX, p.gridDimY, p.gridDimZ),
                       pick(p.hStream, cbid == DRV(cuLaunchKernel_ptsz)));
      break;
    }
    case DRV(cuLaunchKernelEx): case DRV(cuLaunchKernelEx_ptsz): {
      const auto& p = params<cuLaunchKernelEx_params>(data);
      on_kernel_launch(u64(p.f), p.kernelParams, p.extra,
                       p.config != nullptr ? grid_of(p.config->gridDimX, p.config->gridDimY,
                                                     p.config->gridDimZ)
                                           : LaunchGrid{},
                       pick(p.config != nullptr ? p.config->hStream : nullptr,
                            cbid == DRV(cuLaunchKernelEx_ptsz)));
      break;
    }
    case DRV(cuLaunchCooperativeKernel): case DRV(cuLaunchCooperativeKernel_ptsz): {
      const auto& p = params<cuLaunchCooperativeKernel_params>(data);
      on_kernel_launch(u64(p.f), p.kernelParams, nullptr,
                       grid_of(p.gridDimX, p.gridDimY, p.gridDimZ),
                       pick(p.hStream, cbid == DRV(cuLaunchCooperativeKernel_ptsz)));
      break;
    }
    default:
      break;
  }
}

// A stream memory operation's write or wait (stream_memops.cpp); `P` its
// parameters, which the first API and its _v2 share.
template <class P>
void write_value(const CUpti_CallbackData* data, bool ptsz, bool wide) {
  const auto& p = params<P>(data);
  on_stream_write_value(resolve(u64(p.stream), ptsz), p.addr, p.value, wide);
}

template <class P>
void wait_value(const CUpti_CallbackData* data, bool ptsz, bool wide) {
  const auto& p = params<P>(data);
  on_stream_wait_value(resolve(u64(p.stream), ptsz), p.addr, p.value, p.flags, wide);
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
      effect_event_destroy(u64(params<cuEventDestroy_v2_params>(data).hEvent));
      return true;
    case DRV(cuStreamDestroy_v2):
      on_stream_destroy(resolve(u64(params<cuStreamDestroy_v2_params>(data).hStream), false));
      return true;
    default:
      return driver_graph_enter(cbid, data);
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
      effect_copy(p.dstDevice, u64(p.srcHost), p.ByteCount, CopyKind::kHostToDevice,
              resolve(0, cbid == DRV(cuMemcpyHtoD_v2_ptds)), true);
      break;
    }
    case DRV(cuMemcpyDtoH_v2): case DRV(cuMemcpyDtoH_v2_ptds): {
      const auto& p = params<cuMemcpyDtoH_v2_params>(data);
      effect_copy(u64(p.dstHost), p.srcDevice, p.ByteCount, CopyKind::kDeviceToHost,
              resolve(0, cbid == DRV(cuMemcpyDtoH_v2_ptds)), true);
      break;
    }
    case DRV(cuMemcpyDtoD_v2): case DRV(cuMemcpyDtoD_v2_ptds): {
      const auto& p = params<cuMemcpyDtoD_v2_params>(data);
      effect_copy(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::kDeviceToDevice,
              resolve(0, cbid == DRV(cuMemcpyDtoD_v2_ptds)), true);
      break;
    }
    case DRV(cuMemcpy): case DRV(cuMemcpy_ptds): {
      const auto& p = params<cuMemcpy_params>(data);
      effect_copy(p.dst, p.src, p.ByteCount, CopyKind::kDefault,
              resolve(0, cbid == DRV(cuMemcpy_ptds)), true);
      break;
    }
    case DRV(cuMemcpyHtoDAsync_v2): case DRV(cuMemcpyHtoDAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyHtoDAsync_v2_params>(data);
      effect_copy(p.dstDevice, u64(p.srcHost), p.ByteCount, CopyKind::kHostToDevice,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyHtoDAsync_v2_ptsz)), false);
      break;
    }
    case DRV(cuMemcpyDtoHAsync_v2): case DRV(cuMemcpyDtoHAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyDtoHAsync_v2_params>(data);
      effect_copy(u64(p.dstHost), p.srcDevice, p.ByteCount, CopyKind::kDeviceToHost,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyDtoHAsync_v2_ptsz)), false);
      break;
    }
    case DRV(cuMemcpyDtoDAsync_v2): case DRV(cuMemcpyDtoDAsync_v2_ptsz): {
      const auto& p = params<cuMemcpyDtoDAsync_v2_params>(data);
      effect_copy(p.dstDevice, p.srcDevice, p.ByteCount, CopyKind::kDeviceToDevice,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyDtoDAsync_v2_ptsz)), false);
      break;
    }
    case DRV(cuMemcpyAsync): case DRV(cuMemcpyAsync_ptsz): {
      const auto& p = params<cuMemcpyAsync_params>(data);
      effect_copy(p.dst, p.src, p.ByteCount, CopyKind::kDefault,
              resolve(u64(p.hStream), cbid == DRV(cuMemcpyAsync_ptsz)), false);
      break;
    }
    case DRV(cuMemsetD8_v2): case DRV(cuMemsetD8_v2_ptds): {
      const auto& p = params<cuMemsetD8_v2_params>(data);
      effect_memset(p.dstDevice, p.N, resolve(0, cbid == DRV(cuMemsetD8_v2_ptds)));
      break;
    }
    case DRV(cuMemsetD16_v2): case DRV(cuMemsetD16_v2_ptds): {
      const auto& p = params<cuMemsetD16_v2_params>(data);
      effect_memset(p.dstDevice, p.N * 2, resolve(0, cbid == DRV(cuMemsetD16_v2_ptds)));
      break;
    }
    case DRV(cuMemsetD32_v2): case DRV(cuMemsetD32_v2_ptds): {
      const auto& p = params<cuMemsetD32_v2_params>(data);
      effect_memset(p.dstDevice, p.N * 4, resolve(0, cbid == DRV(cuMemsetD32_v2_ptds)));
      break;
    }
    case DRV(cuMemsetD8Async): case DRV(cuMemsetD8Async_ptsz): {
      const auto& p = params<cuMemsetD8Async_params>(data);
      effect_memset(p.dstDevice, p.N, resolve(u64(p.hStream), cbid == DRV(cuMemsetD8Async_ptsz)));
      break;
    }
    case DRV(cuMemsetD16Async): case DRV(cuMemsetD16Async_ptsz): {
      const auto& p = params<cuMemsetD16Async_params>(data);
      effect_memset(p.dstDevice, p.N * 2,
                resolve(u64(p.hStream), cbid == DRV(cuMemsetD16Async_ptsz)));
      break;
    }
    case DRV(cuMemsetD32Async): case DRV(cuMemsetD32Async_ptsz): {
      const auto& p = params<cuMemsetD32Async_params>(data);
      effect_memset(p.dstDevice, p.N * 4,
                resolve(u64(p.hStream), cbid == DRV(cuMemsetD32Async_ptsz)));
      break;
    }

    case DRV(cuEventRecord): case DRV(cuEventRecord_ptsz): {
      const auto& p = params<cuEventRecord_params>(data);
      effect_event_record(u64(p.hEvent), resolve(u64(p.hStream), cbid == DRV(cuEventRecord_ptsz)));
      break;
    }
    case DRV(cuEventRecordWithFlags): case DRV(cuEventRecordWithFlags_ptsz): {
      const auto& p = params<cuEventRecordWithFlags_params>(data);
      effect_event_record(u64(p.hEvent),
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
      effect_stream_wait(resolve(u64(p.hStream), cbid == DRV(cuStreamWaitEvent_ptsz)),
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
      on_device_sync();
      break;
    case DRV(cuLaunchHostFunc): case DRV(cuLaunchHostFunc_ptsz):
      on_host_func(resolve(u64(params<cuLaunchHostFunc_params>(data).hStream),
                           cbid == DRV(cuLaunchHostFunc_ptsz)));
      break;

    // Stream memory operations.
    case DRV(cuStreamWriteValue32): case DRV(cuStreamWriteValue32_v2):
      write_value<cuStreamWriteValue32_v2_params>(data, false, false);
      break;
    case DRV(cuStreamWriteValue32_ptsz): case DRV(cuStreamWriteValue32_v2_ptsz):
      write_value<cuStreamWriteValue32_v2_params>(data, true, false);
      break;
    case DRV(cuStreamWriteValue64): case DRV(cuStreamWriteValue64_v2):
      write_value<cuStreamWriteValue64_v2_params>(data, false, true);
      break;
    case DRV(cuStreamWriteValue64_ptsz): case DRV(cuStreamWriteValue64_v2_ptsz):
      write_value<cuStreamWriteValue64_v2_params>(data, true, true);
      break;
    case DRV(cuStreamWaitValue32): case DRV(cuStreamWaitValue32_v2):
      wait_value<cuStreamWaitValue32_v2_params>(data, false, false);
      break;
    case DRV(cuStreamWaitValue32_ptsz): case DRV(cuStreamWaitValue32_v2_ptsz):
      wait_value<cuStreamWaitValue32_v2_params>(data, true, false);
      break;
    case DRV(cuStreamWaitValue64): case DRV(cuStreamWaitValue64_v2):
      wait_value<cuStreamWaitValue64_v2_params>(data, false, true);
      break;
    case DRV(cuStreamWaitValue64_ptsz): case DRV(cuStreamWaitValue64_v2_ptsz):
      wait_value<cuStreamWaitValue64_v2_params>(data, true, true);
      break;
    case DRV(cuStreamBatchMemOp): case DRV(cuStreamBatchMemOp_ptsz):
    case DRV(cuStreamBatchMemOp_v2): case DRV(cuStreamBatchMemOp_v2_ptsz): {
      const auto& p = params<cuStreamBatchMemOp_v2_params>(data);
      if (p.paramArray == nullptr) break;
      const StreamId stream = resolve(u64(p.stream), cbid == DRV(cuStreamBatchMemOp_ptsz) ||
                                                         cbid == DRV(cuStreamBatchMemOp_v2_ptsz));
      for (unsigned i = 0; i < p.count; ++i) {
        const CUstreamBatchMemOpParams& op = p.paramArray[i];
        switch (op.operation) {
          case CU_STREAM_MEM_OP_WRITE_VALUE_32:
            on_stream_write_value(stream, op.writeValue.address, op.writeValue.value, false);
            break;
          case CU_STREAM_MEM_OP_WRITE_VALUE_64:
            on_stream_write_value(stream, op.writeValue.address, op.writeValue.value64, true);
            break;
          case CU_STREAM_MEM_OP_WAIT_VALUE_32:
            on_stream_wait_value(stream, op.waitValue.address, op.waitValue.value,
                                 op.waitValue.flags, false);
            break;
          case CU_STREAM_MEM_OP_WAIT_VALUE_64:
            on_stream_wait_value(stream, op.waitValue.address, op.waitValue.value64,
                                 op.waitValue.flags, true);
            break;
          default:  // barriers and flushes order nothing between streams
            break;
        }
      }
      break;
    }
    case DRV(cuStreamAddCallback): case DRV(cuStreamAddCallback_ptsz):
      on_host_func(resolve(u64(params<cuStreamAddCallback_params>(data).hStream),
                           cbid == DRV(cuStreamAddCallback_ptsz)));
      break;

    default:
      driver_graph_exit(cbid, data);
      break;
  }
}

bool is_effect_twin(CUpti_CallbackId cbid) {
  switch (cbid) {
    case DRV(cuMemcpyHtoD_v2): case DRV(cuMemcpyHtoD_v2_ptds):
    case DRV(cuMemcpyDtoH_v2): case DRV(cuMemcpyDtoH_v2_ptds):
    case DRV(cuMemcpyDtoD_v2): case DRV(cuMemcpyDtoD_v2_ptds):
    case DRV(cuMemcpy): case DRV(cuMemcpy_ptds):
    case DRV(cuMemcpyHtoDAsync_v2): case DRV(cuMemcpyHtoDAsync_v2_ptsz):
    case DRV(cuMemcpyDtoHAsync_v2): case DRV(cuMemcpyDtoHAsync_v2_ptsz):
    case DRV(cuMemcpyDtoDAsync_v2): case DRV(cuMemcpyDtoDAsync_v2_ptsz):
    case DRV(cuMemcpyAsync): case DRV(cuMemcpyAsync_ptsz):
    case DRV(cuMemsetD8_v2): case DRV(cuMemsetD8_v2_ptds):
    case DRV(cuMemsetD16_v2): case DRV(cuMemsetD16_v2_ptds):
    case DRV(cuMemsetD32_v2): case DRV(cuMemsetD32_v2_ptds):
    case DRV(cuMemsetD8Async): case DRV(cuMemsetD8Async_ptsz):
    case DRV(cuMemsetD16Async): case DRV(cuMemsetD16Async_ptsz):
    case DRV(cuMemsetD32Async): case DRV(cuMemsetD32Async_ptsz):
    case DRV(cuEventRecord): case DRV(cuEventRecord_ptsz):
    case DRV(cuEventRecordWithFlags): case DRV(cuEventRecordWithFlags_ptsz):
    case DRV(cuStreamWaitEvent): case DRV(cuStreamWaitEvent_ptsz):
    case DRV(cuEventDestroy_v2):
      return true;
    default:
      return false;
  }
}

namespace {

const CUpti_CallbackId kDriverCallbackIds[] = {
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
    DRV(cuStreamAddCallback_ptsz),
    DRV(cuStreamWriteValue32), DRV(cuStreamWriteValue32_ptsz), DRV(cuStreamWriteValue32_v2),
    DRV(cuStreamWriteValue32_v2_ptsz), DRV(cuStreamWriteValue64), DRV(cuStreamWriteValue64_ptsz),
    DRV(cuStreamWriteValue64_v2), DRV(cuStreamWriteValue64_v2_ptsz), DRV(cuStreamWaitValue32),
    DRV(cuStreamWaitValue32_ptsz), DRV(cuStreamWaitValue32_v2), DRV(cuStreamWaitValue32_v2_ptsz),
    DRV(cuStreamWaitValue64), DRV(cuStreamWaitValue64_ptsz), DRV(cuStreamWaitValue64_v2),
    DRV(cuStreamWaitValue64_v2_ptsz), DRV(cuStreamBatchMemOp), DRV(cuStreamBatchMemOp_ptsz),
    DRV(cuStreamBatchMemOp_v2), DRV(cuStreamBatchMemOp_v2_ptsz),
};

}  // namespace

const std::span<const CUpti_CallbackId> kDriverCallbacks{kDriverCallbackIds};

#undef DRV

}  // namespace xsc::rt::cupti
