// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// A kernel whose body the translation unit has is a known write of each
// argument it stores through, directly, through an offset or a local
// pointer or reference, with an atomic, or in a device function: the
// use-before-ready and write-after-read rules judge it as they judge a
// copy. An argument the body hands somewhere it cannot follow stays a use.
// One function per case, flagged first.
#include <cuda_runtime.h>

struct Pair {
  float* data;
};

__global__ void fill(float* out, int n) {
  const unsigned i = threadIdx.x;
  if (i < unsigned(n)) out[i] = 1.0f;
}
__global__ void consume(const float* in, float* sum, int n) { sum[0] += in[0]; }
__global__ void copy_row(float* in, float* out) { out[threadIdx.x] = in[threadIdx.x]; }
__global__ void scale_in_place(float* w, float f) { w[threadIdx.x] *= f; }
__global__ void count(int* hits) { hits[0]++; }
template <typename T>
__global__ void fill_from_second(T* out) {
  T* at = out + 1;
  *at = T();
}
__device__ void store(float* p, float v) { p[0] = v; }
__global__ void store_through_helper(float* p) { store(p + 1, 2.0f); }
__device__ void set(float& slot, float v) { slot = v; }
__global__ void store_through_reference(float* p) {
  float& slot = p[threadIdx.x];
  slot = 0.0f;
}
__global__ void set_through_helper(float* p) { set(p[0], 1.0f); }
__global__ void accumulate(float* total, const float* in) { atomicAdd(total, in[threadIdx.x]); }
__global__ void write_member(Pair* pairs) { pairs[0].data = nullptr; }

// Write at an offset a scalar parameter picks: launches given other
// offsets may write apart, so these writes are partial.
__global__ void fill_at(float* out, int offset) { out[offset + threadIdx.x] = 0.0f; }
__global__ void fill_chunk(float* out, int chunk, int size) {
  const int i = chunk * size + threadIdx.x;
  out[i] = 0.0f;
}
__global__ void fill_from(float* out, int start, int end) {
  for (int i = start; i < end; ++i) out[i] = 0.0f;
}
__global__ void fill_tail(float* out, int skip) {
  float* tail = out + skip;
  tail[threadIdx.x] = 0.0f;
}
__global__ void fill_moved(float* out, int skip) {
  out += skip;
  out[threadIdx.x] = 0.0f;
}
// A row stride is not an offset: every thread's row is covered.
__global__ void fill_image(float* out, int width) {
  const unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  out[y * width + x] = 1.0f;
}

// Reads only, though its parameters are not const.
__global__ void sum_into_local(float* in, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += in[i];
  (void)s;
}
// Hands the pointer on where the check cannot follow it.
__device__ void opaque(float* p);
__global__ void hands_to_opaque(float* p) { opaque(p); }
__global__ void keeps_in_struct(float* p, Pair* out) { out->data = p; }
__global__ void through_asm(float* p) { asm volatile("" ::"l"(p)); }
__device__ void walk(float* p, int depth) {
  if (depth > 0) walk(p + 1, depth - 1);
}
__global__ void recursive_walk(float* p, int depth) { walk(p, depth); }

// --- flagged --------------------------------------------------------------

void kernel_then_copy_out(float* dev, float* host, cudaStream_t compute, cudaStream_t copy) {
  fill<<<1, 32, 0, compute>>>(dev, 32); // expected-note {{'dev' is written on stream 'compute' here; record an event on stream 'compute' after this write and make stream 'copy' wait on it before the use}}
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, copy); // expected-warning {{'dev' is used on stream 'copy' before its write on stream 'compute' is ordered before this use; nothing makes stream 'copy' wait for stream 'compute' after the write [xstream-use-before-ready]}}
}

void compound_assignment_then_read(float* w, float* sum, cudaStream_t a, cudaStream_t b) {
  scale_in_place<<<1, 32, 0, a>>>(w, 0.5f); // expected-note {{'w' is written on stream 'a' here}}
  consume<<<1, 32, 0, b>>>(w, sum, 32); // expected-warning {{'w' is used on stream 'b' before its write on stream 'a'}}
}

void read_then_kernel_write(float* dev, float* out, cudaStream_t a, cudaStream_t b) {
  copy_row<<<1, 32, 0, a>>>(dev, out); // expected-note {{'dev' is used on stream 'a' here; record an event on stream 'a' after this use and make stream 'b' wait on it before the write}}
  fill<<<1, 32, 0, b>>>(dev, 32); // expected-warning {{'dev' is written on stream 'b' while stream 'a' may still be using it; nothing orders stream 'b' after that use [xstream-write-after-read]}}
}

void increment_then_copy(int* hits, int* host, cudaStream_t a, cudaStream_t b) {
  count<<<1, 1, 0, a>>>(hits); // expected-note {{written on stream 'a' here}}
  cudaMemcpyAsync(host, hits, 4, cudaMemcpyDeviceToHost, b); // expected-warning {{[xstream-use-before-ready]}}
}

void template_local_pointer(double* dev, double* host, cudaStream_t a, cudaStream_t b) {
  fill_from_second<<<1, 1, 0, a>>>(dev); // expected-note {{written on stream 'a' here}}
  cudaMemcpyAsync(host, dev, 16, cudaMemcpyDeviceToHost, b); // expected-warning {{[xstream-use-before-ready]}}
}

