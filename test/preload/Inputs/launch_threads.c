/* Kernel launches from four threads at once, against the stand-in CUPTI and
 * libcuda: each thread allocates blocks of a caching allocator (annotated)
 * on a stream of its own, launches a kernel reading one half of the block
 * and writing the other, and frees it, ROUNDS times. Those launches hand
 * their words to the checker's thread while the other threads allocate,
 * launch and free. Then, on the main thread, a launch reads a new block and
 * a copy on another stream, ordered after nothing, overwrites it: the use
 * the checker's thread made of the handed-over words is what the copy
 * races with.
 *   launch_threads ROUNDS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>
#include <xstream_check/annotations.h>
#include <xstream_check/host_api.h>

#include "fake_cuda_calls.h"

#pragma weak xsc_runtime_launch_words

void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes);

enum { kThreads = 4, kBlockBytes = 1 << 16 };

static int reduce_fn;  /* stands for reduce(const float*, float*, int)'s CUfunction */
static int rounds;
static cudaStream_t streams[kThreads];

static void reduce(const float* in, float* out, cudaStream_t stream) {
  int n = 256;
  void* params[] = {&in, &out, &n};
  driver_launch(&reduce_fn, params, stream, 1, 1);
}

/* Thread t's blocks: 8 of them in turn, 16 MiB apart from the next thread's. */
static float* block_of(int thread, int round) {
  return (float*)(uintptr_t)(0x7f1000000000ull + (uint64_t)thread * (16u << 20) +
                             (uint64_t)(round % 8) * kBlockBytes);
}

static void* worker(void* arg) {
  const int t = (int)(intptr_t)arg;
  for (int i = 0; i < rounds; ++i) {
    float* block = block_of(t, i);
    XSC_ANNOTATE_ALLOC(block, kBlockBytes, (struct CUstream_st*)streams[t]);
    reduce(block, block + kBlockBytes / 8, streams[t]);
    XSC_ANNOTATE_FREE(block, (struct CUstream_st*)streams[t]);
  }
  return NULL;
}

int main(int argc, char** argv) {
  rounds = argc > 1 ? atoi(argv[1]) : 1000;
  const size_t pointer_int[] = {sizeof(void*), sizeof(void*), sizeof(int)};
  fake_cuda_define(&reduce_fn, "_Z6reducePKfPfi", 3, pointer_int);
  for (int t = 0; t < kThreads; ++t) streams[t] = make_stream(0x6100 + 0x100 * (uintptr_t)t);
  cudaStream_t other = make_stream(0x9000);

  pthread_t threads[kThreads];
  for (int t = 0; t < kThreads; ++t)
    pthread_create(&threads[t], NULL, worker, (void*)(intptr_t)t);
  for (int t = 0; t < kThreads; ++t) pthread_join(threads[t], NULL);

  float* read = (float*)(uintptr_t)0x7f2000000000ull;
  XSC_ANNOTATE_ALLOC(read, kBlockBytes, (struct CUstream_st*)streams[0]);
  reduce(read, read + kBlockBytes / 8, streams[0]);
  upload(read, other); /* race-copy */

  uint64_t looked_up = 0, handed_over = 0;
  if (xsc_runtime_launch_words) xsc_runtime_launch_words(NULL, &looked_up, NULL, &handed_over);
  printf("words looked up %llu, handed over %llu\n", (unsigned long long)looked_up,
         (unsigned long long)handed_over);
  size_t findings = 0;
  char* report = xsc_findings_report(NULL, "text", 0, &findings);
  if (report != NULL) xsc_release_report(report);
  printf("findings now: %zu\n", findings);
  return 0;
}
