/* Kernel launches whose arguments the runtime classifies by the kernel's
 * mangled name, and operator writes through the host API, played through
 * a fake CUPTI (fake_cupti_launches.c) and a fake libcuda that names the
 * kernels and gives their parameter layouts (fake_libcuda.c). Run with
 * XSC_OPTIONS=launch_callbacks=driver: each launch is one cuLaunchKernel.
 *
 *   param_access readers    reduce(const float*, float*, int) reads x on
 *                           two streams with nothing ordering them
 *   param_access copy       the same, then x is overwritten by a copy on a
 *                           third stream that waited for neither read
 *   param_access writer     fill(float*, int) writes x on one stream,
 *                           reduce reads it on another, unordered
 *   param_access aliased    reduce(x, x + 256, n): x's allocation is also
 *                           passed through the non-const parameter; then
 *                           the copy of "copy"
 *   param_access extern-c   an extern "C" kernel with reduce's layout reads
 *                           x; then the copy of "copy"
 *   param_access operator   an operator (aten::fill_) writes x through fill
 *                           on one stream; the legacy stream reads x
 *   param_access operator-waits  the same, the legacy stream waits first
 *   param_access operator-copy   the legacy stream reads x; an operator
 *                           (aten::copy_) copies into x on a stream that
 *                           waited for nothing: its copy is the write
 *   param_access operator-idle   the legacy stream reads x; an operator that
 *                           enqueued nothing names x written on stream a
 *
 * Kernels whose by-value tables of pointers are filled only in part, named
 * as nvcc names PyTorch's. In each, a copy into x on stream a, then the
 * kernel on stream b, with x in its table past what the launch filled
 * (what the host's stack left there) or, for the -reads-x twins, in it:
 *   param_access stale-cat      cat's metadata, two inputs (grid.y 2), x
 *                               third; cat-reads-x: three inputs
 *   param_access stale-foreach  a foreach kernel's TensorListMetadata<1>,
 *                               one block on tensor 0, x tensor 1;
 *                               foreach-reads-x: a second block on tensor 1
 *   param_access stale-reduce   a reduction's ReduceOp with one output, x
 *                               its unset dst[1] and a word of its input
 *                               calculator past dims; reduce-reads-x: two
 *                               outputs; stale-reduce-calculators: two
 *                               outputs, x only in the calculator
 *   param_access stale-closure  PyTorch's non-contiguous copy (an
 *                               elementwise lambda's captures), x in its
 *                               offset calculator past dims;
 *                               closure-reads-x: x its input;
 *                               stale-closure-unread: dims 40, no
 *                               calculator's
 *
 *   param_access operands   TensorIterator's elementwise kernels (an operand
 *                           array, the output first): y, a new caching block
 *                           on stream a, filled by one there (y = x * 2);
 *                           stream b reads y through another's input
 *                           (z = y + 1) with no wait
 *   param_access operands-wait    the same, stream b waits for a first
 *   param_access operands-output  stream b writes y through the output
 *                           entry instead (an in-place y.add_ on b's operand
 *                           array, y both output and input)
 *   param_access operands-reduce  stream b reduces y instead (y.sum(): y
 *                           the ReduceOp's src) with no wait;
 *                           operands-reduce-wait: b waits for a first
 *   param_access operands-index   stream b indexes y instead (index_select:
 *                           y the src, a TensorInfo<const float>) with no
 *                           wait; operands-index-wait: b waits for a first
 *   param_access operands-cat     stream b concatenates y instead (cat: y
 *                           the one input its launch filled) with no wait;
 *                           operands-cat-wait: b waits for a first
 *   param_access operands-gather  stream b gathers rows of y instead
 *                           (index_select on contiguous tensors: y the
 *                           gather kernel's inp) with no wait;
 *                           operands-gather-wait: b waits for a first
 *   param_access operands-foreach stream b adds y into z in place with a
 *                           foreach kernel (_foreach_add_([z], [y]): y in
 *                           its second list, which it only loads) with no
 *                           wait; operands-foreach-wait: b waits for a first
 *
 *   param_access pinned-stale   an ATen kernel (an elementwise kernel whose
 *                               closure is scanned whole) whose offset
 *                               calculator's unset words hold a pointer into
 *                               pinned host memory, then the host writes
 *                               that memory
 *   param_access pinned-kernel  a kernel of the program's own, reduce,
 *                               reads pinned host memory through its const
 *                               pointer (zero-copy), then the host writes it
 *
 *   param_access stray-words    launches passing, beside x, a word in the
 *                               span of the allocations but on a page none
 *                               ever covered (a thread's stack), and a word
 *                               on a tracked page outside its allocation; then
 *                               the first again with a caching block on its
 *                               own stream; prints the runtime's word counts
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <xstream_check/host_api.h>

#pragma weak xsc_runtime_host_api
#pragma weak xsc_runtime_launch_words
#pragma weak xsc_runtime_view_census

#include "fake_cuda_calls.h"
void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes);


static void* device_alloc(uintptr_t at, size_t size) {
  void* ptr = (void*)at;
  cudaMalloc_v3020_params p = {&ptr, size};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &p);
  return ptr;
}

/* Page-aligned host memory the program pins with cudaHostAlloc. */
static float pinned_buffer[1024] __attribute__((aligned(4096)));

