// Shared pieces of the producer/consumer pipelines: an "all-gather" that
// fills a parameter buffer on the producer stream and a "forward" that reads
// it on the consumer stream.
#pragma once

#include <cuda_runtime.h>

constexpr int kHidden = 4096;
constexpr int kLayers = 4;
constexpr size_t kParamBytes = sizeof(float) * kHidden * kHidden;

__global__ void fill_params(float* params, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) params[i] = value;
}

__global__ void forward(const float* params, const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = params[i] * x[i];
}

// A caching allocator in the PyTorch style: blocks belong to the stream they
// were allocated on, release() hands a block back for reuse on that stream,
// record_stream() defers the reuse until another stream's work is done.
struct CachingAllocator {
  [[clang::annotate("xstream::alloc")]] float* allocate(size_t bytes, cudaStream_t stream);
  [[clang::annotate("xstream::free")]] void release(float* block);
  [[clang::annotate("xstream::record_stream")]] void record_stream(float* block, cudaStream_t user);
};

inline void launch_forward(const float* params, const float* x, float* out, cudaStream_t stream) {
  forward<<<kHidden, 256, 0, stream>>>(params, x, out, kHidden * kHidden);
}
