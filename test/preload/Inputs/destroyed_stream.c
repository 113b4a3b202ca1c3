/* A caching allocator's block outliving the stream it belongs to, as CuPy's
 * pool keeps a destroyed stream's blocks under its handle: a non-blocking
 * stream created at a chosen handle has a block allocated on it and copies
 * into it, the stream is destroyed, and then the handle is named again
 * while the fake libcuda stops the process at any question about a stream.
 *
 *   destroyed_stream free   the block's free is an annotation naming the
 *                           handle (the allocator's bookkeeping)
 *   destroyed_stream copy   a copy names the handle (a CUDA call: the
 *                           program passes the handle to CUDA, so the
 *                           runtime asks the driver about it, and the fake
 *                           stops the process: the check is not vacuous)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"
#include "xstream_check/annotations.h"

void fake_cuda_forbid_stream_queries(int on);

int main(int argc, char** argv) {
  if (argc != 2 || (strcmp(argv[1], "free") != 0 && strcmp(argv[1], "copy") != 0)) {
    fprintf(stderr, "usage: destroyed_stream free|copy\n");
    return 2;
  }
  void* block = (void*)(uintptr_t)0x7f0000100000;
  cudaStream_t stream = make_stream(0x5a0000);
  xsc_annotate_alloc(block, 4096, stream);
  upload(block, stream);
  cudaStreamDestroy_v5050_params destroy = {stream};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050, &destroy);
  fake_cuda_forbid_stream_queries(1);
  if (strcmp(argv[1], "free") == 0)
    xsc_annotate_free(block, stream);
  else
    upload(block, stream);
  printf("done\n");
  return 0;
}