/* Stand for CUfunction handles. */
static int closure_fn, copy_closure_fn, reduce_fn, fill_fn, c_reduce_fn, cat_fn, foreach_fn, reduce_op_fn, elementwise_fn,
    index_fn, gather_fn, foreach_add_fn;

/* PyTorch's layouts (param_fill.h): CatArrInputTensorMetadata<OpaqueType<4>,
 * unsigned, 128, 1> is 2720 bytes, input[128] first; TensorListMetadata<1>
 * 3368 bytes, addresses[1][110] first, block_to_tensor[320] at 1760;
 * TensorListMetadata<2> 3144 bytes, addresses[2][64] first,
 * block_to_tensor[320] at 1536;
 * ReduceOp<float, SumOps<float>, unsigned, ...> 1048 bytes, its offset
 * calculators at [72, 980), dst[1] 48 bytes and noutputs 4 bytes from its
 * end. The bytes not set stand for a stale stack. */
enum {
  kCatMeta = 2720,
  kTensorList1 = 3368,
  kTensorList2 = 3144,
  kReduceOp = 1048,
  kReduceCalculatorWord = 400
};

static void stale_cat(float* out, float* in0, float* in1, float* stale, unsigned inputs,
                      cudaStream_t stream) {
  static unsigned char meta[kCatMeta];
  memset(meta, 0x11, sizeof meta);
  memcpy(meta + 0, &in0, 8);
  memcpy(meta + 8, &in1, 8);
  memcpy(meta + 16, &stale, 8);
  unsigned char sizes_strides[32] = {0};
  int dim = 0;
  unsigned trailing = 1;
  void* params[] = {&out, meta, sizes_strides, &dim, &trailing};
  driver_launch(&cat_fn, params, stream, 160, inputs);
}

static void stale_foreach(float* t0, float* stale, unsigned blocks, cudaStream_t stream) {
  static unsigned char meta[kTensorList1];
  memset(meta, 0x11, sizeof meta);
  memcpy(meta + 0, &t0, 8);
  memcpy(meta + 8, &stale, 8);
  meta[1760] = 0;  /* block 0: tensor 0 */
  meta[1761] = 1;  /* block 1: tensor 1 */
  float alpha = 1.0f;
  unsigned char functor = 0;
  void* params[] = {meta, &functor, &alpha};
  driver_launch(&foreach_fn, params, stream, blocks, 1);
}

