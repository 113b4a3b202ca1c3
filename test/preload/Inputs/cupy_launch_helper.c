/* Kernel launches for a Python program, through the stand-in CUPTI
 * (fake_cupti_launches.c): what CuPy's driver launches look like to the
 * runtime, callable through ctypes (test/preload/cupy-launch-stacks.test). */
#include <stdint.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

/* A non-blocking stream created at `handle`. */
void helper_make_stream(uintptr_t handle) { make_stream(handle); }

/* A kernel taking one pointer, `ptr`, launched on `stream`. */
void helper_launch(void* ptr, uintptr_t stream) {
  static const char kernel = 0;  /* the stand-in CUfunction */
  void* packed[1] = {ptr};
  packed_launch(&kernel, packed, 1, (cudaStream_t)stream, (cudaStream_t)stream, kLaunchWhole);
}
