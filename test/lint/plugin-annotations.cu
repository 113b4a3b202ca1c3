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

// Helpers defined in the project are inlined: the wrapper's launch is a use,
// the helper's event is the caller's, its allocation keeps its stream.
inline void launch_wrapper(const float* p, cudaStream_t stream) { launch_forward(p, stream); }
inline cudaEvent_t record_after(cudaStream_t stream, cudaEvent_t e) {
  cudaEventRecord(e, stream);
  return e;
}
inline float* make_params(Pool& pool, cudaStream_t stream) { return pool.allocate(1024, stream); }
inline void release_params(Pool& pool, float* p) { pool.release(p); }

void through_helpers(Pool& pool, cudaStream_t producer, cudaStream_t consumer) {
  float* p = make_params(pool, producer);
  launch_wrapper(p, consumer); // expected-note {{'p' is used on stream 'consumer' here}}
  release_params(pool, p); // expected-warning {{'p' is freed on stream 'producer' while stream 'consumer' may still be using it}}
}

void through_helpers_ordered(Pool& pool, cudaStream_t producer, cudaStream_t consumer, cudaEvent_t e) {
  float* p = make_params(pool, producer);
  launch_wrapper(p, consumer);
  cudaEvent_t done = record_after(consumer, e);
  cudaStreamWaitEvent(producer, done);
  release_params(pool, p);
}

// A helper that frees its own buffer is reported there, not again at each caller.
inline void self_contained(cudaStream_t producer, cudaStream_t consumer) {
  float* q;
  cudaMallocAsync(&q, 1024, producer);
  launch_forward(q, consumer); // expected-note {{'q' is used on stream 'consumer' here}}
  cudaFreeAsync(q, producer); // expected-warning {{'q' is freed on stream 'producer'}}
}
void calls_self_contained(cudaStream_t producer, cudaStream_t consumer) {
  self_contained(producer, consumer);
}
