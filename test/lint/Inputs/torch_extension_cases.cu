// PyTorch's C++ extension API, recognized without configuration: one bug and
// its correct twin per form. The expected-* comments are the specification.
#include "torch_cuda_api.h"

namespace alloc = c10::cuda::CUDACachingAllocator;

__global__ void consume(const float* p, int n) {}
__global__ void produce(float* p, int n) {}

// --- raw_alloc_with_stream / raw_delete --------------------------------------

// The seed: the block goes back to compute's pool before compute waits for the
// consumer's event.
void raw_delete_before_block(c10::cuda::CUDAStream compute, c10::cuda::CUDAStream consumer, int n) {
  at::cuda::CUDAEvent consumed;
  float* block = static_cast<float*>(alloc::raw_alloc_with_stream(n * sizeof(float), compute));
  produce<<<1, 32, 0, compute>>>(block, n);
  consume<<<1, 32, 0, consumer>>>(block, n); // expected-note {{'block' is used on stream 'consumer' here, and the wait orders stream 'compute' after it}}
  consumed.record(consumer);
  alloc::raw_delete(block); // expected-warning {{'block' is freed on stream 'compute' before stream 'compute' waits for its use on stream 'consumer' [xstream-free-before-wait]}}
  consumed.block(compute); // expected-note {{move this wait before the free}}
}

void block_before_raw_delete(c10::cuda::CUDAStream compute, c10::cuda::CUDAStream consumer, int n) {
  at::cuda::CUDAEvent consumed;
  float* block = static_cast<float*>(alloc::raw_alloc_with_stream(n * sizeof(float), compute));
  produce<<<1, 32, 0, compute>>>(block, n);
  consume<<<1, 32, 0, consumer>>>(block, n);
  consumed.record(consumer);
  consumed.block(compute);
  alloc::raw_delete(block);
}

void raw_delete_unordered(c10::cuda::CUDAStream compute, c10::cuda::CUDAStream consumer, int n) {
  void* block = alloc::raw_alloc_with_stream(n * sizeof(float), compute.stream());
  consume<<<1, 32, 0, consumer.stream()>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'consumer' here; record an event on stream 'consumer' after this use and make stream 'compute' wait on it before the free}}
  alloc::raw_delete(block); // expected-warning {{'block' is freed on stream 'compute' while stream 'consumer' may still be using it; nothing orders stream 'compute' after that use [xstream-unordered-free]}}
}

// A raw cudaStream_t taken from a CUDAStream is that stream.
void raw_handles_of_one_stream(c10::cuda::CUDAStream compute, int n) {
  cudaStream_t raw = compute.stream();
  void* block = alloc::raw_alloc_with_stream(n * sizeof(float), compute);
  consume<<<1, 32, 0, raw>>>(static_cast<float*>(block), n);
  alloc::raw_delete(block);
}

void host_waits_for_the_event(c10::cuda::CUDAStream compute, c10::cuda::CUDAStream consumer, int n) {
  at::cuda::CUDAEvent consumed;
  void* block = alloc::raw_alloc_with_stream(n * sizeof(float), compute);
  consume<<<1, 32, 0, consumer>>>(static_cast<float*>(block), n);
  consumed.record(consumer);
  consumed.synchronize();
  alloc::raw_delete(block);
}

void host_waits_for_the_stream(c10::cuda::CUDAStream compute, c10::cuda::CUDAStream consumer, int n) {
  void* block = alloc::raw_alloc_with_stream(n * sizeof(float), compute);
  consume<<<1, 32, 0, consumer>>>(static_cast<float*>(block), n);
  consumer.synchronize();
  alloc::raw_delete(block);
}

// The event is recorded on the wrong stream.
void event_on_other_stream(c10::cuda::CUDAStream compute, c10::cuda::CUDAStream consumer, int n) {
  at::cuda::CUDAEvent consumed;
  void* block = alloc::raw_alloc_with_stream(n * sizeof(float), compute);
  consume<<<1, 32, 0, consumer>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'consumer' here}}
  consumed.record(compute);
  consumed.block(compute);
  alloc::raw_delete(block); // expected-warning {{[xstream-unordered-free]}}
}

