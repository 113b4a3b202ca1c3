/* A stream's handle outliving it, as CUPTI reports the calls, through
 * fake_cupti_launches.c: a non-blocking stream created at a chosen handle
 * copies into a buffer and is destroyed; the same handle then copies again
 * with no creation seen (a stream made by a path without callbacks, as
 * the driver hands destroyed handles out again), and a last copy comes
 * from another stream in between, so that the handle is not simply the
 * one the previous event named.
 *
 *   stream_handles reuse     create, copy, destroy, copy on the handle
 *   stream_handles between   the same with another stream's copy before
 *                            the handle's second copy
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

int main(int argc, char** argv) {
  if (argc != 2 || (strcmp(argv[1], "reuse") != 0 && strcmp(argv[1], "between") != 0)) {
    fprintf(stderr, "usage: stream_handles reuse|between\n");
    return 2;
  }
  void* buffer = (void*)(uintptr_t)0x7f0000100000;
  cudaStream_t first = make_stream(0x3000);
  upload(buffer, first);
  cudaStreamDestroy_v5050_params destroy = {first};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamDestroy_v5050, &destroy);
  if (strcmp(argv[1], "between") == 0) upload(buffer, make_stream(0x4000));
  upload(buffer, (cudaStream_t)(uintptr_t)0x3000);
  printf("done\n");
  return 0;
}
