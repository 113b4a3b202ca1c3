// A conditional node (IF or WHILE) whose body is captured with
// cudaStreamBeginCaptureToGraph, the route of NVIDIA's graphConditionalNodes
// sample (capturedWhileGraph).
//
//   graph_conditional MODE
//
//   MODE: if, while, if-race, while-race, and {if,while}-body-{race,ordered}
//
// A reader stream runs sum(const float*, ...) over x (4 MiB). Then a graph
// is captured on the launch stream: a memset of x (top level), for IF a
// kernel that sets the node's handle to 1 (the IF handle's default is 0;
// the WHILE handle's default is 1 and a kernel in the body sets it to 0),
// then a conditional node appended to the capture (cudaStreamGetCaptureInfo,
// cudaGraphAddNode, cudaStreamUpdateCaptureDependencies), and its body,
// captured to graph on a third stream: a memset of x. Nothing of it runs
// until the graph is launched on the launch stream.
//
// if, while: the launch stream waits on an event recorded after the read
// first: clean. Taking the body's memset as run on the body stream at capture
// would be a false write after read. if-race, while-race: no wait: the
// top-level memset and the body's memset, both replayed on the launch
// stream, are each a write after the read.
//
// *-body-race, *-body-ordered: the launch waits for the read. The body forks
// from the body stream to a fourth stream (an event), runs the memset of x
// there and sum(x) on the body stream; the fourth stream joins back after
// the sum (race: the sum may read x while the memset writes it, a use
// before ready inside the body) or before it (ordered: clean).
#include "common.cuh"

namespace {

constexpr std::size_t kElems = std::size_t(1) << 20;
constexpr std::size_t kBytes = kElems * sizeof(float);

__global__ void sum(const float* x, float* out, std::size_t n) {
  float acc = 0.0f;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
  atomicAdd(out, acc);
}

__global__ void set_condition(cudaGraphConditionalHandle handle, unsigned value) {
  cudaGraphSetConditional(handle, value);
}

__global__ void end_loop(cudaGraphConditionalHandle handle) { cudaGraphSetConditional(handle, 0); }

struct Mode {
  bool loop = false;        // WHILE, else IF
  bool race = false;        // the launch does not wait for the read
  bool body_fork = false;   // the body forks to a fourth stream
  bool body_race = false;   // ...and joins it back after its read
};

bool parse(const std::string& text, Mode* mode) {
  if (text.rfind("while", 0) == 0) mode->loop = true;
  else if (text.rfind("if", 0) != 0) return false;
  const std::string rest = text.substr(mode->loop ? 5 : 2);
  if (rest.empty()) return true;
  if (rest == "-race") mode->race = true;
  else if (rest == "-body-race") mode->body_fork = mode->body_race = true;
  else if (rest == "-body-ordered") mode->body_fork = true;
  else return false;
  return true;
}

// The graph the capture on `stream` makes and the nodes its next node
// depends on.
cudaGraph_t capture_info(cudaStream_t stream, const cudaGraphNode_t** deps, std::size_t* ndeps) {
  cudaStreamCaptureStatus status;
  cudaGraph_t graph;
  XSC_EXAMPLE_CHECK(cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, deps, nullptr, ndeps));
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string text = argc > 1 ? argv[1] : "if";
  Mode mode;
  if (!parse(text, &mode)) {
    std::fprintf(stderr,
                 "usage: graph_conditional {if|while}[-race|-body-race|-body-ordered]\n");
    return 2;
  }

