// An application that is a CUPTI client itself.
//
// CUPTI allows one callback subscriber per process. When the application
// takes the slot, the checker must step aside with one line and leave the
// application's own profiling working exactly as without the checker: its
// cuptiSubscribe succeeds and its callback sees every launch.
//
// Usage: cupti_subscriber first   subscribe before the first CUDA call
//        cupti_subscriber late    subscribe after CUDA work has already run
#include <cupti.h>

#include <atomic>
#include <cstring>

#include "fault_common.h"

namespace {

constexpr int kN = 1024;
std::atomic<int> launches_seen{0};

void CUPTIAPI count_launches(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                             const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || info->callbackSite != CUPTI_API_ENTER) return;
  if (id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
      id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 ||
      id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 ||
      id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060)
    launches_seen.fetch_add(1, std::memory_order_relaxed);
}

const char* result_name(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) return "unknown";
  return text;
}

bool subscribe(CUpti_SubscriberHandle* subscriber) {
  CUptiResult result = cuptiSubscribe(subscriber, count_launches, nullptr);
  std::printf("cuptiSubscribe -> %s\n", result_name(result));
  if (result != CUPTI_SUCCESS) return false;
  result = cuptiEnableDomain(1, *subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  std::printf("cuptiEnableDomain -> %s\n", result_name(result));
  return result == CUPTI_SUCCESS;
}

// Six kernel launches (three round trips of two kernels each).
long long work() {
  cudaStream_t a, b;
  FAULT_CHECK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
  FAULT_CHECK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
  int* accumulator = nullptr;
  FAULT_CHECK(cudaMalloc(&accumulator, sizeof(int) * kN));
  FAULT_CHECK(cudaMemsetAsync(accumulator, 0, sizeof(int) * kN, b));
  for (int round = 1; round <= 3; ++round) ordered_round_trip(a, b, accumulator, kN, round);
  long long sum = device_sum(accumulator, kN, b);
  FAULT_CHECK(cudaFree(accumulator));
  FAULT_CHECK(cudaStreamDestroy(a));
  FAULT_CHECK(cudaStreamDestroy(b));
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  bool first = argc == 2 && std::strcmp(argv[1], "first") == 0;
  bool late = argc == 2 && std::strcmp(argv[1], "late") == 0;
  if (!first && !late) {
    std::fprintf(stderr, "usage: %s first|late\n", argv[0]);
    return 2;
  }
  CUpti_SubscriberHandle subscriber{};
  bool subscribed = false;
  if (first) subscribed = subscribe(&subscriber);
  std::printf("work: checksum %lld\n", work());
  if (late) subscribed = subscribe(&subscriber);
  std::printf("work: checksum %lld\n", work());
  std::printf("launches seen by the application's callback: %d\n", launches_seen.load());
  if (subscribed) std::printf("cuptiUnsubscribe -> %s\n", result_name(cuptiUnsubscribe(subscriber)));
  return subscribed ? 0 : 1;
}
