// What cuDNN's batch norm writes and reads, as known uses: y is written on
// the handle's stream, x is read there.
//
//   cudnn_write ubr|ubr-fixed|war|war-fixed
//
// ubr: cudnnBatchNormalizationForwardTrainingEx, called as PyTorch calls it
// in training, writes y (8 x 16 x 16 x 16 floats, dense) on the bn stream; a
// kernel on the reader stream sums y's last image without waiting for it.
// ubr-fixed: the reader stream waits on an event recorded after the call.
// war: the call reads x on the bn stream; a copy on the reader stream
// overwrites x without waiting for it. war-fixed: the copy waits first.
// Prints the sum (ubr) so that a reader that ran early is visible, though
// whether it does is up to timing: the checker's verdict is not.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "check_cuda.cuh"
#define CHECK_CUDNN(call)                                                           \
  do {                                                                              \
    cudnnStatus_t st_ = (call);                                                     \
    if (st_ != CUDNN_STATUS_SUCCESS) {                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                   cudnnGetErrorString(st_));                                       \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

namespace {

constexpr int kN = 8, kC = 16, kH = 16, kW = 16;
constexpr int kImage = kC * kH * kW;

__global__ void sum_range(const float* in, float* out, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += in[i];
  *out = s;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "ubr";
  const bool ubr = std::strncmp(mode, "ubr", 3) == 0;
  const bool fixed = std::strstr(mode, "-fixed") != nullptr;
  if (!ubr && std::strncmp(mode, "war", 3) != 0) {
    std::fprintf(stderr, "usage: cudnn_write ubr|ubr-fixed|war|war-fixed\n");
    return 2;
  }
  const std::size_t count = std::size_t(kN) * kImage;
  const std::size_t bytes = count * sizeof(float);
  const std::size_t param_bytes = kC * sizeof(float);
  float *x = nullptr, *y = nullptr, *sum = nullptr;
  float *scale = nullptr, *bias = nullptr, *running_mean = nullptr, *running_var = nullptr;
  float *save_mean = nullptr, *save_inv_var = nullptr;
  CHECK_CUDA(cudaMalloc(&x, bytes));
  CHECK_CUDA(cudaMalloc(&y, bytes));
  CHECK_CUDA(cudaMalloc(&sum, sizeof(float)));
  for (float** p : {&scale, &bias, &running_mean, &running_var, &save_mean, &save_inv_var})
    CHECK_CUDA(cudaMalloc(p, param_bytes));
  std::vector<float> host(count);
  for (std::size_t i = 0; i < count; ++i) host[i] = float(i % 7);
  const std::vector<float> ones(kC, 1.0f), zeros(kC, 0.0f);
  CHECK_CUDA(cudaMemcpy(x, host.data(), bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(scale, ones.data(), param_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(bias, zeros.data(), param_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(running_mean, zeros.data(), param_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(running_var, ones.data(), param_bytes, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaDeviceSynchronize());

  cudaStream_t bn_stream, reader;
  CHECK_CUDA(cudaStreamCreateWithFlags(&bn_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
  cudaEvent_t done;
  CHECK_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  cudnnHandle_t handle;
  CHECK_CUDNN(cudnnCreate(&handle));
  CHECK_CUDNN(cudnnSetStream(handle, bn_stream));
  cudnnTensorDescriptor_t x_desc, bn_desc;
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&x_desc));
  CHECK_CUDNN(cudnnCreateTensorDescriptor(&bn_desc));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, kN, kC, kH, kW));
  CHECK_CUDNN(cudnnSetTensor4dDescriptor(bn_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, kC, 1, 1));

  const cudnnBatchNormMode_t bn_mode = CUDNN_BATCHNORM_SPATIAL_PERSISTENT;
  const cudnnBatchNormOps_t ops = CUDNN_BATCHNORM_OPS_BN;
  std::size_t workspace_bytes = 0, reserve_bytes = 0;
  CHECK_CUDNN(cudnnGetBatchNormalizationForwardTrainingExWorkspaceSize(
      handle, bn_mode, ops, x_desc, nullptr, x_desc, bn_desc, nullptr, &workspace_bytes));
  CHECK_CUDNN(cudnnGetBatchNormalizationTrainingExReserveSpaceSize(handle, bn_mode, ops, nullptr,
                                                                   x_desc, &reserve_bytes));
  void *workspace = nullptr, *reserve = nullptr;
  CHECK_CUDA(cudaMalloc(&workspace, workspace_bytes + 1));
  CHECK_CUDA(cudaMalloc(&reserve, reserve_bytes + 1));
  std::printf("streams: bn=%p reader=%p\n", static_cast<void*>(bn_stream),
              static_cast<void*>(reader));
  std::fflush(stdout);  // before the checker's report at exit

  const float one = 1.0f, zero = 0.0f;
  CHECK_CUDNN(cudnnBatchNormalizationForwardTrainingEx(handle, bn_mode, ops, &one, &zero, x_desc, x, nullptr, nullptr, x_desc, y, bn_desc, scale, bias, 0.1, running_mean, running_var, 1e-5, save_mean, save_inv_var, nullptr, workspace, workspace_bytes, reserve, reserve_bytes));  // xsc: bn
  if (fixed) {
    CHECK_CUDA(cudaEventRecord(done, bn_stream));
    CHECK_CUDA(cudaStreamWaitEvent(reader, done, 0));
  }
  float result = 0.0f;
  if (ubr) {
    sum_range<<<1, 1, 0, reader>>>(y + std::size_t(kN - 1) * kImage, sum, kImage);  // xsc: read
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpyAsync(&result, sum, sizeof(float), cudaMemcpyDeviceToHost, reader));
  } else {
    CHECK_CUDA(cudaMemcpyAsync(x, host.data(), bytes, cudaMemcpyHostToDevice, reader));  // xsc: overwrite
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  if (ubr) std::printf("sum of y's last image: %.1f\n", result);
  std::printf("done\n");

  CHECK_CUDNN(cudnnDestroyTensorDescriptor(bn_desc));
  CHECK_CUDNN(cudnnDestroyTensorDescriptor(x_desc));
  CHECK_CUDNN(cudnnDestroy(handle));
  CHECK_CUDA(cudaEventDestroy(done));
  CHECK_CUDA(cudaStreamDestroy(reader));
  CHECK_CUDA(cudaStreamDestroy(bn_stream));
  for (void* p : {static_cast<void*>(x), static_cast<void*>(y), static_cast<void*>(sum),
                  static_cast<void*>(scale), static_cast<void*>(bias),
                  static_cast<void*>(running_mean), static_cast<void*>(running_var),
                  static_cast<void*>(save_mean), static_cast<void*>(save_inv_var), workspace,
                  reserve})
    CHECK_CUDA(cudaFree(p));
  return 0;
}
