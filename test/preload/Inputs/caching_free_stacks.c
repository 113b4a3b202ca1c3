/* Caching-allocator frees reported through the host API without a stack of
 * their own (stack id 0), as the PyTorch adapter reports the frees of a
 * thread that runs no Python. Stream handles are opaque to the checker, so
 * this runs without a GPU.
 *   argv[1] == "own-stream": a block used only on its allocation stream is
 *       freed, then read on another stream through a stale pointer.
 *   argv[1] == "other-stream": a block read on another stream is freed with
 *       nothing ordering the allocation stream after the read.
 *   argv[1] == "capturing": as own-stream, while another stream is being
 *       captured into a graph (through the stand-in CUPTI): uses may still
 *       come from graphs, so the free takes its stack. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "xstream_check/host_api.h"

int fake_cupti_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int exit_site,
                    const void* params, void* result);

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
  const int capturing = strcmp(argv[1], "capturing") == 0;
  const int own_stream = capturing || strcmp(argv[1], "own-stream") == 0;
  if (capturing) {
    cudaStreamBeginCapture_v10000_params p = {(cudaStream_t)(uintptr_t)0x3000,
                                              cudaStreamCaptureModeGlobal};
    cudaError_t ok = cudaSuccess;
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                    0, &p, &ok);
    fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000,
                    1, &p, &ok);
  }
  const uint64_t block = 0x7f0000100000ull;
  api->alloc(block, 4096, kProducer, XSC_ALLOC_CACHING, 0);
  api->use(block, 4096, own_stream ? kProducer : kConsumer, XSC_ACCESS_READ, "reader", 0);
  free_block(api, block);
  if (own_stream) api->use(block, 4096, kConsumer, XSC_ACCESS_READ, "stale reader", 0);
  printf("done\n");
  return 0;
}
