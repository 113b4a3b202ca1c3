/* cuDNN's graph API as the runtime follows it: a convolution built the way
 * cudnn-frontend builds one (tensors with unique ids, a convolution
 * descriptor, the operation, its graph, heuristics whose results are read
 * into engine configs, a plan, a variant pack), executed on stream a. A
 * fake libcudnn (fake_cudnn.c, fake_cudnn_backend.c) plays the library, a
 * fake CUPTI (fake_cupti_launches.c) the streams and a reading kernel
 * (library_call_programs.h). Run with XSC_OPTIONS=launch_callbacks=driver.
 *
 * x is 2 x 4 x 8 x 8 floats, w 8 x 4 x 3 x 3, y 2 x 8 x 8 x 8 (4096 bytes,
 * dense NCHW); unique ids x 1, w 2, y 3, bias 4, z 5.
 *
 *   cudnn_backend_calls race        y written on stream a; stream b reads
 *                                   y's last element, no wait
 *   cudnn_backend_calls waits       the same, b waits for a first
 *   cudnn_backend_calls engine      the race with the plan's config made
 *                                   from an engine, not from heuristics
 *   cudnn_backend_calls fused       y virtual, a pointwise add of a bias
 *                                   into z (non-virtual, at 0x7f0000300000);
 *                                   b reads y's and z's last elements
 *   cudnn_backend_calls relu-bwd    a pointwise ReLU backward instead of
 *                                   the convolution: y (3) read, dy (4),
 *                                   dx written into z (5); b reads y's and
 *                                   z's last elements
 *   cudnn_backend_calls padded      the race with y's rows padded to 16
 *                                   floats: y is not dense
 *   cudnn_backend_calls partial     the race with the plan told to run
 *                                   only what computes y (an intermediate)
 *   cudnn_backend_calls blend       beta 1, then alpha 0, no reader
 *   cudnn_backend_calls reuse       the race, y's tensor descriptor
 *                                   destroyed before the execute and a new
 *                                   one (unique id 9, virtual) made at its
 *                                   address
 *   cudnn_backend_calls reuse-plan  a plan destroyed and a new one made at
 *                                   its address, running a graph of an
 *                                   operation not followed (gen stats of
 *                                   y); then the race's reader
 *
 * Every execute's status is printed, and whether the library got the
 * arguments the program passed. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>
#include <cupti.h>

#include "fake_cuda_calls.h"
#include "library_call_programs.h"

struct fake_cudnn_call {
  const char* name;
  int count;
  const void* args[16];
};
extern struct fake_cudnn_call fake_cudnn_last;
size_t fake_cudnn_handle_size(void);

static void check(cudnnStatus_t status, const char* what) {
  if (status != CUDNN_STATUS_SUCCESS) {
    fprintf(stderr, "%s: status %d\n", what, (int)status);
    exit(1);
  }
}

static cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = NULL;
  check(cudnnBackendCreateDescriptor(type, &d), "create");
  return d;
}

static void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count, const void* elements) {
  check(cudnnBackendSetAttribute(d, name, type, count, elements), "set");
}

static void link_to(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                 cudnnBackendDescriptor_t to) {
  set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &to);
}

static cudnnBackendDescriptor_t done(cudnnBackendDescriptor_t d) {
  check(cudnnBackendFinalize(d), "finalize");
  return d;
}

/* An n x c x h x w float tensor, rows `row` floats apart. */
static cudnnBackendDescriptor_t tensor(int64_t uid, int64_t n, int64_t c, int64_t h, int64_t w,
                                       int64_t row, bool is_virtual) {
  cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = CUDNN_DATA_FLOAT;
  const int64_t dims[] = {n, c, h, w}, strides[] = {c * h * row, h * row, row, 1};
  const int64_t alignment = 16;
  set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
  set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
  set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
  /* set to their defaults, which change nothing */
  const int64_t vector_count = 1;
  const bool by_value = false;
  const cudnnBackendTensorReordering_t reordering = CUDNN_TENSOR_REORDERING_NONE;
  set(t, CUDNN_ATTR_TENSOR_VECTOR_COUNT, CUDNN_TYPE_INT64, 1, &vector_count);
  set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
  set(t, CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, 1, &reordering);
  return done(t);
}

