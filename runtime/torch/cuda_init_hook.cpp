#include "runtime/torch/cuda_init_hook.h"

#include "runtime/torch/python_api.h"

namespace xsc::torch_adapter {
namespace {

// Runs once, in a private namespace, with the adapter's path in
// `_xsc_adapter_path`. It must never raise into torch.cuda's initialization
// (a failing queued call aborts it), and never changes what the program sees
// beyond one queued call.
constexpr const char* kHookSource = R"PY(
import sys

def _xsc_install(adapter_path):
    def after_cuda_init():
        try:
            import ctypes
            ctypes.CDLL(adapter_path).xsc_torch_poll()
        except Exception:
            pass
        # Higher-order operators fall through the operator-write key
        # (operator_access.cpp); the GIL stays held.
        try:
            import ctypes
            ctypes.PyDLL(adapter_path).xsc_torch_after_cuda_init()
        except Exception:
            pass
        # Host views of pinned tensors (host_views.cpp); the GIL stays held.
        try:
            import ctypes
            ctypes.PyDLL(adapter_path).xsc_torch_install_host_views()
        except Exception:
            pass

    def queue(cuda_module):
        lazy_call = getattr(cuda_module, "_lazy_call", None)
        if lazy_call is None:
            return
        # Runs at once when CUDA is already initialized.
        lazy_call(after_cuda_init)

    cuda = sys.modules.get("torch.cuda")
    if cuda is not None and hasattr(cuda, "_lazy_call"):
        queue(cuda)
        return

    class _AfterTorchCudaImport:
        """Meta-path entry that wraps torch.cuda's loader once, then leaves."""

        def find_spec(self, name, path=None, target=None):
            if name != "torch.cuda":
                return None
            if self in sys.meta_path:
                sys.meta_path.remove(self)
            import importlib.util
            spec = importlib.util.find_spec(name)
            loader = getattr(spec, "loader", None)
            exec_module = getattr(loader, "exec_module", None)
            if exec_module is None:
                return spec

            def exec_then_queue(module):
                exec_module(module)
                try:
                    queue(module)
                except Exception:
                    pass

            loader.exec_module = exec_then_queue
            return spec

    sys.meta_path.insert(0, _AfterTorchCudaImport())

_xsc_install(_xsc_adapter_path)
)PY";

}  // namespace

bool queue_cuda_init_hook(const std::string& adapter_path, std::string* why) {
  if (!python_can_run_source() || PyGILState_GetThisThreadState() == nullptr) {
    *why = "no Python interpreter on this thread";
    return false;
  }
  // The path goes in as source text: it is the adapter's own file name.
  const std::string source = "_xsc_adapter_path = " + python_quoted(adapter_path) + "\n" + kHookSource;
  if (!run_python_source(source)) {
    *why = "torch.cuda could not be asked for a call after CUDA initialization";
    return false;
  }
  return true;
}

}  // namespace xsc::torch_adapter
