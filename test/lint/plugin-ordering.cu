// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// Which orderings make a cross-stream free safe, one function per case.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}
__global__ void produce(float* p, int n) {}

// --- flagged --------------------------------------------------------------

void unordered(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  produce<<<1, 32, 0, producer>>>(p, 256);
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{'p' is used on stream 'consumer' here; record an event on stream 'consumer' after this use and make stream 'producer' wait on it before the free}}
  cudaFreeAsync(p, producer); // expected-warning {{'p' is freed on stream 'producer' while stream 'consumer' may still be using it; nothing orders stream 'producer' after that use [xstream-unordered-free]}}
}

void wait_after_free(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{'p' is used on stream 'consumer' here, and the wait orders stream 'producer' after it}}
  cudaEventRecord(done, consumer);
  cudaFreeAsync(p, producer); // expected-warning {{'p' is freed on stream 'producer' before stream 'producer' waits for its use on stream 'consumer' [xstream-free-before-wait]}}
  cudaStreamWaitEvent(producer, done); // expected-note {{move this wait before the free}}
}

void event_recorded_before_use(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  cudaEventRecord(done, consumer);  // too early: does not cover the use below
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
  cudaStreamWaitEvent(producer, done);
  cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
}

void wait_on_other_stream(cudaStream_t producer, cudaStream_t consumer, cudaStream_t third,
                          cudaEvent_t done) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
  cudaEventRecord(done, consumer);
  cudaStreamWaitEvent(third, done);  // orders 'third', not the freeing stream
  cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
}

void copy_and_memset_uses(cudaStream_t producer, cudaStream_t consumer, float* host) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  cudaMemsetAsync(p, 0, 1024, producer); // expected-note {{'p' is written on stream 'producer' here; record an event on stream 'producer' after this write and make stream 'consumer' wait on it before the use}}
  cudaMemcpyAsync(host, p, 1024, cudaMemcpyDeviceToHost, consumer); // expected-note {{'p' is used on stream 'consumer' here}} expected-warning {{'p' is used on stream 'consumer' before its write on stream 'producer' is ordered before this use; nothing makes stream 'consumer' wait for stream 'producer' after the write [xstream-use-before-ready]}}
  cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
}

void legacy_stream_use(cudaStream_t producer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32>>>(p, 256); // expected-note {{'p' is used on the legacy default stream here}}
  cudaFreeAsync(p, producer); // expected-warning {{while the legacy default stream may still be using it}}
}

// A consumer the function creates non-blocking is not covered by an event
// recorded on the legacy stream, nor by its synchronization.
void legacy_event_misses_a_non_blocking_consumer(cudaStream_t producer, cudaEvent_t done) {
  cudaStream_t consumer;
  cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking);
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{'p' is used on stream 'consumer' here}}
  cudaEventRecord(done, 0);
  cudaStreamWaitEvent(producer, done);
  cudaFreeAsync(p, producer); // expected-warning {{while stream 'consumer' may still be using it}}
}

void legacy_sync_misses_a_non_blocking_consumer(cudaStream_t producer) {
  cudaStream_t consumer;
  cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking);
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{'p' is used on stream 'consumer' here}}
  cudaStreamSynchronize(0);
  cudaFreeAsync(p, producer); // expected-warning {{while stream 'consumer' may still be using it}}
}

void driver_api(CUstream producer, CUstream consumer) {
  CUdeviceptr d;
  cuMemAllocAsync(&d, 1024, producer);
  cuMemsetD32Async(d, 0, 256, consumer); // expected-note {{'d' is used on stream 'consumer' here}}
  cuMemFreeAsync(d, producer); // expected-warning {{[xstream-unordered-free]}}
}

void pointer_arithmetic(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p + 128, 128); // expected-note {{used on stream 'consumer' here}}
  cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
}

// A parameter buffer: where it was allocated is unknown, but the free names
// its stream.
void parameter_buffer(float* p, cudaStream_t producer, cudaStream_t consumer) {
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
  cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
}

struct Pipeline {
  float* buf_;
  cudaStream_t producer_, consumer_;

  void step() {
    consume<<<1, 32, 0, consumer_>>>(buf_, 256); // expected-note {{'buf_' is used on stream 'consumer_' here}}
    cudaFreeAsync(buf_, producer_); // expected-warning {{'buf_' is freed on stream 'producer_'}}
  }
};

// The lambda is analyzed on its own (use and free of its parameter), and
// followed where it is called, as a helper is: its parameter is the call's
// argument there.
void in_lambda(cudaStream_t producer, cudaStream_t consumer) {
  auto run = [&](float* p) {
    consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
    cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
  };
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  run(p); // expected-warning {{'p' is freed on stream 'producer' while stream 'consumer' may still be using it}} expected-note {{'p' is used on stream 'consumer' here}}
}

// --- not flagged ----------------------------------------------------------

void stall(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  cudaStreamWaitEvent(producer, done);
  cudaFreeAsync(p, producer);
}

// The legacy default stream's work comes after every blocking stream's
// earlier work: an event recorded on it covers the consumer's use.
void legacy_event(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, 0);
  cudaStreamWaitEvent(producer, done);
  cudaFreeAsync(p, producer);
}

void legacy_stream_synchronized(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaStreamSynchronize(0);
  cudaFreeAsync(p, producer);
}

void free_on_consumer(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t ready) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  produce<<<1, 32, 0, producer>>>(p, 256);
  cudaEventRecord(ready, producer);
  cudaStreamWaitEvent(consumer, ready);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaFreeAsync(p, consumer);
}

void host_stream_sync(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaStreamSynchronize(consumer);
  cudaFreeAsync(p, producer);
}

void host_event_sync(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  cudaEventSynchronize(done);
  cudaFreeAsync(p, producer);
}

void host_device_sync(cudaStream_t producer, cudaStream_t consumer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaDeviceSynchronize();
  cudaFreeAsync(p, producer);
}

void same_stream_only(cudaStream_t producer) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  produce<<<1, 32, 0, producer>>>(p, 256);
  consume<<<1, 32, 0, producer>>>(p, 256);
  cudaFreeAsync(p, producer);
}

void legacy_spellings(cudaStream_t unused) {
  float* p;
  cudaMallocAsync(&p, 1024, 0);
  consume<<<1, 32>>>(p, 256);
  cudaFreeAsync(p, cudaStreamLegacy);
}

void transitive(cudaStream_t producer, cudaStream_t consumer, cudaStream_t relay, cudaEvent_t e1,
                cudaEvent_t e2) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(e1, consumer);
  cudaStreamWaitEvent(relay, e1);
  cudaEventRecord(e2, relay);
  cudaStreamWaitEvent(producer, e2);
  cudaFreeAsync(p, producer);
}

void synchronous_free(cudaStream_t consumer) {
  float* p;
  cudaMalloc((void**)&p, 1024);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaFree(p);  // cudaFree waits for the device
}
