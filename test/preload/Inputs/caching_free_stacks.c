/* Caching-allocator frees reported through the host API without a stack of
 * their own (stack id 0), as the PyTorch adapter reports the frees of a
 * thread that runs no Python. Stream handles are opaque to the checker, so
 * this runs without a GPU.
 *   argv[1] == "own-stream": a block used only on its allocation stream is
 *       freed, then read on another stream through a stale pointer.
 *   argv[1] == "other-stream": a block read on another stream is freed with
 *       nothing ordering the allocation stream after the read. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "xstream_check/host_api.h"

enum { kProducer = 0x1000, kConsumer = 0x2000 };

__attribute__((noinline)) static void free_block(const xsc_host_api* api, uint64_t block) {
  api->free(block, kProducer, XSC_FREE_CACHING, /*deferred=*/1, /*stack=*/0);
  api->free_completed(block, 0);
}

int main(int argc, char** argv) {
  typedef const xsc_host_api* (*HostApiFn)(void);
  HostApiFn host_api = (HostApiFn)dlsym(RTLD_DEFAULT, "xsc_runtime_host_api");
  const xsc_host_api* api = host_api ? host_api() : NULL;
  if (api == NULL || argc < 2) {
    printf("no runtime\n");
    return 1;
  }
  const int own_stream = strcmp(argv[1], "own-stream") == 0;
  const uint64_t block = 0x7f0000100000ull;
  api->alloc(block, 4096, kProducer, XSC_ALLOC_CACHING, 0);
  api->use(block, 4096, own_stream ? kProducer : kConsumer, XSC_ACCESS_READ, "reader", 0);
  free_block(api, block);
  if (own_stream) api->use(block, 4096, kConsumer, XSC_ACCESS_READ, "stale reader", 0);
  printf("done\n");
  return 0;
}
