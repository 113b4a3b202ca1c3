#include "lint/compile_args.h"

#include <cstdlib>
#include <map>
#include <optional>

#include "lint/nvcc_prelude.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

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

// Keeps what matters for parsing (include paths, macros, language standard,
// relocatable device code, OpenMP), drops nvcc's code-generation options, and
// switches to the clang driver. `host_compiler` is set to -ccbin's compiler.
Args translate_nvcc(const Args& in, llvm::StringRef file, std::string& host_compiler) {
  Args out{"clang++"};
  bool rdc = false;
  bool as_cuda = false;  // -x cu: nvcc's -x applies to every input, wherever it is
  for (size_t i = 1; i < in.size(); ++i) {
    llvm::StringRef a = in[i];
    if ((a == "-x" || a == "--x") && i + 1 < in.size()) {
      llvm::StringRef lang = in[++i];
      as_cuda = lang == "cu" || lang == "cuda";
      continue;
    }
    if (a.starts_with("-x=") || a.starts_with("--x=")) {
      llvm::StringRef lang = a.split('=').second;
      as_cuda = lang == "cu" || lang == "cuda";
      continue;
    }
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
        if (p.starts_with("-D") || p.starts_with("-I") || p.starts_with("-std=") || p == "-fopenmp")
          out.push_back(p.str());
      continue;
    }
    // Device code that launches kernels (dynamic parallelism) is only
    // accepted with relocatable device code, also on the host side.
    if (a == "-rdc=true" || a == "--relocatable-device-code=true" || a == "-dc" || a == "--device-c") {
      rdc = true;
      continue;
    }
    if ((a == "-rdc" || a == "--relocatable-device-code") && i + 1 < in.size()) {
      rdc = llvm::StringRef(in[++i]) == "true";
      continue;
    }
    if (a == "-fopenmp") {  // -forward-unknown-to-host-compiler passes it on
      out.push_back(a.str());
      continue;
    }
    if ((a == "-ccbin" || a == "--compiler-bindir") && i + 1 < in.size()) {
      host_compiler = in[++i];
      continue;
    }
    if (a.starts_with("-ccbin=") || a.starts_with("--compiler-bindir=")) {
      host_compiler = a.split('=').second.str();
      continue;
    }
    if (a.starts_with("-")) {
      if (!a.contains('=') && nvcc_takes_value(a)) ++i;
      continue;
    }
    if (same_file(a, file)) out.push_back(a.str());
  }
  if (rdc) out.insert(out.begin() + 1, "-fgpu-rdc");
  if (as_cuda) out.insert(out.begin() + 1, {"-x", "cuda"});
  return out;
}

bool has_cuda_runtime(llvm::StringRef include_dir) {
  llvm::SmallString<256> header(include_dir);
  llvm::sys::path::append(header, "cuda_runtime.h");
  return llvm::sys::fs::exists(header);
}

// The include directory nvcc adds by itself (nvcc.profile's INCLUDES): that
// of the toolkit nvcc belongs to, `<dir above bin>/include` (or, where the
// toolkit keeps it, `targets/<arch>-linux/include`). An nvcc that is not on
// this machine (a database written elsewhere) stands for the toolkit found
// here, `cuda_path`. Empty if neither has cuda_runtime.h.
std::string nvcc_include_dir(llvm::StringRef nvcc, const std::string& cuda_path) {
  std::string program = nvcc.str();
  if (!llvm::sys::path::has_parent_path(nvcc))
    if (llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName(nvcc)) program = *found;
  if (llvm::sys::fs::exists(program)) {
    llvm::StringRef top = llvm::sys::path::parent_path(llvm::sys::path::parent_path(program));
    for (const char* sub : {"include", "targets/x86_64-linux/include", "targets/sbsa-linux/include",
                            "targets/aarch64-linux/include"}) {
      llvm::SmallString<256> dir(top);
      llvm::sys::path::append(dir, sub);
      if (has_cuda_runtime(dir)) return std::string(dir);
    }
  }
  if (!cuda_path.empty()) {
    llvm::SmallString<256> dir(cuda_path);
    llvm::sys::path::append(dir, "include");
    if (has_cuda_runtime(dir)) return std::string(dir);
  }
  return {};
}

