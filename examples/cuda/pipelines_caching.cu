// The four producer/consumer pipelines over a PyTorch-style caching allocator
// (caching_allocator.cuh) that reports its blocks through the xstream-check
// annotations.
//
//   pipelines_caching MODE [--trials N]   MODE: buggy | record_stream | stall | keep_ref
//
// The allocator hands a released block to the next allocation on the block's
// allocation stream (the producer) immediately, so:
//   buggy          releases right after enqueueing the consumer's read
//   record_stream  records the consumer stream on the block before releasing;
//                  the allocator parks the block until the consumer's event
//                  completes
//   stall          makes the producer wait on the consumer's event, then releases
//   keep_ref       keeps the block one layer longer and waits before releasing
#include "caching_allocator.cuh"
#include "common.cuh"

using namespace xsc_example;

namespace {

struct Pipeline {
  cudaStream_t producer = nullptr;
  cudaStream_t consumer = nullptr;
  CachingAllocator* allocator = nullptr;
  Fixture* fx = nullptr;
  TrialReport* report = nullptr;

  float* produce(int layer) {
    auto* params = static_cast<float*>(allocator->allocate(kParamBytes, producer));
    launch_fill(params, float(layer), producer);
    report->note_block(params);
    return params;
  }

  void consume(const float* params, int layer) {
    wait_stream(consumer, producer);
    launch_consume(params, fx->x, fx->out_for(layer), consumer);
  }

  cudaEvent_t consumer_done() {
    cudaEvent_t ev;
    XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    XSC_EXAMPLE_CHECK(cudaEventRecord(ev, consumer));
    return ev;
  }
};

__attribute__((noinline)) void run_buggy(Pipeline& p) {
  float* params = p.produce(1);
  for (int layer = 1; layer <= kLayers; ++layer) {
    p.consume(params, layer);
    // The block is reusable on the producer before the consumer has read it.
    p.allocator->release(params);  // free-site: buggy
    if (layer < kLayers) params = p.produce(layer + 1);
  }
}

__attribute__((noinline)) void run_record_stream(Pipeline& p) {
  float* params = p.produce(1);
  for (int layer = 1; layer <= kLayers; ++layer) {
    p.consume(params, layer);
    p.allocator->record_stream(params, p.consumer);
    p.allocator->release(params);
    if (layer < kLayers) params = p.produce(layer + 1);
  }
}

__attribute__((noinline)) void run_stall(Pipeline& p) {
  float* params = p.produce(1);
  for (int layer = 1; layer <= kLayers; ++layer) {
    p.consume(params, layer);
    cudaEvent_t done = p.consumer_done();
    XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(p.producer, done, 0));  // wait first,
    p.allocator->release(params);                                 // then release
    XSC_EXAMPLE_CHECK(cudaEventDestroy(done));
    if (layer < kLayers) params = p.produce(layer + 1);
  }
}

__attribute__((noinline)) void run_keep_ref(Pipeline& p) {
  float* keepalive = nullptr;
  cudaEvent_t keepalive_done = nullptr;
  float* params = p.produce(1);
  for (int layer = 1; layer <= kLayers; ++layer) {
    if (keepalive) {
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(p.producer, keepalive_done, 0));
      p.allocator->release(keepalive);
      XSC_EXAMPLE_CHECK(cudaEventDestroy(keepalive_done));
    }
    p.consume(params, layer);
    keepalive = params;
    keepalive_done = p.consumer_done();
    if (layer < kLayers) params = p.produce(layer + 1);
  }
  XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(p.producer, keepalive_done, 0));
  p.allocator->release(keepalive);
  XSC_EXAMPLE_CHECK(cudaEventDestroy(keepalive_done));
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"buggy", "record_stream", "stall", "keep_ref"});
  Fixture fx;
  CachingAllocator allocator;
  Pipeline p;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&p.producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&p.consumer, cudaStreamNonBlocking));
  p.allocator = &allocator;
  p.fx = &fx;
  print_streams(p.producer, p.consumer);

  void (*run)(Pipeline&) = args.mode == "buggy"           ? run_buggy
                           : args.mode == "record_stream" ? run_record_stream
                           : args.mode == "stall"         ? run_stall
                                                          : run_keep_ref;
  std::string title = "caching allocator pipeline: " + args.mode;
  TrialReport report(title.c_str());
  p.report = &report;
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    run(p);
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();

  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  allocator.release_cached();
  if (allocator.parked_blocks() != 0) {
    std::fprintf(stderr, "caching allocator: %zu blocks still parked at exit\n",
                 allocator.parked_blocks());
    return 1;
  }
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(p.consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(p.producer));
  return 0;
}
