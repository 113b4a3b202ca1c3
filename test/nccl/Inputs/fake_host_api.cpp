// A stand-in for the runtime's host API: prints every use the NCCL
// interposers report. FAKE_XSC_DISABLED=1 plays a disabled runtime (NULL
// table); FAKE_XSC_NO_COLLECTIVE=1 an older runtime without the collective
// entry, where uses must arrive through use().
#include <cstdio>
#include <cstdlib>

#include "xstream_check/host_api.h"

namespace {

const char* access_name(int access) {
  switch (access) {
    case XSC_ACCESS_READ: return "read";
    case XSC_ACCESS_WRITE: return "write";
    default: return "unknown";
  }
}

void print(const char* entry, uint64_t addr, uint64_t size, uint64_t stream, int access,
           const char* name, uint32_t stack) {
  std::printf("%s addr=%#llx size=%llu stream=%#llx access=%s name=%s stack=%u\n", entry,
              static_cast<unsigned long long>(addr), static_cast<unsigned long long>(size),
              static_cast<unsigned long long>(stream), access_name(access), name, stack);
}

void on_collective(uint64_t addr, uint64_t size, uint64_t stream, int access, const char* name,
                   uint32_t stack) {
  print("collective", addr, size, stream, access, name, stack);
}

void on_use(uint64_t addr, uint64_t size, uint64_t stream, int access, const char* what,
            uint32_t stack) {
  print("use", addr, size, stream, access, what, stack);
}

bool env_on(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr && text[0] == '1';
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const xsc_host_api* xsc_runtime_host_api(void) {
  static xsc_host_api with_collective = [] {
    xsc_host_api api{};
    api.version = XSC_HOST_API_VERSION;
    api.use = on_use;
    api.collective = on_collective;
    return api;
  }();
  static xsc_host_api without_collective = [] {
    xsc_host_api api{};
    api.version = XSC_HOST_API_VERSION;
    api.use = on_use;
    return api;
  }();
  if (env_on("FAKE_XSC_DISABLED")) return nullptr;
  return env_on("FAKE_XSC_NO_COLLECTIVE") ? &without_collective : &with_collective;
}
