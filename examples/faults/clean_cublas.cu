// Clean corpus: cuBLAS GEMMs on several streams, each consuming an input
// allocated on a producer stream, ordered with events both ways before the
// producer frees it. The checker must report nothing.
#include <cublas_v2.h>

#include "fault_common.h"

namespace {

constexpr int kDim = 64;
constexpr int kWorkers = 3;
constexpr int kRounds = 4;

__global__ void fill_float(float* p, int n, float value) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = value;
}

#define BLAS_CHECK(call)                                                              \
  do {                                                                                \
    cublasStatus_t status_ = (call);                                                  \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                           \
      std::printf("unexpected cuBLAS status %d from %s\n", static_cast<int>(status_), \
                  #call);                                                             \
      std::fflush(stdout);                                                            \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

}  // namespace

int main() {
  const int elems = kDim * kDim;
  cudaStream_t producer;
  FAULT_CHECK(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking));
  cudaStream_t workers[kWorkers];
  cublasHandle_t handles[kWorkers];
  float* results[kWorkers];
  cudaEvent_t produced, consumed[kWorkers];
  FAULT_CHECK(cudaEventCreateWithFlags(&produced, cudaEventDisableTiming));
  for (int w = 0; w < kWorkers; ++w) {
    FAULT_CHECK(cudaStreamCreateWithFlags(&workers[w], cudaStreamNonBlocking));
    FAULT_CHECK(cudaEventCreateWithFlags(&consumed[w], cudaEventDisableTiming));
    BLAS_CHECK(cublasCreate(&handles[w]));
    BLAS_CHECK(cublasSetStream(handles[w], workers[w]));
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&results[w]), sizeof(float) * elems,
                                workers[w]));
    FAULT_CHECK(cudaMemsetAsync(results[w], 0, sizeof(float) * elems, workers[w]));
  }

  const float alpha = 1.0f, beta = 1.0f;
  for (int round = 1; round <= kRounds; ++round) {
    // A fresh input per round, allocated on the producer stream.
    float* input = nullptr;
    FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&input), sizeof(float) * elems, producer));
    fill_float<<<8, 128, 0, producer>>>(input, elems, static_cast<float>(round));
    FAULT_CHECK(cudaGetLastError());
    FAULT_CHECK(cudaEventRecord(produced, producer));
    for (int w = 0; w < kWorkers; ++w) {
      FAULT_CHECK(cudaStreamWaitEvent(workers[w], produced, 0));
      // results[w] += input * input
      BLAS_CHECK(cublasSgemm(handles[w], CUBLAS_OP_N, CUBLAS_OP_N, kDim, kDim, kDim, &alpha, input,
                             kDim, input, kDim, &beta, results[w], kDim));
      FAULT_CHECK(cudaEventRecord(consumed[w], workers[w]));
      FAULT_CHECK(cudaStreamWaitEvent(producer, consumed[w], 0));
    }
    FAULT_CHECK(cudaFreeAsync(input, producer));
  }

  double total = 0;
  std::vector<float> host(elems);
  for (int w = 0; w < kWorkers; ++w) {
    FAULT_CHECK(cudaMemcpyAsync(host.data(), results[w], sizeof(float) * elems,
                                cudaMemcpyDeviceToHost, workers[w]));
    FAULT_CHECK(cudaStreamSynchronize(workers[w]));
    for (float v : host) total += v;
    FAULT_CHECK(cudaFreeAsync(results[w], workers[w]));
  }
  FAULT_CHECK(cudaDeviceSynchronize());
  // Every element: sum over rounds of kDim * round^2 = 64 * 30 = 1920.
  std::printf("cublas: %d workers, %d rounds, total %.0f\n", kWorkers, kRounds, total);
  for (int w = 0; w < kWorkers; ++w) {
    BLAS_CHECK(cublasDestroy(handles[w]));
    FAULT_CHECK(cudaEventDestroy(consumed[w]));
    FAULT_CHECK(cudaStreamDestroy(workers[w]));
  }
  FAULT_CHECK(cudaEventDestroy(produced));
  FAULT_CHECK(cudaStreamDestroy(producer));
  return 0;
}
