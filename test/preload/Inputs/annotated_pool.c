/* A toy caching allocator that annotates its blocks. Stream handles are
 * opaque to the checker, so this runs without a GPU.
 *   argv[1] == "buggy": block allocated on the producer stream, read on the
 *                       consumer stream, returned to the cache unordered.
 *   argv[1] == "clean": the only use is on the block's own stream. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xstream_check/annotations.h"

int main(int argc, char** argv) {
  struct CUstream_st* producer = (struct CUstream_st*)(uintptr_t)0x1000;
  struct CUstream_st* consumer = (struct CUstream_st*)(uintptr_t)0x2000;
  void* block = (void*)(uintptr_t)0x7f0000000000ull;
  int buggy = argc > 1 && strcmp(argv[1], "buggy") == 0;
  printf("annotations %s\n", XSC_ANNOTATIONS_ENABLED() ? "on" : "off");
  XSC_ANNOTATE_ALLOC(block, 4096, producer);
  XSC_ANNOTATE_USE(block, 4096, buggy ? consumer : producer, 0);
  XSC_ANNOTATE_FREE(block, producer);
  printf("done\n");
  return 0;
}
