/* Copies of the forms no driver callback describes, on the stand-in CUPTI:
 * a block allocated on stream A is written by a copy on stream B and freed
 * on A.
 *
 *   copy_forms peer      cudaMemcpyPeerAsync into the block
 *   copy_forms 3d        cudaMemcpy3DAsync into the block (its pitched
 *                        pointer)
 *   copy_forms batch     cudaMemcpyBatchAsync, the block the second
 *                        copy's destination
 *   copy_forms ordered   the batch, A waiting on an event recorded on B
 *                        after it
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

int main(int argc, char** argv) {
  const char* mode = argc == 2 ? argv[1] : "";
  cudaStream_t a = make_stream(0xa0000), b = make_stream(0xb0000);
  void* block = (void*)(uintptr_t)0x7f0000100000;
  void* other = (void*)(uintptr_t)0x7f0000300000;
  cudaMallocAsync_v11020_params alloc = {&block, 4096, a};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMallocAsync_v11020, &alloc);
  order(b, a);
  if (strcmp(mode, "peer") == 0) {
    cudaMemcpyPeerAsync_v4000_params p = {block, 0, other, 1, 4096, b};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000, &p);
  } else if (strcmp(mode, "3d") == 0) {
    struct cudaMemcpy3DParms parms;
    memset(&parms, 0, sizeof parms);
    parms.dstPtr.ptr = block;
    parms.srcPtr.ptr = other;
    parms.kind = cudaMemcpyDeviceToDevice;
    cudaMemcpy3DAsync_v3020_params p = {&parms, b};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy3DAsync_v3020, &p);
  } else if (strcmp(mode, "batch") == 0 || strcmp(mode, "ordered") == 0) {
    static float host[1024];
    void* dsts[2] = {other, block};
    const void* srcs[2] = {host, host};
    size_t sizes[2] = {sizeof host, sizeof host};
    cudaMemcpyBatchAsync_v13000_params p = {dsts, srcs, sizes, 2, NULL, NULL, 0, b};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000, &p);
    if (strcmp(mode, "ordered") == 0) order(a, b);
  } else {
    fprintf(stderr, "usage: copy_forms peer|3d|batch|ordered\n");
    return 2;
  }
  cudaFreeAsync_v11020_params f = {block, a};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &f);
  printf("done\n");
  return 0;
}
