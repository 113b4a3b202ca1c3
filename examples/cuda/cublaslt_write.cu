// What a cuBLASLt matrix product writes and reads, as known uses: D is
// written on the call's stream, A is read there.
//
//   cublaslt_write ubr|ubr-fixed|war|war-fixed
//
// ubr: cublasLtMatmul writes D (256 x 256 floats, column-major, dense) on
// the matmul stream; a kernel on the reader stream sums D's last column
// without waiting for it. ubr-fixed: the reader stream waits on an event
// recorded after the product. war: the product reads A on the matmul
// stream; a copy on the reader stream overwrites A without waiting for it.
// war-fixed: the copy waits first. Prints the sum (ubr) so that a reader
// that ran early is visible, though whether it does is up to timing: the
// checker's verdict is not.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check_cuda.cuh"
#define CHECK_CUBLAS(call)                                                          \
  do {                                                                              \
    cublasStatus_t st_ = (call);                                                    \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                             \
      std::fprintf(stderr, "%s:%d: %s: status %d\n", __FILE__, __LINE__, #call,     \
                   static_cast<int>(st_));                                          \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

namespace {

constexpr int kN = 256;

__global__ void sum_column(const float* column, float* out, int rows) {
  float s = 0.0f;
  for (int i = 0; i < rows; ++i) s += column[i];
  *out = s;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ubr";
  const bool ubr = std::strncmp(mode, "ubr", 3) == 0;
  const bool fixed = std::strstr(mode, "-fixed") != nullptr;
  if (!ubr && std::strncmp(mode, "war", 3) != 0) {
    std::fprintf(stderr, "usage: cublaslt_write ubr|ubr-fixed|war|war-fixed\n");
    return 2;
  }
  const std::size_t bytes = std::size_t(kN) * kN * sizeof(float);
  float *a = nullptr, *b = nullptr, *d = nullptr, *sum = nullptr;
  void* workspace = nullptr;
  const std::size_t workspace_bytes = 4 << 20;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMalloc(&d, bytes));
  CHECK_CUDA(cudaMalloc(&sum, sizeof(float)));
  CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes));
  std::vector<float> ones(std::size_t(kN) * kN, 1.0f);
  CHECK_CUDA(cudaMemcpy(a, ones.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, ones.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaStream_t matmul_stream, reader;
  CHECK_CUDA(cudaStreamCreateWithFlags(&matmul_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  cudaEvent_t done;
  CHECK_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  cublasLtHandle_t handle;
  CHECK_CUBLAS(cublasLtCreate(&handle));
  cublasLtMatmulDesc_t desc;
  CHECK_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t layout;  // A, B and D alike: 256 x 256, ld 256
  CHECK_CUBLAS(cublasLtMatrixLayoutCreate(&layout, CUDA_R_32F, kN, kN, kN));
  std::printf("streams: matmul=%p reader=%p\n", static_cast<void*>(matmul_stream),
              static_cast<void*>(reader));
  std::fflush(stdout);  // before the checker's report at exit

  const float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasLtMatmul(handle, desc, &alpha, a, layout, b, layout, &beta, d, layout, d, layout, nullptr, workspace, workspace_bytes, matmul_stream));  // xsc: matmul
  if (fixed) {
    CHECK_CUDA(cudaEventRecord(done, matmul_stream));
    CHECK_CUDA(cudaStreamWaitEvent(reader, done, 0));
  }
  float result = 0.0f;
  if (ubr) {
    sum_column<<<1, 1, 0, reader>>>(d + std::size_t(kN - 1) * kN, sum, kN);  // xsc: read
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(&result, sum, sizeof(float), cudaMemcpyDeviceToHost, reader));
  } else {
    CHECK_CUDA(cudaMemcpyAsync(a, ones.data(), bytes, cudaMemcpyHostToDevice, reader));  // xsc: overwrite
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  if (ubr) std::printf("sum of D's last column: %.0f (expected %d)\n", result, kN * kN);
  std::printf("done\n");

  CHECK_CUBLAS(cublasLtMatrixLayoutDestroy(layout));
  CHECK_CUBLAS(cublasLtMatmulDescDestroy(desc));
  CHECK_CUBLAS(cublasLtDestroy(handle));
  CHECK_CUDA(cudaEventDestroy(done));
  CHECK_CUDA(cudaStreamDestroy(reader));
  CHECK_CUDA(cudaStreamDestroy(matmul_stream));
  CHECK_CUDA(cudaFree(workspace));
  CHECK_CUDA(cudaFree(sum));
  CHECK_CUDA(cudaFree(d));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(a));
  return 0;
}
