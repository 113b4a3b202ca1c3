/* Kernel launches as CUPTI reports them, through fake_cupti_launches.c:
 * a cudaLaunchKernel's runtime enter, its nested cuLaunchKernel's enter and
 * exit, then the runtime exit. Each launch passes a pointer into one live
 * allocation (in a packed parameter buffer, so no driver is needed to read
 * the kernel's parameter layout); at the end the allocation is freed on
 * another stream with no ordering, which the checker must report against
 * the last launch's stream.
 *
 *   launch_calibration agree N     N launches, both levels name one stream
 *   launch_calibration disagree N  the driver launch names another stream
 *   launch_calibration bare N      runtime launches with no driver launch
 *   launch_calibration caching 1   caching-allocator blocks (annotated): one
 *                                  used on its allocation stream, one on
 *                                  another stream, then both freed
 *   launch_calibration captured 1  a caching block used on its allocation
 *                                  stream inside a capture, the graph
 *                                  launched on another stream, the block
 *                                  freed with no ordering
 *   launch_calibration reuse 1     a caching block read on another stream,
 *                                  freed before its allocation stream
 *                                  waited, allocated again and written on
 *                                  its allocation stream (the seed's bug)
 *   launch_calibration many 1      one launch passing 40 blocks twice each
 *                                  (start, then an interior pointer, in
 *                                  reverse), one passing 300 blocks
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <xstream_check/annotations.h>

#include "fake_cuda_calls.h"


static int kernel_handle;  /* stands for the CUfunction and the host stub */

static void launch_words(const char* mode, void** packed, size_t words, cudaStream_t stream,
                         cudaStream_t driver_stream) {
  packed_launch(&kernel_handle, packed, words, stream, driver_stream,
                strcmp(mode, "bare") == 0 ? kLaunchEnter | kLaunchExit : kLaunchWhole);
}

static void launch(const char* mode, void* device_ptr, cudaStream_t stream,
                   cudaStream_t driver_stream) {
  void* packed[1] = {device_ptr};
  launch_words(mode, packed, 1, stream, driver_stream);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: launch_calibration agree|disagree|bare N\n");
    return 2;
  }
  const char* mode = argv[1];
  const int launches = atoi(argv[2]);
  cudaStream_t producer = make_stream(0x5000);
  cudaStream_t consumer = make_stream(0x5100);
  cudaStream_t other = make_stream(0x5200);
  void* device_ptr = (void*)(uintptr_t)0x7f0000100000ull;
  cudaMalloc_v3020_params alloc = {&device_ptr, 1 << 20};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, &alloc);
  if (strcmp(mode, "caching") == 0) {
    /* A launch on a block's own allocation stream can never be reported
     * (the block is freed on that stream, after it), so it needs no stack;
     * a launch on another stream does. */
    void* own = (void*)(uintptr_t)0x7f0000400000ull;
    void* foreign = (void*)(uintptr_t)0x7f0000800000ull;
    XSC_ANNOTATE_ALLOC(own, 4096, (struct CUstream_st*)consumer);
    XSC_ANNOTATE_ALLOC(foreign, 4096, (struct CUstream_st*)producer);
    launch("agree", own, consumer, consumer);
    launch("agree", foreign, consumer, consumer);
    XSC_ANNOTATE_FREE(own, (struct CUstream_st*)consumer);
    XSC_ANNOTATE_FREE(foreign, (struct CUstream_st*)producer);
    printf("launches: 2\n");
    return 0;
  }
  if (strcmp(mode, "reuse") == 0) {
    /* The block's own-stream write after the reallocation is the use that
     * races with the other stream's read: it must be fed with its stack. */
    void* block = (void*)(uintptr_t)0x7f0000400000ull;
    XSC_ANNOTATE_ALLOC(block, 4096, (struct CUstream_st*)producer);
    launch("agree", block, producer, producer);  /* fill: own stream */
    launch("agree", block, consumer, consumer);  /* the read */
    XSC_ANNOTATE_FREE(block, (struct CUstream_st*)producer);
    XSC_ANNOTATE_ALLOC(block, 4096, (struct CUstream_st*)producer);
    launch("agree", block, producer, producer);  /* races with the read */
    stream_synchronize(consumer);
    XSC_ANNOTATE_FREE(block, (struct CUstream_st*)producer);
    printf("launches: 3\n");
    return 0;
  }
  if (strcmp(mode, "captured") == 0) {
    /* Captured work runs where its graph is launched: the own-stream use
     * made inside the capture is a use on the producer stream once the
     * graph is launched there, and the free is not ordered after it. */
    void* block = (void*)(uintptr_t)0x7f0000400000ull;
    XSC_ANNOTATE_ALLOC(block, 4096, (struct CUstream_st*)consumer);
    cudaStreamBeginCapture_v10000_params begin = {consumer, cudaStreamCaptureModeGlobal};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamBeginCapture_v10000, &begin);
    launch("agree", block, consumer, consumer);
    cudaGraph_t graph = (cudaGraph_t)(uintptr_t)0x6000;
    cudaStreamEndCapture_v10000_params end = {consumer, &graph};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaStreamEndCapture_v10000, &end);
    cudaGraphExec_t exec = (cudaGraphExec_t)(uintptr_t)0x6100;
    cudaGraphInstantiate_v12000_params instantiate = {&exec, graph, 0};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphInstantiate_v12000, &instantiate);
    cudaGraphLaunch_v10000_params run = {exec, producer};
    runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, &run);
    XSC_ANNOTATE_FREE(block, (struct CUstream_st*)consumer);
    printf("launches: 1\n");
    return 0;
  }
  if (strcmp(mode, "many") == 0) {
    /* Uses are told apart per allocation, however many a launch passes.
     * The blocks are allocated on the producer stream, so that their uses
     * on the consumer stream are reported (a caching block's uses on its
     * own allocation stream are left out), and the consumer stream is
     * synchronized before their frees. */
    enum { kFew = 40, kMany = 300 };
    static void* words[2 * kMany];
    for (int i = 0; i < kFew; ++i) {
      words[i] = (void*)(uintptr_t)(0x7f0001000000ull + 0x10000ull * i);
      words[2 * kFew - 1 - i] = (char*)words[i] + 8;
      XSC_ANNOTATE_ALLOC(words[i], 0x10000, (struct CUstream_st*)producer);
    }
    launch_words("agree", words, 2 * kFew, consumer, consumer);
    stream_synchronize(consumer);
    for (int i = 0; i < kFew; ++i) XSC_ANNOTATE_FREE(words[i], (struct CUstream_st*)producer);
    for (int i = 0; i < kMany; ++i) {
      words[i] = (void*)(uintptr_t)(0x7f0100000000ull + 0x1000ull * i);
      XSC_ANNOTATE_ALLOC(words[i], 0x1000, (struct CUstream_st*)producer);
    }
    launch_words("agree", words, kMany, consumer, consumer);
    stream_synchronize(consumer);
    for (int i = 0; i < kMany; ++i) XSC_ANNOTATE_FREE(words[i], (struct CUstream_st*)producer);
    printf("launches: 2\n");
    return 0;
  }
  const int disagree = strcmp(mode, "disagree") == 0;
  for (int i = 0; i < launches; ++i) launch(mode, device_ptr, consumer, disagree ? other : consumer);
  cudaFreeAsync_v11020_params free_params = {device_ptr, producer};
  runtime_call(CUPTI_RUNTIME_TRACE_CBID_cudaFreeAsync_v11020, &free_params);
  printf("launches: %d\n", launches);
  return 0;
}
