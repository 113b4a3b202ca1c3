// cudaDeviceReset in the middle of a program, which then carries on.
//
// The reset destroys every stream, event and allocation of the context. New
// ones created afterwards may reuse the old handle values and addresses; the
// checker must treat them as new, not as the old objects with their history
// (an allocation still live at the reset must not make the new allocation at
// the same address look like a double allocation or a use after free).
#include "fault_common.h"

namespace {

constexpr int kN = 8192;

long long phase(const char* name, bool leave_live_allocation) {
  cudaStream_t a, b;
  FAULT_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  int* accumulator = nullptr;
  FAULT_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&accumulator), sizeof(int) * kN, b));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * kN, b));
  for (int round = 1; round <= 3; ++round) ordered_round_trip(a, b, accumulator, kN, round);
  long long sum = device_sum(accumulator, kN, b);
  std::printf("%s: checksum %lld\n", name, sum);
  if (!leave_live_allocation) {
    FAULT_CHECK(cudaFreeAsync(accumulator, b));
    FAULT_CHECK(cudaStreamSynchronize(b));
    FAULT_CHECK(cudaStreamDestroy(a));
    FAULT_CHECK(cudaStreamDestroy(b));
  }
  // Otherwise the streams and the allocation are left for the reset.
  return sum;
}

}  // namespace

int main() {
  phase("before reset", /*leave_live_allocation=*/true);
  show("cudaDeviceReset", cudaDeviceReset());
  phase("after first reset", /*leave_live_allocation=*/true);
  show("cudaDeviceReset", cudaDeviceReset());
  phase("after second reset", /*leave_live_allocation=*/false);
  FAULT_CHECK(cudaDeviceSynchronize());
  return 0;
}
