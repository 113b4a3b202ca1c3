/* Pinned host memory through the fake CUPTI (no GPU): allocations by the
 * runtime and driver calls, copies between it and the device, the host's
 * accesses (through the runtime's host API, as the PyTorch adapter feeds
 * them) and the orderings between them. One scenario per argument. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "fake_cuda_calls.h"
#include "xstream_check/annotations.h"
#include "xstream_check/host_api.h"

extern const xsc_host_api* xsc_runtime_host_api(void) __attribute__((weak));

static float staging[1024] __attribute__((aligned(4096)));  /* the "pinned" buffer */
static float pageable[1024];
static void* device = (void*)(uintptr_t)0x7f0000000000;

static void host_access(int access) {
  const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
  if (api != NULL && api->version >= 3) api->host_access((uintptr_t)staging, sizeof staging, access, "host", 0);
}

static void device_alloc(void) {
  device_malloc((uintptr_t)device, sizeof staging);
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, NULL);
}

static void copy_async(void* dst, const void* src, enum cudaMemcpyKind kind, cudaStream_t s) {
  cudaMemcpyAsync_v3020_params p = {dst, src, sizeof staging, kind, s};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &p);
}

/* The "pending" scenario: the hook the PyTorch adapter registers (host API
 * version 6), called by the runtime with 1 while a device use of pinned
 * memory may be pending and 0 once none is. */
static volatile int hook_calls[2];
static volatile int hook_twos;  /* calls with 2: host writers only */
static void pending_hook(int pending) {
  hook_calls[pending != 0]++;
  if (pending == 2) hook_twos++;
  printf("hook %d\n", pending);
  fflush(stdout);
}

/* The checker turns the hook off on its own thread (checker_thread=1) once
 * it has taken the synchronization: waits for that, at most 5 s. */
static void wait_for_off(int count) {
  for (int i = 0; i < 5000 && hook_calls[0] < count; ++i) usleep(1000);
}

static void copy_sync(void* dst, const void* src, enum cudaMemcpyKind kind) {
  cudaMemcpy_v3020_params p = {dst, src, sizeof staging, kind};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020, &p);
}

/* Handovers between threads: a reader thread, started before the copy (so
 * its start orders nothing of it), reads the staging buffer once the main
 * thread posts `ready`; the main thread synchronizes with the copy before
 * the post (handover), or after the reader is done (handover-early). In
 * join, the second thread makes the copy and synchronizes, and the main
 * thread reads after joining it. handover-library hands over through a
 * library's sem_post and sem_wait. In lock-loop, one thread takes and gives
 * back a semaphore a thousand times. */
static sem_t ready, done;
static cudaStream_t copy_stream;

/* handover-library: the same handover through a library's calls. */
int library_post(sem_t* sem);  /* library_semaphores.c */
int library_wait(sem_t* sem);
static int through_library;

static void* reader(void* arg) {
  (void)arg;
  if (through_library) library_wait(&ready);
  else sem_wait(&ready);
  host_access(XSC_ACCESS_READ);  /* handover-read */
  sem_post(&done);
  return NULL;
}

static void* downloader(void* arg) {
  (void)arg;
  copy_async(staging, device, cudaMemcpyDeviceToHost, copy_stream);
  stream_synchronize(copy_stream);
  return NULL;
}

