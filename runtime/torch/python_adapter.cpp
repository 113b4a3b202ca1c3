// libxstream_python.so: the Python file:line of each kernel launch in a
// Python program that does not load PyTorch (CuPy's, say), the PyTorch
// adapter's Python stacks (python_stacks.h) without PyTorch. In a process
// that loads PyTorch, the PyTorch adapter registers the same hook, with the
// backward pass's stacks added, and replaces this one.
//
// Exported (C linkage, called through ctypes by the Python start-up code,
// python/xstream_check/autoload/xstream_check_cupy.py):
//   int xsc_python_attach(const xsc_host_api*)   registers the launch stack
//                                                hook; 0 when it did
#include <cstdint>

#include "runtime/torch/autograd_nodes.h"
#include "runtime/torch/python_stacks.h"
#include "xstream_check/host_api.h"

// Without PyTorch there is no autograd engine: no thread evaluates a node,
// and a stack with no Python frame has no backward to be named after.
namespace xsc::torch_adapter {

void init_autograd_nodes(const xsc_host_api*) {}

void note_forward_stack(std::uint32_t) {}

std::uint32_t backward_stack() { return 0; }

}  // namespace xsc::torch_adapter

namespace {

xsc::torch_adapter::PythonStacks* g_stacks = nullptr;  // leaked: launches run until exit

// Called by the runtime at each kernel launch (and each library call it
// follows): the calling thread's Python stack, read without the GIL when
// the thread released it and its frames were seen before.
std::uint32_t launch_stack_hook() { return g_stacks->capture(); }

}  // namespace

extern "C" __attribute__((visibility("default"))) int xsc_python_attach(const xsc_host_api* api) {
  if (api == nullptr || api->version < 1 || api->intern_frames == nullptr ||
      api->set_launch_stack_hook == nullptr)
    return 1;
  if (g_stacks == nullptr) g_stacks = new xsc::torch_adapter::PythonStacks(api);
  api->set_launch_stack_hook(&launch_stack_hook);
  return 0;
}