void device_helper(float* dev, float* sum, cudaStream_t a, cudaStream_t b) {
  store_through_helper<<<1, 1, 0, a>>>(dev); // expected-note {{written on stream 'a' here}}
  consume<<<1, 1, 0, b>>>(dev, sum, 2); // expected-warning {{[xstream-use-before-ready]}}
}

void local_reference(float* dev, float* sum, cudaStream_t a, cudaStream_t b) {
  store_through_reference<<<1, 32, 0, a>>>(dev); // expected-note {{written on stream 'a' here}}
  consume<<<1, 1, 0, b>>>(dev, sum, 2); // expected-warning {{[xstream-use-before-ready]}}
}

void reference_helper(float* dev, float* sum, cudaStream_t a, cudaStream_t b) {
  set_through_helper<<<1, 1, 0, a>>>(dev); // expected-note {{written on stream 'a' here}}
  consume<<<1, 1, 0, b>>>(dev, sum, 2); // expected-warning {{[xstream-use-before-ready]}}
}

void atomic_total(float* total, const float* in, float* host, cudaStream_t a, cudaStream_t b) {
  accumulate<<<1, 32, 0, a>>>(total, in); // expected-note {{'total' is written on stream 'a' here}}
  cudaMemcpyAsync(host, total, 4, cudaMemcpyDeviceToHost, b); // expected-warning {{'total' is used on stream 'b'}}
}

void struct_field_written(Pair* pairs, Pair* host, cudaStream_t a, cudaStream_t b) {
  write_member<<<1, 1, 0, a>>>(pairs); // expected-note {{written on stream 'a' here}}
  cudaMemcpyAsync(host, pairs, sizeof(Pair), cudaMemcpyDeviceToHost, b); // expected-warning {{[xstream-use-before-ready]}}
}

void image_then_copy_out(float* image, float* host, cudaStream_t a, cudaStream_t b) {
  fill_image<<<dim3(4, 4), dim3(8, 8), 0, a>>>(image, 32); // expected-note {{'image' is written on stream 'a' here}}
  cudaMemcpyAsync(host, image, 4096, cudaMemcpyDeviceToHost, b); // expected-warning {{[xstream-use-before-ready]}}
}

// --- silent ---------------------------------------------------------------

// Two streams each write their own part of one buffer, at offsets the
// launches pass.
void offsets_on_two_streams(float* dev, float* host, cudaStream_t a, cudaStream_t b) {
  fill_at<<<1, 32, 0, a>>>(dev, 0);
  fill_at<<<1, 32, 0, b>>>(dev, 32);
  fill_chunk<<<1, 32, 0, a>>>(dev, 0, 32);
  fill_chunk<<<1, 32, 0, b>>>(dev, 1, 32);
  fill_from<<<1, 1, 0, a>>>(dev, 0, 32);
  fill_from<<<1, 1, 0, b>>>(dev, 32, 64);
  fill_tail<<<1, 32, 0, a>>>(dev, 0);
  fill_tail<<<1, 32, 0, b>>>(dev, 32);
  fill_moved<<<1, 32, 0, a>>>(dev, 0);
  fill_moved<<<1, 32, 0, b>>>(dev, 32);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, a);
}

void waited(float* dev, float* host, cudaStream_t compute, cudaStream_t copy, cudaEvent_t e) {
  fill<<<1, 32, 0, compute>>>(dev, 32);
  cudaEventRecord(e, compute);
  cudaStreamWaitEvent(copy, e);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, copy);
}

void same_stream(float* dev, float* sum, cudaStream_t s) {
  fill<<<1, 32, 0, s>>>(dev, 32);
  consume<<<1, 32, 0, s>>>(dev, sum, 32);
}

// `in` is read by both kernels: two reads race with nothing.
void two_readers(float* in, float* out_a, float* out_b, cudaStream_t a, cudaStream_t b) {
  copy_row<<<1, 32, 0, a>>>(in, out_a);
  sum_into_local<<<1, 1, 0, b>>>(in, 32);
}

void only_read_through_plain_pointer(float* dev, float* host, cudaStream_t a, cudaStream_t b) {
  sum_into_local<<<1, 1, 0, a>>>(dev, 32);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, b);
}

void opaque_device_function(float* dev, float* host, cudaStream_t a, cudaStream_t b) {
  hands_to_opaque<<<1, 1, 0, a>>>(dev);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, b);
}

void stored_in_struct(float* dev, Pair* out, float* host, cudaStream_t a, cudaStream_t b) {
  keeps_in_struct<<<1, 1, 0, a>>>(dev, out);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, b);
}

void inline_assembly(float* dev, float* host, cudaStream_t a, cudaStream_t b) {
  through_asm<<<1, 1, 0, a>>>(dev);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, b);
}

void recursion(float* dev, float* host, cudaStream_t a, cudaStream_t b) {
  recursive_walk<<<1, 1, 0, a>>>(dev, 2);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, b);
}

// Each stream writes and reads its own half.
void halves(float* dev, float* sum, cudaStream_t even, cudaStream_t odd) {
  fill<<<1, 32, 0, even>>>(dev, 16);
  consume<<<1, 32, 0, even>>>(dev, sum, 16);
  fill<<<1, 32, 0, odd>>>(dev + 16, 16);
  consume<<<1, 32, 0, odd>>>(dev + 16, sum + 1, 16);
}

// The legacy default stream is ordered with blocking streams by CUDA itself.
void legacy_stream_kernel(float* dev, float* host, cudaStream_t copy) {
  fill<<<1, 32>>>(dev, 32);
  cudaMemcpyAsync(host, dev, 128, cudaMemcpyDeviceToHost, copy);
}
