// Gets the adapter called back once PyTorch has initialized CUDA.
//
// The runtime loads the adapter as soon as libc10_cuda.so is mapped, which
// is during `import torch`, long before CUDA's lazy initialization creates
// the per-device allocators that hooks attach to. In a Python process the
// adapter asks torch.cuda to call it right after that initialization
// (torch.cuda._lazy_call, the queue torch.cuda itself uses for work that must
// wait for CUDA), waiting for torch.cuda to be imported first if need be.
// The call comes back through ctypes into xsc_torch_poll().
#pragma once

#include <string>

namespace xsc::torch_adapter {

// Returns false (and says why) when the hook could not be queued, e.g. in a
// process without a Python interpreter.
bool queue_cuda_init_hook(const std::string& adapter_path, std::string* why);

}  // namespace xsc::torch_adapter
