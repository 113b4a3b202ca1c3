// REQUIRES: clang-plugin
// RUN: %clangxx %cuda_stub_flags -fsyntax-only -fplugin=%plugin -Xclang -verify %s
//
// xstream-use-before-ready: a use on one stream of a buffer that a copy or
// memset on another stream wrote, with nothing ordering the use after the
// write. One function per case, flagged first.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

// --- flagged --------------------------------------------------------------

void copy_in_then_kernel(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute) {
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-note {{'dev' is written on stream 'copy' here; record an event on stream 'copy' after this write and make stream 'compute' wait on it before the use}}
  consume<<<1, 32, 0, compute>>>(dev, 256); // expected-warning {{'dev' is used on stream 'compute' before its write on stream 'copy' is ordered before this use; nothing makes stream 'compute' wait for stream 'copy' after the write [xstream-use-before-ready]}}
}

void event_recorded_before_the_copy(float* dev, const float* host, cudaStream_t copy,
                                    cudaStream_t compute, cudaEvent_t e) {
  cudaEventRecord(e, copy);  // too early: does not cover the copy below
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-note {{written on stream 'copy' here}}
  cudaStreamWaitEvent(compute, e);
  consume<<<1, 32, 0, compute>>>(dev, 256); // expected-warning {{[xstream-use-before-ready]}}
}

void memset_then_copy_out(float* dev, float* host, cudaStream_t a, cudaStream_t b) {
  cudaMemsetAsync(dev, 0, 1024, a); // expected-note {{'dev' is written on stream 'a' here}}
  cudaMemcpyAsync(host, dev, 1024, cudaMemcpyDeviceToHost, b); // expected-warning {{'dev' is used on stream 'b' before its write on stream 'a'}}
}

void written_on_one_path(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute,
                         bool refresh, cudaEvent_t e) {
  if (refresh) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-note {{written on stream 'copy' here}}
  } else {
    cudaEventRecord(e, copy);
    cudaStreamWaitEvent(compute, e);
  }
  consume<<<1, 32, 0, compute>>>(dev, 256); // expected-warning {{[xstream-use-before-ready]}}
}

// A stream the function creates non-blocking is ordered with neither
// default stream: CUDA does not order it with the legacy or the per-thread
// default stream, and a record on the legacy stream does not cover it.
void non_blocking_copy_then_legacy_use(float* dev, const float* host) {
  cudaStream_t copy;
  cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-note {{'dev' is written on stream 'copy' here}}
  consume<<<1, 32>>>(dev, 256); // expected-warning {{'dev' is used on the legacy default stream before its write on stream 'copy' is ordered before this use; nothing makes the legacy default stream wait for stream 'copy' after the write [xstream-use-before-ready]}}
}

void legacy_copy_then_non_blocking_use(float* dev, const float* host) {
  cudaStream_t compute;
  cudaStreamCreateWithPriority(&compute, cudaStreamNonBlocking, -1);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice); // expected-note {{'dev' is written on the legacy default stream here}}
  consume<<<1, 32, 0, compute>>>(dev, 256); // expected-warning {{'dev' is used on stream 'compute' before its write on the legacy default stream}}
}

void non_blocking_copy_then_per_thread_use(float* dev, const float* host) {
  cudaStream_t copy;
  cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-note {{written on stream 'copy' here}}
  consume<<<1, 32, 0, cudaStreamPerThread>>>(dev, 256); // expected-warning {{'dev' is used on the per-thread default stream before its write on stream 'copy'}}
}

void legacy_record_does_not_cover_a_non_blocking_stream(float* dev, const float* host,
                                                        cudaStream_t compute, cudaEvent_t e) {
  cudaStream_t copy;
  cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy); // expected-note {{written on stream 'copy' here}}
  cudaEventRecord(e, 0);
  cudaStreamWaitEvent(compute, e);
  consume<<<1, 32, 0, compute>>>(dev, 256); // expected-warning {{'dev' is used on stream 'compute' before its write on stream 'copy'}}
}

// --- silent ---------------------------------------------------------------

// A stream created blocking, or with flags the function does not know, is
// ordered with the legacy default stream by CUDA (or may be); a non-blocking
// one the legacy stream waited for, or the host synchronized, is ordered.
void blocking_copy_then_legacy_use(float* dev, const float* host) {
  cudaStream_t copy;
  cudaStreamCreate(&copy);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
  consume<<<1, 32>>>(dev, 256);
}

void flags_not_known(float* dev, const float* host, unsigned flags) {
  cudaStream_t copy;
  cudaStreamCreateWithFlags(&copy, flags);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
  consume<<<1, 32>>>(dev, 256);
}

void non_blocking_waited_for(float* dev, const float* host, cudaEvent_t e) {
  cudaStream_t copy;
  cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
  cudaEventRecord(e, copy);
  cudaStreamWaitEvent(0, e);
  consume<<<1, 32>>>(dev, 256);
}

