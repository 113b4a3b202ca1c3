/* Allocations reported through the host API with stack id 0 (capture the
 * native stack) from 80 call paths, round after round, the way a C++ worker
 * thread allocates the same places every training step: 40 stack depths,
 * and at each depth two leaf functions whose frames sit at the same
 * addresses. In the last round one block is read on another stream and
 * freed unordered, so the report shows which stack its allocation got.
 * Stream handles are opaque to the checker: no GPU needed. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xstream_check/host_api.h"

enum { kProducer = 0x1000, kConsumer = 0x2000 };
static const xsc_host_api* api;

__attribute__((noinline)) static void leaf_a(uint64_t addr) {
  api->alloc(addr, 256, kProducer, XSC_ALLOC_CACHING, 0);
}
__attribute__((noinline)) static void leaf_b(uint64_t addr) {
  api->alloc(addr, 256, kProducer, XSC_ALLOC_CACHING, 0);
}

__attribute__((noinline)) static void descend(int depth, int leaf, uint64_t addr) {
  if (depth > 0) {
    descend(depth - 1, leaf, addr);
    return;
  }
  if (leaf == 0) leaf_a(addr);
  else leaf_b(addr);
}

int main(int argc, char** argv) {
  typedef const xsc_host_api* (*HostApiFn)(void);
  HostApiFn host_api = (HostApiFn)dlsym(RTLD_DEFAULT, "xsc_runtime_host_api");
  api = host_api ? host_api() : NULL;
  if (api == NULL) {
    printf("no runtime\n");
    return 1;
  }
  const int rounds = argc > 1 ? atoi(argv[1]) : 20;
  const uint64_t base = 0x7f0000000000ull;
  for (int round = 0; round < rounds; ++round)
    for (int depth = 0; depth < 40; ++depth)
      for (int leaf = 0; leaf < 2; ++leaf) {
        const uint64_t addr = base + (uint64_t)(depth * 2 + leaf) * 0x1000;
        descend(depth, leaf, addr);
        /* Last round, leaf_b under 3 levels of descend: read on another
         * stream, so its free is reported with the allocation's stack. */
        if (round == rounds - 1 && depth == 3 && leaf == 1)
          api->use(addr, 256, kConsumer, XSC_ACCESS_READ, "reader", 0);
        api->free(addr, kProducer, XSC_FREE_CACHING, 1, 0);
        api->free_completed(addr, 0);
      }
  printf("done\n");
  return 0;
}
