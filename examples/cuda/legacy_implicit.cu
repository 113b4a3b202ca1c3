// Ordering that comes only from the legacy default stream.
//
//   legacy_implicit [blocking|nonblocking] [--trials N]
//
// The producer frees each block on its own stream with no event, after a
// kernel on the legacy default stream (stream 0). With blocking streams (the
// default) that kernel waits for all earlier work on the consumer and the
// producer's later work waits for it, so the free is ordered after the
// consumer's read: clean, but only because of this implicit synchronization.
// With non-blocking streams the legacy kernel orders nothing: the same code
// is an unordered free.
#include "common.cuh"

using namespace xsc_example;

namespace {

// Touches no memory: its only effect is where it sits in stream order.
__global__ void legacy_marker() {}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"blocking", "nonblocking"}, "blocking");
  unsigned flags = args.mode == "blocking" ? cudaStreamDefault : cudaStreamNonBlocking;
  keep_pool_memory();
  Fixture fx;
  cudaStream_t producer, consumer;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&producer, flags));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, flags));
  print_streams(producer, consumer);

  std::string title = "legacy stream between consumer and free: " + args.mode + " streams";
  TrialReport report(title.c_str());
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
      legacy_marker<<<1, 1, 0, 0>>>();  // stream 0: the legacy default stream
      XSC_EXAMPLE_CHECK(cudaGetLastError());
      XSC_EXAMPLE_CHECK(cudaFreeAsync(params, producer));  // free-site: legacy
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(producer));
  return 0;
}
