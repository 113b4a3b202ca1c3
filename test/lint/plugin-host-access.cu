// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// The host's own reads and writes of pinned memory the function pins
// (cudaMallocHost, cudaHostAlloc, cudaHostRegister) are judged against the
// async copies that write or read it: a read before a copy into it is
// known to have landed (use-before-ready), a write while a copy may still
// read or write it (write-after-read). Pageable memory is not judged: CUDA
// returns from a copy into it only once the copy has landed, and from one
// out of it once it is staged. One function per case, flagged first.
#include <cuda_runtime.h>

float verify(const float* values, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += values[i];
  return sum;
}

void fill(float* values, int n) {
  for (int i = 0; i < n; ++i) values[i] = 1.0f;
}

// Keeps the pointer; touches nothing.
void remember(float* values);

// --- flagged --------------------------------------------------------------

float read_before_copy_back(const float* dev, cudaStream_t s) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{'host' is written on stream 's' here; synchronize the host with stream 's' (cudaStreamSynchronize, or cudaEventSynchronize on an event recorded after this write) before the use}}
  float first = host[0]; // expected-warning {{'host' is used on the host before its write on stream 's' is ordered before this use; nothing makes the host wait for stream 's' after the write [xstream-use-before-ready]}}
  cudaFreeHost(host);
  return first;
}

// The default stream's copies are as asynchronous to the host as any.
float legacy_stream_copy(const float* dev) {
  float* host = nullptr;
  cudaMallocHost((void**)&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, 0); // expected-note {{written on the legacy default stream here}}
  return verify(host, 256); // expected-warning {{'host' is used on the host before its write on the legacy default stream is ordered}}
}

// A staging buffer refilled while the last round's upload may still read it.
void refill_staging(float* dev, cudaStream_t s, int rounds) {
  float* staging = nullptr;
  cudaHostAlloc((void**)&staging, 1024, 0);
  for (int r = 0; r < rounds; ++r) {
    staging[0] = float(r); // expected-warning {{'staging' is written on the host while stream 's' may still be using it; nothing orders the host after that use [xstream-write-after-read]}}
    cudaMemcpyAsync(dev, staging, 1024, cudaMemcpyHostToDevice, s); // expected-note {{'staging' is used on stream 's' here; synchronize the host with stream 's' (cudaStreamSynchronize, or cudaEventSynchronize on an event recorded after this use) before the write}}
  }
}

void refill_through_helper(float* dev, float* registered, cudaStream_t s) {
  cudaHostRegister(registered, 1024, 0);
  cudaMemcpyAsync(dev, registered, 1024, cudaMemcpyHostToDevice, s); // expected-note {{'registered' is used on stream 's' here}}
  fill(registered, 256); // expected-warning {{'registered' is written on the host while stream 's' may still be using it}}
}

int compared_too_early(const float* dev, const float* expected, cudaStream_t s, cudaEvent_t done) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaEventRecord(done, s);  // before the copy: does not cover it
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{written on stream 's' here}}
  cudaEventSynchronize(done);
  return memcmp(host, expected, 1024); // expected-warning {{'host' is used on the host before its write on stream 's'}}
}

// Pinned by helpers of the program: through a pointer to the pointer, and
// by registering what it is given.
void allocate_pinned(float** out, size_t bytes) { cudaMallocHost((void**)out, bytes); }
void pin(float* memory, size_t bytes) { cudaHostRegister(memory, bytes, 0); }

float pinned_by_a_helper(const float* dev, float* pageable, cudaStream_t s) {
  float* host = nullptr;
  allocate_pinned(&host, 1024);
  pin(pageable, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{'host' is written on stream 's' here}}
  cudaMemcpyAsync(pageable, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{'pageable' is written on stream 's' here}}
  return host[0] + pageable[0]; // expected-warning {{'host' is used on the host before}} expected-warning {{'pageable' is used on the host before}}
}

// Two reads of one copy's result: one warning, at the first.
float read_twice(const float* dev, cudaStream_t s) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{written on stream 's' here}}
  float a = host[0]; // expected-warning {{[xstream-use-before-ready]}}
  float b = host[1];
  return a + b;
}

// The synchronization comes after the read.
float synchronized_too_late(const float* dev, cudaStream_t s) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{written on stream 's' here}}
  float first = host[0]; // expected-warning {{[xstream-use-before-ready]}}
  cudaStreamSynchronize(s);
  return first;
}

