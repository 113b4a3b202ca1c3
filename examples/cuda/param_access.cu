// Kernels whose signatures say which arguments they only read, on two
// streams that share a weight buffer.
//
//   param_access readers      two streams read the weights through
//                             reduce_rows(const float*, float*), with
//                             nothing ordering them (correct: two reads)
//   param_access writer       one stream scales the weights in place through
//                             scale(float*, float) while the other reads them,
//                             unordered (a race the runtime does not report:
//                             a kernel's plain pointer argument is of unknown
//                             direction to it, never a known write; the
//                             static check reads scale's body and does)
//   param_access copy         the two reads, then new weights are copied in
//                             with cudaMemcpyAsync on a third stream that
//                             waited for neither (a write after each read)
//   param_access copy-waits   the same, the copy stream waits for both
//                             readers first (correct)
//
// The program prints the streams and always exits 0: deciding is the
// checker's job.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common.cuh"

using namespace xsc_example;

namespace {

constexpr int kRows = 1024;
constexpr int kCols = 1024;
constexpr std::size_t kWeights = std::size_t(kRows) * kCols;

// out[r] = sum of row r of w.
__global__ void reduce_rows(const float* w, float* out) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= kRows) return;
  float sum = 0.0f;
  for (int c = 0; c < kCols; ++c) sum += w[std::size_t(r) * kCols + c];
  out[r] = sum;
}

__global__ void scale(float* w, float factor) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < kWeights) w[i] *= factor;
}

void read_weights(const float* w, float* out, cudaStream_t stream) {
  reduce_rows<<<kRows / 128, 128, 0, stream>>>(w, out);  // read-site
  XSC_EXAMPLE_CHECK(cudaGetLastError());
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv, {"readers", "writer", "copy", "copy-waits"});
  float *w = nullptr, *out_a = nullptr, *out_b = nullptr, *host = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&w, kWeights * sizeof(float)));  // weights-alloc
  XSC_EXAMPLE_CHECK(cudaMalloc(&out_a, kRows * sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaMalloc(&out_b, kRows * sizeof(float)));
  XSC_EXAMPLE_CHECK(cudaMallocHost(&host, kWeights * sizeof(float)));
  std::vector<float> ones(kWeights, 1.0f);
  XSC_EXAMPLE_CHECK(cudaMemcpy(w, ones.data(), kWeights * sizeof(float), cudaMemcpyHostToDevice));
  // A pageable upload may return before it lands: every stream below starts
  // after it.
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  std::fill(host, host + kWeights, 2.0f);

  cudaStream_t a, b, c;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking));
  std::printf("streams: a=%p b=%p c=%p\n", static_cast<void*>(a), static_cast<void*>(b),
              static_cast<void*>(c));
  std::fflush(stdout);

  if (args.mode == "writer") {
    scale<<<int((kWeights + 255) / 256), 256, 0, a>>>(w, 0.5f);  // scale-site
    XSC_EXAMPLE_CHECK(cudaGetLastError());
    read_weights(w, out_b, b);  // writer-read
  } else {
    read_weights(w, out_a, a);
    read_weights(w, out_b, b);
    if (args.mode == "copy-waits") {
      cudaEvent_t done_a, done_b;
      XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&done_a, cudaEventDisableTiming));
      XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&done_b, cudaEventDisableTiming));
      XSC_EXAMPLE_CHECK(cudaEventRecord(done_a, a));
      XSC_EXAMPLE_CHECK(cudaEventRecord(done_b, b));
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(c, done_a, 0));
      XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(c, done_b, 0));
      XSC_EXAMPLE_CHECK(cudaEventDestroy(done_a));
      XSC_EXAMPLE_CHECK(cudaEventDestroy(done_b));
    }
    if (args.mode == "copy" || args.mode == "copy-waits")
      XSC_EXAMPLE_CHECK(cudaMemcpyAsync(w, host, kWeights * sizeof(float),  // copy-site
                                        cudaMemcpyHostToDevice, c));
  }
  XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
  std::vector<float> sums(kRows);
  XSC_EXAMPLE_CHECK(cudaMemcpy(sums.data(), out_b, kRows * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("%s: row sum %.1f\n", args.mode.c_str(), double(sums[0]));

  XSC_EXAMPLE_CHECK(cudaStreamDestroy(c));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(b));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(a));
  XSC_EXAMPLE_CHECK(cudaFreeHost(host));
  XSC_EXAMPLE_CHECK(cudaFree(out_b));
  XSC_EXAMPLE_CHECK(cudaFree(out_a));
  XSC_EXAMPLE_CHECK(cudaFree(w));
  return 0;
}
