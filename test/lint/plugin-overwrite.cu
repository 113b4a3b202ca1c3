// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// xstream-write-after-read: a copy or memset on one stream writes a buffer
// that work on another stream used, with nothing ordering the write after
// that use. One function per case, flagged first.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

// --- flagged --------------------------------------------------------------

void refill_under_the_reader(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute) {
  consume<<<1, 32, 0, compute>>>(dev, 256); // expected-note {{'dev' is used on stream 'compute' here; record an event on stream 'compute' after this use and make stream 'copy' wait on it before the write}}
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-warning {{'dev' is written on stream 'copy' while stream 'compute' may still be using it; nothing orders stream 'copy' after that use [xstream-write-after-read]}}
}

// The next round's copy overwrites the staging buffer the last round's
// kernel may still read: the events order only the other direction.
void staging_loop(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute,
                  cudaEvent_t copied, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    cudaMemcpyAsync(dev, host + r * 256, 1024, cudaMemcpyHostToDevice, copy); // expected-warning {{'dev' is written on stream 'copy' while stream 'compute' may still be using it}}
    cudaEventRecord(copied, copy);
    cudaStreamWaitEvent(compute, copied);
    consume<<<1, 32, 0, compute>>>(dev, 256); // expected-note {{'dev' is used on stream 'compute' here}}
  }
}

void memset_under_a_copy_out(float* dev, float* host, cudaStream_t a, cudaStream_t b) {
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, a); // expected-note {{'dev' is used on stream 'a' here}}
  cudaMemsetAsync(dev, 0, 1024, b); // expected-warning {{'dev' is written on stream 'b' while stream 'a' may still be using it}}
}

// A stream the function creates non-blocking is not ordered after the
// legacy default stream's reads.
void refill_under_a_legacy_reader(float* dev, const float* host) {
  cudaStream_t copy;
  cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking);
  consume<<<1, 32>>>(dev, 256); // expected-note {{'dev' is used on the legacy default stream here}}
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-warning {{'dev' is written on stream 'copy' while the legacy default stream may still be using it}}
}

// Two helpers' streams of one name are told apart by their functions.
void first_copy_back(float* host, const float* dev) {
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, stream);
}

void second_copy_back(float* host, const float* dev) {
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
}

void two_copies_back(float* host, const float* a, const float* b) {
  first_copy_back(host, a); // expected-note {{'host' is used on stream 'stream' of 'first_copy_back' here}}
  second_copy_back(host, b); // expected-warning {{'host' is written on stream 'stream' of 'second_copy_back' while stream 'stream' of 'first_copy_back' may still be using it}}
}

// Inside one capture the graph keeps the streams' order: the captured
// memset and the captured read on another stream have no edge.
void captured_without_the_join(float* dev, cudaStream_t capture, cudaStream_t side, cudaEvent_t fork,
                               cudaGraph_t* graph) {
  cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal);
  cudaEventRecord(fork, capture);
  cudaStreamWaitEvent(side, fork);
  consume<<<1, 32, 0, side>>>(dev, 256); // expected-note {{'dev' is used on stream 'side' here}}
  cudaMemsetAsync(dev, 0, 1024, capture); // expected-warning {{'dev' is written on stream 'capture' while stream 'side' may still be using it}}
  cudaStreamEndCapture(capture, graph);
}

// --- silent ---------------------------------------------------------------

// Captured work runs when its graph is launched, here after the reader.
void captured_write_after_a_read(float* dev, cudaStream_t reader, cudaStream_t capture,
                                 cudaStream_t launch, cudaEvent_t read_done) {
  consume<<<1, 32, 0, reader>>>(dev, 256);
  cudaEventRecord(read_done, reader);
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal);
  cudaMemsetAsync(dev, 0, 1024, capture);
  cudaStreamEndCapture(capture, &graph);
  cudaGraphInstantiate(&exec, graph);
  cudaStreamWaitEvent(launch, read_done);
  cudaGraphLaunch(exec, launch);
}


void staging_loop_both_ways(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute,
                            cudaEvent_t copied, cudaEvent_t consumed, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    cudaMemcpyAsync(dev, host + r * 256, 1024, cudaMemcpyHostToDevice, copy);
    cudaEventRecord(copied, copy);
    cudaStreamWaitEvent(compute, copied);
    consume<<<1, 32, 0, compute>>>(dev, 256);
    cudaEventRecord(consumed, compute);
    cudaStreamWaitEvent(copy, consumed);
  }
}

void host_waited(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute) {
  consume<<<1, 32, 0, compute>>>(dev, 256);
  cudaStreamSynchronize(compute);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
}

void same_stream(float* dev, const float* host, cudaStream_t s) {
  consume<<<1, 32, 0, s>>>(dev, 256);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, s);
}

void legacy_stream_reader(float* dev, const float* host, cudaStream_t copy) {
  consume<<<1, 32>>>(dev, 256);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
}

// Each stream refills its own half (a copy through the buffer's start may
// be of its first half only).
void halves(float* dev, const float* host, cudaStream_t even, cudaStream_t odd) {
  consume<<<1, 32, 0, even>>>(dev, 128);
  cudaMemcpyAsync(dev + 128, host, 512, cudaMemcpyHostToDevice, odd);
}

void halves_the_other_way(float* dev, const float* host, cudaStream_t even, cudaStream_t odd) {
  consume<<<1, 32, 0, odd>>>(dev + 128, 128);
  cudaMemcpyAsync(dev, host, 512, cudaMemcpyHostToDevice, even);
}
