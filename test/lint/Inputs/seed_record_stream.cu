// record_stream: the caching allocator is told that the compute stream used
// the block, so release() parks it until the compute stream's work is done.
// Correct, though peak memory then depends on how far the host runs ahead.
#include "pipeline_common.cuh"

// expected-no-diagnostics

void record_stream(CachingAllocator& alloc, cudaStream_t ag_stream, cudaStream_t compute,
                   const float* x, float* out) {
  cudaEvent_t ag_done;
  cudaEventCreateWithFlags(&ag_done, cudaEventDisableTiming);

  float* prev_params = alloc.allocate(kParamBytes, ag_stream);
  fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, 1.0f, kHidden * kHidden);

  for (int layer = 2; layer <= kLayers; ++layer) {
    cudaEventRecord(ag_done, ag_stream);
    cudaStreamWaitEvent(compute, ag_done);
    launch_forward(prev_params, x, out, compute);
    forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden);

    alloc.record_stream(prev_params, compute);  // "compute also used this block"
    alloc.release(prev_params);

    prev_params = alloc.allocate(kParamBytes, ag_stream);
    fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, float(layer), kHidden * kHidden);
  }

  cudaEventRecord(ag_done, ag_stream);
  cudaStreamWaitEvent(compute, ag_done);
  forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden);
  alloc.record_stream(prev_params, compute);
  alloc.release(prev_params);

  cudaDeviceSynchronize();
}
