#include "runtime/torch/host_views.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "runtime/torch/python_api.h"
#include "runtime/torch/trace_steps.h"

namespace xsc::torch_adapter {
namespace {

const xsc_host_api* g_api = nullptr;
thread_local int t_view_depth = 0;

// Indexed by the wrappers' `what`.
constexpr const char* kWhat[] = {"Tensor.numpy", "Tensor.__array__", "Tensor.tolist",
                                 "Tensor.__dlpack__", "torch.from_numpy"};
constexpr int kWhatCount = sizeof(kWhat) / sizeof(kWhat[0]);

bool wanted() {
  return g_api != nullptr && g_api->version >= 3 && g_api->operator_access_wanted != nullptr &&
         g_api->operator_access_wanted() != 0 && g_api->pinned_memory_seen != nullptr &&
         g_api->host_access != nullptr;
}

// Runs with `_xsc_adapter_path` set. Changes nothing the program can see
// but the five attributes it replaces: each wrapper calls the original with
// the same arguments and returns its result or lets its exception through;
// it keeps the original's name, qualified name and documentation
// (functools.update_wrapper). Never raises.
constexpr const char* kViewsSource = R"PY(
import sys

def _xsc_install(adapter_path):
    torch = sys.modules.get("torch")
    Tensor = getattr(torch, "Tensor", None)
    if Tensor is None:
        return
    import ctypes
    import functools
    lib = ctypes.PyDLL(adapter_path)
    enter = lib.xsc_torch_view_enter
    enter.argtypes = ()
    enter.restype = ctypes.c_int
    leave = lib.xsc_torch_view_leave
    leave.argtypes = (ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int)
    leave.restype = None
    has_torch_function = torch._C._has_torch_function_unary
    strided = torch.strided

    def viewed_bytes(t):
        # (address, size) of the bytes a host view of `t` certainly covers:
        # all of a contiguous tensor, else its first element; (0, 0) for no
        # host bytes, and for a subclass with a __torch_function__ of its
        # own (asking it would run the subclass's code).
        try:
            if (not isinstance(t, Tensor) or has_torch_function(t) or not t.is_cpu
                    or t.layout is not strided):
                return 0, 0
            n = t.numel()
            if n == 0:
                return 0, 0
            size = t.element_size()
            if t.is_contiguous():
                size *= n
            return t.data_ptr(), size
        except Exception:
            return 0, 0

    def follow(original, what, of_result):
        def wrapper(*args, **kwargs):
            if not enter():
                return original(*args, **kwargs)
            try:
                result = original(*args, **kwargs)
            except BaseException:
                leave(0, 0, what)
                raise
            addr, size = viewed_bytes(result if of_result else (args[0] if args else None))
            leave(addr, size, what)
            return result
        functools.update_wrapper(wrapper, original)
        wrapper._xsc_original = original
        return wrapper

    for what, name in enumerate(("numpy", "__array__", "tolist", "__dlpack__")):
        original = getattr(Tensor, name, None)
        if original is None or hasattr(original, "_xsc_original"):
            continue
        setattr(Tensor, name, follow(original, what, False))
    original = getattr(torch, "from_numpy", None)
    if original is not None and not hasattr(original, "_xsc_original"):
        torch.from_numpy = follow(original, 4, True)

try:
    _xsc_install(_xsc_adapter_path)
except Exception:
    pass
)PY";

std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&kWhat), &info) == 0 || info.dli_fname == nullptr)
    return {};
  return info.dli_fname;
}

}  // namespace

void init_host_views(const xsc_host_api* api) { g_api = api; }

bool in_host_view() { return t_view_depth > 0; }

}  // namespace xsc::torch_adapter

using namespace xsc::torch_adapter;

extern "C" __attribute__((visibility("default"))) int xsc_torch_view_enter(void) {
  if (g_api == nullptr || g_api->pinned_memory_seen() == 0) return 0;
  ++t_view_depth;
  return 1;
}

extern "C" __attribute__((visibility("default"))) void xsc_torch_view_leave(uint64_t addr,
                                                                             uint64_t size,
                                                                             int what) {
  if (t_view_depth > 0) --t_view_depth;
  // A wrapped call inside another (Tensor.__array__ calls Tensor.numpy):
  // the outer one reports.
  if (t_view_depth > 0 || g_api == nullptr || addr == 0 || size == 0 || what < 0 ||
      what >= kWhatCount)
    return;
  // The stack starts at the wrapper's caller.
  PythonStacks::SkipInnermost skip(1);
  g_api->host_access(addr, size, XSC_ACCESS_READ, kWhat[what], 0);
}

extern "C" __attribute__((visibility("default"))) void xsc_torch_install_host_views(void) {
  static std::atomic<bool> done{false};
  if (!wanted() || done.exchange(true)) return;
  if (!python_can_run_source() || PyGILState_GetThisThreadState() == nullptr) return;
  const std::string path = own_path();
  if (path.empty()) return;
  trace_step("wrapping Tensor.numpy, __array__, tolist, __dlpack__ and torch.from_numpy");
  run_python_source("_xsc_adapter_path = " + python_quoted(path) + "\n" + kViewsSource);
}
