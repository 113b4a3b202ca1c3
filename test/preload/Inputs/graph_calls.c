/* CUDA graphs played through a fake CUPTI (fake_cupti_launches.c) and a
 * fake libcuda that names the kernel (fake_libcuda.c): conditional nodes,
 * graphs with branches, every instantiate form, uploads, clones and what
 * the runtime says it does not check. Run with
 * XSC_OPTIONS=launch_callbacks=driver.
 *
 * Every mode reads x with reduce(const float*, ...) on stream a first
 * (read-1) and again last (read-2); in between a graph that writes x with
 * a 4 KiB host-to-device copy is launched on stream c. Where c waits for a
 * before the launch and a for c after it ("ordered" below), nothing but
 * what happens inside the graph can be reported; otherwise the graph's
 * copy is a write after read-1 and read-2 a use before ready.
 *
 *   if-capture[-ordered]     NVIDIA's graphConditionalNodes route: a capture
 *                            on b, cudaStreamGetCaptureInfo, an IF node
 *                            added with cudaGraphAddNode after the
 *                            dependencies it gave, cudaStreamUpdateCapture-
 *                            Dependencies, the end of the capture; then the
 *                            body captured to graph on d (the copy),
 *                            cudaStreamEndCapture(d, NULL); instantiated,
 *                            launched on c
 *   while-capture[-ordered]  the same with a WHILE node through the driver
 *                            API (cuStreamGetCaptureInfo_v3, cuGraphAddNode_v2,
 *                            cuStreamUpdateCaptureDependencies_v2), its body
 *                            captured while the parent's capture is still
 *                            under way
 *   body-{race,ordered}-{if,while}  ordered outside; the body forks from d
 *                            to e, copies into x on e and reads x on d,
 *                            joining e back after the read (race: a use
 *                            before ready inside the body) or before it
 *   body-record              ordered before the launch only; the body records
 *                            an event f on d after the copy, and a waits on
 *                            f after the launch: a body's record orders
 *                            nothing outside it (it may run zero times), so
 *                            read-2 is still a use before ready
 *   switch-ordered           ordered; a SWITCH node with two bodies, each a
 *                            copy into x: one body runs per execution, so
 *                            the two copies are no race with each other
 *   forked[-joined]          ordered; a plain capture on b forks to d, copies
 *                            into x on d and reads x on b before joining d
 *                            back (a use before ready inside the graph) or
 *                            after
 *   relaunch                 the graph launched on c, then on e: both ordered
 *                            after read-1 and before read-2; the second
 *                            launch runs after the first (launches of one
 *                            executable graph are ordered), so nothing
 *   with-params, driver-with-params, driver-instantiate
 *                            the graph instantiated with
 *                            cudaGraphInstantiateWithParams,
 *                            cuGraphInstantiateWithParams, cuGraphInstantiate_v2
 *                            and launched on c with no wait: both findings
 *   device-launch            instantiated with cudaGraphInstantiateFlagDevice-
 *                            Launch, launched from the host, ordered: clean,
 *                            and the closing line says device launches are
 *                            not checked
 *   upload[-launch]          the executable graph uploaded to c
 *                            (cudaGraphUpload) and not launched: nothing; or
 *                            launched after the upload: both findings
 *   clone                    the graph cloned (cudaGraphClone), the clone
 *                            launched on c with no wait: both findings
 *   by-hand                  the graph built by hand: a copy node into x
 *                            (cudaGraphAddMemcpyNode1D) launched on c with no
 *                            wait: both findings
 *   driver-by-hand           the same with the driver API: a memset node of x
 *                            (cuGraphAddMemsetNode) and a kernel node reading
 *                            it (cuGraphAddKernelNode_v2): both findings
 *   if-by-hand[-ordered]     NVIDIA's simpleIfGraph route: an IF node added to
 *                            a graph built by hand, its body a memset node of
 *                            x added by hand: the body runs at the launch
 *   child-node               the captured copy put into another graph as a
 *                            child graph node (cudaGraphAddChildGraphNode),
 *                            that graph launched on c with no wait: both
 *                            findings
 *   memory-node              a cudaMallocAsync inside a capture: the closing
 *                            line says graph memory nodes are not checked
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"
void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes);

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

static void record(cudaEvent_t event, cudaStream_t stream) {
  cudaEventRecord_v3020_params r = {event, stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020, &r);
}

static void wait(cudaStream_t stream, cudaEvent_t event) {
  cudaStreamWaitEvent_v3020_params w = {stream, event, 0};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020, &w);
}

static void begin_capture(cudaStream_t stream) {
  cudaStreamBeginCapture_v10000_params p = {stream, cudaStreamCaptureModeGlobal};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, &p);
}

static void begin_to_graph(cudaStream_t stream, cudaGraph_t graph) {
  cudaStreamBeginCaptureToGraph_v12030_params p = {stream, graph, NULL, NULL, 0,
                                                   cudaStreamCaptureModeRelaxed};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCaptureToGraph_v12030, &p);
}

/* `made`: the graph the capture hands back; NULL passes no pGraph, as
 * bodies captured to graph often do. */