// Whether the command is one Clang's CUDA headers were written for: a clang
// driver from the compilation database (FixedCompilationDatabase names the
// flags given after -- "clang-tool", which says nothing about the project).
bool is_clang_command(const Args& args) {
  if (args.empty()) return false;
  llvm::StringRef name = llvm::sys::path::filename(args[0]);
  return name.contains("clang") && name != "clang-tool";
}

// nvcc compiles host code with a host compiler (g++, or -ccbin's) whose own
// include directory holds headers Clang's does not (omp.h without
// libomp-dev). Returns that directory, or empty if the compiler cannot be run.
std::string host_compiler_include_dir(std::string compiler) {
  static std::map<std::string, std::string> cache;
  if (compiler.empty()) compiler = "g++";
  if (llvm::sys::fs::is_directory(compiler)) {  // -ccbin may name the directory
    llvm::SmallString<256> in_dir(compiler);
    llvm::sys::path::append(in_dir, "g++");
    compiler = std::string(in_dir);
  }
  auto [it, inserted] = cache.try_emplace(compiler);
  if (!inserted) return it->second;
  llvm::ErrorOr<std::string> program = llvm::sys::path::is_absolute(compiler)
                                           ? llvm::ErrorOr<std::string>(compiler)
                                           : llvm::sys::findProgramByName(compiler);
  if (!program || !llvm::sys::fs::can_execute(*program)) return {};
  llvm::SmallString<128> output;
  if (llvm::sys::fs::createTemporaryFile("xstream-lint-cc", "txt", output)) return {};
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(output),
                                                llvm::StringRef("")};
  int rc = llvm::sys::ExecuteAndWait(*program, {*program, "-print-file-name=include"}, std::nullopt,
                                     redirects, /*SecondsToWait=*/20);
  auto text = llvm::MemoryBuffer::getFile(output);
  llvm::sys::fs::remove(output);
  if (rc != 0 || !text) return {};
  std::string dir = (*text)->getBuffer().trim().str();
  if (llvm::sys::path::is_absolute(dir) && llvm::sys::fs::is_directory(dir)) it->second = dir;
  return it->second;
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
    std::string host_compiler;
    const bool nvcc_command = !args.empty() && llvm::sys::path::filename(args[0]).contains("nvcc");
    if (nvcc_command) args = translate_nvcc(args, file, host_compiler);
    bool clang_command = is_clang_command(in);

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
      // Code written for nvcc: docs/static-check.md, "nvcc compatibility".
      if (!clang_command) {
        added.push_back("-include");
        added.push_back(kNvccPreludePath);
        std::string host_include = host_compiler_include_dir(host_compiler);
        if (!host_include.empty()) {
          added.push_back("-idirafter");  // after every directory clang searches itself
          added.push_back(host_include);
        }
      }
    } else if (nvcc_command) {
      // A C++ file nvcc compiles: nvcc hands it to the host compiler with
      // -D__NVCC__, the toolkit's include directory and its include/cccl
      // (nvcc.profile), which the command does not name. System directories
      // here, as --cuda-path makes them for .cu files: the toolkit's inline
      // functions are not the project's helpers.
      added.push_back("-D__NVCC__");
      std::string include = nvcc_include_dir(in[0], options.cuda_path);
      if (!include.empty()) {
        added.push_back("-isystem");
        added.push_back(include);
        llvm::SmallString<256> cccl(include);
        llvm::sys::path::append(cccl, "cccl");
        if (llvm::sys::fs::is_directory(cccl)) {
          added.push_back("-isystem");
          added.push_back(std::string(cccl));
        }
      }
      std::string host_include = host_compiler_include_dir(host_compiler);
      if (!host_include.empty()) {
        added.push_back("-idirafter");
        added.push_back(host_include);
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
