/* What the programs run against the stand-in CUPTI (fake_cupti.c) share:
 * a runtime API call delivered at its entry and its exit, as CUPTI delivers
 * it, a driver kernel launch likewise, a non-blocking stream created at a
 * chosen handle, a device and a pinned allocation, copies each way, a
 * stream synchronization, an event hand-off between two streams and a
 * kernel launch at both levels. Each program includes it
 * once, after <cupti.h>. */
#ifndef XSC_TEST_FAKE_CUDA_CALLS_H
#define XSC_TEST_FAKE_CUDA_CALLS_H

#include <stdint.h>

#include <cupti.h>

#ifdef __cplusplus
extern "C"
#endif
int fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int exit_site,
                    const void* params, void* result);

static cudaError_t rt_ok = cudaSuccess;
static CUresult drv_ok = CUDA_SUCCESS;

static inline void runtime_call(CUpti_CallbackId cbid, const void* params) {
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, 0, params, &rt_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, 1, params, &rt_ok);
}

/* cuLaunchKernel of `fn` (a stand-in CUfunction) over a grid of gx x gy
 * blocks on `stream`, delivered at its entry and its exit. */
static inline void driver_launch(const void* fn, void** params, cudaStream_t stream, unsigned gx,
                                 unsigned gy) {
  cuLaunchKernel_params p = {(CUfunction)fn, gx, gy, 1, 1, 1, 1, 0, (CUstream)stream, params, NULL};
  for (int exit_site = 0; exit_site <= 1; ++exit_site)
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, exit_site,
                    &p, &drv_ok);
}

/* The parts of a cudaLaunchKernel that packed_launch delivers: the runtime
 * entry, the nested cuLaunchKernel's entry and exit, the runtime exit. */
enum { kLaunchEnter = 1, kLaunchDriver = 2, kLaunchExit = 4, kLaunchWhole = 7 };

/* cudaLaunchKernel of `fn` (a stand-in for the CUfunction and the host
 * stub) passing `words` pointer-sized words in a packed parameter buffer
 * (so no driver is needed to read the kernel's parameter layout) on
 * `stream`, its nested cuLaunchKernel naming `driver_stream`; `parts` says
 * which of its callbacks are delivered, in CUPTI's order. */
static inline void packed_launch(const void* fn, void** packed, size_t words, cudaStream_t stream,
                                 cudaStream_t driver_stream, int parts) {
  size_t packed_size = words * sizeof(void*);
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE,
                   &packed_size, CU_LAUNCH_PARAM_END};
  void* args[1] = {&packed[0]};
  dim3 one = {1, 1, 1};
  cudaLaunchKernel_v7000_params rt = {fn, one, one, args, 0, stream};
  cuLaunchKernel_params drv = {(CUfunction)fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)driver_stream,
                               NULL, extra};
  const CUpti_CallbackId rt_id = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  const CUpti_CallbackId drv_id = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  if (parts & kLaunchEnter) fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 0, &rt, &rt_ok);
  if (parts & kLaunchDriver) {
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 0, &drv, &drv_ok);
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 1, &drv, &drv_ok);
  }
  if (parts & kLaunchExit) fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 1, &rt, &rt_ok);
}

static inline cudaStream_t make_stream(uintptr_t handle) {
  cudaStream_t stream = (cudaStream_t)handle;
  cudaStreamCreateWithFlags_v5000_params p = {&stream, cudaStreamNonBlocking};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithFlags_v5000, &p);
  return stream;
}

/* cudaMemcpyAsync of 4 KiB from the host to `dst` on `stream`. */
static inline void upload(void* dst, cudaStream_t stream) {
  static float host[1024];
  cudaMemcpyAsync_v3020_params p = {dst, host, sizeof host, cudaMemcpyHostToDevice, stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &p);
}

/* cudaMalloc of `bytes`, the memory at `address`. */
static inline void* device_malloc(uintptr_t address, size_t bytes) {
  void* ptr = (void*)address;
  cudaMalloc_v3020_params p = {&ptr, bytes};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &p);
  return ptr;
}

/* cudaHostAlloc of `bytes`, the pinned memory at `host` (a page-aligned
 * buffer of the program's standing in for it: the fake CUPTI hands back
 * the address the call's pointer already holds). */
static inline void* pinned_alloc(void* host, size_t bytes) {
  cudaHostAlloc_v3020_params p = {&host, bytes, 0};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaHostAlloc_v3020, &p);
  return host;
}

/* cudaMemcpyAsync of `bytes` from the device to the host on `stream`. */
static inline void copy_to_host(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  cudaMemcpyAsync_v3020_params p = {dst, src, bytes, cudaMemcpyDeviceToHost, stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &p);
}

static inline void stream_synchronize(cudaStream_t stream) {
  cudaStreamSynchronize_v3020_params p = {stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, &p);
}

/* `waiter` waits on an event recorded on `after`. */
static inline void order(cudaStream_t waiter, cudaStream_t after) {
  cudaEvent_t event = (cudaEvent_t)(uintptr_t)0xe000;
  cudaEventRecord_v3020_params r = {event, after};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &r);
  cudaStreamWaitEvent_v3020_params w = {waiter, event, 0};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &w);
}

#endif
