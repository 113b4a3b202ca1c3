#include "lint/python_inputs.h"

#include <cstdlib>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticIDs.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/FileSystemOptions.h"
#include "clang/Basic/LangOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

namespace xsc::lint {
namespace {

using json = nlohmann::json;

void error(const llvm::Twine& message) { llvm::errs() << "xstream-lint: error: " << message << "\n"; }

std::string absolute(llvm::StringRef path) {
  llvm::SmallString<256> abs(path);
  llvm::sys::fs::make_absolute(abs);
  llvm::sys::path::remove_dots(abs, /*remove_dot_dot=*/true);
  return std::string(abs);
}

// The directory that holds the xstream_check package: the installed copy
// next to the binary (<prefix>/share/xstream-check/python), else the source
// tree this driver was built from. Empty when neither exists (the
// interpreter may have it installed).
std::string package_dir(const char* argv0) {
  auto has_package = [](const std::string& dir) {
    llvm::SmallString<256> p(dir);
    llvm::sys::path::append(p, "xstream_check", "lint", "__init__.py");
    return llvm::sys::fs::exists(p);
  };
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  if (!exe.empty()) {
    llvm::SmallString<256> dir(llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::sys::path::append(dir, "share", "xstream-check", "python");
    if (has_package(std::string(dir))) return std::string(dir);
  }
#ifdef XSC_PYTHON_SOURCE_DIR
  if (has_package(XSC_PYTHON_SOURCE_DIR)) return XSC_PYTHON_SOURCE_DIR;
#endif
  return {};
}

// Prints the Python check's findings through clang's own diagnostic printer,
// so that they look like the C++ findings (source line, caret, colors).
class PythonDiagnostics {
 public:
  PythonDiagnostics()
      : printer_(llvm::errs(), options_),
        diags_(clang::DiagnosticIDs::create(), options_, &printer_, /*ShouldOwnClient=*/false),
        files_(clang::FileSystemOptions{}),
        sources_(diags_, files_) {
    options_.ShowColors = llvm::errs().has_colors();
    diags_.setSourceManager(&sources_);
    warning_ = diags_.getCustomDiagID(clang::DiagnosticsEngine::Warning, "%0 [%1]");
    note_ = diags_.getCustomDiagID(clang::DiagnosticsEngine::Note, "%0");
    printer_.BeginSourceFile(lang_, nullptr);
  }
  ~PythonDiagnostics() { printer_.EndSourceFile(); }

  clang::SourceLocation location(const std::string& path, unsigned line, unsigned column) {
    auto it = file_ids_.find(path);
    clang::FileID fid;
    if (it != file_ids_.end()) {
      fid = it->second;
    } else {
      auto file = files_.getFileRef(path);
      if (!file) {
        llvm::consumeError(file.takeError());
        return {};
      }
      fid = sources_.createFileID(*file, clang::SourceLocation(), clang::SrcMgr::C_User);
      file_ids_.emplace(path, fid);
    }
    if (fid.isInvalid()) return {};
    return sources_.translateLineCol(fid, line, column);
  }

  void warning(clang::SourceLocation loc, llvm::StringRef message, llvm::StringRef rule) {
    diags_.Report(loc, warning_) << message << rule;
  }
  void note(clang::SourceLocation loc, llvm::StringRef message) { diags_.Report(loc, note_) << message; }

 private:
  clang::DiagnosticOptions options_;
  clang::TextDiagnosticPrinter printer_;
  clang::DiagnosticsEngine diags_;
  clang::FileManager files_;
  clang::SourceManager sources_;
  clang::LangOptions lang_;
  std::map<std::string, clang::FileID> file_ids_;
  unsigned warning_ = 0;
  unsigned note_ = 0;
};

SarifLocation sarif_location(const json& j) {
  SarifLocation out;
  out.file = absolute(j.value("path", ""));
  out.line = j.value("line", 0u);
  out.column = j.value("col", 0u);
  out.message = j.value("message", "");
  return out;
}

}  // namespace

bool is_python_input(llvm::StringRef path) {
  return path.ends_with(".py") || llvm::sys::fs::is_directory(path);
}

PythonCheckResult run_python_check(const std::vector<std::string>& inputs, const char* argv0,
                                   std::vector<SarifResult>& results,
                                   std::vector<SarifNotification>& notifications) {
  PythonCheckResult result;
  if (inputs.empty()) return result;

  std::string python;
  if (const char* env = std::getenv("XSC_PYTHON"); env && *env) {
    python = env;
  } else if (auto found = llvm::sys::findProgramByName("python3")) {
    python = *found;
  } else {
    error("the Python check needs python3 on PATH (or $XSC_PYTHON)");
    result.error = true;
    return result;
  }
  std::string dir = package_dir(argv0);
  if (!dir.empty()) {
    const char* old = std::getenv("PYTHONPATH");
    std::string path = dir + (old && *old ? ":" + std::string(old) : std::string());
    setenv("PYTHONPATH", path.c_str(), 1);
  }

  llvm::SmallString<128> output, errors;
  if (llvm::sys::fs::createTemporaryFile("xstream-lint-py", "json", output) ||
      llvm::sys::fs::createTemporaryFile("xstream-lint-py", "err", errors)) {
    error("cannot create a temporary file for the Python check");
    result.error = true;
    return result;
  }
  std::vector<std::string> arg_storage = {python, "-m", "xstream_check.lint", "--format=json",
                                          "--output=" + std::string(output), "--"};
  for (const std::string& in : inputs) arg_storage.push_back(absolute(in));
  std::vector<llvm::StringRef> args(arg_storage.begin(), arg_storage.end());
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt, llvm::StringRef(errors)};
  std::string exec_error;
  int status = llvm::sys::ExecuteAndWait(python, args, std::nullopt, redirects, 0, 0, &exec_error);

