// A stream callback hands the free to a thread it starts.
//
//   callback_thread_free [callback|host-thread] [--trials N]
//
// Each layer's parameter block comes from cudaMallocAsync on the producer
// stream and is read by the consumer kernel on the consumer stream.
//
// callback     (default) cudaStreamAddCallback on the consumer after the
//              read. The callback may not call CUDA itself, so it starts a
//              std::thread that frees the block with cudaFreeAsync on the
//              producer. The callback runs only once the consumer's earlier
//              work is done, and the thread starts after it: the free is
//              ordered after the read. Correct.
// host-thread  The main thread starts the same thread right after the
//              launch, with no callback: the free may come while the read
//              still runs, and the next layer's allocation gets the block.
//
// The main thread waits for the freeing thread and joins it before the next
// layer, so the pool hands the freed block straight to the next allocation.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common.cuh"

using namespace xsc_example;

namespace {

struct Handoff {
  float* params = nullptr;
  cudaStream_t producer = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  std::thread worker;
  bool started = false;
  cudaError_t callback_status = cudaSuccess;
};

void free_on_producer(Handoff* h) {
  XSC_EXAMPLE_CHECK(cudaFreeAsync(h->params, h->producer));  // free-site: thread
}

// Runs on a CUDA driver thread once the consumer's earlier work is done.
void CUDART_CB after_read(cudaStream_t, cudaError_t status, void* data) {
  auto* h = static_cast<Handoff*>(data);
  std::lock_guard<std::mutex> lock(h->mu);
  h->callback_status = status;
  h->worker = std::thread(free_on_producer, h);
  h->started = true;
  h->cv.notify_one();
}

void start_directly(Handoff* h) {
  std::lock_guard<std::mutex> lock(h->mu);
  h->worker = std::thread(free_on_producer, h);
  h->started = true;
}

void join_worker(Handoff* h) {
  std::unique_lock<std::mutex> lock(h->mu);
  h->cv.wait(lock, [h] { return h->started; });
  std::thread worker = std::move(h->worker);
  lock.unlock();
  worker.join();
  XSC_EXAMPLE_CHECK(h->callback_status);
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"callback", "host-thread"}, "callback");
  const bool callback = args.mode == "callback";
  keep_pool_memory();
  Fixture fx;
  cudaStream_t producer, consumer;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  print_streams(producer, consumer);

  std::string title = "free from a thread: " + args.mode;
  TrialReport report(title.c_str());
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    for (int layer = 1; layer <= kLayers; ++layer) {
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, producer));
      Handoff h;
      h.params = static_cast<float*>(p);
      h.producer = producer;
      report.note_block(h.params);
      launch_fill(h.params, float(layer), producer);
      wait_stream(consumer, producer);
      launch_consume(h.params, fx.x, fx.out_for(layer), consumer);
      if (callback)
        XSC_EXAMPLE_CHECK(cudaStreamAddCallback(consumer, after_read, &h, 0));  // callback-site
      else
        start_directly(&h);
      join_worker(&h);
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(producer));
  return 0;
}