/* 3 x 3, pad 1, stride 1. */
static cudnnBackendDescriptor_t convolution(void) {
  cudnnBackendDescriptor_t c = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  const int64_t spatial = 2, ones[] = {1, 1}, pads[] = {1, 1};
  set(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  set(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  set(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial);
  set(c, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, ones);
  set(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, ones);
  set(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
  set(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads);
  return done(c);
}

static cudnnBackendDescriptor_t conv_forward(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t w,
                                             cudnnBackendDescriptor_t y, float alpha, float beta) {
  cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  link_to(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x);
  link_to(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w);
  link_to(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y);
  link_to(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, convolution());
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta);
  return done(op);
}

/* A pointwise operation of `mode` in float, its tensors left to link. */
static cudnnBackendDescriptor_t pointwise_op(cudnnPointwiseMode_t mode) {
  cudnnBackendDescriptor_t pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision);
  done(pw);
  cudnnBackendDescriptor_t op = make(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  link_to(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
  return op;
}

/* y = x + b */
static cudnnBackendDescriptor_t add(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t b,
                                    cudnnBackendDescriptor_t y) {
  cudnnBackendDescriptor_t op = pointwise_op(CUDNN_POINTWISE_ADD);
  link_to(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  link_to(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b);
  link_to(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  return done(op);
}

/* dx = relu'(y) * dy: a backward mode, where y is read, never written */
static cudnnBackendDescriptor_t relu_backward(cudnnBackendDescriptor_t y,
                                              cudnnBackendDescriptor_t dy,
                                              cudnnBackendDescriptor_t dx) {
  cudnnBackendDescriptor_t op = pointwise_op(CUDNN_POINTWISE_RELU_BWD);
  link_to(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  link_to(op, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, dy);
  link_to(op, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, dx);
  return done(op);
}

static cudnnBackendDescriptor_t graph(cudnnHandle_t handle, cudnnBackendDescriptor_t* ops, int n) {
  cudnnBackendDescriptor_t g = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  set(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  set(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, n, ops);
  return done(g);
}

static int run_only_y; /* the plans run only what computes y */

static cudnnBackendDescriptor_t plan_of(cudnnHandle_t handle, cudnnBackendDescriptor_t config) {
  cudnnBackendDescriptor_t plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  set(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  link_to(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
  if (run_only_y) {
    const int64_t y_uid = 3;
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS, CUDNN_TYPE_INT64, 1, &y_uid);
  }
  return done(plan);
}

/* As cudnn-frontend: the heuristics' result count, then that many configs
 * made and filled; the first one. */
static cudnnBackendDescriptor_t heuristics_config(cudnnHandle_t handle,
                                                  cudnnBackendDescriptor_t g) {
  (void)handle;
  cudnnBackendDescriptor_t heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  link_to(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g);
  set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  done(heur);
  int64_t count = 0;
  check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, NULL),
        "heuristics count");
  cudnnBackendDescriptor_t configs[8];
  if (count < 1 || count > 8) exit(1);
  for (int64_t i = 0; i < count; ++i) configs[i] = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  int64_t filled = 0;
  check(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &filled, configs),
        "heuristics results");
  return configs[0];
}

static cudnnBackendDescriptor_t plan_by_heuristics(cudnnHandle_t handle,
                                                   cudnnBackendDescriptor_t g) {
  return plan_of(handle, heuristics_config(handle, g));
}

/* An engine of the graph by index, its config. */
static cudnnBackendDescriptor_t plan_by_engine(cudnnHandle_t handle, cudnnBackendDescriptor_t g) {
  cudnnBackendDescriptor_t engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  const int64_t index = 0;
  link_to(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, g);
  set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
  done(engine);
  cudnnBackendDescriptor_t config = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
  link_to(config, CUDNN_ATTR_ENGINECFG_ENGINE, engine);
  return plan_of(handle, done(config));
}

static cudnnBackendDescriptor_t pack(const int64_t* uids, void** pointers, int n, void* work) {
  cudnnBackendDescriptor_t p = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  set(p, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids);
  set(p, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, pointers);
  set(p, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &work);
  return done(p);
}

static void execute(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                    cudnnBackendDescriptor_t variant_pack) {
  const cudnnStatus_t status = cudnnBackendExecute(handle, plan, variant_pack);  /* execute-site */
  const struct fake_cudnn_call* l = &fake_cudnn_last;
  const int same = l->name != NULL && strcmp(l->name, "cudnnBackendExecute") == 0 &&
                   l->args[0] == handle && l->args[1] == plan && l->args[2] == variant_pack;
  printf("cudnnBackendExecute: status %d, arguments %s\n", (int)status,
         same ? "unchanged" : "CHANGED");
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cudnn_backend_calls MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  define_reduce();

  cudaStream_t a = make_stream(0x5100);
  cudaStream_t b = make_stream(0x5200);
  char* x = device_alloc(0x7f0000100000ull, 1 << 16);
  char* y = device_alloc(0x7f0000200000ull, 1 << 16);
  char* z = device_alloc(0x7f0000300000ull, 1 << 16);
  char* w = device_alloc(0x7f0000500000ull, 1 << 16);
  char* work = device_alloc(0x7f0000600000ull, 1 << 12);
  char* bias = device_alloc(0x7f0000700000ull, 1 << 12);

  cudnnHandle_t handle = calloc(1, fake_cudnn_handle_size());
  cudnnSetStream(handle, a);

  const int fused = strcmp(mode, "fused") == 0;
  run_only_y = strcmp(mode, "partial") == 0;
  cudnnBackendDescriptor_t xt = tensor(1, 2, 4, 8, 8, 8, false);
  cudnnBackendDescriptor_t wt = tensor(2, 8, 4, 3, 3, 3, false);
  cudnnBackendDescriptor_t yt = tensor(3, 2, 8, 8, 8, strcmp(mode, "padded") == 0 ? 16 : 8, fused);

  const int64_t uids[] = {1, 2, 3, 4, 5};
  void* pointers[] = {x, w, y, bias, z};
  cudnnBackendDescriptor_t ops[2];
  int n_ops = 1;
  if (strcmp(mode, "blend") == 0) {
    /* beta 1: y read and written; alpha 0: nothing */
    ops[0] = conv_forward(xt, wt, yt, 1.0f, 1.0f);
    execute(handle, plan_by_heuristics(handle, graph(handle, ops, 1)), pack(uids, pointers, 3, work));
    ops[0] = conv_forward(xt, wt, yt, 0.0f, 1.0f);
    execute(handle, plan_by_heuristics(handle, graph(handle, ops, 1)), pack(uids, pointers, 3, work));
    printf("done\n");
    return 0;
  }
  const int relu_bwd = strcmp(mode, "relu-bwd") == 0;
  if (relu_bwd) {
    /* y (unique id 3) read, dy the bias tensor (4), dx z (5) */
    ops[0] = relu_backward(yt, tensor(4, 2, 8, 8, 8, 8, false), tensor(5, 2, 8, 8, 8, 8, false));
  } else {
    ops[0] = conv_forward(xt, wt, yt, 1.0f, 0.0f);
  }
  if (fused) {
    cudnnBackendDescriptor_t bt = tensor(4, 1, 8, 1, 1, 1, false);
    cudnnBackendDescriptor_t zt = tensor(5, 2, 8, 8, 8, 8, false);
    ops[1] = add(yt, bt, zt);
    n_ops = 2;
  }
  cudnnBackendDescriptor_t g = graph(handle, ops, n_ops);
  cudnnBackendDescriptor_t plan = strcmp(mode, "engine") == 0 ? plan_by_engine(handle, g)
                                                              : plan_by_heuristics(handle, g);
  if (strcmp(mode, "reuse") == 0) {
    check(cudnnBackendDestroyDescriptor(yt), "destroy");
    cudnnBackendDescriptor_t again = tensor(9, 2, 8, 8, 8, 16, true);
    printf("tensor address reused: %s\n", again == yt ? "yes" : "no");
  }
  if (strcmp(mode, "reuse-plan") == 0) {
    cudnnBackendDescriptor_t stats = make(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
    link_to(stats, CUDNN_ATTR_OPERATION_GENSTATS_XDESC, yt);
    link_to(stats, CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, tensor(6, 1, 8, 1, 1, 1, false));
    link_to(stats, CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, tensor(7, 1, 8, 1, 1, 1, false));
    cudnnBackendDescriptor_t stats_op = done(stats);
    cudnnBackendDescriptor_t config = heuristics_config(handle, graph(handle, &stats_op, 1));
    check(cudnnBackendDestroyDescriptor(plan), "destroy");
    cudnnBackendDescriptor_t again = plan_of(handle, config);
    printf("plan address reused: %s\n", again == plan ? "yes" : "no");
    plan = again;
  }
  execute(handle, plan, pack(uids, pointers, fused || relu_bwd ? 5 : 3, work));

  if (strcmp(mode, "waits") == 0) order(b, a);
  reduce(y + 4092, b);
  if (fused || relu_bwd) reduce(z + 4092, b);
  printf("done\n");
  return 0;
}