/* _foreach_add_([acc], [in]): one block on tensor 0 of both lists. */
static void foreach_add(float* acc, float* in, cudaStream_t stream) {
  static unsigned char meta[kTensorList2];
  memset(meta, 0x11, sizeof meta);
  memcpy(meta + 0, &acc, 8);
  memcpy(meta + 8 * 64, &in, 8);
  meta[1536] = 0; /* block 0: tensor 0 */
  float alpha = 1.0f;
  unsigned char functor = 0, op = 0;
  void* params[] = {meta, &functor, &op, &alpha};
  driver_launch(&foreach_add_fn, params, stream, 1, 1);
}

static void stale_reduce(float* src, float* dst0, float* dst1, float* calculator_word, int outputs,
                         cudaStream_t stream) {
  static unsigned char op[kReduceOp];
  memset(op, 0x11, sizeof op);
  memcpy(op + kReduceCalculatorWord, &calculator_word, 8);
  memcpy(op + kReduceOp - 64, &src, 8);
  memcpy(op + kReduceOp - 56, &dst0, 8);
  memcpy(op + kReduceOp - 48, &dst1, 8);
  memset(op + kReduceOp - 40, 0, 24);  /* acc_buf, cta_buf, semaphores */
  op[kReduceOp - 8] = 0;  /* accumulate */
  op[kReduceOp - 7] = 1;  /* final_output */
  memcpy(op + kReduceOp - 4, &outputs, 4);
  void* params[] = {op};
  driver_launch(&reduce_op_fn, params, stream, 1, 1);
}

static void reduce(const void* fn, float* in, float* out, cudaStream_t stream) {
  int n = 256;
  void* params[] = {&in, &out, &n};
  driver_launch(fn, params, stream, 1, 1);
}

/* indexSelectLargeIndex<float, unsigned, long, 2, 2, -2, true>(
 * TensorInfo<float, unsigned> dst, TensorInfo<const float, unsigned> src,
 * TensorInfo<const long, unsigned> indices, int, int, unsigned, unsigned,
 * long): each TensorInfo 216 bytes, its data pointer first, its sizes and
 * strides set below dims only. */
enum { kTensorInfo32 = 216 };
static void index_select(float* dst, float* src, float* indices, cudaStream_t stream) {
  static unsigned char infos[3][kTensorInfo32];
  float* data[3] = {dst, src, indices};
  for (int i = 0; i < 3; ++i) {
    memset(infos[i], 0x5a, kTensorInfo32);
    memcpy(infos[i], &data[i], 8);
    const int dims = 2;
    memcpy(infos[i] + 208, &dims, 4);
  }
  int dst_dim = 0, src_dim = 0;
  unsigned total = 256, slice = 1;
  long size = 256;
  void* params[] = {infos[0], infos[1], infos[2], &dst_dim, &src_dim, &total, &slice, &size};
  driver_launch(&index_fn, params, stream, 1, 1);
}

/* vectorized_gather_kernel<16, long>(char* out, char* inp, long* idx, int
 * num_ind, long slice_size, long ind_dim_size, long inp_stride, long
 * out_stride, bool allow_neg_indices). */
static void gather(float* out, float* in, float* indices, cudaStream_t stream) {
  int rows = 16;
  long slice = 64, dim_size = 16, in_stride = 64, out_stride = 64;
  unsigned char negative = 0;
  void* params[] = {&out, &in, &indices, &rows, &slice, &dim_size, &in_stride, &out_stride,
                    &negative};
  driver_launch(&gather_fn, params, stream, 1, 1);
}

/* vectorized_elementwise_kernel<4, MulFunctor, std::array<char*, 2>>(int,
 * MulFunctor, std::array<char*, 2>): operands[0] the output, [1] the input. */
static void elementwise(float* out, float* in, cudaStream_t stream) {
  int n = 256;
  unsigned char functor = 0;
  float* operands[2] = {out, in};
  void* params[] = {&n, &functor, operands};
  driver_launch(&elementwise_fn, params, stream, 1, 1);
}

/* elementwise_kernel<128, 2, Closure>(int, Closure): a lambda's captures as
 * PyTorch's non-contiguous elementwise path makes them, an OffsetCalculator
 * (dims, then sizes and strides set below dims only) and the operands. */
