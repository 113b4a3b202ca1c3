// The consumer is a cuBLAS GEMM: the read happens inside a library kernel the
// program never names.
//
//   cublas_consumer [buggy|fixed] [--trials N]
//
// Each layer's weights are allocated with cudaMallocAsync and filled on the
// producer stream; cublasSgemm reads them on the consumer stream (the
// handle's stream). buggy frees the weights on the producer right after
// enqueueing the GEMM; fixed makes the producer wait on an event recorded on
// the consumer after the GEMM first.
#include <cublas_v2.h>

#include "common.cuh"

using namespace xsc_example;

#define XSC_EXAMPLE_CUBLAS(call)                                                   \
  do {                                                                             \
    cublasStatus_t xsc_example_st_ = (call);                                       \
    if (xsc_example_st_ != CUBLAS_STATUS_SUCCESS) {                                \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,    \
                   cublasGetStatusString(xsc_example_st_));                        \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

namespace {

// Wide enough that cuBLAS picks a GEMM kernel rather than a GEMV.
constexpr int kCols = 256;
constexpr std::size_t kXElems = std::size_t(kHidden) * kCols;

}  // namespace

int main(int argc, char** argv) {
  Args args = parse_args(argc, argv, {"buggy", "fixed"}, "buggy");
  bool fixed = args.mode == "fixed";
  keep_pool_memory();

  float* x = nullptr;    // kHidden x kCols, column-major, all ones
  float* out = nullptr;  // kLayers blocks of kHidden x kCols
  XSC_EXAMPLE_CHECK(cudaMalloc(&x, kXElems * sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaMalloc(&out, kLayers * kXElems * sizeof(float)));
  fill_params<<<264, 256>>>(x, kXElems, 1.0f);
  XSC_EXAMPLE_CHECK(cudaGetLastError());
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());

  cudaStream_t producer, consumer;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking));
  print_streams(producer, consumer);
  cublasHandle_t handle;
  XSC_EXAMPLE_CUBLAS(cublasCreate(&handle));
  XSC_EXAMPLE_CUBLAS(cublasSetStream(handle, consumer));

  std::string title = "cuBLAS GEMM consumer: " + args.mode;
  TrialReport report(title.c_str());
  std::vector<float> host(kLayers * kXElems);
  for (int t = 0; t < args.trials; ++t) {
    XSC_EXAMPLE_CHECK(cudaMemset(out, 0xff, kLayers * kXElems * sizeof(float)));
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    for (int layer = 1; layer <= kLayers; ++layer) {
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kParamBytes, producer));
      auto* weights = static_cast<float*>(p);
      launch_fill(weights, float(layer), producer);
      report.note_block(weights);
      wait_stream(consumer, producer);
      const float alpha = 1.0f, beta = 0.0f;
      XSC_EXAMPLE_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kHidden, kCols, kHidden,
                                     &alpha, weights, kHidden, x, kHidden, &beta,
                                     out + std::size_t(layer - 1) * kXElems, kHidden));
      if (fixed) wait_stream(producer, consumer);
      XSC_EXAMPLE_CHECK(cudaFreeAsync(weights, producer));  // free-site: gemm
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    XSC_EXAMPLE_CHECK(cudaMemcpy(host.data(), out, host.size() * sizeof(float),
                                 cudaMemcpyDeviceToHost));
    double worst = 0.0;
    for (int layer = 1; layer <= kLayers; ++layer)
      for (std::size_t i = 0; i < kXElems; ++i)
        worst = std::max(worst, std::fabs(double(host[(layer - 1) * kXElems + i]) -
                                          double(kHidden) * layer));
    report.end_trial(t, worst);
  }
  report.finish();

  XSC_EXAMPLE_CUBLAS(cublasDestroy(handle));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(consumer));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(producer));
  XSC_EXAMPLE_CHECK(cudaFree(out));
  XSC_EXAMPLE_CHECK(cudaFree(x));
  return 0;
}
