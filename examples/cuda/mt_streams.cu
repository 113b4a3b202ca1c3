// Many host threads, many streams, every cross-stream hand-off ordered: clean.
//
//   mt_streams [--trials N]
//
// 8 host threads each own 4 non-blocking streams. On every step a thread
// allocates a buffer on stream i, fills it there, reads it on stream i+1
// after an event wait, orders stream i after the read with a second event
// and frees the buffer on stream i. The checker must keep the threads'
// streams and events apart and report nothing.
#include <thread>

#include "common.cuh"

using namespace xsc_example;

namespace {

constexpr int kThreads = 8;
constexpr int kStreamsPerThread = 4;
constexpr int kSteps = 16;
constexpr std::size_t kElems = std::size_t(1) << 16;  // 256 KiB per buffer

// One block sums the buffer (values are small integers: exact in float).
__global__ void sum_buffer(const float* buf, std::size_t n, float* result) {
  __shared__ float partial[256];
  float acc = 0.0f;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) acc += buf[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *result = partial[0];
}

float value_for(int thread, int step, int stream) {
  return float((thread * 7 + step * 3 + stream) % 16 + 1);
}

void event_wait(cudaStream_t waiter, cudaStream_t from, cudaEvent_t ev) {
  XSC_EXAMPLE_CHECK(cudaEventRecord(ev, from));
  XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(waiter, ev, 0));
}

// Returns the number of wrong sums this thread saw.
int worker(int thread, float* results) {
  cudaStream_t streams[kStreamsPerThread];
  for (auto& s : streams) XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t filled, read;
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming));
  XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&read, cudaEventDisableTiming));

  for (int step = 0; step < kSteps; ++step) {
    for (int i = 0; i < kStreamsPerThread; ++i) {
      cudaStream_t owner = streams[i];
      cudaStream_t reader = streams[(i + 1) % kStreamsPerThread];
      void* p = nullptr;
      XSC_EXAMPLE_CHECK(cudaMallocAsync(&p, kElems * sizeof(float), owner));
      auto* buf = static_cast<float*>(p);
      fill_params<<<64, 256, 0, owner>>>(buf, kElems, value_for(thread, step, i));
      XSC_EXAMPLE_CHECK(cudaGetLastError());
      event_wait(reader, owner, filled);
      sum_buffer<<<1, 256, 0, reader>>>(buf, kElems, results + step * kStreamsPerThread + i);
      XSC_EXAMPLE_CHECK(cudaGetLastError());
      event_wait(owner, reader, read);  // the owner waits for the read, then frees
      XSC_EXAMPLE_CHECK(cudaFreeAsync(buf, owner));
    }
  }
  for (auto& s : streams) XSC_EXAMPLE_CHECK(cudaStreamSynchronize(s));

  std::vector<float> host(kSteps * kStreamsPerThread);
  XSC_EXAMPLE_CHECK(cudaMemcpy(host.data(), results, host.size() * sizeof(float),
                               cudaMemcpyDeviceToHost));
  int wrong = 0;
  for (int step = 0; step < kSteps; ++step)
    for (int i = 0; i < kStreamsPerThread; ++i)
      wrong += host[step * kStreamsPerThread + i] != value_for(thread, step, i) * float(kElems);

  XSC_EXAMPLE_CHECK(cudaEventDestroy(read));
  XSC_EXAMPLE_CHECK(cudaEventDestroy(filled));
  for (auto& s : streams) XSC_EXAMPLE_CHECK(cudaStreamDestroy(s));
  return wrong;
}

}  // namespace

int main(int argc, char** argv) {
  // Each trial is already 512 hand-offs.
  Args args = parse_args(argc, argv, {}, nullptr, /*default_trials=*/2);
  keep_pool_memory();
  constexpr std::size_t kResultsPerThread = kSteps * kStreamsPerThread;
  float* results = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&results, kThreads * kResultsPerThread * sizeof(float)));

  std::printf("=== %d threads x %d streams ===\n", kThreads, kStreamsPerThread);
  int corrupted = 0;
  for (int t = 0; t < args.trials; ++t) {
    XSC_EXAMPLE_CHECK(cudaMemset(results, 0, kThreads * kResultsPerThread * sizeof(float)));
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    std::vector<int> wrong(kThreads, 0);
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; ++th)
      threads.emplace_back([&, th] { wrong[th] = worker(th, results + th * kResultsPerThread); });
    for (auto& th : threads) th.join();
    int total = 0;
    for (int w : wrong) total += w;
    if (total) {
      ++corrupted;
      std::printf("  trial %2d: CORRUPT  %d wrong sums\n", t, total);
    }
  }
  std::printf("  [%s] %d/%d trials corrupted\n", corrupted ? "FAIL" : "PASS", corrupted,
              args.trials);
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  XSC_EXAMPLE_CHECK(cudaFree(results));
  return 0;
}