// --- raw_alloc on the current stream, CUDAStreamGuard -----------------------

void raw_alloc_used_on_side(c10::cuda::CUDAStream side, int n) {
  void* block = alloc::raw_alloc(n * sizeof(float));
  consume<<<1, 32, 0, side>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'side' here}}
  alloc::raw_delete(block); // expected-warning {{'block' is freed on the current stream while stream 'side' may still be using it}}
}

void raw_alloc_current_waits(c10::cuda::CUDAStream side, int n) {
  at::cuda::CUDAEvent done;
  void* block = alloc::raw_alloc(n * sizeof(float));
  consume<<<1, 32, 0, side>>>(static_cast<float*>(block), n);
  done.record(side);
  done.block(at::cuda::getCurrentCUDAStream());
  alloc::raw_delete(block);
}

// getCurrentCUDAStream() kept in a local is still the current stream.
void current_stream_in_a_local(int n) {
  auto stream = at::cuda::getCurrentCUDAStream();
  void* block = alloc::raw_alloc(n * sizeof(float));
  consume<<<1, 32, 0, stream>>>(static_cast<float*>(block), n);
  alloc::raw_delete(block);
}

void stream_from_pool_is_another(int n) {
  auto side = c10::cuda::getStreamFromPool();
  void* block = alloc::raw_alloc(n * sizeof(float));
  consume<<<1, 32, 0, side>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'side' here}}
  alloc::raw_delete(block); // expected-warning {{'block' is freed on the current stream while stream 'side'}}
}

// Freed on the consumer itself: the guard makes it the allocation stream.
void freed_on_consumer(c10::cuda::CUDAStream consumer, int n) {
  c10::cuda::CUDAStreamGuard guard(consumer);
  void* block = alloc::raw_alloc(n * sizeof(float));
  consume<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(static_cast<float*>(block), n);
  alloc::raw_delete(block);
}

void guard_allocates_on_consumer(c10::cuda::CUDAStream consumer, c10::cuda::CUDAStream compute, int n) {
  c10::cuda::CUDAStreamGuard guard(consumer);
  void* block = alloc::raw_alloc(n * sizeof(float));
  produce<<<1, 32, 0, compute>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'compute' here}}
  alloc::raw_delete(block); // expected-warning {{'block' is freed on stream 'consumer' while stream 'compute' may still be using it}}
}

// The guard's scope ends before the free: the launch inside ran on 'side'.
void guard_scope_use_on_side(c10::cuda::CUDAStream side, int n) {
  void* block = alloc::raw_alloc(n * sizeof(float));
  {
    c10::cuda::CUDAStreamGuard guard(side);
    consume<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'side' here}}
  }
  alloc::raw_delete(block); // expected-warning {{'block' is freed on the current stream while stream 'side' may still be using it}}
}

void guard_scope_ended_before_use(c10::cuda::CUDAStream side, int n) {
  void* block = alloc::raw_alloc(n * sizeof(float));
  {
    c10::cuda::CUDAStreamGuard guard(side);
  }
  consume<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(static_cast<float*>(block), n);
  alloc::raw_delete(block);
}

// An event recorded with record() is on the current stream: here, 'side'.
void record_under_guard(c10::cuda::CUDAStream side, int n) {
  at::cuda::CUDAEvent done;
  void* block = alloc::raw_alloc(n * sizeof(float));
  {
    c10::cuda::CUDAStreamGuard guard(side);
    consume<<<1, 32, 0, side>>>(static_cast<float*>(block), n);
    done.record();
  }
  done.block(at::cuda::getCurrentCUDAStream());
  alloc::raw_delete(block);
}

void record_outside_guard(c10::cuda::CUDAStream side, int n) {
  at::cuda::CUDAEvent done;
  void* block = alloc::raw_alloc(n * sizeof(float));
  {
    c10::cuda::CUDAStreamGuard guard(side);
    consume<<<1, 32, 0, side>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'side' here}}
  }
  done.record();
  done.block(at::cuda::getCurrentCUDAStream());
  alloc::raw_delete(block); // expected-warning {{[xstream-unordered-free]}}
}

