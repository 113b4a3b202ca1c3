// Captures that run nothing until their graph is launched, in the capture
// modes and forms beyond the plain global capture:
//
//   capture_modes MODE     MODE: thread-local, relaxed, update, joined,
//                          with-params, device-launch, and each with -race
//
// A reader stream runs sum(const float*, ...) over x (4 MiB) first. Then:
//   thread-local  a second thread captures a memset of x to graph
//                 (cudaStreamBeginCaptureToGraph into a graph it created)
//                 on the capture stream in thread-local mode, while the main
//                 thread calls cudaMalloc (legal only outside global mode)
//   relaxed       cudaStreamBeginCapture in relaxed mode, a cudaMalloc inside
//                 the capture (legal only in relaxed mode), a memset of x
//   update        an executable graph instantiated from a capture of a memset
//                 of y is updated in place (cudaGraphExecUpdate) with a
//                 capture of a memset of x
//   joined        a side stream joins the capture through an event recorded
//                 on the capture stream, runs the memset of x, and is joined
//                 back: the memset is a node on a branch of its own
//   with-params   instantiated with cudaGraphInstantiateWithParams, uploaded
//                 there (cudaGraphInstantiateFlagUpload) and again with
//                 cudaGraphUpload before the launch: an upload runs nothing
//   device-launch instantiated with cudaGraphInstantiateFlagDeviceLaunch and
//                 launched from the host, which is checked; launches from a
//                 kernel would not be seen, which the closing line says
// The executable graph is launched on the launch stream. Without -race the
// launch stream waits on an event recorded after the read first: clean (the
// captured memset is no write on the capture stream). With -race it does
// not: the memset of x, run by the launch, is a write after the read.
#include <atomic>
#include <thread>

#include "common.cuh"

namespace {

constexpr std::size_t kElems = std::size_t(1) << 20;
constexpr std::size_t kBytes = kElems * sizeof(float);

__global__ void sum(const float* x, float* out, std::size_t n) {
  float acc = 0.0f;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) acc += x[i];
  atomicAdd(out, acc);
}

