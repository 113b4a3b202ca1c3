// The four producer/consumer pipelines over CUDA's stream-ordered allocator.
//
//   pipelines_async MODE [--trials N]     MODE: buggy | record_stream | stall | keep_ref
//
// Each layer's parameters are allocated with cudaMallocAsync on the producer
// stream and filled there; the consumer stream reads them. A block freed with
// cudaFreeAsync on the producer stream is handed to the producer's next
// allocation at once, so the free must be ordered after the consumer's read:
//   buggy          frees with no ordering: the next fill overwrites the block
//                  while the consumer still reads it
//   record_stream  defers the free until an event recorded on the consumer
//                  reports completion, polled at the next allocation (how
//                  PyTorch's caching allocator implements record_stream)
//   stall          makes the producer wait on the consumer's event, then frees
//   keep_ref       keeps the block one layer longer and waits before freeing
#include <deque>

#include "common.cuh"

using namespace xsc_example;

namespace {

struct Streams {
  cudaStream_t producer = nullptr;
  cudaStream_t consumer = nullptr;
};

float* allocate_params(cudaStream_t producer) {
  void* p = nullptr;
  XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, producer));
  return static_cast<float*>(p);
}

// "All-gather": allocate and fill one layer's parameters on the producer.
float* produce(Streams s, int layer, TrialReport& report) {
  float* params = allocate_params(s.producer);
  launch_fill(params, float(layer), s.producer);
  report.note_block(params);
  return params;
}

// "Forward": the consumer waits for the producer, then reads the parameters.
void consume(Streams s, const float* params, Fixture& fx, int layer) {
  wait_stream(s.consumer, s.producer);
  launch_consume(params, fx.x, fx.out_for(layer), s.consumer);
}

cudaEvent_t record_on(cudaStream_t stream) {
  cudaEvent_t ev;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  XSC_EXAMPLE_CHECK(cudaEventRecord(ev, stream));
  return ev;
}

__attribute__((noinline)) void run_buggy(Streams s, Fixture& fx, TrialReport& report) {
  float* params = produce(s, 1, report);
  for (int layer = 1; layer <= kLayers; ++layer) {
    consume(s, params, fx, layer);
    // Nothing orders the producer after the read that was just enqueued.
    XSC_EXAMPLE_CHECK(cudaFreeAsync(params, s.producer));  // free-site: buggy
    if (layer < kLayers) params = produce(s, layer + 1, report);
  }
}

// Frees parked by record_stream: each waits for its consumer event.
struct DeferredFree {
  void* ptr;
  cudaEvent_t consumer_done;
};

// Returns parked blocks to the pool once their event has completed; a block
// whose event is still pending stays parked (cudaErrorNotReady).
void process_deferred(std::deque<DeferredFree>& parked, cudaStream_t producer) {
  for (auto it = parked.begin(); it != parked.end();) {
    cudaError_t st = cudaEventQuery(it->consumer_done);
    if (st == cudaErrorNotReady) {
      ++it;
      continue;
    }
    XSC_EXAMPLE_CHECK(st);
    XSC_EXAMPLE_CHECK(cudaFreeAsync(it->ptr, producer));  // free-site: record_stream
    XSC_EXAMPLE_CHECK(cudaEventDestroy(it->consumer_done));
    it = parked.erase(it);
  }
}

__attribute__((noinline)) void run_record_stream(Streams s, Fixture& fx, TrialReport& report) {
  std::deque<DeferredFree> parked;
  float* params = produce(s, 1, report);
  for (int layer = 1; layer <= kLayers; ++layer) {
    consume(s, params, fx, layer);
    parked.push_back({params, record_on(s.consumer)});
    if (layer < kLayers) {
      process_deferred(parked, s.producer);  // the allocator polls before it allocates
      params = produce(s, layer + 1, report);
    }
  }
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  process_deferred(parked, s.producer);
  if (!parked.empty()) {
    std::fprintf(stderr, "record_stream: %zu blocks still parked after synchronize\n",
                 parked.size());
    std::exit(1);
  }
}

__attribute__((noinline)) void run_stall(Streams s, Fixture& fx, TrialReport& report) {
  float* params = produce(s, 1, report);
  for (int layer = 1; layer <= kLayers; ++layer) {
    consume(s, params, fx, layer);
    cudaEvent_t done = record_on(s.consumer);
    XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(s.producer, done, 0));  // wait first,
    XSC_EXAMPLE_CHECK(cudaFreeAsync(params, s.producer));          // then free
    XSC_EXAMPLE_CHECK(cudaEventDestroy(done));
    if (layer < kLayers) params = produce(s, layer + 1, report);
  }
}

__attribute__((noinline)) void run_keep_ref(Streams s, Fixture& fx, TrialReport& report) {
  float* keepalive = nullptr;
  cudaEvent_t keepalive_done = nullptr;
  float* params = produce(s, 1, report);
  for (int layer = 1; layer <= kLayers; ++layer) {
    if (keepalive) {
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(s.producer, keepalive_done, 0));
      XSC_EXAMPLE_CHECK(cudaFreeAsync(keepalive, s.producer));
      XSC_EXAMPLE_CHECK(cudaEventDestroy(keepalive_done));
    }
    consume(s, params, fx, layer);
    keepalive = params;  // still referenced: the next allocation gets another block
    keepalive_done = record_on(s.consumer);
    if (layer < kLayers) params = produce(s, layer + 1, report);
  }
  XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(s.producer, keepalive_done, 0));
  XSC_EXAMPLE_CHECK(cudaFreeAsync(keepalive, s.producer));
  XSC_EXAMPLE_CHECK(cudaEventDestroy(keepalive_done));
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"buggy", "record_stream", "stall", "keep_ref"});
  keep_pool_memory();
  Fixture fx;
  Streams s;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s.producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s.consumer, cudaStreamNonBlocking));
  print_streams(s.producer, s.consumer);

  void (*run)(Streams, Fixture&, TrialReport&) =
      args.mode == "buggy"           ? run_buggy
      : args.mode == "record_stream" ? run_record_stream
      : args.mode == "stall"         ? run_stall
                                     : run_keep_ref;
  std::string title = "cudaMallocAsync pipeline: " + args.mode;
  TrialReport report(title.c_str());
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    run(s, fx, report);
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();

  XSC_EXAMPLE_CHECK(cudaStreamDestroy(s.consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(s.producer));
  return 0;
}
