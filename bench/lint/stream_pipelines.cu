// A realistic translation unit for timing the static check: the whole of CUB
// plus a few hundred lines of multi-stream pipeline code (prefetching,
// keepalive queues, RAII buffers, device reductions and scans on side
// streams). Parsing CUB dominates; the check must stay a small addition.
#include <cub/cub.cuh>

#include <cstdio>
#include <deque>
#include <utility>
#include <vector>

namespace bench {

constexpr int kLayers = 16;
constexpr size_t kLayerElems = size_t(1) << 20;

#define BENCH_CHECK(call)                                                    \
  do {                                                                       \
    cudaError_t bench_err_ = (call);                                         \
    if (bench_err_ != cudaSuccess) std::fprintf(stderr, "%s failed\n", #call); \
  } while (0)

__global__ void fill(float* p, float v, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

__global__ void axpy(const float* w, const float* x, float* y, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] += w[i] * x[i];
}

__global__ void scale(float* p, float s, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= s;
}

inline unsigned blocks_for(size_t n) { return unsigned((n + 255) / 256); }

// An owning device buffer freed on its allocation stream.
class DeviceBuffer {
 public:
  DeviceBuffer(size_t elems, cudaStream_t stream) : elems_(elems), stream_(stream) {
    BENCH_CHECK(cudaMallocAsync(&data_, elems * sizeof(float), stream));
  }
  ~DeviceBuffer() {
    if (data_) cudaFreeAsync(data_, stream_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* data() const { return data_; }
  size_t size() const { return elems_; }

 private:
  float* data_ = nullptr;
  size_t elems_ = 0;
  cudaStream_t stream_ = nullptr;
};

struct Streams {
  cudaStream_t gather = nullptr;
  cudaStream_t compute = nullptr;
  cudaStream_t reduce = nullptr;
  cudaStream_t copy = nullptr;
};

inline void wait_for(cudaStream_t waiter, cudaStream_t producer) {
  cudaEvent_t ev;
  BENCH_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  BENCH_CHECK(cudaEventRecord(ev, producer));
  BENCH_CHECK(cudaStreamWaitEvent(waiter, ev, 0));
  BENCH_CHECK(cudaEventDestroy(ev));
}

inline cudaEvent_t record_on(cudaStream_t stream) {
  cudaEvent_t ev;
  BENCH_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  BENCH_CHECK(cudaEventRecord(ev, stream));
  return ev;
}

inline float* gather_layer(const Streams& s, int layer) {
  float* p = nullptr;
  BENCH_CHECK(cudaMallocAsync(&p, kLayerElems * sizeof(float), s.gather));
  fill<<<blocks_for(kLayerElems), 256, 0, s.gather>>>(p, float(layer), kLayerElems);
  return p;
}

inline void forward_layer(const Streams& s, const float* params, const float* x, float* y) {
  wait_for(s.compute, s.gather);
  axpy<<<blocks_for(kLayerElems), 256, 0, s.compute>>>(params, x, y, kLayerElems);
}

// Prefetch one layer ahead; free the previous layer after waiting on the
// event recorded after its forward (stall).
void stall_pipeline(const Streams& s, const float* x, float* y) {
  float* params = gather_layer(s, 0);
  for (int layer = 0; layer < kLayers; ++layer) {
    forward_layer(s, params, x, y);
    cudaEvent_t done = record_on(s.compute);
    BENCH_CHECK(cudaStreamWaitEvent(s.gather, done, 0));
    BENCH_CHECK(cudaFreeAsync(params, s.gather));
    BENCH_CHECK(cudaEventDestroy(done));
    if (layer + 1 < kLayers) params = gather_layer(s, layer + 1);
  }
}

// Keepalive queue of depth N: wait on the oldest event, then drop it.
void keepalive_pipeline(const Streams& s, const float* x, float* y, size_t depth) {
  std::deque<std::pair<float*, cudaEvent_t>> in_flight;
  float* params = gather_layer(s, 0);
  for (int layer = 0; layer < kLayers; ++layer) {
    while (in_flight.size() >= depth) {
      float* oldest = in_flight.front().first;
      cudaEvent_t oldest_done = in_flight.front().second;
      in_flight.pop_front();
      BENCH_CHECK(cudaStreamWaitEvent(s.gather, oldest_done, 0));
      BENCH_CHECK(cudaFreeAsync(oldest, s.gather));
      BENCH_CHECK(cudaEventDestroy(oldest_done));
    }
    forward_layer(s, params, x, y);
    in_flight.emplace_back(params, record_on(s.compute));
    if (layer + 1 < kLayers) params = gather_layer(s, layer + 1);
  }
  for (auto& [p, done] : in_flight) {
    BENCH_CHECK(cudaStreamWaitEvent(s.gather, done, 0));
    BENCH_CHECK(cudaFreeAsync(p, s.gather));
    BENCH_CHECK(cudaEventDestroy(done));
  }
}

// Two-buffer ping-pong with explicit keepalive variables.
void ping_pong_pipeline(const Streams& s, const float* x, float* y) {
  float* keep = nullptr;
  cudaEvent_t keep_done = nullptr;
  float* params = gather_layer(s, 0);
  for (int layer = 0; layer < kLayers; ++layer) {
    if (keep) {
      BENCH_CHECK(cudaStreamWaitEvent(s.gather, keep_done, 0));
      BENCH_CHECK(cudaFreeAsync(keep, s.gather));
      BENCH_CHECK(cudaEventDestroy(keep_done));
    }
    forward_layer(s, params, x, y);
    keep = params;
    keep_done = record_on(s.compute);
    if (layer + 1 < kLayers) params = gather_layer(s, layer + 1);
  }
  if (keep) {
    BENCH_CHECK(cudaStreamWaitEvent(s.gather, keep_done, 0));
    BENCH_CHECK(cudaFreeAsync(keep, s.gather));
  }
}

// A reduction on a side stream over data produced on the compute stream; the
// temporary storage lives on the reduce stream, the input on compute.
float* reduce_on_side_stream(const Streams& s, const float* activations, size_t n) {
  float* result = nullptr;
  BENCH_CHECK(cudaMallocAsync(&result, sizeof(float), s.reduce));
  wait_for(s.reduce, s.compute);
  void* temp = nullptr;
  size_t temp_bytes = 0;
  BENCH_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, activations, result, int(n), s.reduce));
  BENCH_CHECK(cudaMallocAsync(&temp, temp_bytes, s.reduce));
  BENCH_CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, activations, result, int(n), s.reduce));
  BENCH_CHECK(cudaFreeAsync(temp, s.reduce));
  return result;
}

