// Is the PyTorch in this process the one the adapter was compiled against?
#pragma once

#include <string>

namespace xsc::torch_adapter {

// The version of the torch whose libc10_cuda.so is loaded, read from the
// version file next to its lib/ directory ("2.11.0+cu130"); empty when no
// such file is found (a libtorch without version file).
std::string loaded_torch_version();

// The adapter uses PyTorch's C++ allocator interface, whose layout changes
// between minor releases: major.minor must match the headers built against.
bool version_compatible(const std::string& loaded, std::string* expected);

}  // namespace xsc::torch_adapter
