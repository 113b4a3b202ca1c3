#include "lint/compile_args.h"

#include <cstdlib>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

namespace xsc::lint {
namespace {

using Args = clang::tooling::CommandLineArguments;

bool has_prefix(const Args& args, llvm::StringRef prefix) {
  for (const std::string& a : args)
    if (llvm::StringRef(a).starts_with(prefix)) return true;
  return false;
}

bool is_cuda_command(const Args& args, llvm::StringRef file) {
  if (file.ends_with(".cu") || file.ends_with(".cuh")) return true;
  for (size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == "-x" && (args[i + 1] == "cuda" || args[i + 1] == "cu")) return true;
  return has_prefix(args, "-xcuda") || has_prefix(args, "--cuda-");
}

bool same_file(llvm::StringRef a, llvm::StringRef b) {
  if (a == b) return true;
  return llvm::sys::path::filename(a) == llvm::sys::path::filename(b) &&
         (a.ends_with(b) || b.ends_with(a));
}

// nvcc options that take a separate value, so the value is not a file.
bool nvcc_takes_value(llvm::StringRef opt) {
  static const char* const kWithValue[] = {
      "-o", "-x", "-arch", "-code", "-gencode", "--generate-code", "-ccbin", "--compiler-bindir",
      "-Xcompiler", "--compiler-options", "-Xptxas", "--ptxas-options", "-Xlinker", "--linker-options",
      "-Xcudafe", "-Xnvlink", "--options-file", "-optf", "-MF", "-MT", "-MQ", "-odir", "-t",
      "--threads", "-maxrregcount", "--maxrregcount", "-ldir", "-l", "-L", "--machine", "-m",
      "--default-stream", "-default-stream", "-rdc", "--relocatable-device-code", "--std", "-std"};
  for (const char* o : kWithValue)
    if (opt == o) return true;
  return false;
}

// Keeps what matters for parsing (include paths, macros, language standard),
// drops nvcc's code-generation options, and switches to the clang driver.
Args translate_nvcc(const Args& in, llvm::StringRef file) {
  Args out{"clang++"};
  for (size_t i = 1; i < in.size(); ++i) {
    llvm::StringRef a = in[i];
    auto take_pair = [&](llvm::StringRef flag) {
      if (a == flag && i + 1 < in.size()) {
        out.push_back(flag.str());
        out.push_back(in[++i]);
        return true;
      }
      return false;
    };
    if (take_pair("-I") || take_pair("-isystem") || take_pair("-D") || take_pair("-U") ||
        take_pair("-include") || take_pair("-iquote") || take_pair("-idirafter"))
      continue;
    if ((a.starts_with("-I") || a.starts_with("-D") || a.starts_with("-U") ||
         a.starts_with("-isystem") || a.starts_with("-iquote")) && a.size() > 2) {
      out.push_back(a.str());
      continue;
    }
    if (a.starts_with("-std=") || a.starts_with("--std=")) {
      out.push_back("-std=" + a.split('=').second.str());
      continue;
    }
    if ((a == "-std" || a == "--std") && i + 1 < in.size()) {
      out.push_back("-std=" + in[++i]);
      continue;
    }
    if (a.starts_with("-Xcompiler=") || a.starts_with("--compiler-options=") ||
        ((a == "-Xcompiler" || a == "--compiler-options") && i + 1 < in.size())) {
      llvm::StringRef list = a.contains('=') ? a.split('=').second : llvm::StringRef(in[++i]);
      llvm::SmallVector<llvm::StringRef, 8> parts;
      list.split(parts, ',', -1, false);
      for (llvm::StringRef p : parts)
        if (p.starts_with("-D") || p.starts_with("-I") || p.starts_with("-std=")) out.push_back(p.str());
      continue;
    }
    if (a.starts_with("-")) {
      if (!a.contains('=') && nvcc_takes_value(a)) ++i;
      continue;
    }
    if (same_file(a, file)) out.push_back(a.str());
  }
  return out;
}

}  // namespace

std::string detect_cuda_path(const std::string& explicit_path) {
  std::vector<std::string> candidates;
  if (!explicit_path.empty()) return explicit_path;
  for (const char* var : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* v = std::getenv(var); v && *v) candidates.push_back(v);
  candidates.push_back("/usr/local/cuda");
  for (const std::string& c : candidates) {
    llvm::SmallString<256> header(c);
    llvm::sys::path::append(header, "include", "cuda_runtime.h");
    if (llvm::sys::fs::exists(header)) return c;
  }
  return {};
}

std::vector<std::string> default_cuda_flags(const std::string& cuda_path) {
  std::vector<std::string> flags{"--cuda-host-only", "-nocudalib", "-Wno-unknown-cuda-version"};
  if (!cuda_path.empty()) {
    flags.push_back("--cuda-path=" + cuda_path);
    // CUDA 13 keeps CUB/Thrust/libcu++ under include/cccl, which nvcc adds
    // by itself and clang does not.
    llvm::SmallString<256> cccl(cuda_path);
    llvm::sys::path::append(cccl, "include", "cccl");
    if (llvm::sys::fs::is_directory(cccl)) {
      flags.push_back("-isystem");
      flags.push_back(std::string(cccl));
    }
  }
  return flags;
}

clang::tooling::ArgumentsAdjuster make_lint_arguments_adjuster(CompileArgOptions options) {
  return [options = std::move(options)](const Args& in, llvm::StringRef file) {
    Args args = in;
    if (!args.empty() && llvm::sys::path::filename(args[0]).contains("nvcc"))
      args = translate_nvcc(args, file);

    // A linter reports; it does not fail on the project's own warning policy.
    Args kept;
    for (const std::string& a : args) {
      llvm::StringRef s(a);
      if (s == "-w" || s == "-Werror" || s.starts_with("-Werror=")) continue;
      kept.push_back(a);
    }
    args = std::move(kept);

    Args added;
    if (is_cuda_command(args, file)) {
      if (!file.ends_with(".cu") && !has_prefix(args, "-x")) {
        added.push_back("-x");  // must precede the file
        added.push_back("cuda");
      }
      bool chooses_side = has_prefix(args, "--cuda-host-only") || has_prefix(args, "--cuda-device-only") ||
                          has_prefix(args, "--cuda-compile-host-device");
      bool has_cccl = false;
      for (const std::string& a : args)
        if (llvm::StringRef(a).contains("cccl")) has_cccl = true;
      std::vector<std::string> defaults = default_cuda_flags(options.cuda_path);
      for (size_t i = 0; i < defaults.size(); ++i) {
        llvm::StringRef d = defaults[i];
        if (d == "--cuda-host-only" && chooses_side) continue;
        if (d == "-nocudalib" && has_prefix(args, "-nocudalib")) continue;
        if (d.starts_with("--cuda-path=") && has_prefix(args, "--cuda-path")) continue;
        if (d == "-isystem") {
          if (!has_cccl) {
            added.push_back(defaults[i]);
            added.push_back(defaults[i + 1]);
          }
          ++i;
          continue;
        }
        added.push_back(d.str());
      }
    }
    added.push_back("-Wno-error");
    if (!options.resource_dir.empty() && !has_prefix(args, "-resource-dir"))
      added.push_back("-resource-dir=" + options.resource_dir);
    added.insert(added.end(), options.extra_args.begin(), options.extra_args.end());
    // Right after the driver: before the file and before any "--" that ends
    // the options (inferred commands have one).
    args.insert(args.begin() + (args.empty() ? 0 : 1), added.begin(), added.end());
    return args;
  };
}

}  // namespace xsc::lint