// Prefix sums of each layer's gradients on the reduce stream, with the
// gradient buffers allocated on compute and kept until the scan is done.
void scan_gradients(const Streams& s, int layers) {
  std::vector<float*> grads(layers, nullptr);
  std::vector<float*> sums(layers, nullptr);
  for (int l = 0; l < layers; ++l) {
    BENCH_CHECK(cudaMallocAsync(&grads[l], kLayerElems * sizeof(float), s.compute));
    BENCH_CHECK(cudaMallocAsync(&sums[l], kLayerElems * sizeof(float), s.reduce));
    fill<<<blocks_for(kLayerElems), 256, 0, s.compute>>>(grads[l], 1.0f, kLayerElems);
  }
  wait_for(s.reduce, s.compute);
  void* temp = nullptr;
  size_t temp_bytes = 0;
  BENCH_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, grads[0], sums[0], int(kLayerElems),
                                            s.reduce));
  BENCH_CHECK(cudaMallocAsync(&temp, temp_bytes, s.reduce));
  for (int l = 0; l < layers; ++l)
    BENCH_CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, grads[l], sums[l], int(kLayerElems),
                                              s.reduce));
  cudaEvent_t scanned = record_on(s.reduce);
  BENCH_CHECK(cudaStreamWaitEvent(s.compute, scanned, 0));
  for (int l = 0; l < layers; ++l) {
    BENCH_CHECK(cudaFreeAsync(grads[l], s.compute));
    BENCH_CHECK(cudaFreeAsync(sums[l], s.reduce));
  }
  BENCH_CHECK(cudaFreeAsync(temp, s.reduce));
  BENCH_CHECK(cudaEventDestroy(scanned));
}

// Sorting keys on the copy stream with double buffers; everything on one
// stream, so nothing to order.
void sort_on_copy_stream(const Streams& s, unsigned* keys, size_t n) {
  unsigned* alt = nullptr;
  BENCH_CHECK(cudaMallocAsync(&alt, n * sizeof(unsigned), s.copy));
  cub::DoubleBuffer<unsigned> buffers(keys, alt);
  void* temp = nullptr;
  size_t temp_bytes = 0;
  BENCH_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, buffers, int(n), 0, 32, s.copy));
  BENCH_CHECK(cudaMallocAsync(&temp, temp_bytes, s.copy));
  BENCH_CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, buffers, int(n), 0, 32, s.copy));
  if (buffers.Current() != keys)
    BENCH_CHECK(cudaMemcpyAsync(keys, buffers.Current(), n * sizeof(unsigned), cudaMemcpyDeviceToDevice,
                                s.copy));
  BENCH_CHECK(cudaFreeAsync(temp, s.copy));
  BENCH_CHECK(cudaFreeAsync(alt, s.copy));
}

// Host staging: device-to-host copies on the copy stream, synchronized
// before the device buffer goes back to the compute stream's pool.
void stage_to_host(const Streams& s, float* host, size_t n) {
  DeviceBuffer staging(n, s.compute);
  fill<<<blocks_for(n), 256, 0, s.compute>>>(staging.data(), 2.0f, n);
  wait_for(s.copy, s.compute);
  BENCH_CHECK(cudaMemcpyAsync(host, staging.data(), n * sizeof(float), cudaMemcpyDeviceToHost, s.copy));
  BENCH_CHECK(cudaStreamSynchronize(s.copy));
}

