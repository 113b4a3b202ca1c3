// A conditional node (IF or WHILE) whose body is captured with
// cudaStreamBeginCaptureToGraph, as in NVIDIA's graphConditionalNodes sample
// (capturedWhileGraph).
//
//   graph_conditional [if|while|if-race|while-race]
//
// A reader stream runs sum(const float*, ...) over x (4 MiB). Then a graph
// is captured on the launch stream: a memset of x (top level), a conditional
// node appended to the capture (cudaStreamGetCaptureInfo, cudaGraphAddNode,
// cudaStreamUpdateCaptureDependencies), and its body, captured to graph on
// a third stream that never waited for anything: a memset of x and, for
// WHILE, a kernel that ends the loop. Nothing of it runs until the graph is
// launched on the launch stream.
//
// if, while: the launch stream waits on an event recorded after the read
// first: clean. Taking the body's memset as run on the body stream at capture
// would be a false write after read. if-race, while-race: no wait: the
// top-level memset, replayed at the launch, is a write after the read.
#include "common.cuh"

namespace {

constexpr std::size_t kElems = std::size_t(1) << 20;
constexpr std::size_t kBytes = kElems * sizeof(float);

__global__ void sum(const float* x, float* out, std::size_t n) {
  float acc = 0.0f;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
  atomicAdd(out, acc);
}

__global__ void end_loop(cudaGraphConditionalHandle handle) { cudaGraphSetConditional(handle, 0); }

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "if";
  if (mode != "if" && mode != "while" && mode != "if-race" && mode != "while-race") {
    std::fprintf(stderr, "usage: graph_conditional [if|while|if-race|while-race]\n");
    return 2;
  }
  const bool loop = mode.rfind("while", 0) == 0;
  const bool race = mode.find("-race") != std::string::npos;

  float* x = nullptr;
  float* out = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&x, kBytes));
  XSC_EXAMPLE_CHECK(cudaMalloc(&out, sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaMemset(x, 0, kBytes));
  XSC_EXAMPLE_CHECK(cudaMemset(out, 0, sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  cudaStream_t reader, launch, body_stream;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&launch, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&body_stream, cudaStreamNonBlocking));
  std::printf("streams: reader=%p launch=%p body=%p\n", static_cast<void*>(reader),
              static_cast<void*>(launch), static_cast<void*>(body_stream));
  std::fflush(stdout);  // before the report the runtime prints at exit
  cudaEvent_t read_done;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));

  sum<<<1, 256, 0, reader>>>(x, out, kElems);  // xsc: read
  XSC_EXAMPLE_CHECK(cudaGetLastError());
  XSC_EXAMPLE_CHECK(cudaEventRecord(read_done, reader));

  XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(launch, cudaStreamCaptureModeGlobal));
  XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 0, kBytes, launch));  // xsc: top-level write
  cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  const cudaGraphNode_t* deps = nullptr;
  std::size_t ndeps = 0;
  XSC_EXAMPLE_CHECK(
      cudaStreamGetCaptureInfo(launch, &status, nullptr, &graph, &deps, nullptr, &ndeps));
  cudaGraphConditionalHandle handle;
  XSC_EXAMPLE_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 1, cudaGraphCondAssignDefault));
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = loop ? cudaGraphCondTypeWhile : cudaGraphCondTypeIf;
  params.conditional.size = 1;
  cudaGraphNode_t node;
  XSC_EXAMPLE_CHECK(cudaGraphAddNode(&node, graph, deps, nullptr, ndeps, &params));
  XSC_EXAMPLE_CHECK(
      cudaStreamUpdateCaptureDependencies(launch, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  cudaGraph_t body = params.conditional.phGraph_out[0];
  XSC_EXAMPLE_CHECK(cudaStreamBeginCaptureToGraph(body_stream, body, nullptr, nullptr, 0,
                                                  cudaStreamCaptureModeRelaxed));
  XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 1, kBytes, body_stream));  // xsc: body write
  end_loop<<<1, 1, 0, body_stream>>>(handle);
  XSC_EXAMPLE_CHECK(cudaGetLastError());
  cudaGraph_t body_out;
  XSC_EXAMPLE_CHECK(cudaStreamEndCapture(body_stream, &body_out));
  cudaGraph_t captured;
  XSC_EXAMPLE_CHECK(cudaStreamEndCapture(launch, &captured));
  cudaGraphExec_t exec;
  XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, captured, 0));

  if (!race) XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(launch, read_done, 0));  // xsc: wait
  XSC_EXAMPLE_CHECK(cudaGraphLaunch(exec, launch));  // xsc: launch
  XSC_EXAMPLE_CHECK(cudaStreamSynchronize(launch));
  XSC_EXAMPLE_CHECK(cudaStreamSynchronize(reader));

  unsigned first = 0;
  XSC_EXAMPLE_CHECK(cudaMemcpy(&first, x, sizeof first, cudaMemcpyDeviceToHost));
  // The body ran once: its memset left 0x01 in every byte.
  const bool ran = first == 0x01010101u;
  std::printf("%s body ran: %s\n", loop ? "while" : "if", ran ? "yes" : "no");
  XSC_EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
  XSC_EXAMPLE_CHECK(cudaGraphDestroy(captured));
  XSC_EXAMPLE_CHECK(cudaFree(x));
  XSC_EXAMPLE_CHECK(cudaFree(out));
  return ran ? 0 : 1;
}
