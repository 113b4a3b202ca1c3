// Lambdas followed where they are called, as helpers are: parameters are the
// call's arguments, captures the enclosing function's variables. One bug and
// its correct twin per form; the expected-* comments are the specification
// (plugin-lambdas.test), lint-lambdas.test checks the driver and clang-tidy.
// A use or a free inside a called lambda is reported at the call.
#include <cuda_runtime.h>

__global__ void consume(const float* p, int n) {}

// A small project helper that calls the function object it is given.
template <class F>
void on_stream(cudaStream_t s, F f) {
  f(s);
}

// --- a lambda held in a local, its buffer a parameter -----------------------

void param_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&](float* b) { consume<<<1, 32, 0, cons>>>(b, 256); };
  launch(buf); // expected-note {{'buf' is used on stream 'cons' here; record an event on stream 'cons' after this use}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it; nothing orders stream 'prod' after that use [xstream-unordered-free]}}
}

// The lambda records an event on cons after the launch; prod waits on it.
void param_recorded_inside(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&](float* b) {
    consume<<<1, 32, 0, cons>>>(b, 256);
    cudaEventRecord(done, cons);
  };
  launch(buf);
  cudaStreamWaitEvent(prod, done);
  cudaFreeAsync(buf, prod);
}

// The stream is a parameter too.
void param_stream_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [](float* b, cudaStream_t s) { consume<<<1, 32, 0, s>>>(b, 256); };
  launch(buf, prod);
  launch(buf, cons); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void param_stream_same(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [](float* b, cudaStream_t s) { consume<<<1, 32, 0, s>>>(b, 256); };
  launch(buf, prod);
  cudaFreeAsync(buf, prod);
}

// --- captures ---------------------------------------------------------------

void capture_ref_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&] { consume<<<1, 32, 0, cons>>>(buf, 256); };
  launch(); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

// Recorded after the lambda's call.
void capture_ref_recorded_after(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&] { consume<<<1, 32, 0, cons>>>(buf, 256); };
  launch();
  cudaEventRecord(done, cons);
  cudaStreamWaitEvent(prod, done);
  cudaFreeAsync(buf, prod);
}

void capture_copy_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [=] { consume<<<1, 32, 0, cons>>>(buf, 256); };
  launch(); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void capture_copy_synchronized(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [=] { consume<<<1, 32, 0, cons>>>(buf, 256); };
  launch();
  cudaStreamSynchronize(cons);
  cudaFreeAsync(buf, prod);
}

void capture_named_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [buf, cons] { consume<<<1, 32, 0, cons>>>(buf, 256); };
  launch(); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

// The lambda itself records and makes prod wait.
void capture_named_ordered_inside(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [buf, cons, prod, done] {
    consume<<<1, 32, 0, cons>>>(buf, 256);
    cudaEventRecord(done, cons);
    cudaStreamWaitEvent(prod, done);
  };
  launch();
  cudaFreeAsync(buf, prod);
}

// An init-capture names what its initializer names.
void init_capture_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [b = buf, s = cons] { consume<<<1, 32, 0, s>>>(b, 256); };
  launch(); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void init_capture_recorded_after(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [b = buf, s = cons] { consume<<<1, 32, 0, s>>>(b, 256); };
  launch();
  cudaEventRecord(done, cons);
  cudaStreamWaitEvent(prod, done);
  cudaFreeAsync(buf, prod);
}

// A lambda that is never called does nothing.
void never_called(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&] { consume<<<1, 32, 0, cons>>>(buf, 256); };
  (void)launch;
  cudaFreeAsync(buf, prod);
}

// --- generic lambdas ----------------------------------------------------------

void generic_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [](auto* b, auto s) { consume<<<1, 32, 0, s>>>(b, 256); };
  launch(buf, cons); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void generic_recorded_inside(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&](auto* b, auto s) {
    consume<<<1, 32, 0, s>>>(b, 256);
    cudaEventRecord(done, s);
  };
  launch(buf, cons);
  cudaStreamWaitEvent(prod, done);
  cudaFreeAsync(buf, prod);
}

// --- immediately invoked -------------------------------------------------------

void invoked_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  [&] { consume<<<1, 32, 0, cons>>>(buf, 256); }(); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void invoked_recorded_inside(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  [&](cudaStream_t s) {
    consume<<<1, 32, 0, s>>>(buf, 256);
    cudaEventRecord(done, s);
  }(cons);
  cudaStreamWaitEvent(prod, done);
  cudaFreeAsync(buf, prod);
}

// --- passed to a helper that calls it --------------------------------------------

void passed_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  on_stream(cons, [&](cudaStream_t s) { consume<<<1, 32, 0, s>>>(buf, 256); }); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void passed_recorded_inside(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  on_stream(cons, [&](cudaStream_t s) {
    consume<<<1, 32, 0, s>>>(buf, 256);
    cudaEventRecord(done, s);
  });
  cudaStreamWaitEvent(prod, done);
  cudaFreeAsync(buf, prod);
}

// A generic lambda held in a local, passed on.
void passed_generic_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [buf](auto s) { consume<<<1, 32, 0, s>>>(buf, 256); };
  on_stream(cons, launch); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void passed_generic_on_prod(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [buf](auto s) { consume<<<1, 32, 0, s>>>(buf, 256); };
  on_stream(prod, launch);
  cudaFreeAsync(buf, prod);
}

// --- a lambda called from a lambda that captured it ------------------------------