static void end_capture(cudaStream_t stream, cudaGraph_t made) {
  cudaGraph_t graph = made;
  cudaStreamEndCapture_v10000_params p = {stream, made != NULL ? &graph : NULL};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, &p);
}

static cudaGraphExec_t instantiate(cudaGraph_t graph, uintptr_t handle) {
  cudaGraphExec_t exec = (cudaGraphExec_t)handle;
  cudaGraphInstantiate_v12000_params p = {&exec, graph, 0};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, &p);
  return exec;
}

static void launch(cudaGraphExec_t exec, cudaStream_t stream) {
  cudaGraphLaunch_v10000_params p = {exec, stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &p);
}

/* What the driver would answer cudaStreamGetCaptureInfo about a capture on
 * `stream` into `graph` whose last node is `last`. */
static void capture_info(cudaStream_t stream, cudaGraph_t graph, cudaGraphNode_t* last) {
  enum cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  unsigned long long id = 1;
  const cudaGraphNode_t* deps = last;
  const cudaGraphEdgeData* edges = NULL;
  size_t count = 1;
  cudaStreamGetCaptureInfo_v12030_params p = {stream, &status, &id, &graph, &deps, &edges, &count};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamGetCaptureInfo_v12030, &p);
}

/* A conditional node of `type` with `count` bodies added to `graph` after
 * `dep` (cudaGraphAddNode), its handle `node`. */
static void add_conditional(cudaGraph_t graph, cudaGraphNode_t node, cudaGraphNode_t* dep,
                            enum cudaGraphConditionalNodeType type, cudaGraph_t* bodies,
                            unsigned count) {
  struct cudaGraphNodeParams params;
  memset(&params, 0, sizeof params);
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.type = type;
  params.conditional.size = count;
  params.conditional.phGraph_out = bodies;
  cudaGraphAddNode_v12030_params p = {&node, graph, dep, NULL, dep != NULL ? 1 : 0, &params};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddNode_v12030, &p);
}

static void continue_after(cudaStream_t stream, cudaGraphNode_t node) {
  cudaStreamUpdateCaptureDependencies_v12030_params p = {stream, &node, NULL, 1,
                                                         cudaStreamSetCaptureDependencies};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamUpdateCaptureDependencies_v12030, &p);
}

