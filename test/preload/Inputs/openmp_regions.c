/* OpenMP's regions between a program's threads, against the fake CUPTI (no
 * GPU). One scenario per argument:
 *
 *   after-region    thread 1 of a region downloads into pinned memory and
 *                   synchronizes; the thread that opened the region reads
 *                   the buffer after it
 *   second-region   a first region starts libgomp's pool; the opening
 *                   thread then downloads and synchronizes, and thread 1
 *                   of a second region reads
 *   barrier         thread 1 downloads and synchronizes, the team meets at
 *                   a barrier, thread 0 reads
 *   critical        thread 1 downloads and synchronizes inside a critical
 *                   section and sets a flag; thread 0 polls the flag in
 *                   the same critical section, then reads
 *   unsynced        after-region without the synchronization: the read is
 *                   a use before ready */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "fake_cuda_calls.h"
#include "xstream_check/host_api.h"

extern const xsc_host_api* xsc_runtime_host_api(void) __attribute__((weak));

static float staging[1024] __attribute__((aligned(4096)));  /* the "pinned" buffer */
static void* device = (void*)(uintptr_t)0x7f0000000000;
static cudaStream_t copy_stream;

static void host_read(void) {
  const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
  if (api != NULL && api->version >= 3)
    api->host_access((uintptr_t)staging, sizeof staging, XSC_ACCESS_READ, "host", 0);
}

static void download(int synchronize) {
  copy_to_host(staging, device, sizeof staging, copy_stream);
  if (synchronize) stream_synchronize(copy_stream);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  copy_stream = make_stream(0x7530);
  device_malloc((uintptr_t)device, sizeof staging);
  pinned_alloc(staging, sizeof staging);
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, NULL);

  if (strcmp(mode, "after-region") == 0 || strcmp(mode, "unsynced") == 0) {
    const int synchronize = strcmp(mode, "after-region") == 0;
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) download(synchronize);
    }
    host_read(); /* after-read */
  } else if (strcmp(mode, "second-region") == 0) {
#pragma omp parallel num_threads(2)
    {
      (void)omp_get_thread_num();
    }
    download(1);
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) host_read();
    }
  } else if (strcmp(mode, "barrier") == 0) {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) download(1);
#pragma omp barrier
      if (omp_get_thread_num() == 0) host_read();
    }
  } else if (strcmp(mode, "critical") == 0) {
    int ready = 0;
#pragma omp parallel num_threads(2) shared(ready)
    {
      if (omp_get_thread_num() == 1) {
#pragma omp critical
        {
          download(1);
          ready = 1;
        }
      } else {
        for (int seen = 0; !seen;) {
#pragma omp critical
          seen = ready;
        }
        host_read();
      }
    }
  } else {
    fprintf(stderr, "openmp_regions: unknown mode '%s'\n", mode);
    return 2;
  }
  printf("done\n");
  return 0;
}
