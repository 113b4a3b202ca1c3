// Two streams ordered by a stream memory operation instead of an event: the
// consumer writes a value to a word in device memory when it is done with a
// layer's block (cuStreamWriteValue32), and the owner waits until the word
// holds it (cuStreamWaitValue32) before freeing the block.
//
//   stream_signal signalled|early [--trials N]
//
// Each layer's block is allocated on the owner's stream (cudaMallocAsync),
// filled there, read on the consumer's stream after an event, and freed on
// the owner's stream; the next layer's block comes out of the same pool.
//
//   signalled  the consumer writes the layer's number after the layer's
//              kernel: the owner's wait for it orders the free after the
//              read. Clean.
//   early      the consumer writes the number before the kernel: the wait
//              is satisfied while the kernel may still read the block, and
//              the next layer's fill on the owner's stream reuses it. The
//              bug.
#include <cuda.h>

#include "common.cuh"

using namespace xsc_example;

namespace {

void check_driver(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(result, &name);
  std::fprintf(stderr, "stream_signal: %s failed: %s\n", what, name ? name : "?");
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"signalled", "early"}, nullptr, /*default_trials=*/10);
  const bool early = args.mode == "early";
  keep_pool_memory();
  Fixture fx;
  cudaStream_t owner, consumer;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&owner, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  cudaEvent_t filled;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  // The word the consumer signals through; counts up across trials.
  std::uint32_t* word = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&word, sizeof *word));
  XSC_EXAMPLE_CHECK(cudaMemset(word, 0, sizeof *word));
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  const auto flag = reinterpret_cast<CUdeviceptr>(word);
  std::uint32_t signal = 0;

  const std::string title = "stream signal: " + args.mode;
  TrialReport report(title.c_str());
  for (int t = 0; t < args.trials; ++t) {
    fx.clear_outputs();
    for (int layer = 1; layer <= kLayers; ++layer) {
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, owner));  // the reuse
      report.note_block(p);
      auto* params = static_cast<float*>(p);
      launch_fill(params, float(layer), owner);
      XSC_EXAMPLE_CHECK(cudaEventRecord(filled, owner));
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(consumer, filled, 0));
      ++signal;
      if (early)
        check_driver(cuStreamWriteValue32(reinterpret_cast<CUstream>(consumer), flag, signal, 0),
                     "cuStreamWriteValue32");
      launch_consume(params, fx.x, fx.out_for(layer), consumer);
      if (!early)
        check_driver(cuStreamWriteValue32(reinterpret_cast<CUstream>(consumer), flag, signal, 0),
                     "cuStreamWriteValue32");
      check_driver(cuStreamWaitValue32(reinterpret_cast<CUstream>(owner), flag, signal,
                                       CU_STREAM_WAIT_VALUE_GEQ),
                   "cuStreamWaitValue32");
      XSC_EXAMPLE_CHECK(cudaFreeAsync(params, owner));  // the free
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  XSC_EXAMPLE_CHECK(cudaFree(word));
  XSC_EXAMPLE_CHECK(cudaEventDestroy(filled));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(owner));
  return 0;
}
