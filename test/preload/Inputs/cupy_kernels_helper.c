/* What a Python program needs to play CuPy's kernels through the stand-in
 * CUPTI (fake_cupti_launches.c) and the stand-in libcuda (fake_libcuda.c),
 * callable through ctypes (test/preload/cupy-kernel-params.test). */
#include <stdint.h>

#include <cupti.h>

#include "fake_cuda_calls.h"

void fake_cuda_define(const void* handle, const char* name, size_t n, const size_t* sizes);

/* A non-blocking stream created at `handle`. */
void helper_make_stream(uintptr_t handle) { make_stream(handle); }

/* Kernel `handle`, named `name`, whose `n` parameters are `sizes` bytes. */
void helper_define(uintptr_t handle, const char* name, size_t n, const size_t* sizes) {
  fake_cuda_define((const void*)handle, name, n, sizes);
}

/* cuLaunchKernel of `handle` on `stream`, each parameter's bytes at params[i]. */
void helper_launch(uintptr_t handle, void** params, uintptr_t stream) {
  driver_launch((const void*)handle, params, (cudaStream_t)stream, 1, 1);
}

/* The same through cudaLaunchKernel's packed buffer: the runtime entry, the
 * nested driver launch, the runtime exit. */
void helper_launch_packed(uintptr_t handle, void** words, size_t n, uintptr_t stream) {
  packed_launch((const void*)handle, words, n, (cudaStream_t)stream, (cudaStream_t)stream,
                kLaunchWhole);
}

/* `waiter` waits on an event recorded on `after`. */
void helper_order(uintptr_t waiter, uintptr_t after) {
  order((cudaStream_t)waiter, (cudaStream_t)after);
}
