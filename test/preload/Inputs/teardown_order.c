/* A program that opens a library with dlopen, as the CUDA runtime opens
 * libcuda, then makes an annotated cross-stream finding.
 *   teardown_order WITNESS.so buggy|clean
 * WITNESS.so is this file built with -DWITNESS: its destructor says on
 * stderr that it ran. A checker that ends the process from its report at
 * exit, before that destructor, changes how the program exits. */
#include <stdio.h>

#ifdef WITNESS
__attribute__((destructor)) static void witness_teardown(void) {
  fprintf(stderr, "witness: destructor ran\n");
}
#else
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

#include "xstream_check/annotations.h"

int main(int argc, char** argv) {
  if (argc != 3 || dlopen(argv[1], RTLD_NOW) == NULL) {
    fprintf(stderr, "usage: teardown_order WITNESS.so buggy|clean\n");
    return 2;
  }
  struct CUstream_st* producer = (struct CUstream_st*)(uintptr_t)0x1000;
  struct CUstream_st* consumer = (struct CUstream_st*)(uintptr_t)0x2000;
  void* block = (void*)(uintptr_t)0x7f0000000000ull;
  int buggy = strcmp(argv[2], "buggy") == 0;
  XSC_ANNOTATE_ALLOC(block, 4096, producer);
  XSC_ANNOTATE_USE(block, 4096, buggy ? consumer : producer, 0);
  XSC_ANNOTATE_FREE(block, producer);
  /* stdout is a file in the test, so this stays buffered until exit. */
  printf("main: done\n");
  return 0;
}
#endif