// --- at::Tensor: its destructor frees its block on the current stream --------

void tensor_dropped_while_side_reads(c10::cuda::CUDAStream side, int n) {
  at::Tensor buf = at::empty(n);
  consume<<<1, 32, 0, side>>>(buf.data_ptr<float>(), n); // expected-note {{'buf' is used on stream 'side' here}}
} // expected-warning {{'buf' is freed by its destructor on the current stream while stream 'side' may still be using it}}

void tensor_record_stream(c10::cuda::CUDAStream side, int n) {
  at::Tensor buf = at::empty(n);
  consume<<<1, 32, 0, side>>>(buf.data_ptr<float>(), n);
  buf.record_stream(side);
}

void tensor_record_stream_other(c10::cuda::CUDAStream side, c10::cuda::CUDAStream third, int n) {
  at::Tensor buf = at::empty(n);
  consume<<<1, 32, 0, side>>>(buf.data_ptr<float>(), n); // expected-note {{'buf' is used on stream 'side' here}}
  buf.record_stream(third);
} // expected-warning {{'buf' is freed by its destructor on the current stream}}

void allocator_record_stream(c10::cuda::CUDAStream side, int n) {
  at::Tensor buf = torch::empty(n);
  consume<<<1, 32, 0, side>>>(buf.mutable_data_ptr<float>(), n);
  c10::cuda::CUDACachingAllocator::recordStream(buf.storage().data_ptr(), side);
}

void tensor_current_waits(c10::cuda::CUDAStream side, int n) {
  at::cuda::CUDAEvent done;
  at::Tensor buf = at::empty(n);
  consume<<<1, 32, 0, side>>>(buf.data_ptr<float>(), n);
  done.record(side);
  done.block(at::cuda::getCurrentCUDAStream());
}

void tensor_under_guard_used_elsewhere(c10::cuda::CUDAStream side, c10::cuda::CUDAStream compute, int n) {
  c10::cuda::CUDAStreamGuard guard(side);
  at::Tensor scratch = at::empty_like(at::empty(n));
  produce<<<1, 32, 0, compute>>>(scratch.data_ptr<float>(), n); // expected-note {{'scratch' is used on stream 'compute' here}}
} // expected-warning {{'scratch' is freed by its destructor on stream 'side' while stream 'compute' may still be using it}}

void tensor_under_guard_same_stream(c10::cuda::CUDAStream side, int n) {
  c10::cuda::CUDAStreamGuard guard(side);
  at::Tensor scratch = at::empty(n);
  produce<<<1, 32, 0, side>>>(scratch.data_ptr<float>(), n);
}

// The block outlives the name: returned, copied, or handed to code that may
// keep a reference. Not a free.
at::Tensor tensor_returned(c10::cuda::CUDAStream side, int n) {
  at::Tensor out = at::empty(n);
  produce<<<1, 32, 0, side>>>(out.data_ptr<float>(), n);
  return out;
}

struct Saved {
  at::Tensor kept;
  void keep(c10::cuda::CUDAStream side, int n) {
    at::Tensor out = at::empty(n);
    produce<<<1, 32, 0, side>>>(out.data_ptr<float>(), n);
    kept = out;
  }
};

void stash(const at::Tensor& t);
void tensor_handed_on(c10::cuda::CUDAStream side, int n) {
  at::Tensor out = at::empty(n);
  produce<<<1, 32, 0, side>>>(out.data_ptr<float>(), n);
  stash(out);
}

// A view's destructor frees nothing; the tensor it views is not freed here.
void tensor_view_dropped(const at::Tensor& input, c10::cuda::CUDAStream side, int n) {
  at::Tensor window = input.narrow(0, 0, n);
  consume<<<1, 32, 0, side>>>(window.data_ptr<float>(), n);
}

// Captured by copy: the lambda holds a reference of its own.
template <typename F>
void run_later(F f) { f(); }
void tensor_captured(c10::cuda::CUDAStream side, int n) {
  at::Tensor out = at::empty(n);
  produce<<<1, 32, 0, side>>>(out.data_ptr<float>(), n);
  run_later([out] { (void)out.numel(); });
}

