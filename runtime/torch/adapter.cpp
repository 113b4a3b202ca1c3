// libxstream_torch.so: the PyTorch allocator adapter's entry points.
//
// Exported (C linkage, looked up by the runtime with dlsym):
//   int xsc_torch_attach(const xsc_host_api*)   called once after loading
//   int xsc_torch_poll(void)                     attach the allocator hooks if
//                                                CUDA is initialized now; 1 when
//                                                nothing is left to do
//   uint32_t xsc_torch_launch_stack(void)        the calling thread's Python
//                                                stack as a depot id (0: none)
//   void xsc_torch_after_cuda_init(void)         Python, GIL held: what the
//                                                operator writes need of Python
//   int xsc_torch_install_operators(void)        operator writes without CUDA
//                                                (XSC_TORCH_OP_DEVICE=cpu: the
//                                                CPU tests and bench/torch_op_hook.py)
//   const char* xsc_torch_operator_stats(void)   the operator-write and Python
//                                                stack counters
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "runtime/torch/allocator_tracker.h"
#include "runtime/torch/autograd_nodes.h"
#include "runtime/torch/cuda_init_hook.h"
#include "runtime/torch/host_views.h"
#include "runtime/torch/operator_access.h"
#include "runtime/torch/python_stacks.h"
#include "runtime/torch/torch_version.h"
#include "runtime/torch/trace_steps.h"
#include "xstream_check/host_api.h"

namespace {

using namespace xsc::torch_adapter;

enum class State : int { kDetached, kWaitingForCuda, kAttached, kGaveUp };

const xsc_host_api* g_api = nullptr;
PythonStacks* g_stacks = nullptr;  // leaked: allocator frees run until exit
std::atomic<State> g_state{State::kDetached};

void notice(const std::string& message) {
  if (g_api != nullptr && g_api->notice != nullptr) g_api->notice(message.c_str());
}

std::string own_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&notice), &info) == 0 || info.dli_fname == nullptr)
    return {};
  return info.dli_fname;
}

// One attempt to hook the allocator; updates g_state.
State try_install() {
  std::string why;
  trace_step("installing allocator hooks");
  const InstallResult result = install_allocator_hooks(g_api, g_stacks, &why);
  trace_step("install result", static_cast<unsigned>(result), true);
  switch (result) {
    case InstallResult::kInstalled: {
      // What operators write, once CUDA is up (the callback asks for the
      // current stream of the tensors' device).
      std::string op_why;
      trace_step("adding the operator-access callback");
      if (!install_operator_access(g_api, &op_why))
        notice("PyTorch operator writes not observed: " + op_why +
               "; kernel arguments are still checked");
      g_state.store(State::kAttached);
      return State::kAttached;
    }
    case InstallResult::kNotInitialized:
      return State::kWaitingForCuda;
    case InstallResult::kFailed:
      break;
  }
  notice("PyTorch allocator not observed: " + why +
         "; its frees are invisible to the check (cudaMallocAsync-backed frees are still seen "
         "through CUDA)");
  g_state.store(State::kGaveUp);
  return State::kGaveUp;
}

