/* Stream capture played through a fake CUPTI (fake_cupti_launches.c) and a
 * fake libcuda that names the kernel and answers capture queries
 * (fake_libcuda.c). Run with XSC_OPTIONS=launch_callbacks=driver.
 *
 * Every mode first reads x with reduce(const float*, ...) on stream a
 * (read-1), then writes x with a 4 KiB host-to-device copy on another
 * stream, then reads it on a again (read-2). Executed, the copy is a write
 * after read-1 and read-2 is a use before ready; captured into a graph it
 * is neither.
 *
 *   outside          the copy on b, no capture: both findings
 *   to-graph         cudaStreamBeginCaptureToGraph(b, G, global), the copy,
 *                    cudaStreamEndCapture: nothing
 *   to-graph-launch  the same, then G instantiated and launched on c with no
 *                    wait: the copy runs there, a write after read-1/read-2
 *   update-launch    an executable graph of a copy into z (captured with
 *                    cudaStreamBeginCapture) updated in place with
 *                    cudaGraphExecUpdate to a capture of the copy into x,
 *                    launched on c with no wait: both findings, in the graph
 *   conditional      a WHILE node added to G (cudaGraphAddNode); its body
 *                    captured to graph on b; G launched on c: the body's
 *                    copy runs there, both findings
 *   driver-relaxed   cuStreamBeginCaptureToGraph(b, G, relaxed), the copy
 *                    with cuMemcpyHtoDAsync_v2, cuStreamEndCapture: nothing
 *   thread-local     cudaStreamBeginCaptureToGraph_ptsz on the per-thread
 *                    default stream (handle 0), thread-local mode, the copy
 *                    with cudaMemcpyAsync_ptsz, end: nothing
 *   joined           capture on b; d waits on an event recorded on b (d
 *                    joins), the copy on d, b waits on d, end: nothing
 *   joined-after-end the same, then, while another capture is under way
 *                    on c, the copy on d again: a write after read (d left
 *                    the capture when it ended)
 *   discovered       stream e, never seen before, is capturing by the
 *                    driver's own account (a capture the runtime did not see
 *                    begin); the copy on e: nothing
 *   discovered-idle  the same stream, not capturing: both findings
 *   discovered-annotated  the same capturing stream, met first in an
 *                    annotated write (XSC_ANNOTATE_USE, no CUPTI callback
 *                    around it): nothing
 *   pinned-graph     the PyTorch adapter's pinned-memory hook registered
 *                    (host API version 6); a download into pinned memory
 *                    captured to graph on b, b synchronized, G launched on
 *                    c: the hook goes on at the captured copy and stays on
 *                    (the launch replays the copy; nothing turns it on
 *                    again), printing each call
 * In the discovered modes every driver query re-enters the CUPTI callback
 * with a cuCtxSynchronize, which the runtime must not take as the
 * application's (nor wait on its own lock for).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"
#include "xstream_check/annotations.h"
#include "xstream_check/host_api.h"

extern const xsc_host_api* xsc_runtime_host_api(void) __attribute__((weak));

static void pending_hook(int pending) {
  printf("hook %d\n", pending);
  fflush(stdout);
}
void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes);
void fake_cuda_capture(CUstream stream, unsigned long long id);
void fake_cuda_nested_callback_on_query(int on);

static void* device_alloc(uintptr_t at, size_t size) {
  void* ptr = (void*)at;
  cudaMalloc_v3020_params p = {&ptr, size};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &p);
  return ptr;
}

static void driver_call(CUpti_CallbackId cbid, const void* params) {
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, 0, params, &drv_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, cbid, 1, params, &drv_ok);
}

static int reduce_fn;

static void reduce(float* in, float* out, cudaStream_t stream) {
  int n = 256;
  void* args[] = {&in, &out, &n};
  cuLaunchKernel_params p = {(CUfunction)&reduce_fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)stream, args,
                             NULL};
  driver_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &p);
}

static void record_wait(cudaEvent_t event, cudaStream_t recorder, cudaStream_t waiter) {
  cudaEventRecord_v3020_params r = {event, recorder};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &r);
  cudaStreamWaitEvent_v3020_params w = {waiter, event, 0};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &w);
}

static cudaGraph_t graph_create(uintptr_t handle) {
  cudaGraph_t graph = (cudaGraph_t)handle;
  cudaGraphCreate_v10000_params p = {&graph, 0};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphCreate_v10000, &p);
  return graph;
}

static void begin_to_graph(cudaStream_t stream, cudaGraph_t graph, enum cudaStreamCaptureMode mode,
                           int ptsz) {
  cudaStreamBeginCaptureToGraph_v12030_params p = {stream, graph, NULL, NULL, 0, mode};
  runtime_call(ptsz ? CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_ptsz_v12030
                    : CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030,
               &p);
}

static void end_capture(cudaStream_t stream, cudaGraph_t graph, int ptsz) {
  cudaStreamEndCapture_v10000_params p = {stream, &graph};
  runtime_call(ptsz ? CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_ptsz_v10000
                    : CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000,
               &p);
}

static void instantiate_launch(cudaGraph_t graph, uintptr_t exec_handle, cudaStream_t stream) {
  cudaGraphExec_t exec = (cudaGraphExec_t)exec_handle;
  cudaGraphInstantiate_v12000_params i = {&exec, graph, 0};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, &i);
  cudaGraphLaunch_v10000_params l = {exec, stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &l);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: capture_calls MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  const size_t pointer_int[] = {sizeof(void*), sizeof(void*), sizeof(int)};
  fake_cuda_define(&reduce_fn, "_Z6reducePKfPfi", 3, pointer_int);

  cudaStream_t a = make_stream(0x5100);
  cudaStream_t b = make_stream(0x5200);
  cudaStream_t c = make_stream(0x5300);
  cudaStream_t d = make_stream(0x5400);
  /* Never created through a callback: the runtime meets it at the copy. */
  cudaStream_t e = (cudaStream_t)(uintptr_t)0x7e0000;
  float* x = device_alloc(0x7f0000100000ull, 1 << 20);
  float* y = device_alloc(0x7f0000200000ull, 4096);
  cudaGraph_t g = graph_create(0x9100);

  reduce(x, y, a); /* read-1 */
  if (strcmp(mode, "outside") == 0) {
    upload(x, b); /* copy-site */
  } else if (strcmp(mode, "to-graph") == 0 || strcmp(mode, "to-graph-launch") == 0) {
    begin_to_graph(b, g, cudaStreamCaptureModeGlobal, 0);
    upload(x, b);
    end_capture(b, g, 0);
  } else if (strcmp(mode, "update-launch") == 0) {
    float* z = device_alloc(0x7f0000300000ull, 4096);
    cudaGraph_t first = (cudaGraph_t)(uintptr_t)0x9400, second = (cudaGraph_t)(uintptr_t)0x9500;
    cudaStreamBeginCapture_v10000_params begin = {b, cudaStreamCaptureModeGlobal};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, &begin);
    upload(z, b);
    end_capture(b, first, 0);
    cudaGraphExec_t exec = (cudaGraphExec_t)(uintptr_t)0x9900;
    cudaGraphInstantiate_v12000_params i = {&exec, first, 0};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, &i);
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, &begin);
    upload(x, b);
    end_capture(b, second, 0);
    cudaGraphExecUpdate_v10020_params u = {exec, second, NULL};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphExecUpdate_v10020, &u);
    cudaGraphLaunch_v10000_params l = {exec, c};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &l);
  } else if (strcmp(mode, "conditional") == 0) {
    cudaGraphNode_t node = (cudaGraphNode_t)(uintptr_t)0x9a00;
    cudaGraph_t body = (cudaGraph_t)(uintptr_t)0x9200;
    cudaGraph_t bodies[1] = {body};
    struct cudaGraphNodeParams params;
    memset(&params, 0, sizeof params);
    params.type = cudaGraphNodeTypeConditional;
    params.conditional.type = cudaGraphCondTypeWhile;
    params.conditional.size = 1;
    params.conditional.phGraph_out = bodies;
    cudaGraphAddNode_v12030_params p = {&node, g, NULL, NULL, 0, &params};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddNode_v12030, &p);
    begin_to_graph(b, body, cudaStreamCaptureModeGlobal, 0);
    upload(x, b);
    end_capture(b, body, 0);
  } else if (strcmp(mode, "driver-relaxed") == 0) {
    cuStreamBeginCaptureToGraph_params begin = {(CUstream)b, (CUgraph)g, NULL, NULL, 0,
                                                CU_STREAM_CAPTURE_MODE_RELAXED};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, &begin);
    static float host[1024];
    cuMemcpyHtoDAsync_v2_params copy = {(CUdeviceptr)(uintptr_t)x, host, sizeof host, (CUstream)b};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, &copy);
    CUgraph out = (CUgraph)g;
    cuStreamEndCapture_params end = {(CUstream)b, &out};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, &end);
  } else if (strcmp(mode, "thread-local") == 0) {
    begin_to_graph(0, g, cudaStreamCaptureModeThreadLocal, 1);
    static float host[1024];
    cudaMemcpyAsync_v3020_params copy = {x, host, sizeof host, cudaMemcpyHostToDevice, 0};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, &copy);
    end_capture(0, g, 1);
  } else if (strcmp(mode, "joined") == 0 || strcmp(mode, "joined-after-end") == 0) {
    begin_to_graph(b, g, cudaStreamCaptureModeGlobal, 0);
    record_wait((cudaEvent_t)(uintptr_t)0xe100, b, d); /* fork: d joins */
    upload(x, d);
    record_wait((cudaEvent_t)(uintptr_t)0xe200, d, b); /* join back */
    end_capture(b, g, 0);
    if (strcmp(mode, "joined-after-end") == 0) {
      /* Another capture under way on c, so that captures are still being
       * followed when d's copy comes. */
      cudaGraph_t other = graph_create(0x9300);
      begin_to_graph(c, other, cudaStreamCaptureModeGlobal, 0);
      upload(x, d); /* after-end */
      end_capture(c, other, 0);
    }
  } else if (strcmp(mode, "discovered") == 0 || strcmp(mode, "discovered-idle") == 0) {
    fake_cuda_nested_callback_on_query(1);
    if (strcmp(mode, "discovered") == 0) fake_cuda_capture((CUstream)e, 77);
    upload(x, e);
  } else if (strcmp(mode, "pinned-graph") == 0) {
    const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
    if (api == NULL || api->version < 6) {
      printf("no host API version 6\n");
      return 1;
    }
    api->set_pinned_pending_hook(pending_hook);
    static float pinned[1024] __attribute__((aligned(4096)));
    pinned_alloc(pinned, sizeof pinned);
    begin_to_graph(b, g, cudaStreamCaptureModeGlobal, 0);
    copy_to_host(pinned, y, sizeof pinned, b);
    end_capture(b, g, 0);
    printf("captured\n");
    stream_synchronize(b);
    printf("capturing stream synchronized\n");
    instantiate_launch(g, 0x9900, c);
    printf("launched\n");
  } else if (strcmp(mode, "discovered-annotated") == 0) {
    fake_cuda_nested_callback_on_query(1);
    fake_cuda_capture((CUstream)e, 78);
    XSC_ANNOTATE_USE(x, 4096, e, 1);
  } else {
    fprintf(stderr, "capture_calls: unknown mode %s\n", mode);
    return 2;
  }
  if (strcmp(mode, "to-graph-launch") == 0 || strcmp(mode, "conditional") == 0)
    instantiate_launch(g, 0x9900, c); /* launch-site */
  reduce(x, y, a); /* read-2 */
  printf("done\n");
  return 0;
}
