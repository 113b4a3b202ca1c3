/* host_guard=1 through the fake CUPTI (no GPU): a page-aligned static buffer
 * taken for pinned memory, a "copy" to or from it (nothing moves: the fake
 * driver does nothing), and plain loads and stores of it, which the guard's
 * page protection turns into host accesses. One scenario per argument:
 *   read        a load of a pending download's destination
 *   read-sync   the same after cudaStreamSynchronize
 *   read-query  the same after a successful cudaStreamQuery
 *   write       a store into a pending upload's source
 *   read-upload a load of a pending upload's source (allowed: no fault)
 *   freed       cudaFreeHost while the download is pending, then a load
 *   neighbour   a load of the same page outside the copy's bytes
 *   crash       a store through a bad pointer while a guard is up: not
 *               the guard's, so the process still dies of SIGSEGV
 * Each prints what it read and "done"; the program must run to the end. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "fake_cuda_calls.h"

static float staging[2048] __attribute__((aligned(4096)));  /* two pages */
static void* device = (void*)(uintptr_t)0x7f0000000000;

__attribute__((noinline)) static float load(const float* p) {
  return *(const volatile float*)p;  /* xsc: load */
}

__attribute__((noinline)) static void store(float* p, float v) {
  *(volatile float*)p = v;  /* xsc: store */
}

static void copy_async(void* dst, const void* src, size_t bytes, enum cudaMemcpyKind kind,
                       cudaStream_t s) {
  cudaMemcpyAsync_v3020_params p = {dst, src, bytes, kind, s};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &p);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "read";
  for (int i = 0; i < 2048; ++i) staging[i] = (float)i;
  cudaStream_t copy = make_stream(0x7530);
  device_malloc((uintptr_t)device, sizeof staging);
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, NULL);
  pinned_alloc(staging, sizeof staging);

  float seen = 0;
  if (strcmp(mode, "write") == 0 || strcmp(mode, "read-upload") == 0) {
    copy_async(device, staging, sizeof staging, cudaMemcpyHostToDevice, copy);  /* xsc: upload */
    if (strcmp(mode, "write") == 0) store(staging + 5, 42.0f);
    seen = load(staging + 5);
  } else if (strcmp(mode, "crash") == 0) {
    copy_async(staging, device, sizeof staging, cudaMemcpyDeviceToHost, copy);
    fflush(stdout);
    store((float*)(uintptr_t)16, 1.0f);
  } else if (strcmp(mode, "neighbour") == 0) {
    /* The copy writes the first 256 bytes; the load is of the same page. */
    copy_async(staging, device, 256, cudaMemcpyDeviceToHost, copy);
    seen = load(staging + 100);
  } else {
    copy_async(staging, device, sizeof staging, cudaMemcpyDeviceToHost, copy);  /* xsc: download */
    if (strcmp(mode, "read-sync") == 0) {
      stream_synchronize(copy);
    } else if (strcmp(mode, "read-query") == 0) {
      cudaStreamQuery_v3020_params q = {copy};
      runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, &q);
    } else if (strcmp(mode, "freed") == 0) {
      cudaFreeHost_v3020_params f = {staging};
      runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, &f);
    }
    seen = load(staging + 1500);  /* the second page */
  }
  printf("%s: read %.1f\n", mode, seen);
  /* Ordered after the copy: both pages are accessible again. */
  stream_synchronize(copy);
  for (int i = 0; i < 2048; ++i) staging[i] += 1.0f;
  printf("done\n");
  return 0;
}
