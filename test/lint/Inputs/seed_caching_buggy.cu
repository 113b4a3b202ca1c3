// The buggy pipeline on the caching allocator: release() hands the block back
// to the all-gather stream (its allocation stream) while the forward on the
// compute stream may still read it.
#include "pipeline_common.cuh"

void caching_buggy(CachingAllocator& alloc, cudaStream_t ag_stream, cudaStream_t compute,
                   const float* x, float* out) {
  cudaEvent_t ag_done;
  cudaEventCreateWithFlags(&ag_done, cudaEventDisableTiming);
  float* prev_params = alloc.allocate(kParamBytes, ag_stream);
  fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, 1.0f, kHidden * kHidden);
  for (int layer = 2; layer <= kLayers; ++layer) {
    cudaEventRecord(ag_done, ag_stream);
    cudaStreamWaitEvent(compute, ag_done);
    forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden); // expected-note {{'prev_params' is used on stream 'compute' here}}
    alloc.release(prev_params); // expected-warning {{'prev_params' is freed on stream 'ag_stream' while stream 'compute' may still be using it; nothing orders stream 'ag_stream' after that use [xstream-unordered-free]}}
    prev_params = alloc.allocate(kParamBytes, ag_stream);
    fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, float(layer), kHidden * kHidden);
  }
  cudaDeviceSynchronize();
  alloc.release(prev_params);
}
