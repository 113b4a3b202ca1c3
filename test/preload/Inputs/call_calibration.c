/* Copies, memsets, event records, stream waits and event destroys as CUPTI
 * reports them, through fake_cupti_launches.c: each runtime call's entry,
 * its nested driver call's entry and exit, then the runtime exit.
 *
 *   call_calibration agree N     N rounds of the five calls, each nested
 *                                driver call doing what its runtime call
 *                                does; then the checks below
 *   call_calibration disagree N  the same, but each nested copy names
 *                                another stream than its runtime copy
 *   call_calibration bare N      the same, but the copies come with no
 *                                nested driver call
 *   call_calibration zero N      N zero-byte copies with no nested driver
 *                                call, then agreeing rounds as in agree 100
 *   call_calibration threads N   four threads doing N agreeing rounds each
 *                                at once, then the checks below
 *   call_calibration ctx-sync 1  the application's own cuCtxSynchronize
 *                                between a use on one stream and a free on
 *                                another
 *   call_calibration no-sync 1   the same without it
 *   call_calibration stale-launch N  a second thread's runtime launch is under
 *                                way when the runtime launch callbacks go
 *                                off (after the main thread's 64 agreeing
 *                                launches), so its exit never comes; that
 *                                thread then does N agreeing rounds
 *
 * The checks after the rounds: a buffer read by a copy on the consumer
 * stream and freed on the producer stream once the producer waited on an
 * event recorded on the consumer after the copy (clean), and another read
 * the same way and freed with no ordering (one finding). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

#define RT_ID(name) CUPTI_RUNTIME_TRACE_CBID_##name
#define DRV_ID(name) CUPTI_DRIVER_TRACE_CBID_##name

/* A runtime call with one nested driver call (none when drv_params is
 * null). */
static void nested_call(CUpti_CallbackId rt_id, const void* rt_params, CUpti_CallbackId drv_id,
                        const void* drv_params) {
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 0, rt_params, &rt_ok);
  if (drv_params != NULL) {
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 0, drv_params, &drv_ok);
    fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 1, drv_params, &drv_ok);
  }
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 1, rt_params, &rt_ok);
}

enum Nesting { kAgree, kOtherStream, kBare };

