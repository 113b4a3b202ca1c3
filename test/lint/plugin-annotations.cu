// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// Project functions described by annotations.
#include <cuda_runtime.h>

struct Pool {
  [[clang::annotate("xstream::alloc")]] float* allocate(size_t bytes, cudaStream_t stream);
  [[clang::annotate("xstream::alloc")]] void allocate_into(float** out, size_t bytes, cudaStream_t stream);
  [[clang::annotate("xstream::free")]] void release(float* block);
  [[clang::annotate("xstream::free")]] void release_on(float* block, cudaStream_t stream);
  [[clang::annotate("xstream::record_stream")]] void record_stream(float* block, cudaStream_t user);
};

[[clang::annotate("xstream::use")]] void launch_forward(const float* params, cudaStream_t stream);
void launch_unannotated(const float* params, cudaStream_t stream);

void annotated_use(Pool& pool, cudaStream_t producer, cudaStream_t consumer) {
  float* p = pool.allocate(1024, producer);
  launch_forward(p, consumer); // expected-note {{'p' is used on stream 'consumer' here}}
  pool.release(p); // expected-warning {{'p' is freed on stream 'producer' while stream 'consumer' may still be using it}}
}

void out_argument_alloc(Pool& pool, cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  pool.allocate_into(&p, 1024, producer);
  launch_forward(p, consumer); // expected-note {{used on stream 'consumer' here}}
  pool.release(p); // expected-warning {{[xstream-unordered-free]}}
}

void free_with_stream(Pool& pool, cudaStream_t producer, cudaStream_t consumer) {
  float* p = pool.allocate(1024, producer);
  launch_forward(p, producer);
  pool.release_on(p, consumer);  // freed on... consumer; the producer's use is not ordered
  // expected-warning@-1 {{'p' is freed on stream 'consumer' while stream 'producer' may still be using it}}
  // expected-note@-3 {{'p' is used on stream 'producer' here}}
}

void recorded(Pool& pool, cudaStream_t producer, cudaStream_t consumer) {
  float* p = pool.allocate(1024, producer);
  launch_forward(p, consumer);
  pool.record_stream(p, consumer);
  pool.release(p);
}

void recorded_other_stream(Pool& pool, cudaStream_t producer, cudaStream_t consumer, cudaStream_t third) {
  float* p = pool.allocate(1024, producer);
  launch_forward(p, consumer); // expected-note {{used on stream 'consumer' here}}
  pool.record_stream(p, third);
  pool.release(p); // expected-warning {{[xstream-unordered-free]}}
}

// Not annotated and not configured: the call is opaque (intraprocedural).
void opaque_call(Pool& pool, cudaStream_t producer, cudaStream_t consumer) {
  float* p = pool.allocate(1024, producer);
  launch_unannotated(p, consumer);
  pool.release(p);
}
