// The right wait in the wrong place: the producer waits on the consumer's
// event only after freeing the block.
//
//   late_wait [--trials N]
//
// Between cudaFreeAsync and cudaStreamWaitEvent the block already belongs to
// the pool; any allocation made in that window (another library, a hook)
// gets it with nothing ordering its writes after the consumer's read. This
// run happens to allocate only after the wait, so its results are usually
// right; the ordering is still a bug, and the checker points at the wait.
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

  TrialReport report("wait enqueued after the free");
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
      cudaEvent_t done;
      XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
      XSC_EXAMPLE_CHECK(cudaEventRecord(done, consumer));
      XSC_EXAMPLE_CHECK(cudaFreeAsync(params, producer));          // free-site: late
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(producer, done, 0));   // wait-site: late
      XSC_EXAMPLE_CHECK(cudaEventDestroy(done));
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(producer));
  return 0;
}
