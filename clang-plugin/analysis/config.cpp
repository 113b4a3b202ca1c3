#include "analysis/config.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"

namespace llvm::yaml {
template <>
struct MappingTraits<xsc::lint::LintConfig> {
  static void mapping(IO& io, xsc::lint::LintConfig& c) {
    io.mapOptional("alloc", c.alloc);
    io.mapOptional("free", c.free);
    io.mapOptional("use", c.use);
    io.mapOptional("record_stream", c.record_stream);
  }
};
}  // namespace llvm::yaml

namespace xsc::lint {

std::optional<LintConfig> load_config_file(llvm::StringRef path, std::string& error) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = "cannot read config '" + path.str() + "': " + buf.getError().message();
    return std::nullopt;
  }
  LintConfig config;
  std::string first_error;
  auto on_diag = [](const llvm::SMDiagnostic& d, void* ctx) {
    auto* out = static_cast<std::string*>(ctx);
    if (out->empty())
      *out = std::to_string(d.getLineNo()) + ":" + std::to_string(d.getColumnNo() + 1) + ": " +
             d.getMessage().str();
  };
  llvm::yaml::Input in((*buf)->getBuffer(), nullptr, on_diag, &first_error);
  if ((*buf)->getBuffer().trim().empty()) {
    config.source = path.str();
    return config;
  }
  in >> config;
  if (in.error()) {
    error = "invalid config '" + path.str() + "'" + (first_error.empty() ? "" : ":" + first_error);
    return std::nullopt;
  }
  config.source = path.str();
  return config;
}

std::string find_config_for(llvm::StringRef source_file) {
  llvm::SmallString<256> dir(source_file);
  llvm::sys::fs::make_absolute(dir);
  llvm::sys::path::remove_filename(dir);
  while (!dir.empty()) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, kConfigFileName);
    if (llvm::sys::fs::is_regular_file(candidate)) return std::string(candidate);
    llvm::StringRef parent = llvm::sys::path::parent_path(dir);
    if (parent == dir) break;
    dir = parent;
  }
  return {};
}

bool config_lists(const std::vector<std::string>& names, llvm::StringRef qualified) {
  llvm::StringRef unqualified = qualified.rsplit("::").second;
  if (unqualified.empty()) unqualified = qualified;
  for (const std::string& n : names) {
    if (n == qualified) return true;
    if (llvm::StringRef(n).contains("::")) {
      // "Pool::release" also matches "ns::Pool::release".
      if (qualified.ends_with("::" + n)) return true;
    } else if (n == unqualified) {
      return true;
    }
  }
  return false;
}

}  // namespace xsc::lint