static int starts_with(const char* text, const char* prefix) {
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: graph_calls MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  const size_t pointer_int[] = {sizeof(void*), sizeof(void*), sizeof(int)};
  fake_cuda_define(&reduce_fn, "_Z6reducePKfPfi", 3, pointer_int);

  cudaStream_t a = make_stream(0x5100);
  cudaStream_t b = make_stream(0x5200);
  cudaStream_t c = make_stream(0x5300);
  cudaStream_t d = make_stream(0x5400);
  cudaStream_t e = make_stream(0x5500);
  float* x = device_alloc(0x7f0000100000ull, 1 << 20);
  float* y = device_alloc(0x7f0000200000ull, 4096);
  cudaGraph_t g = (cudaGraph_t)(uintptr_t)0x9600;
  cudaGraph_t body = (cudaGraph_t)(uintptr_t)0x9700;
  cudaGraphNode_t first_node = (cudaGraphNode_t)(uintptr_t)0xa001;
  cudaGraphNode_t cond_node = (cudaGraphNode_t)(uintptr_t)0xa100;
  cudaEvent_t fork = (cudaEvent_t)(uintptr_t)0xe100, join = (cudaEvent_t)(uintptr_t)0xe200;
  cudaEvent_t body_event = (cudaEvent_t)(uintptr_t)0xe300;
  int ordered_outside = 0, ordered_before = 0, launched = 0;

  reduce(x, y, a); /* read-1 */
  if (starts_with(mode, "if-capture") || starts_with(mode, "body-") ||
      strcmp(mode, "switch-ordered") == 0) {
    int is_switch = strcmp(mode, "switch-ordered") == 0;
    int is_while = strstr(mode, "while") != NULL;
    cudaGraph_t bodies[2] = {body, (cudaGraph_t)(uintptr_t)0x9701};
    begin_capture(b);
    reduce(y, y, b); /* a node before the conditional one */
    capture_info(b, g, &first_node);
    add_conditional(g, cond_node, &first_node,
                    is_switch  ? cudaGraphCondTypeSwitch
                    : is_while ? cudaGraphCondTypeWhile
                               : cudaGraphCondTypeIf,
                    bodies, is_switch ? 2 : 1);
    continue_after(b, cond_node);
    end_capture(b, g);
    begin_to_graph(d, body);
    if (starts_with(mode, "body-race") || starts_with(mode, "body-ordered")) {
      int race = starts_with(mode, "body-race");
      record(fork, d);
      wait(e, fork); /* e joins the body's capture */
      upload(x, e);  /* body-write */
      if (!race) {
        record(join, e);
        wait(d, join);
      }
      reduce(x, y, d); /* body-read */
      if (race) {
        record(join, e);
        wait(d, join);
      }
    } else {
      upload(x, d); /* body-copy */
      if (strcmp(mode, "body-record") == 0) record(body_event, d);
    }
    end_capture(d, NULL);
    if (is_switch) {
      begin_to_graph(e, bodies[1]);
      upload(x, e);
      end_capture(e, NULL);
    }
    ordered_outside = strstr(mode, "-ordered") != NULL || starts_with(mode, "body-race") ||
                      is_switch;
    ordered_before = strcmp(mode, "body-record") == 0;
  } else if (starts_with(mode, "while-capture")) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    cuuint64_t id = 2;
    CUgraph graph = (CUgraph)g;
    const CUgraphNode* deps = (const CUgraphNode*)&first_node;
    const CUgraphEdgeData* edges = NULL;
    size_t count = 1;
    cuStreamBeginCapture_v2_params begin = {(CUstream)b, CU_STREAM_CAPTURE_MODE_GLOBAL};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, &begin);
    reduce(y, y, b);
    cuStreamGetCaptureInfo_v3_params info = {(CUstream)b, &status, &id, &graph, &deps, &edges,
                                             &count};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamGetCaptureInfo_v3, &info);
    CUgraph bodies[1] = {(CUgraph)body};
    CUgraphNodeParams params;
    memset(&params, 0, sizeof params);
    params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    params.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
    params.conditional.size = 1;
    params.conditional.phGraph_out = bodies;
    CUgraphNode node = (CUgraphNode)cond_node;
    cuGraphAddNode_v2_params add = {&node, (CUgraph)g, deps, NULL, 1, &params};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphAddNode_v2, &add);
    cuStreamUpdateCaptureDependencies_v2_params update = {(CUstream)b, &node, NULL, 1,
                                                          CU_STREAM_SET_CAPTURE_DEPENDENCIES};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamUpdateCaptureDependencies_v2, &update);
    /* The body, captured while the parent's capture is under way. */
    cuStreamBeginCaptureToGraph_params to_body = {(CUstream)d, (CUgraph)body, NULL, NULL, 0,
                                                  CU_STREAM_CAPTURE_MODE_RELAXED};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCaptureToGraph, &to_body);
    static float host[1024];
    cuMemcpyHtoDAsync_v2_params copy = {(CUdeviceptr)(uintptr_t)x, host, sizeof host, (CUstream)d};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2, &copy);
    cuStreamEndCapture_params end_body = {(CUstream)d, NULL};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, &end_body);
    cuStreamEndCapture_params end = {(CUstream)b, &graph};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, &end);
    ordered_outside = strstr(mode, "-ordered") != NULL;
  } else if (strcmp(mode, "by-hand") == 0) {
    cudaGraph_t made = g;
    cudaGraphCreate_v10000_params create = {&made, 0};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphCreate_v10000, &create);
    static float host[1024];
    cudaGraphNode_t node = (cudaGraphNode_t)(uintptr_t)0xa300;
    cudaGraphAddMemcpyNode1D_v11010_params copy = {&node, g, NULL, 0, x, host, sizeof host,
                                                   cudaMemcpyHostToDevice};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddMemcpyNode1D_v11010, &copy);
  } else if (strcmp(mode, "driver-by-hand") == 0) {
    CUgraph made = (CUgraph)g;
    cuGraphCreate_params create = {&made, 0};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphCreate, &create);
    CUgraphNode set = (CUgraphNode)(uintptr_t)0xa300, read = (CUgraphNode)(uintptr_t)0xa301;
    CUDA_MEMSET_NODE_PARAMS m;
    memset(&m, 0, sizeof m);
    m.dst = (CUdeviceptr)(uintptr_t)x;
    m.elementSize = 1;
    m.width = 4096;
    m.height = 1;
    cuGraphAddMemsetNode_params memset_node = {&set, (CUgraph)g, NULL, 0, &m, NULL};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphAddMemsetNode, &memset_node);
    int n = 256;
    void* args[] = {&x, &y, &n};
    CUDA_KERNEL_NODE_PARAMS k;
    memset(&k, 0, sizeof k);
    k.func = (CUfunction)&reduce_fn;
    k.kernelParams = args;
    cuGraphAddKernelNode_v2_params kernel_node = {&read, (CUgraph)g, &set, 1, &k};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphAddKernelNode_v2, &kernel_node);
  } else if (starts_with(mode, "if-by-hand")) {
    cudaGraph_t made = g;
    cudaGraphCreate_v10000_params create = {&made, 0};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphCreate_v10000, &create);
    cudaGraph_t bodies[1] = {body};
    add_conditional(g, cond_node, NULL, cudaGraphCondTypeIf, bodies, 1);
    struct cudaMemsetParams m;
    memset(&m, 0, sizeof m);
    m.dst = x;
    m.elementSize = 1;
    m.width = 4096;
    m.height = 1;
    cudaGraphNode_t node = (cudaGraphNode_t)(uintptr_t)0xa300;
    cudaGraphAddMemsetNode_v10000_params p = {&node, body, NULL, 0, &m};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddMemsetNode_v10000, &p); /* body-memset */
    ordered_outside = strstr(mode, "-ordered") != NULL;
  } else if (strcmp(mode, "child-node") == 0) {
    cudaGraph_t child = (cudaGraph_t)(uintptr_t)0x9a00;
    begin_capture(b);
    upload(x, b);
    end_capture(b, child);
    cudaGraph_t made = g;
    cudaGraphCreate_v10000_params create = {&made, 0};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphCreate_v10000, &create);
    cudaGraphNode_t node = (cudaGraphNode_t)(uintptr_t)0xa300;
    cudaGraphAddChildGraphNode_v10000_params p = {&node, g, NULL, 0, child};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphAddChildGraphNode_v10000, &p);
  } else if (starts_with(mode, "forked")) {
    begin_capture(b);
    record(fork, b);
    wait(d, fork);
    upload(x, d); /* graph-write */
    if (strcmp(mode, "forked-joined") == 0) {
      record(join, d);
      wait(b, join);
    }
    reduce(x, y, b); /* graph-read */
    if (strcmp(mode, "forked") == 0) {
      record(join, d);
      wait(b, join);
    }
    end_capture(b, g);
    ordered_outside = 1;
  } else {
    /* One copy into x, captured on b. */
    begin_capture(b);
    if (strcmp(mode, "memory-node") == 0) {
      void* scratch = (void*)(uintptr_t)0x7f0000400000ull;
      cudaMallocAsync_v11020_params m = {&scratch, 4096, b};
      runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, &m);
    }
    upload(x, b);
    end_capture(b, g);
  }

  cudaGraphExec_t exec = (cudaGraphExec_t)(uintptr_t)0x9900;
  if (strcmp(mode, "with-params") == 0) {
    cudaGraphInstantiateParams params;
    memset(&params, 0, sizeof params);
    cudaGraphInstantiateWithParams_v12000_params p = {&exec, g, &params};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithParams_v12000, &p);
  } else if (strcmp(mode, "driver-with-params") == 0) {
    CUDA_GRAPH_INSTANTIATE_PARAMS params;
    memset(&params, 0, sizeof params);
    CUgraphExec out = (CUgraphExec)exec;
    cuGraphInstantiateWithParams_params p = {&out, (CUgraph)g, &params};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithParams, &p);
  } else if (strcmp(mode, "driver-instantiate") == 0) {
    CUgraphExec out = (CUgraphExec)exec;
    cuGraphInstantiate_v2_params p = {&out, (CUgraph)g, NULL, NULL, 0};
    driver_call(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiate_v2, &p);
  } else if (strcmp(mode, "device-launch") == 0) {
    cudaGraphInstantiateWithFlags_v11040_params p = {&exec, g,
                                                     cudaGraphInstantiateFlagDeviceLaunch};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiateWithFlags_v11040, &p);
    ordered_outside = 1;
  } else if (strcmp(mode, "clone") == 0) {
    cudaGraph_t clone = (cudaGraph_t)(uintptr_t)0x9800;
    cudaGraphClone_v10000_params p = {&clone, g};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphClone_v10000, &p);
    exec = instantiate(clone, 0x9900);
  } else {
    exec = instantiate(g, 0x9900);
  }

  if (ordered_outside || ordered_before || strcmp(mode, "relaunch") == 0) order(c, a);
  if (starts_with(mode, "upload")) {
    cudaGraphUpload_v10000_params u = {exec, c};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphUpload_v10000, &u);
  }
  if (strcmp(mode, "upload") != 0) {
    launch(exec, c); /* launch-site */
    launched = 1;
  }
  if (strcmp(mode, "relaunch") == 0) {
    order(e, a);
    launch(exec, e); /* second launch */
    order(a, e);
  }
  if (ordered_outside || strcmp(mode, "relaunch") == 0) order(a, c);
  if (strcmp(mode, "body-record") == 0) wait(a, body_event);
  reduce(x, y, a); /* read-2 */
  printf("done%s\n", launched ? "" : " (not launched)");
  return 0;
}
