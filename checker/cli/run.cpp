// xstream-check run: run a program with the runtime preloaded.
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "commands.h"
#include "run_merge.h"

namespace xsc::cli {
namespace {

// <directory of this executable>/../lib/libxstream_check.so, unless
// XSC_RUNTIME_LIBRARY names another.
std::string runtime_library() {
  if (const char* override_path = std::getenv("XSC_RUNTIME_LIBRARY"); override_path && *override_path)
    return override_path;
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "libxstream_check.so";
  return (self.parent_path().parent_path() / "lib" / "libxstream_check.so").lexically_normal().string();
}

bool is_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// What execvp would find for `program`.
bool program_exists(const std::string& program) {
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 && is_file(program);
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t begin = 0;
  while (begin <= dirs.size()) {
    std::size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(begin, end - begin);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0 && is_file(candidate)) return true;
    begin = end + 1;
  }
  return false;
}

// The directory of Python start-up code that tells the runtime of memory
// pools CUDA calls do not show (python/xstream_check/autoload/): beside the
// runtime's lib/ directory, in a build tree and in the pip package alike.
// Empty when it is not there.
std::string python_autoload_dir(const std::string& library) {
  const std::filesystem::path dir =
      (std::filesystem::path(library).parent_path().parent_path() / "autoload").lexically_normal();
  return is_file((dir / "sitecustomize.py").string()) ? dir.string() : std::string();
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  // Flags become XSC_OPTIONS items; each is validated here so a typo fails
  // before the program starts rather than inside it.
  std::string items;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.rfind("--", 0) != 0) break;  // the program
    const std::string flag = arg == "--strict" ? "--strict=1" : arg;  // a bare switch
    std::size_t eq = flag.find('=');
    if (eq == std::string::npos) return usage_error("flag '" + arg + "' needs a value (--name=value)");
    std::string name = flag.substr(2, eq - 2);
    for (char& c : name)
      if (c == '-') c = '_';
    std::string item = option_item(name, flag.substr(eq + 1));
    Options probe;
    std::string error;
    if (!parse_options(item, &probe, &error)) return usage_error(arg + ": " + error);
    if (!items.empty()) items += ' ';
    items += item;
  }
  if (i >= args.size()) return usage_error("run needs a program (xstream-check run [flags] -- PROG ARGS...)");
  const std::string& program = args[i];
  if (!program_exists(program)) return usage_error("program not found: " + program);

  std::string library = runtime_library();
  if (!is_file(library))
    return usage_error("runtime library not found: " + library + " (build with -DXSC_BUILD_RUNTIME=ON)");

  // Options already in the environment come first, so the flags win.
  std::string merged;
  if (const char* existing = std::getenv("XSC_OPTIONS"); existing && *existing) merged = existing;
  if (!items.empty()) merged += (merged.empty() ? "" : " ") + items;
  Options probe;
  std::string error;
  if (!parse_options(merged, &probe, &error)) return usage_error("XSC_OPTIONS: " + error);

  std::string preload = library;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing) preload += ":" + std::string(existing);
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  // A Python program imports its sitecustomize from there first; that one
  // runs the program's own after it.
  if (const std::string autoload = python_autoload_dir(library); !autoload.empty()) {
    std::string path = autoload;
    if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing)
      path += ":" + std::string(existing);
    ::setenv("PYTHONPATH", path.c_str(), 1);
  }

  // JSON reports to files, one per process: wait for the program and merge
  // them, so a multi-rank job ends with one summary. A rank exiting with the
  // findings status would look like a crash to its launcher (torchrun then
  // stops the other ranks before they report), so the processes report with
  // exitcode=0 and the findings status comes from the merged reports.
  bool to_files = !probe.log_path.empty() && probe.log_path != "stderr" && probe.log_path != "stdout";
  if (to_files && probe.report == ReportFormat::kJson) {
    ::setenv("XSC_OPTIONS", (merged + " exitcode=0").c_str(), 1);
    return run_and_merge(std::vector<std::string>(args.begin() + i, args.end()), probe);
  }
  ::setenv("XSC_OPTIONS", merged.c_str(), 1);

  std::vector<char*> argv;
  for (std::size_t j = i; j < args.size(); ++j) argv.push_back(const_cast<char*>(args[j].c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  return usage_error("cannot run '" + program + "': " + std::strerror(errno));
}

}  // namespace xsc::cli
