// A minimal stand-in for the parts of PyTorch's C++ headers that CUDA
// extensions use to allocate, order and free memory (c10/cuda/CUDAStream.h,
// CUDAGuard.h, CUDAEvent.h, CUDACachingAllocator.h, ATen's Tensor), so the
// lint tests parse without torch installed. Same namespaces, names and
// parameter types as torch 2.x; declarations only: the tests never link.
#pragma once

#include <cuda_runtime.h>

namespace c10 {

using DeviceIndex = signed char;

// The device-generic stream handle that CUDAStream converts to.
class Stream {
 public:
  DeviceIndex device_index() const;
};

class DataPtr {
 public:
  void* get() const;
};

class Storage {
 public:
  const DataPtr& data_ptr() const;
};

template <typename T>
class ArrayRef {
 public:
  ArrayRef(const T& one_element);
};
using IntArrayRef = ArrayRef<long long>;

namespace cuda {

class CUDAStream {
 public:
  explicit CUDAStream(Stream stream);
  cudaStream_t stream() const;
  operator cudaStream_t() const;
  operator Stream() const;
  DeviceIndex device_index() const;
  void synchronize() const;
};

CUDAStream getCurrentCUDAStream(DeviceIndex device_index = -1);
CUDAStream getDefaultCUDAStream(DeviceIndex device_index = -1);
CUDAStream getStreamFromPool(bool is_high_priority = false, DeviceIndex device = -1);

// Makes `stream` the current stream until the end of the guard's scope.
struct CUDAStreamGuard {
  explicit CUDAStreamGuard(Stream stream);
  ~CUDAStreamGuard();
  CUDAStreamGuard(const CUDAStreamGuard&) = delete;
  void reset_stream(Stream stream);
  CUDAStream current_stream() const;
};

struct CUDAEvent {
  CUDAEvent();
  explicit CUDAEvent(unsigned int flags);
  ~CUDAEvent();
  void record();
  void record(const CUDAStream& stream);
  void recordOnce(const CUDAStream& stream);
  void block(const CUDAStream& stream);
  bool query() const;
  void synchronize() const;
};

namespace CUDACachingAllocator {
void* raw_alloc(size_t nbytes);
void* raw_alloc_with_stream(size_t nbytes, cudaStream_t stream);
void raw_delete(void* ptr);
void recordStream(const DataPtr& dataPtr, CUDAStream stream);
}  // namespace CUDACachingAllocator

}  // namespace cuda
}  // namespace c10

// cuBLAS (cublas_v2.h), as far as the cases use it.
typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0 } cublasOperation_t;
typedef struct cublasContext* cublasHandle_t;
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float* alpha,
                              const float* A, int lda, const float* B, int ldb, const float* beta,
                              float* C, int ldc);
#define cublasSgemm cublasSgemm_v2

namespace at {
using namespace c10;

class TensorOptions {
 public:
  TensorOptions();
};

class Tensor {
 public:
  Tensor();
  Tensor(const Tensor& other);
  Tensor(Tensor&& other);
  ~Tensor();
  Tensor& operator=(const Tensor& other) &;
  Tensor& operator=(Tensor&& other) &;

  template <typename T>
  T* data_ptr() const;
  void* data_ptr() const;
  template <typename T>
  T* mutable_data_ptr() const;
  template <typename T>
  const T* const_data_ptr() const;
  long long numel() const;
  long long size(long long dim) const;
  Storage storage() const;
  TensorOptions options() const;
  Tensor view(IntArrayRef size) const;
  Tensor narrow(long long dim, long long start, long long length) const;
  Tensor clone() const;
  Tensor new_empty(IntArrayRef size, TensorOptions options = {}) const;
  void record_stream(Stream s) const;
};

Tensor empty(IntArrayRef size, TensorOptions options = {});
Tensor zeros(IntArrayRef size, TensorOptions options = {});
Tensor empty_like(const Tensor& self, TensorOptions options = {});
Tensor& add_(Tensor& self, const Tensor& other);

namespace cuda {
using namespace c10::cuda;
// Bound to the current stream when it is handed out (ATen's CUDAContext.h).
cublasHandle_t getCurrentCUDABlasHandle();
}  // namespace cuda

}  // namespace at

namespace torch {
using at::Tensor;
at::Tensor empty(at::IntArrayRef size, at::TensorOptions options = {});
}  // namespace torch
