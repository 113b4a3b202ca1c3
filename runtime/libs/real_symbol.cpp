#include "runtime/libs/real_symbol.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <mutex>
#include <set>
#include <string>

namespace xsc::libs {
namespace {

// The load base of this library: any symbol found inside it is one of our
// own interposers, and calling it would recurse forever.
const void* own_base() {
  static const void* base = [] {
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&own_base), &info) == 0) return static_cast<void*>(nullptr);
    return info.dli_fbase;
  }();
  return base;
}

bool is_ours(void* fn) {
  Dl_info info{};
  if (dladdr(fn, &info) == 0) return false;
  return info.dli_fbase == own_base();
}

// Looks `name` up in one already-loaded object, identified by its path or
// soname, without loading anything (RTLD_NOLOAD).
void* lookup_in_loaded(const char* object, const char* name) {
  void* handle = dlopen(object, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* fn = dlsym(handle, name);
  dlclose(handle);  // drops the reference RTLD_NOLOAD took
  if (fn != nullptr && is_ours(fn)) return nullptr;
  return fn;
}

struct ScanState {
  const char* name;
  void* found;
};

int scan_object(struct dl_phdr_info* info, size_t, void* data) {
  auto* state = static_cast<ScanState*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return 0;
  if (reinterpret_cast<const void*>(info->dlpi_addr) == own_base()) return 0;
  state->found = lookup_in_loaded(info->dlpi_name, state->name);
  return state->found != nullptr ? 1 : 0;
}

}  // namespace

void* find_real_symbol(const char* name) {
  void* fn = dlsym(RTLD_NEXT, name);
  if (fn != nullptr && !is_ours(fn)) return fn;
  // libnccl outside the global scope: ask it by soname first (cheap), then
  // every loaded object in load order.
  for (const char* soname : {"libnccl.so.2", "libnccl.so"}) {
    fn = lookup_in_loaded(soname, name);
    if (fn != nullptr) return fn;
  }
  ScanState state{name, nullptr};
  dl_iterate_phdr(scan_object, &state);
  return state.found;
}

void report_missing_symbol(const char* name, const char* returning) {
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (!said.insert(name).second) return;
  std::fprintf(stderr, "xstream-check: %s called but no loaded library defines it; returning %s\n",
               name, returning);
}

void note_loaded_release(const char* library, const char* root_option, Release built,
                         Release loaded) {
  if (loaded.major == 0 && loaded.minor == 0 && loaded.patch == 0) return;
  if (loaded.major < built.major || (loaded.major == built.major && loaded.minor <= built.minor))
    return;
  static std::mutex mu;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mu);
  if (!said.insert(library).second) return;
  std::fprintf(stderr,
               "xstream-check: built with %s %d.%d.%d headers but %s %d.%d.%d is loaded: what "
               "%d.%d added is not checked (build with %s naming its headers)\n",
               library, built.major, built.minor, built.patch, library, loaded.major, loaded.minor,
               loaded.patch, loaded.major, loaded.minor, root_option);
}

}  // namespace xsc::libs
