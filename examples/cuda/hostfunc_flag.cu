// A host function as the ordering point: it sets a flag the host waits for.
//
//   hostfunc_flag [flag|no-hostfunc] [--trials N]
//
// Each layer's parameter block comes from cudaMallocAsync on the producer
// stream and is read by the consumer kernel on the consumer stream.
//
// flag         (default) cudaLaunchHostFunc on the consumer after the read;
//              the function sets an atomic flag, the host spins until it is
//              set and then frees the block with cudaFreeAsync on the
//              producer. A host function runs only after all earlier work
//              of its stream, so the free is ordered after the read.
// no-hostfunc  The same program without the host function: the host frees
//              right after the launch, before anything orders the producer
//              after the consumer.
#include <atomic>
#include <thread>

#include "common.cuh"

using namespace xsc_example;

namespace {

void CUDART_CB mark_read_done(void* data) {
  static_cast<std::atomic<bool>*>(data)->store(true, std::memory_order_release);
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"flag", "no-hostfunc"}, "flag");
  const bool use_flag = args.mode == "flag";
  keep_pool_memory();
  Fixture fx;
  cudaStream_t producer, consumer;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  print_streams(producer, consumer);

  std::string title = "host function flag: " + args.mode;
  TrialReport report(title.c_str());
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    for (int layer = 1; layer <= kLayers; ++layer) {
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, producer));
      auto* params = static_cast<float*>(p);
      report.note_block(params);
      launch_fill(params, float(layer), producer);
      wait_stream(consumer, producer);
      launch_consume(params, fx.x, fx.out_for(layer), consumer);
      if (use_flag) {
        std::atomic<bool> read_done{false};
        XSC_EXAMPLE_CHECK(cudaLaunchHostFunc(consumer, mark_read_done, &read_done));  // hostfunc-site
        while (!read_done.load(std::memory_order_acquire)) std::this_thread::yield();
        XSC_EXAMPLE_CHECK(cudaFreeAsync(params, producer));  // free-site: flag
      } else {
        XSC_EXAMPLE_CHECK(cudaFreeAsync(params, producer));  // free-site: no-hostfunc
      }
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(producer));
  return 0;
}