  auto text = llvm::MemoryBuffer::getFile(output);
  auto stderr_text = llvm::MemoryBuffer::getFile(errors);
  llvm::sys::fs::remove(output);
  llvm::sys::fs::remove(errors);
  json log;
  bool parsed = false;
  if (text && status >= 0 && status <= 2) {
    log = json::parse((*text)->getBuffer().begin(), (*text)->getBuffer().end(), nullptr, false);
    parsed = log.is_object() && log.contains("findings");
  }
  if (!parsed) {
    std::string why = !exec_error.empty() ? exec_error : "exit status " + std::to_string(status);
    if (stderr_text && !(*stderr_text)->getBuffer().trim().empty()) {
      llvm::StringRef last = (*stderr_text)->getBuffer().trim().rsplit('\n').second;
      if (last.empty()) last = (*stderr_text)->getBuffer().trim();
      why += ": " + last.str();
    }
    error("the Python check did not run (" + python + " -m xstream_check.lint, " + why + ")");
    result.error = true;
    return result;
  }
  // Its own one-line errors (a path that does not exist) pass through.
  if (stderr_text) llvm::errs() << (*stderr_text)->getBuffer();
  if (status == 2) result.error = true;

  for (const json& e : log.value("errors", json::array())) {
    std::string path = absolute(e.value("path", ""));
    std::string message = e.value("message", "");
    llvm::errs() << path << ":" << e.value("line", 0u) << ": error: " << message << "\n";
    // Not parsing is, for Python, what not compiling is for C++ (main.cpp's
    // kCompileErrorKind): the file is left out of the analysis.
    SarifNotification n{"xstream-compile-error", "error",
                        "'" + path + "' is not analyzed: " + message, {}};
    SarifLocation where;
    where.file = path;
    where.line = e.value("line", 0u);
    where.message = message;
    if (where.line > 0) n.locations.push_back(std::move(where));
    notifications.push_back(std::move(n));
  }
  if (!log["errors"].empty()) result.error = true;

  PythonDiagnostics diags;
  for (const json& f : log["findings"]) {
    SarifResult r;
    r.rule = f.value("rule", "");
    r.message = f.value("message", "");
    r.location = sarif_location(f);
    r.identity = f.value("identity", "");
    diags.warning(diags.location(r.location.file, r.location.line, r.location.column), r.message, r.rule);
    for (const json& n : f.value("notes", json::array())) {
      SarifLocation loc = sarif_location(n);
      diags.note(diags.location(loc.file, loc.line, loc.column), loc.message);
      r.related.push_back(std::move(loc));
    }
    results.push_back(std::move(r));
    ++result.findings;
  }
  return result;
}

}  // namespace xsc::lint