// A launch helper is inlined: its launch is the caller's use.
inline void launch_consume(const at::Tensor& t, c10::cuda::CUDAStream stream, int n) {
  consume<<<1, 32, 0, stream>>>(t.const_data_ptr<float>(), n);
}

void helper_launch_unrecorded(c10::cuda::CUDAStream side, int n) {
  at::Tensor buf = at::empty(n);
  launch_consume(buf, side, n); // expected-note {{'buf' is used on stream 'side' here}}
} // expected-warning {{'buf' is freed by its destructor on the current stream while stream 'side'}}

void helper_launch_recorded(c10::cuda::CUDAStream side, int n) {
  at::Tensor buf = at::empty(n);
  launch_consume(buf, side, n);
  buf.record_stream(side);
}

// A launch without a stream is on the legacy default stream, not on the
// current stream: under a caller's side stream the two are unordered.
void tensor_on_legacy_stream(int n) {
  at::Tensor buf = at::empty(n);
  consume<<<1, 32>>>(buf.data_ptr<float>(), n); // expected-note {{'buf' is used on the legacy default stream here}}
} // expected-warning {{'buf' is freed by its destructor on the current stream while the legacy default stream may still be using it}}

void tensor_on_current_stream(int n) {
  at::Tensor buf = at::empty(n);
  consume<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(buf.data_ptr<float>(), n);
  at::Tensor other = at::empty(n);
  consume<<<1, 32, 0, c10::cuda::getCurrentCUDAStream().stream()>>>(other.data_ptr<float>(), n);
}

// reset_stream changes the current stream from there on.
void reset_stream_then_use(c10::cuda::CUDAStream first, c10::cuda::CUDAStream second, int n) {
  c10::cuda::CUDAStreamGuard guard(first);
  void* block = alloc::raw_alloc(n * sizeof(float));
  guard.reset_stream(second);
  consume<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'second' here}}
  alloc::raw_delete(block); // expected-warning {{'block' is freed on stream 'first' while stream 'second' may still be using it}}
}

void reset_stream_before_alloc(c10::cuda::CUDAStream first, c10::cuda::CUDAStream second, int n) {
  c10::cuda::CUDAStreamGuard guard(first);
  guard.reset_stream(second);
  void* block = alloc::raw_alloc(n * sizeof(float));
  consume<<<1, 32, 0, at::cuda::getCurrentCUDAStream()>>>(static_cast<float*>(block), n);
  alloc::raw_delete(block);
}

// A local assigned after its initialization is its own stream.
void current_stream_reassigned(c10::cuda::CUDAStream side, int n) {
  auto stream = at::cuda::getCurrentCUDAStream();
  stream = side;
  void* block = alloc::raw_alloc(n * sizeof(float));
  consume<<<1, 32, 0, stream>>>(static_cast<float*>(block), n); // expected-note {{'block' is used on stream 'stream' here}}
  alloc::raw_delete(block); // expected-warning {{'block' is freed on the current stream while stream 'stream'}}
}

// --- cuBLAS through PyTorch's handle ----------------------------------------

// The handle is bound to the stream current where it is taken: inside the
// guard, 'side'.
void blas_handle_under_guard(c10::cuda::CUDAStream side, const float* weights, int n) {
  void* block = alloc::raw_alloc(n * n * sizeof(float));
  const float one = 1.0f;
  {
    c10::cuda::CUDAStreamGuard guard(side);
    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();
    cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, weights, n, weights, n, &one,
                static_cast<float*>(block), n); // expected-note@-1 {{'block' is used on stream 'side' here}}
  }
  alloc::raw_delete(block); // expected-warning {{'block' is freed on the current stream while stream 'side' may still be using it}}
}

// Taken and used where the block's stream is current: nothing to order.
void blas_handle_current(const float* weights, int n) {
  void* block = alloc::raw_alloc(n * n * sizeof(float));
  const float one = 1.0f;
  cublasSgemm(at::cuda::getCurrentCUDABlasHandle(), CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
              weights, n, weights, n, &one, static_cast<float*>(block), n);
  alloc::raw_delete(block);
}
