/* A cudaLaunchKernel names its kernel by host stub, which the runtime maps
 * to its function with cudaGetFuncBySymbol, on the application's thread,
 * inside the launch (runtime/cuda/launch.cpp). That call must not change
 * what the application's own cudaGetLastError returns. This program plays
 * the CUDA runtime's part in the three calls the runtime makes (exported,
 * -rdynamic, where the runtime's dlsym finds them): a thread's last error
 * as the CUDA runtime keeps it, and a lookup that fails its first FAILS
 * times (cudaErrorInvalidDeviceFunction, left as the last error).
 *
 *   stub_lookup FAILS
 *
 * Four runtime launches (through fake_cupti_launches.c) of one stub, then
 * the application's last error; then an error of the application's own,
 * pending across a fifth launch: it must still be there after it. Prints
 * the lookups made and each last error read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

static __thread cudaError_t last_error = cudaSuccess;
static int lookups;
static int failures_left;

cudaError_t cudaGetFuncBySymbol(cudaFunction_t* function, const void* symbol) {
  ++lookups;
  if (failures_left > 0) {
    --failures_left;
    last_error = cudaErrorInvalidDeviceFunction;
    return cudaErrorInvalidDeviceFunction;
  }
  *function = (cudaFunction_t)symbol;
  return cudaSuccess;
}

cudaError_t cudaPeekAtLastError(void) { return last_error; }

cudaError_t cudaGetLastError(void) {
  cudaError_t error = last_error;
  last_error = cudaSuccess;
  return error;
}

static int kernel_stub;

static void launch(cudaStream_t stream) {
  void* packed[1] = {NULL};
  packed_launch(&kernel_stub, packed, 1, stream, stream, kLaunchEnter | kLaunchExit);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: stub_lookup FAILS\n");
    return 2;
  }
  failures_left = atoi(argv[1]);
  cudaStream_t stream = make_stream(0x5000);
  for (int i = 0; i < 4; ++i) launch(stream);
  printf("lookups after four launches: %d\n", lookups);
  printf("last error: %d\n", (int)cudaGetLastError());
  last_error = cudaErrorLaunchFailure;  /* the application's own, not read yet */
  failures_left = 1;
  launch(stream);
  printf("last error with the application's pending: %d\n", (int)cudaGetLastError());
  printf("lookups: %d\n", lookups);
  return 0;
}