/* cudaMemcpyAsync device to device of `bytes` on `stream`. */
static void copy_d2d(void* dst, const void* src, size_t bytes, cudaStream_t stream,
                     enum Nesting nesting, cudaStream_t other) {
  cudaMemcpyAsync_v3020_params rt = {dst, src, bytes, cudaMemcpyDeviceToDevice, stream};
  cuMemcpyDtoDAsync_v2_params drv = {(CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
                                     bytes, (CUstream)(nesting == kOtherStream ? other : stream)};
  nested_call(RT_ID(cudaMemcpyAsync_v3020), &rt, DRV_ID(cuMemcpyDtoDAsync_v2),
              nesting == kBare ? NULL : &drv);
}

static void memset_async(void* dst, size_t bytes, cudaStream_t stream) {
  cudaMemsetAsync_v3020_params rt = {dst, 0, bytes, stream};
  cuMemsetD8Async_params drv = {(CUdeviceptr)(uintptr_t)dst, 0, bytes, (CUstream)stream};
  nested_call(RT_ID(cudaMemsetAsync_v3020), &rt, DRV_ID(cuMemsetD8Async), &drv);
}

/* `waiter` waits on `event`, recorded on `after`. */
static void wait_on(cudaStream_t waiter, cudaStream_t after, cudaEvent_t event) {
  cudaEventRecord_v3020_params record = {event, after};
  cuEventRecord_params record_drv = {(CUevent)event, (CUstream)after};
  nested_call(RT_ID(cudaEventRecord_v3020), &record, DRV_ID(cuEventRecord), &record_drv);
  cudaStreamWaitEvent_v3020_params wait = {waiter, event, 0};
  cuStreamWaitEvent_params wait_drv = {(CUstream)waiter, (CUevent)event, 0};
  nested_call(RT_ID(cudaStreamWaitEvent_v3020), &wait, DRV_ID(cuStreamWaitEvent), &wait_drv);
}

static void destroy_event(cudaEvent_t event) {
  cudaEventDestroy_v3020_params rt = {event};
  cuEventDestroy_v2_params drv = {(CUevent)event};
  nested_call(RT_ID(cudaEventDestroy_v3020), &rt, DRV_ID(cuEventDestroy_v2), &drv);
}

static void free_async(void* ptr, cudaStream_t stream) {
  cudaFreeAsync_v11020_params p = {ptr, stream};
  runtime_call(RT_ID(cudaFreeAsync_v11020), &p);
}

/* One round on `stream`: a memset and a copy within `buffer`, an event
 * recorded there and waited on by `waiter`, the event destroyed. */
static void round_on(void* buffer, cudaStream_t stream, cudaStream_t waiter, cudaEvent_t event,
                     enum Nesting nesting, cudaStream_t other) {
  memset_async(buffer, 4096, stream);
  copy_d2d((char*)buffer + 4096, buffer, 4096, stream, nesting, other);
  wait_on(waiter, stream, event);
  destroy_event(event);
}

struct Worker {
  int id;
  int rounds;
};

static int kernel_handle; /* stands for the CUfunction and the host stub */

/* stale-launch: the second thread's launch is entered before the main
 * thread's launches turn the runtime launch callbacks off, and left after. */
static pthread_mutex_t stale_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stale_cv = PTHREAD_COND_INITIALIZER;
static int stale_phase; /* 1: launch entered; 2: callbacks off */

static void stale_wait_for(int phase) {
  pthread_mutex_lock(&stale_mu);
  while (stale_phase < phase) pthread_cond_wait(&stale_cv, &stale_mu);
  pthread_mutex_unlock(&stale_mu);
}

static void stale_reach(int phase) {
  pthread_mutex_lock(&stale_mu);
  stale_phase = phase;
  pthread_cond_broadcast(&stale_cv);
  pthread_mutex_unlock(&stale_mu);
}

static void* stale_worker(void* raw) {
  const struct Worker* w = raw;
  cudaStream_t stream = make_stream(0x7000);
  cudaStream_t waiter = make_stream(0x7080);
  void* buffer = device_malloc(0x7f0100000000ull, 1 << 16);
  void* packed[1] = {buffer};
  packed_launch(&kernel_handle, packed, 1, stream, stream, kLaunchEnter | kLaunchDriver);
  stale_reach(1);
  stale_wait_for(2);
  /* Not delivered: the callback is off. */
  packed_launch(&kernel_handle, packed, 1, stream, stream, kLaunchExit);
  for (int i = 0; i < w->rounds; ++i)
    round_on(buffer, stream, waiter, (cudaEvent_t)(uintptr_t)0xe100, kAgree, stream);
  return NULL;
}

static void* worker(void* raw) {
  const struct Worker* w = raw;
  cudaStream_t stream = make_stream(0x7000 + 0x100 * (uintptr_t)w->id);
  cudaStream_t waiter = make_stream(0x7080 + 0x100 * (uintptr_t)w->id);
  void* buffer = device_malloc(0x7f0100000000ull + 0x100000ull * (uintptr_t)w->id, 1 << 16);
  for (int i = 0; i < w->rounds; ++i)
    round_on(buffer, stream, waiter, (cudaEvent_t)(uintptr_t)(0xe100 + w->id), kAgree, stream);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr,
            "usage: call_calibration agree|disagree|bare|zero|threads|ctx-sync|no-sync|"
            "stale-launch N\n");
    return 2;
  }
  const char* mode = argv[1];
  const int rounds = atoi(argv[2]);
  cudaStream_t producer = make_stream(0x5000);
  cudaStream_t consumer = make_stream(0x5100);
  cudaStream_t other = make_stream(0x5200);
  void* scratch = device_malloc(0x7f0000000000ull, 1 << 16);
  void* kept = device_malloc(0x7f0000100000ull, 1 << 16);
  void* lost = device_malloc(0x7f0000200000ull, 1 << 16);
  void* sink = device_malloc(0x7f0000300000ull, 1 << 16);  /* written by the checks' copies */
  const cudaEvent_t event = (cudaEvent_t)(uintptr_t)0xe000;

  if (strcmp(mode, "ctx-sync") == 0 || strcmp(mode, "no-sync") == 0) {
    copy_d2d(sink, lost, 4096, consumer, kAgree, consumer);
    if (strcmp(mode, "ctx-sync") == 0) {
      cuCtxSynchronize_v2_params none = {0};
      for (int exit_site = 0; exit_site <= 1; ++exit_site)
        fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, DRV_ID(cuCtxSynchronize_v2), exit_site, &none,
                        &drv_ok);
    }
    free_async(lost, producer);
    printf("%s: done\n", mode);
    return 0;
  }

  if (strcmp(mode, "stale-launch") == 0) {
    pthread_t thread;
    struct Worker stale = {0, rounds};
    pthread_create(&thread, NULL, stale_worker, &stale);
    stale_wait_for(1);
    void* packed[1] = {scratch};
    for (int i = 0; i < 80; ++i)
      packed_launch(&kernel_handle, packed, 1, producer, producer, kLaunchWhole);
    stale_reach(2);
    pthread_join(thread, NULL);
  } else if (strcmp(mode, "threads") == 0) {
    pthread_t threads[4];
    struct Worker workers[4];
    for (int i = 0; i < 4; ++i) {
      workers[i].id = i;
      workers[i].rounds = rounds;
      pthread_create(&threads[i], NULL, worker, &workers[i]);
    }
    for (int i = 0; i < 4; ++i) pthread_join(threads[i], NULL);
  } else {
    enum Nesting nesting = strcmp(mode, "disagree") == 0 ? kOtherStream
                           : strcmp(mode, "bare") == 0   ? kBare
                                                         : kAgree;
    int agreeing = rounds;
    if (strcmp(mode, "zero") == 0) {
      for (int i = 0; i < rounds; ++i) copy_d2d(scratch, scratch, 0, producer, kBare, producer);
      agreeing = 100;
    }
    for (int i = 0; i < agreeing; ++i) round_on(scratch, producer, other, event, nesting, other);
  }

  /* Read on the consumer stream; the producer waits for it: clean. */
  copy_d2d(sink, kept, 4096, consumer, kAgree, consumer);
  wait_on(producer, consumer, event);
  free_async(kept, producer);
  /* Read on the consumer stream, freed with no ordering: one finding. */
  copy_d2d(sink, lost, 4096, consumer, kAgree, consumer);
  free_async(lost, producer);
  printf("%s: %d rounds\n", mode, rounds);
  return 0;
}
