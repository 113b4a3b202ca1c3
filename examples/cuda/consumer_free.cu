// The consumer frees the buffer on its own stream: clean.
//
//   consumer_free [--trials N]
//
// cudaFreeAsync(p, consumer) is ordered after everything already enqueued on
// the consumer, including its read, and the pool hands the block to another
// stream only after that free has been ordered or has completed. No event is
// needed on the producer.
#include "common.cuh"

using namespace xsc_example;

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {});
  keep_pool_memory();
  Fixture fx;
  cudaStream_t producer, consumer;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  print_streams(producer, consumer);

  TrialReport report("consumer frees on its own stream");
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    for (int layer = 1; layer <= kLayers; ++layer) {
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, producer));
      auto* params = static_cast<float*>(p);
      launch_fill(params, float(layer), producer);
      report.note_block(params);
      wait_stream(consumer, producer);
      launch_consume(params, fx.x, fx.out_for(layer), consumer);
      XSC_EXAMPLE_CHECK(cudaFreeAsync(params, consumer));
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(producer));
  return 0;
}