static int handover(const char* mode) {
  pthread_t thread;
  sem_init(&ready, 0, 0);
  sem_init(&done, 0, 0);
  if (strcmp(mode, "fork-handlers") == 0) {
    copy_async(staging, device, cudaMemcpyDeviceToHost, copy_stream);
    stream_synchronize(copy_stream);
    const pid_t child = fork();
    if (child == 0) {
      sem_post(&ready);  /* the child feeds nothing: a plain post */
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    sem_post(&ready);
    sem_wait(&ready);
    printf("child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("done\n");
    return 0;
  }
  if (strcmp(mode, "lock-loop") == 0) {  /* one thread takes its lock over and over */
    sem_t lock;
    sem_init(&lock, 0, 1);
    for (int i = 0; i < 1000; ++i) {
      sem_wait(&lock);
      sem_post(&lock);
    }
    printf("done\n");
    return 0;
  }
  if (strcmp(mode, "join") == 0) {
    pthread_create(&thread, NULL, downloader, NULL);
    pthread_join(thread, NULL);
    host_access(XSC_ACCESS_READ);
    printf("done\n");
    return 0;
  }
  through_library = strcmp(mode, "handover-library") == 0;
  pthread_create(&thread, NULL, reader, NULL);
  copy_async(staging, device, cudaMemcpyDeviceToHost, copy_stream);
  const int early = strcmp(mode, "handover-early") == 0;
  if (!early) stream_synchronize(copy_stream);
  if (through_library) library_post(&ready);
  else sem_post(&ready);
  sem_wait(&done);
  if (early) stream_synchronize(copy_stream);
  pthread_join(thread, NULL);
  printf("done\n");
  return 0;
}

/* fork-handlers: a library's fork handlers (registered before the
 * runtime's, so they run while the runtime holds its lock across the
 * fork) take and give back a semaphore, as a driver's or an OpenMP
 * runtime's may. */
static sem_t handler_sem;
static void handler_takes_semaphore(void) {
  sem_post(&handler_sem);
  sem_wait(&handler_sem);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "fork-handlers") == 0) {
    sem_init(&handler_sem, 0, 0);
    pthread_atfork(handler_takes_semaphore, handler_takes_semaphore, handler_takes_semaphore);
  }
  cudaStream_t copy = make_stream(0x7530);
  device_alloc();
  if (strcmp(mode, "driver") == 0) {
    void* p = staging;
    cuMemHostAlloc_params a = {&p, sizeof staging, 0};
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, 0, &a, &drv_ok);
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, 1, &a, &drv_ok);
  } else if (strcmp(mode, "register") == 0 || strcmp(mode, "unregistered") == 0) {
    cudaHostRegister_v4000_params r = {staging, sizeof staging, 0};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaHostRegister_v4000, &r);
  } else if (strcmp(mode, "pageable-sync") != 0) {
    pinned_alloc(staging, sizeof staging);
  }

  if (strcmp(mode, "pending") == 0) {
    const xsc_host_api* api = xsc_runtime_host_api ? xsc_runtime_host_api() : NULL;
    if (api == NULL || api->version < 6) {
      printf("no host API version 6\n");
      return 1;
    }
    api->set_pinned_pending_hook(pending_hook);
    printf("pinned allocated, no copy\n");
    fflush(stdout);
    copy_async(staging, device, cudaMemcpyDeviceToHost, copy);
    printf("downloaded\n");
    copy_async(device, staging, cudaMemcpyHostToDevice, copy);
    printf("uploaded\n");
    stream_synchronize(0);  /* another stream: the copies may still run */
    printf("other stream synchronized\n");
    fflush(stdout);
    stream_synchronize(copy);
    wait_for_off(1);
    printf("copy stream synchronized\n");
    cudaMemsetAsync_v3020_params m = {staging, 0, sizeof staging, copy};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, &m);
    printf("memset\n");
    fflush(stdout);
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, NULL);
    wait_for_off(2);
    printf("device synchronized\n");
    /* Uses the host API and the annotations report: a collective, a use. */
    api->collective((uintptr_t)staging, sizeof staging, (uintptr_t)copy, XSC_ACCESS_READ,
                    "ncclSend", 0);
    printf("collective\n");
    api->use((uintptr_t)staging, sizeof staging, (uintptr_t)copy, XSC_ACCESS_WRITE, "unpack", 0);
    printf("reported use\n");
    fflush(stdout);
    stream_synchronize(copy);
    wait_for_off(3);
    printf("copy stream synchronized\n");
    XSC_ANNOTATE_USE(staging, sizeof staging, copy, 0);
    printf("annotated use\n");
    fflush(stdout);
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020, NULL);
    wait_for_off(4);
    printf("device synchronized\n");
    fflush(stdout);
    /* An upload on one stream and a download on another: once the download
     * is settled the upload alone is pending, and host writers only are
     * asked for again. */
    cudaStream_t other = make_stream(0x7531);
    const size_t half = sizeof staging / 2;
    cudaMemcpyAsync_v3020_params up = {device, staging, half, cudaMemcpyHostToDevice, copy};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &up);
    cudaMemcpyAsync_v3020_params down = {(char*)staging + half, (char*)device + half, half,
                                         cudaMemcpyDeviceToHost, other};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, &down);
    printf("upload and download\n");
    fflush(stdout);
    const int twos = hook_twos;
    stream_synchronize(other);
    /* On the checker's thread, soon after: at most 5 s. */
    for (int i = 0; i < 5000 && hook_twos == twos; ++i) usleep(1000);
    printf("download stream synchronized\n");
    fflush(stdout);
    stream_synchronize(copy);
    wait_for_off(5);
    printf("upload stream synchronized\n");
    copy_async(device, pageable, cudaMemcpyHostToDevice, copy);
    printf("pageable upload\n");
    printf("done\n");
    return 0;
  }

  copy_stream = copy;
  if (strncmp(mode, "handover", 8) == 0 || strcmp(mode, "join") == 0 ||
      strcmp(mode, "lock-loop") == 0 || strcmp(mode, "fork-handlers") == 0)
    return handover(mode);
  if (strcmp(mode, "h2d") == 0) {  /* refill while the upload may still read */
    host_access(XSC_ACCESS_WRITE);
    copy_async(device, staging, cudaMemcpyHostToDevice, copy);
    host_access(XSC_ACCESS_WRITE);
  } else if (strcmp(mode, "h2d-sync") == 0) {  /* cudaMemcpy from pinned memory waits */
    host_access(XSC_ACCESS_WRITE);
    copy_sync(device, staging, cudaMemcpyHostToDevice);
    host_access(XSC_ACCESS_WRITE);
  } else if (strcmp(mode, "pageable-sync") == 0) {  /* marked synchronous and pageable */
    copy_sync(device, pageable, cudaMemcpyHostToDevice);
  } else if (strcmp(mode, "unregistered") == 0) {
    copy_async(staging, device, cudaMemcpyDeviceToHost, copy);
    stream_synchronize(copy);
    cudaHostUnregister_v4000_params u = {staging};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaHostUnregister_v4000, &u);
    copy_async(staging, device, cudaMemcpyDeviceToHost, copy);  /* pageable now: not tracked */
    host_access(XSC_ACCESS_READ);
  } else {  /* d2h, driver, register, query, not-ready, free */
    copy_async(staging, device, cudaMemcpyDeviceToHost, copy);
    if (strcmp(mode, "query") == 0 || strcmp(mode, "not-ready") == 0) {
      cudaError_t not_ready = cudaErrorNotReady;
      cudaStreamQuery_v3020_params q = {copy};
      cudaError_t* result = strcmp(mode, "query") == 0 ? &rt_ok : &not_ready;
      fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, 0, &q, result);
      fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamQuery_v3020, 1, &q, result);
    }
    if (strcmp(mode, "free") == 0) {  /* cudaFreeHost: device sync, then a pinned free */
      cudaFreeHost_v3020_params f = {staging};
      runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeHost_v3020, &f);
      pinned_alloc(staging, sizeof staging);
    }
    host_access(XSC_ACCESS_READ);
  }
  printf("done\n");
  return 0;
}
