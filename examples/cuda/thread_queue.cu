// A layer's parameters handed between two host threads through a queue of
// the program's own (std::mutex and std::condition_variable).
//
//   thread_queue synced|early [--trials N]
//
// The main thread allocates each layer's block on its stream P
// (cudaMallocAsync), fills it there and hands it, with an event, to a
// consumer thread, which makes its stream C wait on the event and runs the
// layer over the block. The consumer hands the block back through a second
// queue; the main thread frees it on P, and the next layer's block comes
// out of the same pool on P.
//
//   synced  the consumer synchronizes with C before handing the block back:
//           the free is ordered after the read, through the host (the
//           queue's mutex orders the main thread after the consumer's
//           synchronization). Clean.
//   early   the consumer hands the block back as soon as the layer is
//           enqueued: the free is ordered after nothing on C, the next
//           layer's fill on P reuses the block while C may still read it.
//           The bug.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "common.cuh"

using namespace xsc_example;

namespace {

// A queue of the program's own, as a thread pool's: pushes and pops under
// one mutex, a pop sleeps on a condition variable while the queue is empty.
template <class T>
class Queue {
 public:
  void push(T item) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(item);
    }
    ready_.notify_one();
  }
  T pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return !items_.empty(); });
    T item = items_.front();
    items_.pop_front();
    return item;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<T> items_;
};

struct Layer {
  float* params = nullptr;
  cudaEvent_t filled = nullptr;
  int number = 0;  // 1..kLayers: its parameters' value
};

// Runs the consumer's side of every layer of a trial.
void consume(Queue<Layer>& to_consumer, Queue<Layer>& to_owner, Fixture& fx,
             cudaStream_t consumer, bool synced) {
  for (int l = 0; l < kLayers; ++l) {
    Layer layer = to_consumer.pop();
    XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(consumer, layer.filled, 0));
    launch_consume(layer.params, fx.x, fx.out_for(layer.number), consumer);
    if (synced) XSC_EXAMPLE_CHECK(cudaStreamSynchronize(consumer));
    to_owner.push(layer);  // handed back
  }
  XSC_EXAMPLE_CHECK(cudaStreamSynchronize(consumer));
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"synced", "early"}, nullptr, /*default_trials=*/10);
  const bool synced = args.mode == "synced";
  keep_pool_memory();
  Fixture fx;
  cudaStream_t owner, consumer;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&owner, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaEvent_t filled[kLayers];
  for (auto& e : filled) XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  const std::string title = "thread queue: " + args.mode;
  TrialReport report(title.c_str());
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    Queue<Layer> to_consumer, to_owner;
    std::thread consumer_thread(
        [&] { consume(to_consumer, to_owner, fx, consumer, synced); });
    // Two layers in flight: the third is allocated once the first came back.
    Layer next;
    for (int l = 0; l < kLayers; ++l) {
      if (l >= 2) {
        Layer done = to_owner.pop();
        XSC_EXAMPLE_CHECK(cudaFreeAsync(done.params, owner));  // the free
      }
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, owner));  // the reuse
      report.note_block(p);
      next.params = static_cast<float*>(p);
      next.number = l + 1;
      next.filled = filled[l];
      launch_fill(next.params, float(next.number), owner);
      XSC_EXAMPLE_CHECK(cudaEventRecord(next.filled, owner));
      to_consumer.push(next);
    }
    for (int l = kLayers - 2; l < kLayers; ++l)
      XSC_EXAMPLE_CHECK(cudaFreeAsync(to_owner.pop().params, owner));
    consumer_thread.join();
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  for (auto& e : filled) XSC_EXAMPLE_CHECK(cudaEventDestroy(e));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(owner));
  return 0;
}