  float* x = nullptr;
  float* out = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&x, kBytes));
  XSC_EXAMPLE_CHECK(cudaMalloc(&out, sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaMemset(x, 0, kBytes));
  XSC_EXAMPLE_CHECK(cudaMemset(out, 0, sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  cudaStream_t reader, launch, body_stream, body_side;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&launch, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&body_stream, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&body_side, cudaStreamNonBlocking));
  std::printf("streams: reader=%p launch=%p body=%p\n", static_cast<void*>(reader),
              static_cast<void*>(launch), static_cast<void*>(body_stream));
  std::fflush(stdout);  // before the report the runtime prints at exit
  cudaEvent_t read_done, fork, join;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));

  sum<<<1, 256, 0, reader>>>(x, out, kElems);  // xsc: read
  XSC_EXAMPLE_CHECK(cudaGetLastError());
  XSC_EXAMPLE_CHECK(cudaEventRecord(read_done, reader));

  XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(launch, cudaStreamCaptureModeGlobal));
  XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 0, kBytes, launch));  // xsc: top-level write
  const cudaGraphNode_t* deps = nullptr;
  std::size_t ndeps = 0;
  cudaGraph_t graph = capture_info(launch, &deps, &ndeps);
  // IF: set from a kernel before the node; WHILE: the default, 1, at each
  // launch, and a kernel in the body ends the loop.
  cudaGraphConditionalHandle handle;
  XSC_EXAMPLE_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, mode.loop ? 1 : 0,
                                                     mode.loop ? cudaGraphCondAssignDefault : 0));
  if (!mode.loop) {
    set_condition<<<1, 1, 0, launch>>>(handle, 1);
    XSC_EXAMPLE_CHECK(cudaGetLastError());
    capture_info(launch, &deps, &ndeps);
  }
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = mode.loop ? cudaGraphCondTypeWhile : cudaGraphCondTypeIf;
  params.conditional.size = 1;
  cudaGraphNode_t node;
  XSC_EXAMPLE_CHECK(cudaGraphAddNode(&node, graph, deps, nullptr, ndeps, &params));
  XSC_EXAMPLE_CHECK(
      cudaStreamUpdateCaptureDependencies(launch, &node, nullptr, 1, cudaStreamSetCaptureDependencies));
  cudaGraph_t body = params.conditional.phGraph_out[0];
  XSC_EXAMPLE_CHECK(cudaStreamBeginCaptureToGraph(body_stream, body, nullptr, nullptr, 0,
                                                  cudaStreamCaptureModeRelaxed));
  if (mode.body_fork) {
    XSC_EXAMPLE_CHECK(cudaEventRecord(fork, body_stream));
    XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(body_side, fork, 0));  // body_side joins the capture
    XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 1, kBytes, body_side));  // xsc: forked body write
    if (!mode.body_race) {
      XSC_EXAMPLE_CHECK(cudaEventRecord(join, body_side));
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(body_stream, join, 0));
    }
    sum<<<1, 256, 0, body_stream>>>(x, out, kElems);  // xsc: body read
    XSC_EXAMPLE_CHECK(cudaGetLastError());
    if (mode.body_race) {
      XSC_EXAMPLE_CHECK(cudaEventRecord(join, body_side));
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(body_stream, join, 0));
    }
  } else {
    XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 1, kBytes, body_stream));  // xsc: body write
  }
  if (mode.loop) {
    end_loop<<<1, 1, 0, body_stream>>>(handle);
    XSC_EXAMPLE_CHECK(cudaGetLastError());
  }
  cudaGraph_t body_out;
  XSC_EXAMPLE_CHECK(cudaStreamEndCapture(body_stream, &body_out));
  cudaGraph_t captured;
  XSC_EXAMPLE_CHECK(cudaStreamEndCapture(launch, &captured));
  cudaGraphExec_t exec;
  XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, captured, 0));

  if (!mode.race) XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(launch, read_done, 0));  // xsc: wait
  XSC_EXAMPLE_CHECK(cudaGraphLaunch(exec, launch));  // xsc: launch
  XSC_EXAMPLE_CHECK(cudaStreamSynchronize(launch));
  XSC_EXAMPLE_CHECK(cudaStreamSynchronize(reader));

  unsigned first = 0;
  XSC_EXAMPLE_CHECK(cudaMemcpy(&first, x, sizeof first, cudaMemcpyDeviceToHost));
  // The body ran (once): its memset left 0x01 in every byte.
  const bool ran = first == 0x01010101u;
  std::printf("%s body ran: %s\n", mode.loop ? "while" : "if", ran ? "yes" : "no");
  XSC_EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
  XSC_EXAMPLE_CHECK(cudaGraphDestroy(captured));
  XSC_EXAMPLE_CHECK(cudaFree(x));
  XSC_EXAMPLE_CHECK(cudaFree(out));
  return ran ? 0 : 1;
}