cudaGraph_t capture_memset(cudaStream_t stream, void* dst, cudaStreamCaptureMode mode) {
  cudaGraph_t graph;
  XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(stream, mode));
  XSC_EXAMPLE_CHECK(cudaMemsetAsync(dst, 0, kBytes, stream));
  XSC_EXAMPLE_CHECK(cudaStreamEndCapture(stream, &graph));
  return graph;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "thread-local";
  const bool race = mode.size() > 5 && mode.compare(mode.size() - 5, 5, "-race") == 0;
  const std::string form = race ? mode.substr(0, mode.size() - 5) : mode;
  if (form != "thread-local" && form != "relaxed" && form != "update" && form != "joined" &&
      form != "with-params" && form != "device-launch") {
    std::fprintf(stderr,
                 "usage: capture_modes "
                 "{thread-local|relaxed|update|joined|with-params|device-launch}[-race]\n");
    return 2;
  }
  float* x = nullptr;
  float* y = nullptr;
  float* out = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&x, kBytes));
  XSC_EXAMPLE_CHECK(cudaMalloc(&y, kBytes));
  XSC_EXAMPLE_CHECK(cudaMalloc(&out, sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaMemset(x, 0, kBytes));
  XSC_EXAMPLE_CHECK(cudaMemset(out, 0, sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  cudaStream_t reader, launch, capture, side;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&launch, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&capture, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  std::printf("streams: reader=%p launch=%p capture=%p\n", static_cast<void*>(reader),
              static_cast<void*>(launch), static_cast<void*>(capture));
  std::fflush(stdout);  // before the report the runtime prints at exit
  cudaEvent_t read_done;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&read_done, cudaEventDisableTiming));

  sum<<<1, 256, 0, reader>>>(x, out, kElems);  // xsc: read
  XSC_EXAMPLE_CHECK(cudaGetLastError());
  XSC_EXAMPLE_CHECK(cudaEventRecord(read_done, reader));

  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  void* scratch = nullptr;
  if (form == "thread-local") {
    std::atomic<int> step{0};
    std::thread capturer([&] {
      XSC_EXAMPLE_CHECK(cudaGraphCreate(&graph, 0));
      XSC_EXAMPLE_CHECK(cudaStreamBeginCaptureToGraph(capture, graph, nullptr, nullptr, 0,
                                                      cudaStreamCaptureModeThreadLocal));
      step.store(1);
      while (step.load() != 2) std::this_thread::yield();
      XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 0, kBytes, capture));  // xsc: captured write
      XSC_EXAMPLE_CHECK(cudaStreamEndCapture(capture, &graph));
    });
    while (step.load() != 1) std::this_thread::yield();
    XSC_EXAMPLE_CHECK(cudaMalloc(&scratch, 4096));  // another thread's capture is under way
    step.store(2);
    capturer.join();
    XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  } else if (form == "relaxed") {
    XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeRelaxed));
    XSC_EXAMPLE_CHECK(cudaMalloc(&scratch, 4096));  // legal inside a relaxed capture
    XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 0, kBytes, capture));  // xsc: captured write
    XSC_EXAMPLE_CHECK(cudaStreamEndCapture(capture, &graph));
    XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  } else if (form == "joined") {
    cudaEvent_t fork, join;
    XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
    XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
    XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal));
    XSC_EXAMPLE_CHECK(cudaEventRecord(fork, capture));
    XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(side, fork, 0));  // side joins the capture
    XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 0, kBytes, side));  // xsc: joined write
    XSC_EXAMPLE_CHECK(cudaEventRecord(join, side));
    XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(capture, join, 0));
    XSC_EXAMPLE_CHECK(cudaStreamEndCapture(capture, &graph));
    XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    XSC_EXAMPLE_CHECK(cudaEventDestroy(fork));
    XSC_EXAMPLE_CHECK(cudaEventDestroy(join));
  } else if (form == "with-params") {
    XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal));
    XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 0, kBytes, capture));  // xsc: params write
    XSC_EXAMPLE_CHECK(cudaStreamEndCapture(capture, &graph));
    cudaGraphInstantiateParams params = {};
    params.flags = cudaGraphInstantiateFlagUpload;
    params.uploadStream = launch;
    XSC_EXAMPLE_CHECK(cudaGraphInstantiateWithParams(&exec, graph, &params));
    XSC_EXAMPLE_CHECK(cudaGraphUpload(exec, launch));  // not an execution
  } else if (form == "device-launch") {
    XSC_EXAMPLE_CHECK(cudaStreamBeginCapture(capture, cudaStreamCaptureModeGlobal));
    XSC_EXAMPLE_CHECK(cudaMemsetAsync(x, 0, kBytes, capture));  // xsc: device graph write
    XSC_EXAMPLE_CHECK(cudaStreamEndCapture(capture, &graph));
    XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, graph, cudaGraphInstantiateFlagDeviceLaunch));
    XSC_EXAMPLE_CHECK(cudaGraphUpload(exec, launch));
  } else {
    cudaGraph_t first = capture_memset(capture, y, cudaStreamCaptureModeGlobal);
    XSC_EXAMPLE_CHECK(cudaGraphInstantiate(&exec, first, 0));
    graph = capture_memset(capture, x, cudaStreamCaptureModeGlobal);  // xsc: updated write
    cudaGraphExecUpdateResultInfo info;
    XSC_EXAMPLE_CHECK(cudaGraphExecUpdate(exec, graph, &info));  // xsc: update
    XSC_EXAMPLE_CHECK(cudaGraphDestroy(first));
  }

  if (!race) XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(launch, read_done, 0));  // xsc: wait
  XSC_EXAMPLE_CHECK(cudaGraphLaunch(exec, launch));  // xsc: launch
  XSC_EXAMPLE_CHECK(cudaStreamSynchronize(launch));
  XSC_EXAMPLE_CHECK(cudaStreamSynchronize(reader));
  std::printf("%s: done\n", mode.c_str());
  std::fflush(stdout);  // before the report the runtime prints at exit
  XSC_EXAMPLE_CHECK(cudaGraphExecDestroy(exec));
  XSC_EXAMPLE_CHECK(cudaGraphDestroy(graph));
  if (scratch != nullptr) XSC_EXAMPLE_CHECK(cudaFree(scratch));
  XSC_EXAMPLE_CHECK(cudaFree(x));
  XSC_EXAMPLE_CHECK(cudaFree(y));
  XSC_EXAMPLE_CHECK(cudaFree(out));
  return 0;
}
