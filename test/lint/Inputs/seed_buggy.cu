// The buggy pipeline: the parameters of layer L are released right after the
// forward that reads them is enqueued on the compute stream; nothing orders the
// all-gather stream after that forward.
#include "pipeline_common.cuh"

void buggy(cudaStream_t ag_stream, cudaStream_t compute, const float* x, float* out) {
  cudaEvent_t ag_done;
  cudaEventCreateWithFlags(&ag_done, cudaEventDisableTiming);

  float* prev_params;
  cudaMallocAsync(&prev_params, kParamBytes, ag_stream);
  fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, 1.0f, kHidden * kHidden);

  for (int layer = 2; layer <= kLayers; ++layer) {
    cudaEventRecord(ag_done, ag_stream);  // compute waits for the all-gather
    cudaStreamWaitEvent(compute, ag_done);
    forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden); // expected-note {{'prev_params' is used on stream 'compute' here; record an event on stream 'compute' after this use and make stream 'ag_stream' wait on it before the free}}

    cudaFreeAsync(prev_params, ag_stream); // expected-warning {{'prev_params' is freed on stream 'ag_stream' while stream 'compute' may still be using it; nothing orders stream 'ag_stream' after that use [xstream-unordered-free]}}

    cudaMallocAsync(&prev_params, kParamBytes, ag_stream);
    fill_params<<<kHidden, 256, 0, ag_stream>>>(prev_params, float(layer), kHidden * kHidden);
  }

  cudaEventRecord(ag_done, ag_stream);
  cudaStreamWaitEvent(compute, ag_done);
  forward<<<kHidden, 256, 0, compute>>>(prev_params, x, out, kHidden * kHidden); // expected-note {{'prev_params' is used on stream 'compute' here}}
  cudaFreeAsync(prev_params, ag_stream); // expected-warning {{nothing orders stream 'ag_stream' after that use [xstream-unordered-free]}}

  cudaDeviceSynchronize();
  cudaEventDestroy(ag_done);
}