// Synchronized on one path only, under a condition the copy does not have.
float synchronized_on_one_path(const float* dev, cudaStream_t s, bool wait) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{written on stream 's' here}}
  if (wait) cudaStreamSynchronize(s);
  return host[0]; // expected-warning {{[xstream-use-before-ready]}}
}

// Each round's read waits only for the round before.
float pipelined_one_round_late(const float* dev, cudaStream_t s, int rounds) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  float sum = 0.0f;
  for (int r = 0; r < rounds; ++r) {
    cudaMemcpyAsync(host, dev + r, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{written on stream 's' here}}
    sum += host[0]; // expected-warning {{[xstream-use-before-ready]}}
    cudaStreamSynchronize(s);
  }
  return sum;
}

// --- silent ---------------------------------------------------------------

// The synchronization's condition is the copy's: on the path with the
// copy the host waits. Not told apart from a real miss, so not reported.
float synchronized_when_copied(const float* dev, cudaStream_t s, bool async) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  if (async) cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s);
  else cudaMemcpy(host, dev, 1024, cudaMemcpyDeviceToHost);
  if (async) cudaStreamSynchronize(s);
  return host[0];
}

// A kernel spinning on a pinned flag the host sets: talking on purpose.
__global__ void wait_for(volatile int* flag) {
  while (*flag == 0) {
  }
}

void release_a_kernel(float* dev, cudaStream_t s) {
  int* flag = nullptr;
  cudaHostAlloc((void**)&flag, sizeof(int), 0);
  *flag = 0;
  wait_for<<<1, 1, 0, s>>>(flag);
  cudaMemsetAsync(dev, 0, 1024, s);
  *flag = 1;
  cudaStreamSynchronize(s);
}

float stream_synchronized(const float* dev, cudaStream_t s) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  return host[0];
}

float event_synchronized(const float* dev, cudaStream_t s, cudaEvent_t done) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s);
  cudaEventRecord(done, s);
  cudaEventSynchronize(done);
  return verify(host, 256);
}

// An event on the legacy stream comes after the blocking streams' work.
float legacy_event_after_stream_copies(const float* dev, cudaStream_t s, cudaEvent_t done) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s);
  cudaEventRecord(done, 0);
  cudaEventSynchronize(done);
  return host[0];
}

float polled(const float* dev, cudaStream_t s, cudaEvent_t done) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s);
  cudaEventRecord(done, s);
  while (cudaEventQuery(done) == cudaErrorNotReady) {
  }
  return host[0];
}

float after_a_synchronous_copy(const float* dev, float* other, cudaStream_t s) {
  float* host = nullptr;
  cudaMallocHost(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s);
  cudaMemcpy(other, dev, 4, cudaMemcpyDeviceToHost);
  return host[0];
}

// Pageable memory: the copy has landed when cudaMemcpyAsync returns.
float pageable(const float* dev, float* host, cudaStream_t s) {
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s);
  return host[0];
}

// Addresses of pinned memory are not accesses.
void addresses_only(const float* dev, cudaStream_t a, cudaStream_t b) {
  float* host = nullptr;
  cudaMallocHost(&host, 2048);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, a);
  cudaMemcpyAsync(&host[256], dev, 1024, cudaMemcpyDeviceToHost, a);
  remember(host);
  cudaStreamSynchronize(a);
}

// Two streams copy back halves; the host reads the half it synchronized.
float halves(const float* dev, cudaStream_t a, cudaStream_t b) {
  float* host = nullptr;
  cudaMallocHost(&host, 2048);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, a);
  cudaMemcpyAsync(host + 256, dev + 256, 1024, cudaMemcpyDeviceToHost, b);
  cudaStreamSynchronize(a);
  return verify(host, 256);
}

void refill_after_synchronizing(float* dev, cudaStream_t s, int rounds) {
  float* staging = nullptr;
  cudaMallocHost(&staging, 1024);
  for (int r = 0; r < rounds; ++r) {
    staging[0] = float(r);
    cudaMemcpyAsync(dev, staging, 1024, cudaMemcpyHostToDevice, s);
    cudaStreamSynchronize(s);
  }
}

