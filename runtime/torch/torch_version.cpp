#include "runtime/torch/torch_version.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/headeronly/version.h>

namespace xsc::torch_adapter {
namespace {

// stdio rather than iostreams: no locale facets involved (see below).
std::string read_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return {};
  std::string text;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0 && text.size() < (1u << 20))
    text.append(buffer, n);
  std::fclose(file);
  return text;
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
  // A wheel: torch/lib/libc10_cuda.so next to torch/version.py, which holds
  // a line `__version__ = '2.11.0+cu130'`. Plain string search: std::regex
  // needs locale facets that this library may not share with the process.
  std::string text = read_file(root + "/version.py");
  // The assignment line, not a mention such as __all__ = ['__version__', ...].
  for (std::size_t at = 0; at < text.size();) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(at, eol - at);
    at = eol + 1;
    if (line.rfind("__version__", 0) != 0) continue;
    std::size_t pos = line.find_first_not_of(' ', 11);
    if (pos == std::string::npos || line[pos] != '=') continue;
    const std::size_t open = line.find_first_of("'\"", pos);
    if (open == std::string::npos) continue;
    const std::size_t close = line.find(line[open], open + 1);
    if (close != std::string::npos) return line.substr(open + 1, close - open - 1);
  }
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
