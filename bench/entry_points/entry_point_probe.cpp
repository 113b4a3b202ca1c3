// Whether a tool could carry kernel launches itself instead of through
// CUPTI's callbacks: preloaded, it subscribes to CUPTI, and at the exit of
// every cuGetProcAddress it hands the caller its own entry point for
// cuLaunchKernel and cuLaunchKernelEx (one wrapper per distinct driver
// pointer). A launch that reaches the driver through such a wrapper is
// counted as carried; one whose CUPTI launch callback comes on a thread
// that is not inside a wrapper reached the driver some other way (a private
// table, dlsym, a link against libcuda) and is counted by callback id. At
// exit it prints one PROBE line with the counts, the bypasses by callback
// id, and the launch-related symbols callers asked cuGetProcAddress for.
// The runtime's own launch path is not involved: this library replaces it.
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace {

thread_local int inside_wrapper = 0;
std::atomic<long> proc_address_calls{0}, swapped{0}, carried{0}, bypassed{0};
constexpr int kCallbackIds = 1024;
std::atomic<long> bypassed_by_id[kCallbackIds];
std::mutex requests_mu;
std::map<std::string, long> requests;  // "symbol vVERSION fFLAGS" -> calls

using LaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  unsigned, unsigned, CUstream, void**, void**);
using LaunchKernelEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);

// Each wrapper calls one driver pointer; the driver hands out a few per
// symbol (the per-thread default stream variants among them).
constexpr std::size_t kSlots = 8;
struct Slots {
  std::mutex mu;
  void* real[kSlots] = {};
  std::size_t used = 0;
};
Slots launch_slots, launch_ex_slots;

template <std::size_t S>
CUresult launch_kernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned shared, CUstream stream, void** params,
                       void** extra) {
  ++inside_wrapper;
  carried++;
  const CUresult result = reinterpret_cast<LaunchKernel>(launch_slots.real[S])(
      f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
  --inside_wrapper;
  return result;
}

template <std::size_t S>
CUresult launch_kernel_ex(const CUlaunchConfig* config, CUfunction f, void** params,
                          void** extra) {
  ++inside_wrapper;
  carried++;
  const CUresult result =
      reinterpret_cast<LaunchKernelEx>(launch_ex_slots.real[S])(config, f, params, extra);
  --inside_wrapper;
  return result;
}

// One wrapper per slot, slot S calling the driver pointer kept in slot S.
template <std::size_t... S>
std::array<void*, kSlots> launch_wrapper_table(std::index_sequence<S...>) {
  return {reinterpret_cast<void*>(&launch_kernel<S>)...};
}
template <std::size_t... S>
std::array<void*, kSlots> launch_ex_wrapper_table(std::index_sequence<S...>) {
  return {reinterpret_cast<void*>(&launch_kernel_ex<S>)...};
}
const std::array<void*, kSlots> launch_wrappers =
    launch_wrapper_table(std::make_index_sequence<kSlots>());
const std::array<void*, kSlots> launch_ex_wrappers =
    launch_ex_wrapper_table(std::make_index_sequence<kSlots>());

// The wrapper for driver pointer `real`, or `real` itself when the slots
// are used up.
void* wrapper_for(void* real, Slots& slots, const std::array<void*, kSlots>& wrappers) {
  std::lock_guard<std::mutex> lock(slots.mu);
  for (std::size_t i = 0; i < slots.used; ++i)
    if (slots.real[i] == real) return wrappers[i];
  if (slots.used == kSlots) return real;
  slots.real[slots.used] = real;
  return wrappers[slots.used++];
}

void note_request(const char* symbol, int version, unsigned long long flags) {
  if (std::strstr(symbol, "Launch") == nullptr && std::strstr(symbol, "EventRecord") == nullptr &&
      std::strstr(symbol, "WaitEvent") == nullptr)
    return;
  std::lock_guard<std::mutex> lock(requests_mu);
  requests[std::string(symbol) + " v" + std::to_string(version) + " f" +
           std::to_string(flags)]++;
}

void on_proc_address(CUpti_CallbackId id, const CUpti_CallbackData* data) {
  proc_address_calls++;
  const char* symbol = nullptr;
  void** pfn = nullptr;
  int version = 0;
  unsigned long long flags = 0;
  if (id == CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2) {
    const auto* p = static_cast<const cuGetProcAddress_v2_params*>(data->functionParams);
    symbol = p->symbol, pfn = p->pfn, version = p->cudaVersion, flags = p->flags;
  } else {
    const auto* p = static_cast<const cuGetProcAddress_params*>(data->functionParams);
    symbol = p->symbol, pfn = p->pfn, version = p->cudaVersion, flags = p->flags;
  }
  if (symbol == nullptr || pfn == nullptr || *pfn == nullptr) return;
  note_request(symbol, version, flags);
  if (std::strcmp(symbol, "cuLaunchKernel") == 0) {
    *pfn = wrapper_for(*pfn, launch_slots, launch_wrappers);
    swapped++;
  } else if (std::strcmp(symbol, "cuLaunchKernelEx") == 0) {
    *pfn = wrapper_for(*pfn, launch_ex_slots, launch_ex_wrappers);
    swapped++;
  }
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                          const void* raw) {
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* data = static_cast<const CUpti_CallbackData*>(raw);
  if (id == CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress ||
      id == CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2) {
    if (data->callbackSite == CUPTI_API_EXIT) on_proc_address(id, data);
    return;
  }
  if (data->callbackSite != CUPTI_API_ENTER || inside_wrapper > 0) return;
  bypassed++;
  bypassed_by_id[id % kCallbackIds]++;
}

struct Probe {
  Probe() {
    void* cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
    if (cupti == nullptr) {
      std::fprintf(stderr, "PROBE cannot load libcupti.so.13\n");
      return;
    }
    auto subscribe = reinterpret_cast<decltype(&cuptiSubscribe)>(dlsym(cupti, "cuptiSubscribe"));
    auto enable =
        reinterpret_cast<decltype(&cuptiEnableCallback)>(dlsym(cupti, "cuptiEnableCallback"));
    CUpti_SubscriberHandle subscriber = nullptr;
    if (subscribe == nullptr || enable == nullptr ||
        subscribe(&subscriber, reinterpret_cast<CUpti_CallbackFunc>(on_callback), nullptr) !=
            CUPTI_SUCCESS) {
      std::fprintf(stderr, "PROBE cannot subscribe to CUPTI\n");
      return;
    }
    for (CUpti_CallbackId id :
         {CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress, CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz})
      if (enable(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id) != CUPTI_SUCCESS)
        std::fprintf(stderr, "PROBE cannot enable callback %u\n", id);
  }
  ~Probe() {
    std::fprintf(stderr, "PROBE proc_address_calls=%ld swapped=%ld carried=%ld bypassed=%ld\n",
                 proc_address_calls.load(), swapped.load(), carried.load(), bypassed.load());
    for (int id = 0; id < kCallbackIds; ++id)
      if (bypassed_by_id[id] > 0)
        std::fprintf(stderr, "PROBE bypassed callback id %d: %ld\n", id, bypassed_by_id[id].load());
    for (const auto& [request, n] : requests)
      std::fprintf(stderr, "PROBE requested %s x%ld\n", request.c_str(), n);
  }
} probe;

}  // namespace
