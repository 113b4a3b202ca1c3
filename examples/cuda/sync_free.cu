// cudaFree synchronizes the device before it frees, so it is ordered after
// every use already enqueued, on any stream.
//
//   sync_free memcpy|graph|memcpy-async|graph-async [--trials N]
//
// memcpy   Each layer's parameters are uploaded from pageable host memory
//          with cudaMemcpy (which returns once the data is staged, before
//          the copy on the legacy default stream has landed), the consumer
//          stream waits for that copy and its kernel reads the block, and
//          the block is released with cudaFree right after the launch.
// graph    The parameters are filled on the producer stream. Per layer, a
//          graph is captured across two streams (the consumer kernel, and a
//          device-to-device copy of the block's first row on a forked
//          stream) and launched on a third stream that waited for the fill;
//          cudaFree follows the launch at once.
// *-async  The same work on a block from cudaMallocAsync on the producer,
//          released with cudaFreeAsync on the producer with nothing ordering
//          it after the consumer: the next layer's allocation gets the block
//          back while the read may still run.
//
// The first two are correct (CUDA Programming Guide: managing memory with
// cudaMalloc/cudaFree "causes the GPU to synchronize across all executing
// CUDA streams"); the -async variants are the unordered free.
#include <vector>

#include "common.cuh"

using namespace xsc_example;

namespace {

struct Streams {
  cudaStream_t producer, consumer, launcher, fork;
};

// The graph of one layer: the consumer kernel over `params` on the capture
// stream, and a copy of the block's first row on a stream forked from it.
cudaGraphExec_t capture_layer(const Streams& s, const float* params, float* row_copy,
                              Fixture& fx, int layer) {
  cudaEvent_t forked, joined;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
  XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(s.consumer, cudaStreamCaptureModeThreadLocal));
  XSC_EXAMPLE_CHECK(cudaEventRecord(forked, s.consumer));
  XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(s.fork, forked, 0));
  XSC_EXAMPLE_CHECK(cudaMemcpyAsync(row_copy, params, kHidden * sizeof(float),
                                    cudaMemcpyDeviceToDevice, s.fork));
  XSC_EXAMPLE_CHECK(cudaEventRecord(joined, s.fork));
  launch_consume(params, fx.x, fx.out_for(layer), s.consumer);
  XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(s.consumer, joined, 0));
  cudaGraph_t graph;
  XSC_EXAMPLE_CHECK(cudaStreamEndCapture(s.consumer, &graph));
  cudaGraphExec_t exec;
  XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  XSC_EXAMPLE_CHECK(cudaGraphDestroy(graph));
  XSC_EXAMPLE_CHECK(cudaEventDestroy(joined));
  XSC_EXAMPLE_CHECK(cudaEventDestroy(forked));
  return exec;
}

float* allocate(bool async, cudaStream_t producer) {
  void* p = nullptr;
  if (async)
    XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, producer));
  else
    XSC_EXAMPLE_CHECK(cudaMalloc(&p, kParamBytes));
  return static_cast<float*>(p);
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"memcpy", "graph", "memcpy-async", "graph-async"});
  const bool async = args.mode.size() > 6 && args.mode.compare(args.mode.size() - 6, 6, "-async") == 0;
  const bool graph = args.mode.rfind("graph", 0) == 0;
  keep_pool_memory();
  Fixture fx;
  Streams s;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s.producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s.consumer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s.launcher, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s.fork, cudaStreamNonBlocking));
  print_streams(s.producer, graph ? s.launcher : s.consumer);
  float* row_copies = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&row_copies, kLayers * kHidden * sizeof(float)));
  // Pageable: an ordinary vector, one layer's worth, refilled per layer
  // (cudaMemcpy has staged it by the time it returns).
  std::vector<float> pageable(kParamElems);

  std::string title = "free after queued work: " + args.mode;
  TrialReport report(title.c_str());
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    std::vector<cudaGraphExec_t> execs;
    for (int layer = 1; layer <= kLayers; ++layer) {
      float* params = allocate(async, s.producer);
      report.note_block(params);
      if (graph) {
        launch_fill(params, float(layer), s.producer);
        execs.push_back(capture_layer(s, params, row_copies + (layer - 1) * kHidden, fx, layer));
        wait_stream(s.launcher, s.producer);
        XSC_EXAMPLE_CHECK(cudaGraphLaunch(execs.back(), s.launcher));
      } else {
        std::fill(pageable.begin(), pageable.end(), float(layer));
        // A stream-ordered block exists once the producer reaches its
        // allocation: the copy's stream waits for that first.
        if (async) wait_stream(nullptr, s.producer);
        XSC_EXAMPLE_CHECK(cudaMemcpy(params, pageable.data(), kParamBytes, cudaMemcpyHostToDevice));
        wait_stream(s.consumer, nullptr);  // the copy may still be landing
        launch_consume(params, fx.x, fx.out_for(layer), s.consumer);
      }
      if (async)
        XSC_EXAMPLE_CHECK(cudaFreeAsync(params, s.producer));  // free-site: async
      else
        XSC_EXAMPLE_CHECK(cudaFree(params));  // free-site: sync
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    for (cudaGraphExec_t exec : execs) XSC_EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaFree(row_copies));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(s.fork));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(s.launcher));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(s.consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(s.producer));
  return 0;
}
