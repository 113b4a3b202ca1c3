// What a cuBLAS GEMM writes and reads, as known uses: C is written on the
// handle's stream, A is read there.
//
//   cublas_write ubr|ubr-fixed|war|war-fixed
//
// ubr: cublasSgemm writes C (256 x 256, dense) on the gemm stream; a kernel
// on the reader stream sums C's last column without waiting for it.
// ubr-fixed: the reader stream waits on an event recorded after the GEMM.
// war: the GEMM reads A on the gemm stream; a copy on the reader stream
// overwrites A without waiting for it. war-fixed: the copy waits first.
// Prints the sum (ubr) so that a reader that ran early is visible, though
// whether it does is up to timing: the checker's verdict is not.
#include <cublas_v2.h>
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
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                   cublasGetStatusString(st_));                                     \
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
    std::fprintf(stderr, "usage: cublas_write ubr|ubr-fixed|war|war-fixed\n");
    return 2;
  }
  const std::size_t bytes = std::size_t(kN) * kN * sizeof(float);
  float *a = nullptr, *b = nullptr, *c = nullptr, *sum = nullptr;
  CHECK_CUDA(cudaMalloc(&a, bytes));
  CHECK_CUDA(cudaMalloc(&b, bytes));
  CHECK_CUDA(cudaMalloc(&c, bytes));
  CHECK_CUDA(cudaMalloc(&sum, sizeof(float)));
  std::vector<float> ones(std::size_t(kN) * kN, 1.0f);
  CHECK_CUDA(cudaMemcpy(a, ones.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b, ones.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaStream_t gemm_stream, reader;
  CHECK_CUDA(cudaStreamCreateWithFlags(&gemm_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  cudaEvent_t done;
  CHECK_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  CHECK_CUBLAS(cublasSetStream(handle, gemm_stream));
  std::printf("streams: gemm=%p reader=%p\n", static_cast<void*>(gemm_stream),
              static_cast<void*>(reader));
  std::fflush(stdout);  // before the checker's report at exit

  const float alpha = 1.0f, beta = 0.0f;
  CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, kN, kN, kN, &alpha, a, kN, b, kN, &beta, c, kN));  // xsc: gemm
  if (fixed) {
    CHECK_CUDA(cudaEventRecord(done, gemm_stream));
    CHECK_CUDA(cudaStreamWaitEvent(reader, done, 0));
  }
  float result = 0.0f;
  if (ubr) {
    sum_column<<<1, 1, 0, reader>>>(c + std::size_t(kN - 1) * kN, sum, kN);  // xsc: read
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(&result, sum, sizeof(float), cudaMemcpyDeviceToHost, reader));
  } else {
    CHECK_CUDA(cudaMemcpyAsync(a, ones.data(), bytes, cudaMemcpyHostToDevice, reader));  // xsc: overwrite
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  if (ubr) std::printf("sum of C's last column: %.0f (expected %d)\n", result, kN * kN);
  std::printf("done\n");

  CHECK_CUBLAS(cublasDestroy(handle));
  CHECK_CUDA(cudaEventDestroy(done));
  CHECK_CUDA(cudaStreamDestroy(reader));
  CHECK_CUDA(cudaStreamDestroy(gemm_stream));
  CHECK_CUDA(cudaFree(sum));
  CHECK_CUDA(cudaFree(c));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(a));
  return 0;
}