// --- kernels' writes, and managed memory ----------------------------------
// A kernel's known writes (read from its body) are judged against the
// host's accesses too, and managed memory (cudaMallocManaged) is reached
// by the host as pinned memory is. A kernel's reads are not judged (the
// host may set a flag it spins on), nor writes through volatile lvalues or
// system-scope atomics, which share the memory with the host on purpose.

__global__ void square(float* out, const float* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * in[i];
}

__global__ void count_system(int* counter) { atomicAdd_system(counter, 1); }

__global__ void report_progress(volatile int* progress) { *progress = 1; }

float managed_read_before_kernel_done(const float* in, int n) {
  float* out = nullptr;
  cudaMallocManaged(&out, n * sizeof(float));
  square<<<1, 256>>>(out, in, n); // expected-note {{'out' is written on the legacy default stream here}}
  return out[0]; // expected-warning {{'out' is used on the host before its write on the legacy default stream is ordered before this use}}
}

float mapped_read_before_kernel_done(const float* in, cudaStream_t s, int n) {
  float* out = nullptr;
  cudaHostAlloc((void**)&out, n * sizeof(float), 0);
  square<<<1, 256, 0, s>>>(out, in, n); // expected-note {{'out' is written on stream 's' here}}
  return verify(out, n); // expected-warning {{'out' is used on the host before its write on stream 's'}}
}

float managed_copy_read_early(const float* dev, cudaStream_t s) {
  float* host = nullptr;
  cudaMallocManaged(&host, 1024);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, s); // expected-note {{'host' is written on stream 's' here}}
  return host[0]; // expected-warning {{[xstream-use-before-ready]}}
}

void managed_written_under_kernel(const float* in, cudaStream_t s, int n) {
  float* out = nullptr;
  cudaMallocManaged(&out, n * sizeof(float));
  square<<<1, 256, 0, s>>>(out, in, n); // expected-note {{'out' is used on stream 's' here}}
  out[0] = 0.0f; // expected-warning {{'out' is written on the host while stream 's' may still be using it}}
  cudaStreamSynchronize(s);
}

float managed_synchronized(const float* in, int n) {
  float* out = nullptr;
  cudaMallocManaged(&out, n * sizeof(float));
  square<<<1, 256>>>(out, in, n);
  cudaDeviceSynchronize();
  return out[0];
}

// The kernel only reads the managed input: the host reading it too is no race.
float managed_input_read_twice(float* out, int n) {
  float* in = nullptr;
  cudaMallocManaged(&in, n * sizeof(float));
  square<<<1, 256>>>(out, in, n);
  return in[0];
}

int counted_with_system_atomics() {
  int* counter = nullptr;
  cudaMallocManaged(&counter, sizeof(int));
  count_system<<<1, 32>>>(counter);
  return *counter;
}

int progress_polled() {
  int* progress = nullptr;
  cudaHostAlloc((void**)&progress, sizeof(int), 0);
  report_progress<<<1, 1>>>(progress);
  return *progress;
}

// Mapped pinned memory written through its device address
// (cudaHostGetDevicePointer): the host reads what the kernel may still write.
float mapped_through_device_pointer(const float* in, int n) {
  float* host = nullptr;
  cudaHostAlloc((void**)&host, n * sizeof(float), 2);
  float* dev;
  cudaHostGetDevicePointer((void**)&dev, host, 0);
  square<<<1, 256>>>(dev, in, n); // expected-note {{'host' is written on the legacy default stream here}}
  return host[0]; // expected-warning {{'host' is used on the host before its write on the legacy default stream is ordered before this use}}
}

float mapped_synchronized(const float* in, int n) {
  float* host = nullptr;
  cudaHostAlloc((void**)&host, n * sizeof(float), 2);
  float* dev = nullptr;
  cudaHostGetDevicePointer((void**)&dev, host, 0);
  square<<<1, 256>>>(dev, in, n);
  cudaDeviceSynchronize();
  return host[0];
}

// The host polls, through a volatile lvalue, a flag the kernel sets with a
// plain store: shared on purpose.
__global__ void finish(int* done) { *done = 1; }

void polled_through_volatile() {
  int* done = nullptr;
  cudaHostAlloc((void**)&done, sizeof(int), 0);
  *done = 0;
  finish<<<1, 1>>>(done);
  while (*(volatile int*)done == 0) {
  }
}
