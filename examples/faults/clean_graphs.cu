// Clean corpus: CUDA graphs.
//  * A captured fork-join graph (two streams inside the capture) over
//    buffers allocated outside it, launched repeatedly on one stream.
//  * The same graph launched on another stream, ordered with events against
//    the allocation stream before the buffers are freed there.
//  * A captured graph that allocates and frees its own scratch buffer
//    (graph memory nodes).
// The checker must report nothing.
#include "fault_common.h"

namespace {

constexpr int kN = 4096;

cudaGraphExec_t capture_fork_join(cudaStream_t origin, cudaStream_t side, int* input,
                                  int* accumulator) {
  cudaEvent_t fork, join;
  FAULT_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  cudaGraph_t graph;
  FAULT_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
  fill_kernel<<<8, 128, 0, origin>>>(input, kN, 2);
  FAULT_CHECK(cudaEventRecord(fork, origin));
  FAULT_CHECK(cudaStreamWaitEvent(side, fork, 0));
  accumulate_kernel<<<8, 128, 0, side>>>(input, accumulator, kN);
  FAULT_CHECK(cudaEventRecord(join, side));
  FAULT_CHECK(cudaStreamWaitEvent(origin, join, 0));
  FAULT_CHECK(cudaStreamEndCapture(origin, &graph));
  cudaGraphExec_t exec;
  FAULT_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  FAULT_CHECK(cudaGraphDestroy(graph));
  FAULT_CHECK(cudaEventDestroy(fork));
  FAULT_CHECK(cudaEventDestroy(join));
  return exec;
}

cudaGraphExec_t capture_with_scratch(cudaStream_t origin, int* accumulator) {
  cudaGraph_t graph;
  FAULT_CHECK(cudaStreamBeginCapture(origin, cudaStreamCaptureModeThreadLocal));
  int* scratch = nullptr;
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&scratch), sizeof(int) * kN, origin));
  fill_kernel<<<8, 128, 0, origin>>>(scratch, kN, 5);
  accumulate_kernel<<<8, 128, 0, origin>>>(scratch, accumulator, kN);
  FAULT_CHECK(cudaFreeAsync(scratch, origin));
  FAULT_CHECK(cudaStreamEndCapture(origin, &graph));
  cudaGraphExec_t exec;
  FAULT_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  FAULT_CHECK(cudaGraphDestroy(graph));
  return exec;
}

}  // namespace

int main() {
  cudaStream_t origin, side, other;
  FAULT_CHECK(cudaStreamCreateWithFlags(&origin, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
  int* input = nullptr;
  int* accumulator = nullptr;
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&input), sizeof(int) * kN, origin));
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&accumulator), sizeof(int) * kN, origin));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * kN, origin));
  FAULT_CHECK(cudaStreamSynchronize(origin));

  cudaGraphExec_t fork_join = capture_fork_join(origin, side, input, accumulator);
  for (int i = 0; i < 5; ++i) FAULT_CHECK(cudaGraphLaunch(fork_join, origin));
  std::printf("fork-join graph on its origin stream: checksum %lld\n",
              device_sum(accumulator, kN, origin));

  cudaEvent_t before, after;
  FAULT_CHECK(cudaEventCreateWithFlags(&before, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventCreateWithFlags(&after, cudaEventDisableTiming));
  FAULT_CHECK(cudaEventRecord(before, origin));
  FAULT_CHECK(cudaStreamWaitEvent(other, before, 0));
  for (int i = 0; i < 3; ++i) FAULT_CHECK(cudaGraphLaunch(fork_join, other));
  FAULT_CHECK(cudaEventRecord(after, other));
  FAULT_CHECK(cudaStreamWaitEvent(origin, after, 0));
  std::printf("fork-join graph on another stream: checksum %lld\n",
              device_sum(accumulator, kN, origin));

  cudaGraphExec_t with_scratch = capture_with_scratch(origin, accumulator);
  for (int i = 0; i < 3; ++i) FAULT_CHECK(cudaGraphLaunch(with_scratch, origin));
  std::printf("graph with its own allocation: checksum %lld\n",
              device_sum(accumulator, kN, origin));

  FAULT_CHECK(cudaFreeAsync(input, origin));
  FAULT_CHECK(cudaFreeAsync(accumulator, origin));
  FAULT_CHECK(cudaStreamSynchronize(origin));
  FAULT_CHECK(cudaGraphExecDestroy(fork_join));
  FAULT_CHECK(cudaGraphExecDestroy(with_scratch));
  FAULT_CHECK(cudaEventDestroy(before));
  FAULT_CHECK(cudaEventDestroy(after));
  FAULT_CHECK(cudaStreamDestroy(origin));
  FAULT_CHECK(cudaStreamDestroy(side));
  FAULT_CHECK(cudaStreamDestroy(other));
  return 0;
}
