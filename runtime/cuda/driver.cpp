// The few driver entry points the runtime calls itself. Nothing links
// against libcuda: it is found in the process once the application has
// loaded it (every CUPTI callback comes after that).
#include <dlfcn.h>

#include <atomic>
#include <mutex>

#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

template <class Fn>
void resolve_into(void* library, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(library, name));
}

}  // namespace

const DriverApi& driver() {
  static DriverApi api;
  static std::atomic<bool> resolved{false};
  static std::mutex mu;
  if (resolved.load(std::memory_order_acquire)) return api;
  std::lock_guard<std::mutex> lock(mu);
  if (resolved.load(std::memory_order_relaxed)) return api;
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (library == nullptr) return api;  // not loaded yet: all entries stay null
  resolve_into(library, "cuStreamGetFlags", &api.cuStreamGetFlags);
  resolve_into(library, "cuFuncGetParamInfo", &api.cuFuncGetParamInfo);
  resolve_into(library, "cuKernelGetParamInfo", &api.cuKernelGetParamInfo);
  resolve_into(library, "cuFuncGetName", &api.cuFuncGetName);
  resolve_into(library, "cuKernelGetName", &api.cuKernelGetName);
  resolve_into(library, "cuStreamGetCaptureInfo_v2", &api.cuStreamGetCaptureInfo_v2);
  resolve_into(library, "cuStreamIsCapturing", &api.cuStreamIsCapturing);
  resolved.store(true, std::memory_order_release);
  return api;
}

}  // namespace xsc::rt