void nested_unordered(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&](float* b) { consume<<<1, 32, 0, cons>>>(b, 256); };
  auto stage = [&] { launch(buf); };
  stage(); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void nested_recorded_inside(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  auto launch = [&](float* b) { consume<<<1, 32, 0, cons>>>(b, 256); };
  auto stage = [&] {
    launch(buf);
    cudaEventRecord(done, cons);
  };
  stage();
  cudaStreamWaitEvent(prod, done);
  cudaFreeAsync(buf, prod);
}

// --- lambdas that order ------------------------------------------------------------

// A lambda that makes prod wait for cons: it orders where it is called.
void ordering_lambda(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  auto order_after = [&](cudaStream_t later, cudaStream_t earlier) {
    cudaEventRecord(done, earlier);
    cudaStreamWaitEvent(later, done);
  };
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  consume<<<1, 32, 0, cons>>>(buf, 256);
  order_after(prod, cons);
  cudaFreeAsync(buf, prod);
}

// Called before the use, it orders nothing after it.
void ordering_lambda_too_early(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  auto order_after = [&](cudaStream_t later, cudaStream_t earlier) {
    cudaEventRecord(done, earlier);
    cudaStreamWaitEvent(later, done);
  };
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  order_after(prod, cons);
  consume<<<1, 32, 0, cons>>>(buf, 256); // expected-note {{'buf' is used on stream 'cons' here}}
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

// The wait comes through a lambda called after the free.
void wait_lambda_after_free(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  auto wait = [&] { cudaStreamWaitEvent(prod, done); };
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  consume<<<1, 32, 0, cons>>>(buf, 256); // expected-note {{'buf' is used on stream 'cons' here, and the wait orders stream 'prod' after it}}
  cudaEventRecord(done, cons);
  cudaFreeAsync(buf, prod); // expected-warning {{'buf' is freed on stream 'prod' before stream 'prod' waits for its use on stream 'cons' [xstream-free-before-wait]}}
  wait(); // expected-note {{move this wait before the free}}
}

void wait_lambda_before_free(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  auto wait = [&] { cudaStreamWaitEvent(prod, done); };
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  consume<<<1, 32, 0, cons>>>(buf, 256);
  cudaEventRecord(done, cons);
  wait();
  cudaFreeAsync(buf, prod);
}

// --- lambdas that free -------------------------------------------------------------

// The captured buffer is the enclosing function's: its free is reported at
// the call, not dropped as a lambda's own.
void freeing_lambda(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  consume<<<1, 32, 0, cons>>>(buf, 256); // expected-note {{'buf' is used on stream 'cons' here}}
  auto release = [&] { cudaFreeAsync(buf, prod); };
  release(); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void freeing_lambda_after_wait(cudaStream_t prod, cudaStream_t cons, cudaEvent_t done) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  consume<<<1, 32, 0, cons>>>(buf, 256);
  cudaEventRecord(done, cons);
  auto release = [&] {
    cudaStreamWaitEvent(prod, done);
    cudaFreeAsync(buf, prod);
  };
  release();
}

// Freed through a helper the lambda is passed to.
void freeing_lambda_passed(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  consume<<<1, 32, 0, cons>>>(buf, 256); // expected-note {{'buf' is used on stream 'cons' here}}
  on_stream(prod, [&](cudaStream_t s) { cudaFreeAsync(buf, s); }); // expected-warning {{'buf' is freed on stream 'prod' while stream 'cons' may still be using it}}
}

void freeing_lambda_passed_synchronized(cudaStream_t prod, cudaStream_t cons) {
  float* buf;
  cudaMallocAsync(&buf, 1024, prod);
  consume<<<1, 32, 0, cons>>>(buf, 256);
  cudaStreamSynchronize(cons);
  on_stream(prod, [&](cudaStream_t s) { cudaFreeAsync(buf, s); });
}

// A lambda's own buffer is reported in the lambda only.
void lambda_own_buffer(cudaStream_t prod, cudaStream_t cons) {
  auto scratch = [&] {
    float* tmp;
    cudaMallocAsync(&tmp, 1024, prod);
    consume<<<1, 32, 0, cons>>>(tmp, 256); // expected-note {{'tmp' is used on stream 'cons' here}}
    cudaFreeAsync(tmp, prod); // expected-warning {{'tmp' is freed on stream 'prod' while stream 'cons' may still be using it}}
  };
  scratch();
}

// --- members through a captured this ---------------------------------------------

struct Stage {
  float* buf_;
  cudaStream_t prod_, cons_;
  cudaEvent_t done_;

  void step_unordered() {
    auto launch = [this] { consume<<<1, 32, 0, cons_>>>(buf_, 256); };
    launch(); // expected-note {{'buf_' is used on stream 'cons_' here}}
    cudaFreeAsync(buf_, prod_); // expected-warning {{'buf_' is freed on stream 'prod_' while stream 'cons_' may still be using it}}
  }

  void step_ordered() {
    auto launch = [this] {
      consume<<<1, 32, 0, cons_>>>(buf_, 256);
      cudaEventRecord(done_, cons_);
    };
    launch();
    cudaStreamWaitEvent(prod_, done_);
    cudaFreeAsync(buf_, prod_);
  }

  // Passed to a helper: `this` is still the enclosing object.
  void step_passed_unordered() {
    on_stream(cons_, [this](cudaStream_t s) { consume<<<1, 32, 0, s>>>(buf_, 256); }); // expected-note {{'buf_' is used on stream 'cons_' here}}
    cudaFreeAsync(buf_, prod_); // expected-warning {{'buf_' is freed on stream 'prod_' while stream 'cons_' may still be using it}}
  }
};