// Activation offloading: each layer's activations are copied out on the copy
// stream, then released on compute once the copy is done.
void offload_activations(const Streams& s, float* const* host_slots, int layers) {
  std::vector<std::pair<float*, cudaEvent_t>> copies;
  for (int l = 0; l < layers; ++l) {
    float* act = nullptr;
    BENCH_CHECK(cudaMallocAsync(&act, kLayerElems * sizeof(float), s.compute));
    scale<<<blocks_for(kLayerElems), 256, 0, s.compute>>>(act, 0.5f, kLayerElems);
    wait_for(s.copy, s.compute);
    BENCH_CHECK(cudaMemcpyAsync(host_slots[l], act, kLayerElems * sizeof(float), cudaMemcpyDeviceToHost,
                                s.copy));
    cudaEvent_t copied = record_on(s.copy);
    BENCH_CHECK(cudaStreamWaitEvent(s.compute, copied, 0));
    BENCH_CHECK(cudaFreeAsync(act, s.compute));
    copies.emplace_back(nullptr, copied);
  }
  for (auto& c : copies) BENCH_CHECK(cudaEventDestroy(c.second));
}

// Selecting and histogramming on the reduce stream.
void select_and_histogram(const Streams& s, const int* values, int n) {
  int* selected = nullptr;
  int* count = nullptr;
  int* histogram = nullptr;
  BENCH_CHECK(cudaMallocAsync(&selected, n * sizeof(int), s.reduce));
  BENCH_CHECK(cudaMallocAsync(&count, sizeof(int), s.reduce));
  BENCH_CHECK(cudaMallocAsync(&histogram, 64 * sizeof(int), s.reduce));
  void* temp = nullptr;
  size_t temp_bytes = 0;
  BENCH_CHECK(cub::DeviceSelect::Unique(nullptr, temp_bytes, values, selected, count, n, s.reduce));
  BENCH_CHECK(cudaMallocAsync(&temp, temp_bytes, s.reduce));
  BENCH_CHECK(cub::DeviceSelect::Unique(temp, temp_bytes, values, selected, count, n, s.reduce));
  BENCH_CHECK(cudaFreeAsync(temp, s.reduce));
  temp = nullptr;
  temp_bytes = 0;
  BENCH_CHECK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, values, histogram, 65, 0, 64, n,
                                                  s.reduce));
  BENCH_CHECK(cudaMallocAsync(&temp, temp_bytes, s.reduce));
  BENCH_CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, values, histogram, 65, 0, 64, n,
                                                  s.reduce));
  BENCH_CHECK(cudaFreeAsync(temp, s.reduce));
  BENCH_CHECK(cudaStreamSynchronize(s.reduce));
  BENCH_CHECK(cudaFreeAsync(selected, s.reduce));
  BENCH_CHECK(cudaFreeAsync(count, s.reduce));
  BENCH_CHECK(cudaFreeAsync(histogram, s.reduce));
}

// The bug, kept in the benchmark so the check has something to report:
// the gathered parameters are freed while compute may still read them.
void buggy_pipeline(const Streams& s, const float* x, float* y) {
  float* params = gather_layer(s, 0);
  for (int layer = 0; layer < kLayers; ++layer) {
    forward_layer(s, params, x, y);
    BENCH_CHECK(cudaFreeAsync(params, s.gather));
    if (layer + 1 < kLayers) params = gather_layer(s, layer + 1);
  }
}

int run_all() {
  Streams s;
  BENCH_CHECK(cudaStreamCreateWithFlags(&s.gather, cudaStreamNonBlocking));
  BENCH_CHECK(cudaStreamCreateWithFlags(&s.compute, cudaStreamNonBlocking));
  BENCH_CHECK(cudaStreamCreateWithFlags(&s.reduce, cudaStreamNonBlocking));
  BENCH_CHECK(cudaStreamCreateWithFlags(&s.copy, cudaStreamNonBlocking));
  DeviceBuffer x(kLayerElems, s.compute);
  DeviceBuffer y(kLayerElems, s.compute);
  stall_pipeline(s, x.data(), y.data());
  keepalive_pipeline(s, x.data(), y.data(), 2);
  ping_pong_pipeline(s, x.data(), y.data());
  float* total = reduce_on_side_stream(s, y.data(), kLayerElems);
  scan_gradients(s, 4);
  std::vector<float> host(kLayerElems);
  stage_to_host(s, host.data(), kLayerElems);
  buggy_pipeline(s, x.data(), y.data());
  BENCH_CHECK(cudaDeviceSynchronize());
  BENCH_CHECK(cudaFreeAsync(total, s.reduce));
  BENCH_CHECK(cudaDeviceSynchronize());
  return 0;
}

}  // namespace bench

int main() { return bench::run_all(); }
