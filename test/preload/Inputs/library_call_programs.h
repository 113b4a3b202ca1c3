/* What the programs that drive the library interposers (cublas_gemm.c,
 * cublaslt_matmul.c, cudnn_calls.c, cudnn_backend_calls.c) share, on top of fake_cuda_calls.h:
 * device allocations at chosen addresses, and a kernel that reads the
 * bytes at a pointer, reduce(const float*, float*, int), which the fake
 * libcuda (fake_libcuda.c) names as nvcc would. Each program includes it
 * once, after fake_cuda_calls.h, and calls define_reduce() first. */
#ifndef XSC_TEST_LIBRARY_CALL_PROGRAMS_H
#define XSC_TEST_LIBRARY_CALL_PROGRAMS_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes);

/* cudaMalloc of `size` bytes that the fake CUPTI reports at `at`. */
static inline char* device_alloc(uintptr_t at, size_t size) {
  void* ptr = (void*)at;
  cudaMalloc_v3020_params p = {&ptr, size};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &p);
  return ptr;
}

static int reduce_fn;
static float* reduce_out;

/* Names the kernel, and gives it an output buffer of its own. */
static inline void define_reduce(void) {
  const size_t pointer_int[] = {sizeof(void*), sizeof(void*), sizeof(int)};
  /* nvcc's name for reduce(const float*, float*, int) */
  fake_cuda_define(&reduce_fn, "_Z6reducePKfPfi", 3, pointer_int);
  reduce_out = (float*)device_alloc(0x7f0000400000ull, 4096);
}

/* reduce(in, out, n) on `stream`: reads the bytes at `in`. */
static inline void reduce(const void* in, cudaStream_t stream) {
  int n = 1;
  void* params[] = {&in, &reduce_out, &n};
  driver_launch(&reduce_fn, params, stream, 1, 1);
}

#endif
