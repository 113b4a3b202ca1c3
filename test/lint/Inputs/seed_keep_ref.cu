// Fix 2: keep the previous layer's block alive together with the event that
// follows its forward; wait on that event and only then release the block,
// one iteration later. Two blocks alternate and the compute stream never
// waits for buffer reuse.
#include "pipeline_common.cuh"

// expected-no-diagnostics

void keep_ref(cudaStream_t ag_stream, cudaStream_t compute, const float* x, float* out) {
  cudaEvent_t ag_done;
  cudaEvent_t fwd_done[kLayers + 1];
  cudaEventCreateWithFlags(&ag_done, cudaEventDisableTiming);
  for (int i = 0; i <= kLayers; ++i) cudaEventCreateWithFlags(&fwd_done[i], cudaEventDisableTiming);

  float* keepalive = nullptr;
  cudaEvent_t keepalive_event = nullptr;

  float* prev_params;
  cudaMallocAsync(&prev_params, kParamBytes, ag_stream);
  fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, 1.0f, kHidden * kHidden);

  for (int layer = 2; layer <= kLayers; ++layer) {
    if (keepalive != nullptr) {
      cudaStreamWaitEvent(ag_stream, keepalive_event);  // 1. order ag_stream after that forward
      cudaFreeAsync(keepalive, ag_stream);              // 2. only then release the block
    }

    cudaEventRecord(ag_done, ag_stream);
    cudaStreamWaitEvent(compute, ag_done);
    forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden);
    cudaEvent_t done = fwd_done[layer - 1];
    cudaEventRecord(done, compute);

    keepalive = prev_params;  // do not release yet
    keepalive_event = done;

    cudaMallocAsync(&prev_params, kParamBytes, ag_stream);  // a different block
    fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, float(layer), kHidden * kHidden);
  }

  if (keepalive != nullptr) {
    cudaStreamWaitEvent(ag_stream, keepalive_event);
    cudaFreeAsync(keepalive, ag_stream);
  }

  cudaEventRecord(ag_done, ag_stream);
  cudaStreamWaitEvent(compute, ag_done);
  forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden);
  cudaEvent_t last = fwd_done[kLayers];
  cudaEventRecord(last, compute);
  cudaStreamWaitEvent(ag_stream, last);
  cudaFreeAsync(prev_params, ag_stream);

  cudaDeviceSynchronize();
}