enum { kClosure = 64 };
static void closure_elementwise(float* out, float* in, float* stale, cudaStream_t stream) {
  static unsigned char closure[kClosure];
  memset(closure, 0x11, sizeof closure);
  const int dims = 1;
  memcpy(closure, &dims, 4);
  memcpy(closure + 16, &stale, 8);  /* past dims: what the host's stack held */
  memcpy(closure + 48, &out, 8);
  memcpy(closure + 56, &in, 8);
  int n = 256;
  void* params[] = {&n, closure};
  driver_launch(&closure_fn, params, stream, 1, 1);
}

/* elementwise_kernel<128, 2, gpu_kernel_impl_nocast<F>(...)::{lambda(int)}>
 * (int, closure), F direct_copy_kernel_cuda's lambda(float): the captures of
 * PyTorch's non-contiguous copy, an OffsetCalculator<2, unsigned> (504
 * bytes with its padding: dims, 25 IntDivider<unsigned>s, 25 rows of two
 * strides), the two operands and the empty functor. Two sizes and two
 * rows of strides, set as IntDivider's constructor sets them, under `dims`
 * (2, or another value for bytes that are no calculator); past them, the
 * host stack's words: `stale` among them. */
enum { kCopyClosure = 528, kCopyOperands = 504 };
static void copy_closure(float* out, float* in, float* stale, int dims, cudaStream_t stream) {
  static unsigned char closure[kCopyClosure];
  memset(closure, 0x11, sizeof closure);
  memcpy(closure, &dims, 4);
  /* IntDivider<unsigned>(d): divisor, m1 = 2^32 (2^shift - d) / d + 1, shift */
  const unsigned divider[2][3] = {{64, 1, 6}, {3, 1431655766u, 2}};
  memcpy(closure + 4, divider, sizeof divider);
  const unsigned strides[2][2] = {{4, 4}, {256, 1024}};
  memcpy(closure + 304, strides, sizeof strides);
  memcpy(closure + 104, &stale, 8);  /* sizes_[8]: past dims */
  memcpy(closure + 400, &stale, 8);  /* strides_[12]: past dims */
  memcpy(closure + kCopyOperands, &out, 8);
  memcpy(closure + kCopyOperands + 8, &in, 8);
  int n = 256;
  void* params[] = {&n, closure};
  driver_launch(&copy_closure_fn, params, stream, 1, 1);
}

static void fill(float* x, cudaStream_t stream) {
  int n = 256;
  void* params[] = {&x, &n};
  driver_launch(&fill_fn, params, stream, 1, 1);
}

/* The runtime's kernel argument word counts so far. */
static void print_launch_words(const char* after) {
  uint64_t filtered = 0, looked_up = 0, missed = 0, handed_over = 0;
  xsc_runtime_launch_words(&filtered, &looked_up, &missed, &handed_over);
  printf("%s: filtered %llu, looked up %llu, missed %llu, handed over %llu\n", after,
         (unsigned long long)filtered, (unsigned long long)looked_up, (unsigned long long)missed,
         (unsigned long long)handed_over);
}

