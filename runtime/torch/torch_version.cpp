#include "runtime/torch/torch_version.h"

#include <dlfcn.h>

#include <fstream>
#include <regex>
#include <sstream>

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/headeronly/version.h>

namespace xsc::torch_adapter {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::string loaded_torch_version() {
  Dl_info info{};
  if (dladdr(static_cast<const void*>(&c10::cuda::CUDACachingAllocator::allocator), &info) == 0 ||
      info.dli_fname == nullptr)
    return {};
  std::string lib_path = info.dli_fname;
  std::string lib_dir = lib_path.substr(0, lib_path.rfind('/'));
  std::string root = lib_dir.substr(0, lib_dir.rfind('/'));
  // A wheel: torch/lib/libc10_cuda.so next to torch/version.py.
  static const std::regex py_version(R"(__version__\s*=\s*['"]([^'"]+)['"])");
  std::smatch m;
  std::string text = read_file(root + "/version.py");
  if (std::regex_search(text, m, py_version)) return m[1];
  // A libtorch archive: libtorch/lib/ next to libtorch/build-version.
  text = read_file(root + "/build-version");
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

bool version_compatible(const std::string& loaded, std::string* expected) {
  *expected = std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR);
  if (loaded.empty()) return true;  // nothing to compare; the symbols resolved
  return loaded.rfind(*expected + ".", 0) == 0;
}

}  // namespace xsc::torch_adapter
