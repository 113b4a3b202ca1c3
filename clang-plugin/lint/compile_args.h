// Turning a compilation database command into one the in-process clang can
// parse: nvcc command lines are translated, CUDA files get host-only parsing
// flags (and, unless the command is clang's, the nvcc prelude and the host
// compiler's include directory), and warnings never become errors.
#pragma once

#include <string>
#include <vector>

#include "clang/Tooling/ArgumentsAdjusters.h"

namespace xsc::lint {

struct CompileArgOptions {
  std::string cuda_path;     // empty: not passed (clang searches itself)
  std::string resource_dir;  // clang's builtin headers
  std::vector<std::string> extra_args;
};

// The CUDA installation to use: `explicit_path`, $CUDA_PATH, $CUDA_HOME or
// /usr/local/cuda, the first that exists; empty if none does.
std::string detect_cuda_path(const std::string& explicit_path);

// The flags added to a .cu file's command when the command does not already
// choose them (documented in docs/static-check.md).
std::vector<std::string> default_cuda_flags(const std::string& cuda_path);

clang::tooling::ArgumentsAdjuster make_lint_arguments_adjuster(CompileArgOptions options);

}  // namespace xsc::lint