/* The allocations as the program's threads see them (checker_thread=1). */
static void print_view_census(const char* after) {
  uint64_t live = 0, other = 0, inherited = 0, mixed = 0;
  if (xsc_runtime_view_census) xsc_runtime_view_census(&live, &other, &inherited, &mixed);
  printf("%s: live %llu, other %llu, by inheritance %llu, mixed residue %llu bytes\n", after,
         (unsigned long long)live, (unsigned long long)other, (unsigned long long)inherited,
         (unsigned long long)mixed);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: param_access MODE\n");
    return 2;
  }
  const char* mode = argv[1];
  const size_t pointer_int[] = {sizeof(void*), sizeof(void*), sizeof(int)};
  /* nvcc's names for reduce(const float*, float*, int) and fill(float*, int) */
  fake_cuda_define(&reduce_fn, "_Z6reducePKfPfi", 3, pointer_int);
  const size_t closure_sizes[] = {4, kClosure};
  fake_cuda_define(&closure_fn, "_ZN2at6native18elementwise_kernelILi128ELi2ENS0_7ClosureEEEviT1_",
                   2, closure_sizes);
  const size_t copy_closure_sizes[] = {4, kCopyClosure};
  fake_cuda_define(&copy_closure_fn,
                   "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_"
                   "23direct_copy_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE_clEvENKUlvE_clEvEUlfE_"
                   "EEvS4_RKT_EUliE_EEviT1_",
                   2, copy_closure_sizes);
  fake_cuda_define(&fill_fn, "_Z4fillPfi", 2, pointer_int + 1);
  fake_cuda_define(&c_reduce_fn, "c_reduce", 3, pointer_int);
  /* CatArrayBatchedCopy_vectorized<OpaqueType<4u>, unsigned, 1, 128, 1, 16,
   * 4>(char*, CatArrInputTensorMetadata<...>, TensorSizeStride<unsigned,
   * 4u>, int, unsigned) */
  const size_t cat_sizes[] = {8, kCatMeta, 32, 4, 4};
  fake_cuda_define(&cat_fn,
                   "_ZN2at6native36_GLOBAL__N__57d2e45f_4_k_cu_05d7363a30CatArrayBatchedCopy_"
                   "vectorizedINS1_10OpaqueTypeILj4EEEjLi1ELi128ELi1ELi16ELi4EEEvPcNS1_"
                   "25CatArrInputTensorMetadataIT_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_",
                   5, cat_sizes);
  /* multi_tensor_apply_kernel<TensorListMetadata<1>, AddFunctor<float>, float> */
  const size_t foreach_sizes[] = {kTensorList1, 1, 4};
  fake_cuda_define(&foreach_fn,
                   "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_"
                   "18TensorListMetadataILi1EEENS1_10AddFunctorIfEEJfEEEvT_T0_DpT1_",
                   3, foreach_sizes);
  /* multi_tensor_apply_kernel<TensorListMetadata<2>,
   * BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float> */
  const size_t foreach_add_sizes[] = {kTensorList2, 1, 1, 4};
  fake_cuda_define(&foreach_add_fn,
                   "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_"
                   "18TensorListMetadataILi2EEENS1_24BinaryOpListAlphaFunctorIfLi2ELi2ELi0EEEJSt4"
                   "plusIfEfEEEvT_T0_DpT1_",
                   4, foreach_add_sizes);
  /* reduce_kernel<512, 1, ReduceOp<float, SumOps<float>, unsigned, float, 4, 4>> */
  const size_t reduce_sizes[] = {kReduceOp};
  fake_cuda_define(&reduce_op_fn,
                   "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_6SumOpsIfEEjfLi4ELi4EEEEEvT1_",
                   1, reduce_sizes);

  const size_t elementwise_sizes[] = {4, 1, 16};
  fake_cuda_define(&elementwise_fn,
                   "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10MulFunctorESt5arrayIPcLm2EEEEviT0_T1_",
                   3, elementwise_sizes);

  const size_t index_sizes[] = {kTensorInfo32, kTensorInfo32, kTensorInfo32, 4, 4, 4, 4, 8};
  fake_cuda_define(&index_fn,
                   "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIfjlLi2ELi2ELin2ELb1EEEvNS_4cuda6detail"
                   "10TensorInfoIT_T0_EENS5_IKS6_S7_EENS5_IKT1_S7_EEiiS7_S7_l",
                   8, index_sizes);

  const size_t gather_sizes[] = {8, 8, 8, 4, 8, 8, 8, 8, 1};
  fake_cuda_define(&gather_fn, "_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_illllb",
                   9, gather_sizes);

  cudaStream_t a = make_stream(0x5100);
  cudaStream_t b = make_stream(0x5200);
  cudaStream_t c = make_stream(0x5300);
  float* x = device_alloc(0x7f0000100000ull, 1 << 20);
  float* ya = device_alloc(0x7f0000200000ull, 4096);
  float* yb = device_alloc(0x7f0000300000ull, 4096);

  if (strcmp(mode, "readers") == 0 || strcmp(mode, "copy") == 0) {
    reduce(&reduce_fn, x, ya, a);  /* read-a */
    reduce(&reduce_fn, x, yb, b);  /* read-b */
    if (strcmp(mode, "copy") == 0) upload(x, c);  /* copy-site */
  } else if (strcmp(mode, "writer") == 0) {
    fill(x, a);
    reduce(&reduce_fn, x, ya, b);
  } else if (strcmp(mode, "aliased") == 0) {
    reduce(&reduce_fn, x, x + 256, a);
    upload(x, c);
  } else if (strcmp(mode, "extern-c") == 0) {
    reduce(&c_reduce_fn, x, ya, a);
    upload(x, c);
  } else if (strcmp(mode, "stale-cat") == 0 || strcmp(mode, "cat-reads-x") == 0) {
    upload(x, a);
    stale_cat(ya, yb, yb + 512, x, strcmp(mode, "stale-cat") == 0 ? 2 : 3, b);  /* cat-site */
  } else if (strcmp(mode, "stale-foreach") == 0 || strcmp(mode, "foreach-reads-x") == 0) {
    upload(x, a);
    stale_foreach(ya, x, strcmp(mode, "stale-foreach") == 0 ? 1 : 2, b);
  } else if (strcmp(mode, "stale-reduce") == 0 || strcmp(mode, "reduce-reads-x") == 0) {
    upload(x, a);
    stale_reduce(yb, ya, x, x, strcmp(mode, "stale-reduce") == 0 ? 1 : 2, b);
  } else if (strncmp(mode, "stale-closure", 13) == 0 || strcmp(mode, "closure-reads-x") == 0) {
    upload(x, a);
    if (strcmp(mode, "stale-closure") == 0)
      copy_closure(ya, yb, x, 2, b);
    else if (strcmp(mode, "stale-closure-unread") == 0)
      copy_closure(ya, yb, x, 40, b);
    else
      copy_closure(ya, x, yb, 2, b);  /* closure-site */
  } else if (strcmp(mode, "stale-reduce-calculators") == 0) {
    upload(x, a);
    stale_reduce(yb, ya, ya, x, 2, b);
  } else if (strcmp(mode, "operator") == 0 || strcmp(mode, "operator-waits") == 0) {
    const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
    if (api == NULL || api->version < 2) {
      printf("no host API\n");
      return 1;
    }
    const uint64_t mark = api->enqueue_mark();
    printf("wanted %d, enqueued on a before: %d\n", api->operator_access_wanted(),
           api->enqueued_since((uint64_t)(uintptr_t)a, mark));
    fill(x, a);
    printf("enqueued on a: %d, on b: %d\n", api->enqueued_since((uint64_t)(uintptr_t)a, mark),
           api->enqueued_since((uint64_t)(uintptr_t)b, mark));
    const xsc_operator_write written = {(uint64_t)(uintptr_t)x, 1024};
    api->operator_writes("aten::fill_", (uint64_t)(uintptr_t)a, mark, &written, 1);  /* op-site */
    if (strcmp(mode, "operator-waits") == 0) order(0, a);
    reduce(&reduce_fn, x, ya, 0);  /* legacy-read */
  } else if (strcmp(mode, "operator-copy") == 0 || strcmp(mode, "operator-idle") == 0) {
    const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
    if (api == NULL || api->version < 2) {
      printf("no host API\n");
      return 1;
    }
    reduce(&reduce_fn, x, ya, 0);
    const uint64_t mark = api->enqueue_mark();
    if (strcmp(mode, "operator-copy") == 0) upload(x, a);
    const xsc_operator_write written = {(uint64_t)(uintptr_t)x, 1024};
    api->operator_writes("aten::copy_", (uint64_t)(uintptr_t)a, mark, &written, 1);
  } else if (strncmp(mode, "operands", 8) == 0) {
    const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
    if (api == NULL) {
      printf("no host API\n");
      return 1;
    }
    float* y = (float*)(uintptr_t)0x7f0000500000ull;
    float* z = (float*)(uintptr_t)0x7f0000600000ull;
    api->alloc((uint64_t)(uintptr_t)y, 4096, (uint64_t)(uintptr_t)a, XSC_ALLOC_CACHING, 0);
    elementwise(y, x, a);  /* operand-fill */
    api->alloc((uint64_t)(uintptr_t)z, 4096, (uint64_t)(uintptr_t)b, XSC_ALLOC_CACHING, 0);
    if (strstr(mode, "-wait") != NULL) order(b, a);
    if (strcmp(mode, "operands-output") == 0)
      elementwise(y, y, b);
    else if (strncmp(mode, "operands-reduce", 15) == 0)
      stale_reduce(y, z, z, z, 1, b);  /* sum-site */
    else if (strncmp(mode, "operands-index", 14) == 0)
      index_select(z, y, x, b);  /* index-site */
    else if (strncmp(mode, "operands-cat", 12) == 0)
      stale_cat(z, y, x, x, 1, b);  /* join-site */
    else if (strncmp(mode, "operands-gather", 15) == 0)
      gather(z, y, x, b);  /* gather-site */
    else if (strncmp(mode, "operands-foreach", 16) == 0)
      foreach_add(z, y, b);  /* foreach-site */
    else
      elementwise(z, y, b);  /* operand-read */
  } else if (strcmp(mode, "pinned-stale") == 0 || strcmp(mode, "pinned-kernel") == 0) {
    const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
    if (api == NULL || api->version < 3) {
      printf("no host API\n");
      return 1;
    }
    float* pinned = (float*)pinned_alloc(pinned_buffer, sizeof pinned_buffer);
    if (strcmp(mode, "pinned-stale") == 0)
      closure_elementwise(ya, x, pinned, a);
    else
      reduce(&reduce_fn, pinned, ya, a);  /* zero-copy-site */
    api->host_access((uint64_t)(uintptr_t)pinned, sizeof pinned_buffer, XSC_ACCESS_WRITE, "host",
                     0);
  } else if (strcmp(mode, "stray-words") == 0) {
    const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
    if (api == NULL || !xsc_runtime_launch_words) {
      printf("no host API\n");
      return 1;
    }
    float* far = device_alloc(0x7f4000100000ull, 4096);  /* the span reaches it */
    float* stack_word = (float*)(uintptr_t)0x7f2000001000ull;
    reduce(&reduce_fn, stack_word, x, a);
    print_launch_words("stack word");
    reduce(&reduce_fn, x, far - 1024, a);  /* far's 2 MiB page, 4 KiB below it */
    print_launch_words("past an allocation");
    const uint64_t block = 0x7f0000400000ull;
    api->alloc(block, 4096, (uint64_t)(uintptr_t)a, XSC_ALLOC_CACHING, 0);
    reduce(&reduce_fn, stack_word, (float*)(uintptr_t)block, a);
    print_launch_words("own-stream block");
    /* A caching allocator takes a segment with cudaMalloc and hands out
     * blocks of it: once its first block is out, the segment's pages hold
     * nothing but that stream's blocks. */
    const uint64_t segment = 0x7f0000800000ull;
    device_alloc(segment, 2u << 20);
    reduce(&reduce_fn, stack_word, (float*)(uintptr_t)(segment + 4096), a);
    print_launch_words("segment");
    api->alloc(segment, 4096, (uint64_t)(uintptr_t)a, XSC_ALLOC_CACHING, 0);
    reduce(&reduce_fn, stack_word, (float*)(uintptr_t)segment, a);
    print_launch_words("segment's block");
    /* The block's use was still fed: a copy into it on another stream that
     * waited for nothing overwrites what the kernel may still read. */
    upload((float*)(uintptr_t)block, c);  /* stray-copy-site */
    print_view_census("after the copy");
  } else {
    fprintf(stderr, "param_access: unknown mode %s\n", mode);
    return 2;
  }
  printf("done\n");
  return 0;
}
