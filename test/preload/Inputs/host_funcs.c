/* Host functions as CUPTI reports them, through fake_cupti_launches.c: a
 * cudaLaunchHostFunc's runtime entry, its nested cuLaunchHostFunc's entry
 * (where the runtime may wrap the function), a "driver" thread that runs
 * whatever function the driver call's parameters name once the call has
 * returned, and the exits. A buffer is read on the consumer stream first;
 * its free on the producer stream comes after the host function on the
 * consumer stream, or without one.
 *
 *   host_funcs flag      the host function sets a flag; the host waits for
 *                        it, then frees
 *   host_funcs missing   no host function: the same free is unordered
 *   host_funcs thread    the host function starts a thread that frees
 *   host_funcs callback  cudaStreamAddCallback / cuStreamAddCallback; the
 *                        host waits for its flag, then frees
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cupti.h>

#include "fake_cuda_calls.h"


static int kernel_handle;

static void launch(void* device_ptr, cudaStream_t stream) {
  void* packed[1] = {device_ptr};
  packed_launch(&kernel_handle, packed, 1, stream, stream, kLaunchWhole);
}

/* The driver's callback thread: runs what the driver call named. */
struct DriverCall {
  CUhostFn fn;
  CUstreamCallback callback;
  CUstream stream;
  void* data;
};

static void* driver_thread(void* raw) {
  struct DriverCall* call = raw;
  if (call->fn) call->fn(call->data);
  else call->callback(call->stream, CUDA_SUCCESS, call->data);
  return NULL;
}

static volatile int flag;
static cudaStream_t producer, consumer;
static void* device_ptr;

static void free_buffer(void) {
  cudaFreeAsync_v11020_params p = {device_ptr, producer};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &p);
}

static void set_flag(void* data) {
  (void)data;
  __atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
}

static void set_flag_callback(cudaStream_t stream, cudaError_t status, void* data) {
  (void)stream;
  (void)status;
  set_flag(data);
}

static void* freeing_thread(void* data) {
  (void)data;
  free_buffer();
  return NULL;
}

static pthread_t freer;
static void start_freeing_thread(void* data) {
  (void)data;
  pthread_create(&freer, NULL, freeing_thread, NULL);
}

/* cudaLaunchHostFunc(consumer, fn): the runtime's entry, the driver call's
 * entry and exit, then the runtime's exit; the "driver" runs the function
 * its parameters name by then. */
static pthread_t host_func(cudaHostFn_t fn) {
  cudaLaunchHostFunc_v10000_params rt = {consumer, fn, NULL};
  cuLaunchHostFunc_params drv = {(CUstream)consumer, (CUhostFn)fn, NULL};
  const CUpti_CallbackId rt_id = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchHostFunc_v10000;
  const CUpti_CallbackId drv_id = CUPTI_DRIVER_TRACE_CBID_cuLaunchHostFunc;
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 0, &rt, &rt_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 0, &drv, &drv_ok);
  static struct DriverCall call;
  call.fn = drv.fn;
  call.callback = NULL;
  call.data = drv.userData;
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 1, &drv, &drv_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 1, &rt, &rt_ok);
  pthread_t runner;
  pthread_create(&runner, NULL, driver_thread, &call);
  return runner;
}

static pthread_t stream_callback(cudaStreamCallback_t cb) {
  cudaStreamAddCallback_v5000_params rt = {consumer, cb, NULL, 0};
  cuStreamAddCallback_params drv = {(CUstream)consumer, (CUstreamCallback)cb, NULL, 0};
  const CUpti_CallbackId rt_id = CUPTI_RUNTIME_TRACE_CBID_cudaStreamAddCallback_v5000;
  const CUpti_CallbackId drv_id = CUPTI_DRIVER_TRACE_CBID_cuStreamAddCallback;
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 0, &rt, &rt_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 0, &drv, &drv_ok);
  static struct DriverCall call;
  call.fn = NULL;
  call.callback = drv.callback;
  call.stream = drv.hStream;
  call.data = drv.userData;
  fake_cupti_call(CUPTI_CB_DOMAIN_DRIVER_API, drv_id, 1, &drv, &drv_ok);
  fake_cupti_call(CUPTI_CB_DOMAIN_RUNTIME_API, rt_id, 1, &rt, &rt_ok);
  pthread_t runner;
  pthread_create(&runner, NULL, driver_thread, &call);
  return runner;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: host_funcs flag|missing|thread|callback\n");
    return 2;
  }
  const char* mode = argv[1];
  producer = make_stream(0x5000);
  consumer = make_stream(0x5100);
  device_ptr = (void*)(uintptr_t)0x7f0000100000ull;
  cudaMalloc_v3020_params alloc = {&device_ptr, 1 << 20};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &alloc);
  launch(device_ptr, consumer);
  if (strcmp(mode, "missing") == 0) {
    free_buffer();
  } else if (strcmp(mode, "thread") == 0) {
    pthread_t runner = host_func(start_freeing_thread);
    pthread_join(runner, NULL);
    pthread_join(freer, NULL);
  } else {
    pthread_t runner = strcmp(mode, "callback") == 0 ? stream_callback(set_flag_callback)
                                                     : host_func(set_flag);
    while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE)) {
    }
    free_buffer();
    pthread_join(runner, NULL);
  }
  printf("done\n");
  return 0;
}
