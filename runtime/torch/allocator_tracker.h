// Observes PyTorch's CUDA caching allocator and reports its allocations and
// frees to the runtime.
//
// Two hooks are installed on the allocator, both through its public API:
//  * a trace tracker, called for every trace entry while the per-device
//    allocator lock is held: it only forwards addresses, sizes, streams and
//    already-interned stack ids to the host API (which takes no lock the
//    application could hold, and never calls back into Python or CUDA);
//  * a context recorder (the allocator's history hook), called before that
//    lock is taken: it reads the Python stack there, where taking the GIL is
//    as safe as it is for PyTorch's own memory-history recorder.
// The tracker finds the stack id in the context the allocator hands it.
#pragma once

#include <string>

#include "runtime/torch/python_stacks.h"
#include "xstream_check/host_api.h"

namespace xsc::torch_adapter {

enum class InstallResult {
  kInstalled,       // hooks in place
  kNotInitialized,  // CUDA not initialized yet in this process: try later
  kFailed,          // cannot hook this allocator; `why` says why
};

// Installs both hooks once the allocator has been initialized. Safe to call
// from any thread, repeatedly; only the first successful call installs.
// `stacks` must outlive the process's last allocator call.
InstallResult install_allocator_hooks(const xsc_host_api* api, PythonStacks* stacks,
                                      std::string* why);

}  // namespace xsc::torch_adapter
