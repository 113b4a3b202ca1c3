// User configuration: which project functions allocate, free, use or
// record_stream buffers, in addition to the CUDA API and annotations.
//
// .xstream-lint.yaml:
//   alloc: [Pool::allocate]          # returns the buffer, or fills a T** out-argument
//   free: [Pool::release]            # frees its buffer argument
//   use: [launch_forward]            # enqueues work on its stream argument
//   record_stream: [Pool::record_stream]
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "llvm/ADT/StringRef.h"

namespace xsc::lint {

struct LintConfig {
  std::vector<std::string> alloc;
  std::vector<std::string> free;
  std::vector<std::string> use;
  std::vector<std::string> record_stream;
  std::string source;  // file it was read from, empty if none

  bool empty() const { return alloc.empty() && free.empty() && use.empty() && record_stream.empty(); }
};

inline constexpr llvm::StringLiteral kConfigFileName = ".xstream-lint.yaml";

// Parses `path`; on failure returns nullopt and sets `error` to one line.
std::optional<LintConfig> load_config_file(llvm::StringRef path, std::string& error);

// Finds .xstream-lint.yaml in the directory of `source_file` or one above it.
// Returns the empty path if there is none.
std::string find_config_for(llvm::StringRef source_file);

// Whether a function with qualified name `qualified` is listed in `names`.
// An entry without "::" matches the unqualified name too.
bool config_lists(const std::vector<std::string>& names, llvm::StringRef qualified);

}  // namespace xsc::lint
