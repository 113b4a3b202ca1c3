// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// Calls wrapped in an error-checking macro, as most CUDA code does: messages
// name the buffer and streams as written in the macro's arguments, not the
// whole macro invocation.
#include <cuda_runtime.h>

#define CHECK_CUDA(call) do { cudaError_t err_ = (call); (void)err_; } while (0)

void wrapped(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  CHECK_CUDA(cudaMallocAsync(reinterpret_cast<void**>(&p), 1024, producer));
  CHECK_CUDA(cudaMemsetAsync(p, 0, 1024, consumer)); // expected-note {{'p' is used on stream 'consumer' here}}
  CHECK_CUDA(cudaFreeAsync(p, producer)); // expected-warning {{'p' is freed on stream 'producer' while stream 'consumer' may still be using it}}
}