// Called by the runtime at each kernel launch. PyTorch operators release the
// GIL around their kernels: the Python line of a launch such as `x @ weight`
// is read without it when its frames were seen before, else by taking it (on
// threads Python knows; the same rule PyTorch's own memory-history recorder
// follows).
std::uint32_t launch_stack_hook() {
  adopt_current_thread();
  return g_stacks != nullptr ? g_stacks->capture() : 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int xsc_torch_attach(const xsc_host_api* api) {
  if (api == nullptr || api->version < 1 || api->alloc == nullptr || api->free == nullptr ||
      api->free_completed == nullptr || api->intern_frames == nullptr || api->notice == nullptr)
    return 1;  // not a runtime we understand; nothing to say it through
  trace_step("attach");
  State expected = State::kDetached;
  if (!g_state.compare_exchange_strong(expected, State::kWaitingForCuda))
    return g_state.load() == State::kGaveUp ? 1 : 0;
  g_api = api;
  g_stacks = new PythonStacks(api);
  init_autograd_nodes(api);
  init_host_views(api);

  std::string built_for;
  std::string loaded = loaded_torch_version();
  trace_step(("loaded torch version '" + loaded + "'").c_str());
  if (!version_compatible(loaded, &built_for)) {
    notice("PyTorch " + loaded + " is loaded but the PyTorch adapter was built for " + built_for +
           ".x; allocator frees are not observed (rebuild xstream-check against this torch)");
    g_state.store(State::kGaveUp);
    return 1;
  }

  // Python file:line for kernel launches too (the consumer's launch site).
  if (api->set_launch_stack_hook != nullptr) api->set_launch_stack_hook(&launch_stack_hook);
  trace_step("launch stack hook registered");

  // Never hook the allocator from here: the runtime attaches from inside a
  // CUDA call, possibly while PyTorch is still initializing the allocator
  // (its device list is sized before its entries exist). The hooks go in at
  // a safe point instead: the runtime polls after kernel launches, and in a
  // Python process torch.cuda calls xsc_torch_poll right after its lazy
  // initialization.
  // Without a Python interpreter (a C++ program linked against libtorch)
  // only the runtime's polling remains, so a failure here is not final.
  std::string why;
  trace_step("queueing the call after torch.cuda's initialization");
  const bool queued = queue_cuda_init_hook(own_path(), &why);
  trace_step(queued ? "queued" : ("not queued: " + why).c_str());
  return 0;
}

extern "C" __attribute__((visibility("default"))) int xsc_torch_poll(void) {
  State state = g_state.load(std::memory_order_acquire);
  trace_step("poll in state", static_cast<unsigned>(state), true);
  if (state == State::kWaitingForCuda) state = try_install();
  return state == State::kWaitingForCuda ? 0 : 1;
}

extern "C" __attribute__((visibility("default"))) std::uint32_t xsc_torch_launch_stack(void) {
  return launch_stack_hook();
}

extern "C" __attribute__((visibility("default"))) void xsc_torch_after_cuda_init(void) {
  patch_higher_order_operators();
}

extern "C" __attribute__((visibility("default"))) int xsc_torch_install_operators(void) {
  if (g_api == nullptr) return 1;
  std::string why;
  if (!install_operator_access(g_api, &why)) {
    notice("PyTorch operator writes not observed: " + why);
    return 1;
  }
  patch_higher_order_operators();
  return 0;
}

extern "C" __attribute__((visibility("default"))) const char* xsc_torch_operator_stats(void) {
  static thread_local std::string text;
  const OperatorAccessCounts c = operator_access_counts();
  const PythonStackCounts stacks = python_stack_counts();
  text = std::string("mechanism=") + operator_access_mechanism() +
         " writer_operators=" + std::to_string(c.writer_operators) +
         " unboxed_operators=" + std::to_string(c.unboxed_operators) +
         " unboxed_calls=" + std::to_string(c.unboxed_calls) +
         " writer_calls=" + std::to_string(c.writer_calls) +
         " followed=" + std::to_string(c.followed) + " fed=" + std::to_string(c.fed) +
         " host_calls=" + std::to_string(c.host_calls) +
         " adopted_threads=" + std::to_string(c.adopted_threads) +
         " host_callback=" + (c.host_callback ? "1" : "0") +
         " host_writers=" + (c.host_writers ? "1" : "0") +
         " callback_calls=" + std::to_string(c.callback_calls) +
         " callback_switched_on=" + std::to_string(c.callback_switched_on) +
         " stacks_gil_taken=" + std::to_string(stacks.gil_taken) +
         " stacks_known_without_gil=" + std::to_string(stacks.known_without_gil);
  return text.c_str();
}
