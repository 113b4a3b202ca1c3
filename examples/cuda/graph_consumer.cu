// The consumer kernel runs inside a CUDA graph launched on the consumer stream.
//
//   graph_consumer [buggy|fixed] [--trials N]
//
// For each layer the consumer kernel is captured (on a side stream, so
// nothing runs) into a graph that reads that layer's parameter block; the
// instantiated graph is launched on the consumer stream. buggy frees the
// block on the producer right after the launch; fixed makes the producer
// wait on an event recorded on the consumer after the launch first.
#include "common.cuh"

using namespace xsc_example;

namespace {

cudaGraphExec_t capture_consumer(cudaStream_t capture, const float* params, Fixture& fx,
                                 int layer) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal));
  launch_consume(params, fx.x, fx.out_for(layer), capture);
  XSC_EXAMPLE_CHECK(cudaStreamEndCapture(capture, &graph));
  XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  XSC_EXAMPLE_CHECK(cudaGraphDestroy(graph));
  return exec;
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"buggy", "fixed"}, "buggy");
  bool fixed = args.mode == "fixed";
  keep_pool_memory();
  Fixture fx;
  cudaStream_t producer, consumer, capture;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  print_streams(producer, consumer);

  std::string title = "graph consumer: " + args.mode;
  TrialReport report(title.c_str());
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    std::vector<cudaGraphExec_t> execs;
    for (int layer = 1; layer <= kLayers; ++layer) {
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, producer));
      auto* params = static_cast<float*>(p);
      launch_fill(params, float(layer), producer);
      report.note_block(params);
      execs.push_back(capture_consumer(capture, params, fx, layer));
      wait_stream(consumer, producer);
      XSC_EXAMPLE_CHECK(cudaGraphLaunch(execs.back(), consumer));
      if (fixed) wait_stream(producer, consumer);
      XSC_EXAMPLE_CHECK(cudaFreeAsync(params, producer));  // free-site: graph
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    for (cudaGraphExec_t exec : execs) XSC_EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(capture));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(producer));
  return 0;
}
