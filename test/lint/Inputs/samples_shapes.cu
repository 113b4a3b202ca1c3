// Stream shapes of the kind NVIDIA's cuda-samples use (stream-ordered
// allocation in a loop, fan-out over an array of streams, double-buffered
// copies, timing on the legacy stream, a worker helper), written for this
// suite: each correct form, and the bug a small change to it makes.
#include <cuda_runtime.h>

// The samples' error-checking idiom: a template helper behind a macro.
template <typename T>
void check(T result, const char* expr, const char* file, int line) {
  if (result) (void)expr, (void)file, (void)line;
}
#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)

__global__ void vector_add(const float* a, const float* b, float* c, int n) {}
__global__ void scale(float* p, int n) {}

// --- stream-ordered allocation in a loop -------------------------------------

// Allocate, launch and free on one stream, every round: nothing to order.
void ordered_alloc_loop(cudaStream_t stream, const float* h_a, float* h_c, int n, int rounds) {
  size_t bytes = n * sizeof(float);
  for (int r = 0; r < rounds; ++r) {
    float *d_a, *d_c;
    checkCudaErrors(cudaMallocAsync(&d_a, bytes, stream));
    checkCudaErrors(cudaMallocAsync(&d_c, bytes, stream));
    checkCudaErrors(cudaMemcpyAsync(d_a, h_a, bytes, cudaMemcpyHostToDevice, stream));
    vector_add<<<(n + 255) / 256, 256, 0, stream>>>(d_a, d_a, d_c, n);
    checkCudaErrors(cudaMemcpyAsync(h_c, d_c, bytes, cudaMemcpyDeviceToHost, stream));
    checkCudaErrors(cudaFreeAsync(d_a, stream));
    checkCudaErrors(cudaFreeAsync(d_c, stream));
  }
  checkCudaErrors(cudaStreamSynchronize(stream));
}

// The launch moved to a second stream: d_a and d_c go back to stream's pool
// while compute may still use them (the copy of d_c back on stream is not
// ordered after the kernel either).
void ordered_alloc_loop_other_stream(cudaStream_t stream, cudaStream_t compute, const float* h_a,
                                     float* h_c, int n, int rounds) {
  size_t bytes = n * sizeof(float);
  for (int r = 0; r < rounds; ++r) {
    float *d_a, *d_c;
    checkCudaErrors(cudaMallocAsync(&d_a, bytes, stream));
    checkCudaErrors(cudaMallocAsync(&d_c, bytes, stream));
    checkCudaErrors(cudaMemcpyAsync(d_a, h_a, bytes, cudaMemcpyHostToDevice, stream));
    vector_add<<<(n + 255) / 256, 256, 0, compute>>>(d_a, d_a, d_c, n);
    checkCudaErrors(cudaMemcpyAsync(h_c, d_c, bytes, cudaMemcpyDeviceToHost, stream));
    checkCudaErrors(cudaFreeAsync(d_a, stream));
    checkCudaErrors(cudaFreeAsync(d_c, stream));
  }
  checkCudaErrors(cudaStreamSynchronize(stream));
}

// The same with the ordering the samples' multi-stream variants use: stream
// waits for an event recorded on compute after the launch.
void ordered_alloc_loop_other_stream_waited(cudaStream_t stream, cudaStream_t compute,
                                            cudaEvent_t launched, const float* h_a, float* h_c,
                                            int n, int rounds) {
  size_t bytes = n * sizeof(float);
  for (int r = 0; r < rounds; ++r) {
    float *d_a, *d_c;
    checkCudaErrors(cudaMallocAsync(&d_a, bytes, stream));
    checkCudaErrors(cudaMallocAsync(&d_c, bytes, stream));
    checkCudaErrors(cudaMemcpyAsync(d_a, h_a, bytes, cudaMemcpyHostToDevice, stream));
    checkCudaErrors(cudaEventRecord(launched, stream));
    checkCudaErrors(cudaStreamWaitEvent(compute, launched, 0));
    vector_add<<<(n + 255) / 256, 256, 0, compute>>>(d_a, d_a, d_c, n);
    checkCudaErrors(cudaEventRecord(launched, compute));
    checkCudaErrors(cudaStreamWaitEvent(stream, launched, 0));
    checkCudaErrors(cudaMemcpyAsync(h_c, d_c, bytes, cudaMemcpyDeviceToHost, stream));
    checkCudaErrors(cudaFreeAsync(d_a, stream));
    checkCudaErrors(cudaFreeAsync(d_c, stream));
  }
  checkCudaErrors(cudaStreamSynchronize(stream));
}

// --- fan-out over an array of streams, fan-in through events -------------------

// Each stream takes a slice; the first stream waits for each one's event in
// the same round.
void fan_out_fan_in(cudaStream_t* streams, cudaEvent_t* done, int nstreams, int n) {
  float* d;
  checkCudaErrors(cudaMallocAsync(&d, n * sizeof(float), streams[0]));
  int slice = n / nstreams;
  for (int i = 1; i < nstreams; ++i) {
    scale<<<1, 256, 0, streams[i]>>>(d + i * slice, slice);
    checkCudaErrors(cudaEventRecord(done[i], streams[i]));
    checkCudaErrors(cudaStreamWaitEvent(streams[0], done[i], 0));
  }
  checkCudaErrors(cudaFreeAsync(d, streams[0]));
}

// Without the fan-in.
void fan_out_no_fan_in(cudaStream_t* streams, int nstreams, int n) {
  float* d;
  checkCudaErrors(cudaMallocAsync(&d, n * sizeof(float), streams[0]));
  int slice = n / nstreams;
  for (int i = 1; i < nstreams; ++i) scale<<<1, 256, 0, streams[i]>>>(d + i * slice, slice);
  checkCudaErrors(cudaFreeAsync(d, streams[0]));
}

