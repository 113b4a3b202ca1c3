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
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <xstream_check/host_api.h>

#pragma weak xsc_runtime_host_api

#include "fake_cuda_calls.h"
void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes);


static void* device_alloc(uintptr_t at, size_t size) {
  void* ptr = (void*)at;
  cudaMalloc_v3020_params p = {&ptr, size};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &p);
  return ptr;
}

/* Stand for CUfunction handles. */
static int reduce_fn, fill_fn, c_reduce_fn;

static void launch(const void* fn, void** params, cudaStream_t stream) {
  cuLaunchKernel_params p = {(CUfunction)fn, 1, 1, 1, 1, 1, 1, 0, (CUstream)stream, params, NULL};
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 0, &p, &drv_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1, &p, &drv_ok);
}

static void reduce(const void* fn, float* in, float* out, cudaStream_t stream) {
  int n = 256;
  void* params[] = {&in, &out, &n};
  launch(fn, params, stream);
}

static void fill(float* x, cudaStream_t stream) {
  int n = 256;
  void* params[] = {&x, &n};
  launch(&fill_fn, params, stream);
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
  fake_cuda_define(&fill_fn, "_Z4fillPfi", 2, pointer_int + 1);
  fake_cuda_define(&c_reduce_fn, "c_reduce", 3, pointer_int);

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
  } else {
    fprintf(stderr, "param_access: unknown mode %s\n", mode);
    return 2;
  }
  printf("done\n");
  return 0;
}