void non_blocking_synchronized(float* dev, const float* host) {
  cudaStream_t copy;
  cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking);
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
  cudaStreamSynchronize(copy);
  consume<<<1, 32>>>(dev, 256);
}

// A stream member its class creates non-blocking (in the constructor here)
// and never assigns otherwise is non-blocking in every member function.
class Uploader {
 public:
  Uploader() : copy_(nullptr) { cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking); }
  ~Uploader() { cudaStreamDestroy(copy_); }
  void upload_then_use(float* dev, const float* host) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy_); // expected-note {{'dev' is written on stream 'copy_' here}}
    consume<<<1, 32>>>(dev, 256); // expected-warning {{'dev' is used on the legacy default stream before its write on stream 'copy_'}}
  }
  void upload_synchronized(float* dev, const float* host) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy_);
    cudaStreamSynchronize(copy_);
    consume<<<1, 32>>>(dev, 256);
  }

 private:
  cudaStream_t copy_;
};

// Members the check cannot vouch for: created blocking, public (anyone may
// assign it), assigned besides its creation, created with flags that are not
// a constant. Each may be ordered with the legacy stream: not judged.
class BlockingMember {
 public:
  BlockingMember() { cudaStreamCreate(&copy_); }
  void run(float* dev, const float* host) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy_);
    consume<<<1, 32>>>(dev, 256);
  }

 private:
  cudaStream_t copy_;
};

struct PublicMember {
  PublicMember() { cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking); }
  void run(float* dev, const float* host) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
    consume<<<1, 32>>>(dev, 256);
  }
  cudaStream_t copy;
};

class AssignedMember {
 public:
  AssignedMember() { cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking); }
  void use_stream(cudaStream_t s) { copy_ = s; }
  void run(float* dev, const float* host) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy_);
    consume<<<1, 32>>>(dev, 256);
  }

 private:
  cudaStream_t copy_;
};

class FlaggedMember {
 public:
  explicit FlaggedMember(unsigned flags) { cudaStreamCreateWithFlags(&copy_, flags); }
  void run(float* dev, const float* host) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy_);
    consume<<<1, 32>>>(dev, 256);
  }

 private:
  cudaStream_t copy_;
};

// A class template's member: the member functions an instantiation did not
// need are not there to read (a setter no caller here instantiated).
template <typename T>
class TemplatedUploader {
 public:
  TemplatedUploader() { cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking); }
  void use_stream(cudaStream_t s) { copy_ = s; }
  void run(T* dev, const T* host) {
    cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy_);
    consume<<<1, 32>>>(dev, 256);
  }

 private:
  cudaStream_t copy_;
};

void run_templated(float* dev, const float* host) {
  TemplatedUploader<float> uploader;
  uploader.run(dev, host);
}

void waited(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute, cudaEvent_t e) {
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
  cudaEventRecord(e, copy);
  cudaStreamWaitEvent(compute, e);
  consume<<<1, 32, 0, compute>>>(dev, 256);
}

void host_synchronized(float* dev, const float* host, cudaStream_t copy, cudaStream_t compute) {
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
  cudaStreamSynchronize(copy);
  consume<<<1, 32, 0, compute>>>(dev, 256);
}

void same_stream(float* dev, const float* host, cudaStream_t s) {
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, s);
  consume<<<1, 32, 0, s>>>(dev, 256);
}

// The legacy default stream is ordered with blocking streams by CUDA
// itself, which the check does not know of a stream it is handed: not judged.
// (Streams the function creates non-blocking are judged: above.)
void legacy_stream_copy(float* dev, const float* host, cudaStream_t compute) {
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice);
  consume<<<1, 32, 0, compute>>>(dev, 256);
}

void legacy_stream_use(float* dev, const float* host, cudaStream_t copy) {
  cudaMemcpyAsync(dev, host, 1024, cudaMemcpyHostToDevice, copy);
  consume<<<1, 32>>>(dev, 256);
}

// Two streams each fill and read their own half of one buffer: a pointer
// offset may be a part the other stream's write does not touch.
void halves_on_two_streams(float* dev, const float* host, cudaStream_t even, cudaStream_t odd) {
  cudaMemcpyAsync(dev, host, 512, cudaMemcpyHostToDevice, even);
  consume<<<1, 32, 0, even>>>(dev, 128);
  cudaMemcpyAsync(dev + 128, host + 128, 512, cudaMemcpyHostToDevice, odd);
  consume<<<1, 32, 0, odd>>>(dev + 128, 128);
}

void stage(float* d, const float* h, int n, cudaStream_t s) {
  cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s);
  consume<<<1, 32, 0, s>>>(d, n);
}

void halves_through_a_helper(float* dev, const float* host, cudaStream_t even, cudaStream_t odd) {
  stage(dev, host, 128, even);
  stage(dev + 128, host + 128, 128, odd);
}
