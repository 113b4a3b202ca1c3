// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// Branches, loops and scopes: a free is flagged when some path reaches it
// without the ordering.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

void wait_on_one_branch(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done, bool fast) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{'p' is used on stream 'consumer' here}}
  cudaEventRecord(done, consumer);
  if (!fast) cudaStreamWaitEvent(producer, done);
  cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
}

void wait_on_both_branches(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done, bool fast) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256);
  cudaEventRecord(done, consumer);
  if (fast)
    cudaStreamWaitEvent(producer, done);
  else
    cudaStreamSynchronize(consumer);
  cudaFreeAsync(p, producer);
}

void use_on_one_branch(cudaStream_t producer, cudaStream_t consumer, bool remote) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  if (remote)
    consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
  else
    consume<<<1, 32, 0, producer>>>(p, 256);
  cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
}

void early_return(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done, bool abort) {
  float* p;
  cudaMallocAsync(&p, 1024, producer);
  consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
  if (abort) {
    cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
    return;
  }
  cudaEventRecord(done, consumer);
  cudaStreamWaitEvent(producer, done);
  cudaFreeAsync(p, producer);
}

// Buffers allocated and freed in a loop, used on the consumer in between.
void loop_unordered(cudaStream_t producer, cudaStream_t consumer, int n) {
  for (int i = 0; i < n; ++i) {
    float* p;
    cudaMallocAsync(&p, 1024, producer);
    consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
    cudaFreeAsync(p, producer); // expected-warning {{[xstream-unordered-free]}}
  }
}

// The wait at the top of the next iteration comes after this iteration's free.
void loop_wait_next_iteration(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done, int n) {
  for (int i = 0; i < n; ++i) {
    if (i > 0) cudaStreamWaitEvent(producer, done); // expected-note {{move this wait before the free}}
    float* p;
    cudaMallocAsync(&p, 1024, producer);
    consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
    cudaEventRecord(done, consumer);
    cudaFreeAsync(p, producer); // expected-warning {{[xstream-free-before-wait]}}
  }
}

// Keepalive: the previous iteration's buffer is freed after waiting on the
// event saved with it.
void loop_keepalive(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t* events, int n) {
  float* keep = nullptr;
  cudaEvent_t keep_event = nullptr;
  for (int i = 0; i < n; ++i) {
    if (keep) {
      cudaStreamWaitEvent(producer, keep_event);
      cudaFreeAsync(keep, producer);
    }
    float* p;
    cudaMallocAsync(&p, 1024, producer);
    consume<<<1, 32, 0, consumer>>>(p, 256);
    cudaEventRecord(events[i % 2], consumer);
    keep = p;
    keep_event = events[i % 2];
  }
  if (keep) {
    cudaStreamWaitEvent(producer, keep_event);
    cudaFreeAsync(keep, producer);
  }
}

// Keepalive whose wait is missing on the way out of the loop.
void loop_keepalive_missing_final_wait(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t* events,
                                       int n) {
  float* keep = nullptr;
  cudaEvent_t keep_event = nullptr;
  for (int i = 0; i < n; ++i) {
    if (keep) {
      cudaStreamWaitEvent(producer, keep_event);
      cudaFreeAsync(keep, producer);
    }
    float* p;
    cudaMallocAsync(&p, 1024, producer);
    consume<<<1, 32, 0, consumer>>>(p, 256); // expected-note {{used on stream 'consumer' here}}
    cudaEventRecord(events[i % 2], consumer);
    keep = p;
    keep_event = events[i % 2];
  }
  if (keep) cudaFreeAsync(keep, producer); // expected-warning {{'keep' is freed on stream 'producer'}}
}

// --- RAII buffers: the destructor at the end of the scope is the free ---

struct DeviceBuffer {
  [[clang::annotate("xstream::alloc")]] DeviceBuffer(size_t bytes, cudaStream_t stream);
  [[clang::annotate("xstream::free")]] ~DeviceBuffer();
  float* data() const { return ptr; }
  float* ptr;
  cudaStream_t stream;
};

// Not annotated: its destructor calls cudaFreeAsync, which is enough.
struct OwnedBlock {
  OwnedBlock(size_t bytes, cudaStream_t s) : stream(s) { cudaMallocAsync(&ptr, bytes, s); }
  ~OwnedBlock() { cudaFreeAsync(ptr, stream); }
  float* ptr = nullptr;
  cudaStream_t stream;
};

void raii_unordered(cudaStream_t producer, cudaStream_t consumer) {
  DeviceBuffer buf(1024, producer);
  consume<<<1, 32, 0, consumer>>>(buf.data(), 256); // expected-note {{'buf' is used on stream 'consumer' here}}
} // expected-warning {{'buf' is freed by its destructor on stream 'producer' while stream 'consumer' may still be using it}}

void raii_ordered(cudaStream_t producer, cudaStream_t consumer, cudaEvent_t done) {
  DeviceBuffer buf(1024, producer);
  consume<<<1, 32, 0, consumer>>>(buf.data(), 256);
  cudaEventRecord(done, consumer);
  cudaStreamWaitEvent(producer, done);
}

void raii_detected_destructor(cudaStream_t producer, cudaStream_t consumer, bool skip) {
  {
    OwnedBlock block(1024, producer);
    consume<<<1, 32, 0, consumer>>>(block.ptr, 256); // expected-note {{'block' is used on stream 'consumer' here}}
    if (skip) return; // expected-warning {{'block' is freed by its destructor on stream 'producer'}}
    cudaStreamSynchronize(consumer);
  }
}

void raii_in_loop(cudaStream_t producer, cudaStream_t consumer, int n) {
  for (int i = 0; i < n; ++i) {
    DeviceBuffer buf(1024, producer);
    consume<<<1, 32, 0, consumer>>>(buf.data(), 256); // expected-note {{used on stream 'consumer' here}}
  } // expected-warning {{freed by its destructor}}
}