// --- double-buffered copies on two streams ----------------------------------------

// One round of copy in, kernel, copy out on a stream (a helper, inlined).
void copy_round(float* d, const float* h_in, float* h_out, int n, cudaStream_t s) {
  size_t bytes = n * sizeof(float);
  checkCudaErrors(cudaMemcpyAsync(d, h_in, bytes, cudaMemcpyHostToDevice, s));
  scale<<<n / 256, 256, 0, s>>>(d, n);
  checkCudaErrors(cudaMemcpyAsync(h_out, d, bytes, cudaMemcpyDeviceToHost, s));
}

// Rounds alternate between two streams and two buffers; the host waits for
// the whole device before the buffers go back to the pool.
void double_buffered(cudaStream_t main_stream, cudaStream_t even, cudaStream_t odd, float* h_in,
                     float* h_out, int n, int rounds) {
  float *d_even, *d_odd;
  checkCudaErrors(cudaMallocAsync(&d_even, n * sizeof(float), main_stream));
  checkCudaErrors(cudaMallocAsync(&d_odd, n * sizeof(float), main_stream));
  checkCudaErrors(cudaStreamSynchronize(main_stream));
  for (int r = 0; r + 1 < rounds; r += 2) {
    copy_round(d_even, h_in + r * n, h_out + r * n, n, even);
    copy_round(d_odd, h_in + (r + 1) * n, h_out + (r + 1) * n, n, odd);
  }
  checkCudaErrors(cudaDeviceSynchronize());
  checkCudaErrors(cudaFreeAsync(d_even, main_stream));
  checkCudaErrors(cudaFreeAsync(d_odd, main_stream));
}

// The buffers freed before the host waits.
void double_buffered_freed_early(cudaStream_t main_stream, cudaStream_t even, cudaStream_t odd,
                                 float* h_in, float* h_out, int n, int rounds) {
  float *d_even, *d_odd;
  checkCudaErrors(cudaMallocAsync(&d_even, n * sizeof(float), main_stream));
  checkCudaErrors(cudaMallocAsync(&d_odd, n * sizeof(float), main_stream));
  checkCudaErrors(cudaStreamSynchronize(main_stream));
  for (int r = 0; r + 1 < rounds; r += 2) {
    copy_round(d_even, h_in + r * n, h_out + r * n, n, even);
    copy_round(d_odd, h_in + (r + 1) * n, h_out + (r + 1) * n, n, odd);
  }
  checkCudaErrors(cudaFreeAsync(d_even, main_stream));
  checkCudaErrors(cudaFreeAsync(d_odd, main_stream));
  checkCudaErrors(cudaDeviceSynchronize());
}

// --- timing on the legacy default stream -----------------------------------------

// The kernel runs on the legacy stream (no stream in the launch); the stop
// event is recorded there and the host waits for it before the free.
void timed_on_legacy_stream(cudaStream_t alloc_stream, cudaEvent_t start, cudaEvent_t stop, int n) {
  float* d;
  checkCudaErrors(cudaMallocAsync(&d, n * sizeof(float), alloc_stream));
  checkCudaErrors(cudaStreamSynchronize(alloc_stream));
  checkCudaErrors(cudaEventRecord(start, 0));
  scale<<<n / 256, 256>>>(d, n);
  checkCudaErrors(cudaEventRecord(stop, 0));
  checkCudaErrors(cudaEventSynchronize(stop));
  checkCudaErrors(cudaFreeAsync(d, alloc_stream));
}

// The host waits for the start event only, recorded before the launch.
void timed_waits_for_start(cudaStream_t alloc_stream, cudaEvent_t start, cudaEvent_t stop, int n) {
  float* d;
  checkCudaErrors(cudaMallocAsync(&d, n * sizeof(float), alloc_stream));
  checkCudaErrors(cudaStreamSynchronize(alloc_stream));
  checkCudaErrors(cudaEventRecord(start, 0));
  scale<<<n / 256, 256>>>(d, n);
  checkCudaErrors(cudaEventRecord(stop, 0));
  checkCudaErrors(cudaEventSynchronize(start));
  checkCudaErrors(cudaFreeAsync(d, alloc_stream));
}

// --- a worker helper per stream -----------------------------------------------------

struct Worker {
  cudaStream_t stream;
  cudaEvent_t finished;
  float* data;
  int n;
};

// Launches the worker's kernel and marks its end (inlined where it is called).
void launch_worker(Worker& w) {
  scale<<<w.n / 256, 256, 0, w.stream>>>(w.data, w.n);
  checkCudaErrors(cudaEventRecord(w.finished, w.stream));
}

void run_worker(cudaStream_t owner, Worker& w) {
  checkCudaErrors(cudaMallocAsync(&w.data, w.n * sizeof(float), owner));
  checkCudaErrors(cudaStreamSynchronize(owner));
  launch_worker(w);
  checkCudaErrors(cudaStreamWaitEvent(owner, w.finished, 0));
  checkCudaErrors(cudaFreeAsync(w.data, owner));
}

// The wait is on the worker's stream for its own event: owner is not ordered.
void run_worker_wrong_wait(cudaStream_t owner, Worker& w) {
  checkCudaErrors(cudaMallocAsync(&w.data, w.n * sizeof(float), owner));
  checkCudaErrors(cudaStreamSynchronize(owner));
  launch_worker(w);
  checkCudaErrors(cudaStreamWaitEvent(w.stream, w.finished, 0));
  checkCudaErrors(cudaFreeAsync(w.data, owner));
}
