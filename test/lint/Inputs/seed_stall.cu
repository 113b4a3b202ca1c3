// Fix 1: the all-gather stream waits for each forward before the block is
// released, so the next all-gather can reuse it only after the forward.
#include "pipeline_common.cuh"

// expected-no-diagnostics

void stall_producer(cudaStream_t ag_stream, cudaStream_t compute, const float* x, float* out) {
  cudaEvent_t ag_done, fwd_done;
  cudaEventCreateWithFlags(&ag_done, cudaEventDisableTiming);
  cudaEventCreateWithFlags(&fwd_done, cudaEventDisableTiming);

  float* prev_params;
  cudaMallocAsync(&prev_params, kParamBytes, ag_stream);
  fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, 1.0f, kHidden * kHidden);

  for (int layer = 2; layer <= kLayers; ++layer) {
    cudaEventRecord(ag_done, ag_stream);
    cudaStreamWaitEvent(compute, ag_done);
    forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden);
    cudaEventRecord(fwd_done, compute);

    cudaStreamWaitEvent(ag_stream, fwd_done);  // 1. order ag_stream after the forward
    cudaFreeAsync(prev_params, ag_stream);     // 2. only then release the block
    cudaMallocAsync(&prev_params, kParamBytes, ag_stream);
    fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, float(layer), kHidden * kHidden);
  }

  cudaEventRecord(ag_done, ag_stream);
  cudaStreamWaitEvent(compute, ag_done);
  forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden);
  cudaEventRecord(fwd_done, compute);
  cudaStreamWaitEvent(ag_stream, fwd_done);
  cudaFreeAsync(prev_params, ag_stream);

  cudaDeviceSynchronize();
}
