// Copies of the forms the runtime follows through their runtime callbacks
// alone: a peer copy, a 3D copy and a batch of copies, each writing a block
// of stream A's pool on stream B before the block is freed on A.
//
//   copy_forms peer|3d|batch [ordered]
//
// Without `ordered` nothing makes A wait for B's copy: the free is
// unordered (run with strict=1, since this program never allocates again
// after the free). With `ordered`, A waits on an event recorded on B after
// the copy: clean. A device copies to itself as its own peer.
#include <cstring>

#include "common.cuh"

using namespace xsc_example;

int main(int argc, char** argv) {
  std::string mode, order;
  if (argc >= 2) mode = argv[1];
  if (argc >= 3) order = argv[2];
  if ((mode != "peer" && mode != "3d" && mode != "batch") || (argc >= 3 && order != "ordered") ||
      argc > 3) {
    std::fprintf(stderr, "usage: copy_forms peer|3d|batch [ordered]\n");
    return 2;
  }
  cudaStream_t a, b;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  float* source = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&source, kParamBytes));
  XSC_EXAMPLE_CHECK(cudaMemset(source, 0, kParamBytes));
  // cudaMemset of device memory may return before it lands, on the legacy
  // default stream, which the non-blocking streams do not wait for.
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  float* host = nullptr;
  XSC_EXAMPLE_CHECK(cudaMallocHost(&host, kParamBytes));
  std::memset(host, 0, kParamBytes);
  int device = 0;
  XSC_EXAMPLE_CHECK(cudaGetDevice(&device));

  void* block = nullptr;
  XSC_EXAMPLE_CHECK(cudaMallocAsync(&block, kParamBytes, a));
  wait_stream(b, a);
  if (mode == "peer") {
    XSC_EXAMPLE_CHECK(cudaMemcpyPeerAsync(block, device, source, device, kParamBytes, b));
  } else if (mode == "3d") {
    cudaMemcpy3DParms copy = {};
    copy.srcPtr = make_cudaPitchedPtr(source, kParamBytes, kParamElems, 1);
    copy.dstPtr = make_cudaPitchedPtr(block, kParamBytes, kParamElems, 1);
    copy.extent = make_cudaExtent(kParamBytes, 1, 1);
    copy.kind = cudaMemcpyDeviceToDevice;
    XSC_EXAMPLE_CHECK(cudaMemcpy3DAsync(&copy, b));
  } else {
    void* dsts[2] = {block, source};
    const void* srcs[2] = {host, host};
    std::size_t sizes[2] = {kParamBytes, kParamBytes};
    cudaMemcpyAttributes attrs = {};
    attrs.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    std::size_t attr_index = 0;
    XSC_EXAMPLE_CHECK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &attrs, &attr_index, 1, b));
  }
  if (order == "ordered") wait_stream(a, b);
  XSC_EXAMPLE_CHECK(cudaFreeAsync(block, a));  // the free
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  std::printf("copy_forms %s%s: done\n", mode.c_str(), order.empty() ? "" : " ordered");
  XSC_EXAMPLE_CHECK(cudaFreeHost(host));
  XSC_EXAMPLE_CHECK(cudaFree(source));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(b));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(a));
  return 0;
}
