// xstream-lint: runs the stream-ordering check over files of a compilation
// database (or over a command line given after --).
//
// Exit status: 0 no findings, 1 findings, 2 errors (a file that does not
// compile, no compilation database, bad options).
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/analyzer.h"
#include "analysis/config.h"
#include "analysis/nolint.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "lint/compile_args.h"
#include "lint/python_inputs.h"
#include "lint/sarif.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace xsc::lint;
namespace cl = llvm::cl;

static cl::OptionCategory kCategory("xstream-lint options");

static cl::opt<std::string> opt_build_path(
    "p", cl::desc("Build directory that holds compile_commands.json"), cl::value_desc("dir"),
    cl::cat(kCategory));
static cl::list<std::string> opt_sources(cl::Positional, cl::desc("<source files>"), cl::cat(kCategory));
enum class Format { kText, kSarif };
static cl::opt<Format> opt_format(
    "format", cl::desc("Output format"), cl::init(Format::kText),
    cl::values(clEnumValN(Format::kText, "text", "clang-style diagnostics on stderr (default)"),
               clEnumValN(Format::kSarif, "sarif", "SARIF 2.1.0 log (stdout, or --output)")),
    cl::cat(kCategory));
static cl::opt<std::string> opt_output("output", cl::desc("Write the SARIF log to this file"),
                                       cl::value_desc("file"), cl::cat(kCategory));
static cl::opt<std::string> opt_config(
    "config", cl::desc("Configuration file (default: the nearest .xstream-lint.yaml above each source)"),
    cl::value_desc("file"), cl::cat(kCategory));
static cl::opt<std::string> opt_cuda_path(
    "cuda-path", cl::desc("CUDA installation for .cu files (default: $CUDA_PATH, $CUDA_HOME, /usr/local/cuda)"),
    cl::value_desc("dir"), cl::cat(kCategory));
static cl::list<std::string> opt_extra_args("extra-arg", cl::desc("Additional compiler argument"),
                                            cl::value_desc("arg"), cl::cat(kCategory));
static cl::opt<std::string> opt_source_root(
    "source-root", cl::desc("Directory SARIF paths are relative to (default: the current directory)"),
    cl::value_desc("dir"), cl::cat(kCategory));

namespace {

[[noreturn]] void fail(const llvm::Twine& message) {
  llvm::errs() << "xstream-lint: error: " << message << "\n";
  std::exit(2);
}


bool is_our_message(llvm::StringRef msg) {
  return msg.ends_with("[" + kRuleFreeBeforeWait.str() + "]") ||
         msg.ends_with("[" + kRuleUnorderedFree.str() + "]");
}

// Prints the check's warnings and clang's errors (with their notes); drops the
// project's other compiler warnings, as clang-tidy does.
class LintDiagnosticConsumer : public clang::DiagnosticConsumer {
 public:
  LintDiagnosticConsumer() : printer_(llvm::errs(), options_) {
    options_.ShowColors = llvm::errs().has_colors();
  }

  void BeginSourceFile(const clang::LangOptions& lo, const clang::Preprocessor* pp) override {
    clear();  // "N warnings generated" counts one file
    printer_.BeginSourceFile(lo, pp);
  }
  void EndSourceFile() override { printer_.EndSourceFile(); }
  void finish() override { printer_.finish(); }

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    if (level == clang::DiagnosticsEngine::Note) {
      if (forwarding_) printer_.HandleDiagnostic(level, info);
      return;
    }
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    bool ours = is_our_message(text);
    bool error = level >= clang::DiagnosticsEngine::Error && !ours;
    if (error) ++compile_errors;
    forwarding_ = ours || error;
    if (forwarding_) {
      clang::DiagnosticConsumer::HandleDiagnostic(level, info);
      printer_.HandleDiagnostic(level, info);
    }
  }

  unsigned compile_errors = 0;

 private:
  clang::DiagnosticOptions options_;
  clang::TextDiagnosticPrinter printer_;
  bool forwarding_ = false;
};

struct LintRun {
  const LintConfig* fixed_config = nullptr;  // --config, else per source
  std::map<std::string, LintConfig> configs;  // by config path
  std::vector<SarifResult> results;
  std::set<std::tuple<std::string, unsigned, unsigned, std::string>> seen;
  unsigned findings = 0;
  bool config_error = false;

  const LintConfig& config_for(llvm::StringRef source) {
    static const LintConfig kEmpty;
    if (fixed_config) return *fixed_config;
    std::string path = find_config_for(source);
    if (path.empty()) return kEmpty;
    auto it = configs.find(path);
    if (it != configs.end()) return it->second;
    std::string error;
    auto loaded = load_config_file(path, error);
    if (!loaded) {
      llvm::errs() << "xstream-lint: error: " << error << "\n";
      config_error = true;
      return configs.emplace(path, LintConfig{}).first->second;
    }
    return configs.emplace(path, std::move(*loaded)).first->second;
  }
};

SarifLocation sarif_location(const clang::SourceManager& sm, clang::SourceLocation loc,
                             std::string message = {}) {
  SarifLocation out;
  out.message = std::move(message);
  clang::PresumedLoc p = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (p.isInvalid()) return out;
  llvm::SmallString<256> path(p.getFilename());
  sm.getFileManager().makeAbsolutePath(path);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  out.file = std::string(path);
  out.line = p.getLine();
  out.column = p.getColumn();
  return out;
}

class LintConsumer : public clang::ASTConsumer {
 public:
  LintConsumer(clang::CompilerInstance& ci, LintRun& run, const LintConfig& config)
      : ci_(ci), run_(run), config_(config) {}

  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    if (ci_.getDiagnostics().hasErrorOccurred()) return;
    if (ctx.getLangOpts().CUDAIsDevice) return;
    const clang::SourceManager& sm = ctx.getSourceManager();
    Analyzer analyzer(ctx, config_);
    for (const Finding& f : analyzer.analyze_translation_unit(/*main_file_only=*/false)) {
      if (is_suppressed_by_nolint(sm, f.loc, f.rule)) continue;
      SarifResult r;
      r.rule = f.rule.str();
      r.message = f.message;
      r.location = sarif_location(sm, f.loc);
      // A header's finding shows up in every file that includes it: once is enough.
      if (!run_.seen.emplace(r.location.file, r.location.line, r.location.column, r.rule).second)
        continue;
      emit_finding(ci_.getDiagnostics(), sm, f);
      for (const FindingNote& n : f.notes) r.related.push_back(sarif_location(sm, n.loc, n.message));
      r.identity = f.function + "|" + f.buffer + "|" + f.free_stream + "|" + f.use_stream;
      run_.results.push_back(std::move(r));
      ++run_.findings;
    }
  }

 private:
  clang::CompilerInstance& ci_;
  LintRun& run_;
  const LintConfig& config_;
};

class LintAction : public clang::ASTFrontendAction {
 public:
  explicit LintAction(LintRun& run) : run_(run) {}

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci,
                                                        llvm::StringRef file) override {
    return std::make_unique<LintConsumer>(ci, run_, run_.config_for(file));
  }

 private:
  LintRun& run_;
};

class LintActionFactory : public clang::tooling::FrontendActionFactory {
 public:
  explicit LintActionFactory(LintRun& run) : run_(run) {}
  std::unique_ptr<clang::FrontendAction> create() override { return std::make_unique<LintAction>(run_); }

 private:
  LintRun& run_;
};

std::unique_ptr<clang::tooling::CompilationDatabase> load_database(
    std::unique_ptr<clang::tooling::FixedCompilationDatabase> fixed) {
  std::string error;
  if (fixed) return fixed;
  if (!opt_build_path.empty()) {
    if (!llvm::sys::fs::is_directory(opt_build_path))
      fail("build directory '" + opt_build_path + "' does not exist");
    auto db = clang::tooling::CompilationDatabase::loadFromDirectory(opt_build_path, error);
    if (!db)
      fail("no compilation database in '" + opt_build_path +
           "' (compile_commands.json); configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON");
    return clang::tooling::inferMissingCompileCommands(std::move(db));
  }
  auto db = clang::tooling::CompilationDatabase::autoDetectFromSource(opt_sources.front(), error);
  if (!db)
    fail("no compilation database found for '" + opt_sources.front() +
         "' (pass -p BUILD_DIR, or the compiler arguments after --)");
  return clang::tooling::inferMissingCompileCommands(std::move(db));
}

}  // namespace

int main(int argc, const char** argv) {
  std::string fixed_error;
  std::unique_ptr<clang::tooling::FixedCompilationDatabase> fixed =
      clang::tooling::FixedCompilationDatabase::loadFromCommandLine(argc, argv, fixed_error);
  cl::HideUnrelatedOptions(kCategory);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "xstream-lint: finds buffers freed on one CUDA stream while another stream may still use them\n",
          &llvm::errs()))
    return 2;
  if (opt_sources.empty()) fail("no input files");
  std::vector<std::string> python_inputs;  // .py files and directories: the Python check
  for (auto it = opt_sources.begin(); it != opt_sources.end();) {
    if (!is_python_input(*it)) { ++it; continue; }
    python_inputs.push_back(*it);
    it = opt_sources.erase(it);
  }
  if (!opt_output.empty() && opt_format != Format::kSarif) fail("--output needs --format=sarif");

  LintRun run;
  LintConfig explicit_config;
  if (!opt_config.empty()) {
    std::string error;
    auto loaded = load_config_file(opt_config, error);
    if (!loaded) fail(error);
    explicit_config = std::move(*loaded);
    run.fixed_config = &explicit_config;
  }

  std::unique_ptr<clang::tooling::CompilationDatabase> db;
  if (!opt_sources.empty()) db = load_database(std::move(fixed));

  std::vector<std::string> sources;
  bool missing = false;
  for (const std::string& s : opt_sources) {
    if (!llvm::sys::fs::exists(s)) {
      llvm::errs() << "xstream-lint: error: no such file '" << s << "'\n";
      missing = true;
      continue;
    }
    llvm::SmallString<256> abs(s);
    llvm::sys::fs::make_absolute(abs);
    if (db->getCompileCommands(abs).empty()) {
      llvm::errs() << "xstream-lint: error: no compile command for '" << s << "' in the compilation database\n";
      missing = true;
      continue;
    }
    sources.push_back(std::string(abs));
  }

  CompileArgOptions arg_options;
  arg_options.cuda_path = detect_cuda_path(opt_cuda_path);
  arg_options.resource_dir = XSC_CLANG_RESOURCE_DIR;
  arg_options.extra_args.assign(opt_extra_args.begin(), opt_extra_args.end());

  int tool_status = 0;
  LintDiagnosticConsumer diagnostics;
  if (!sources.empty()) {
    clang::tooling::ClangTool tool(*db, sources);
    tool.appendArgumentsAdjuster(make_lint_arguments_adjuster(arg_options));
    tool.setDiagnosticConsumer(&diagnostics);
    tool.setPrintErrorMessage(false);
    LintActionFactory factory(run);
    tool_status = tool.run(&factory);
  }

  PythonCheckResult python = run_python_check(python_inputs, argv[0], run.results);

  if (opt_format == Format::kSarif) {
    std::string root = opt_source_root;
    if (root.empty()) {
      llvm::SmallString<256> cwd;
      llvm::sys::fs::current_path(cwd);
      root = std::string(cwd);
    } else {
      llvm::SmallString<256> abs(root);
      llvm::sys::fs::make_absolute(abs);
      llvm::sys::path::remove_dots(abs, true);
      root = std::string(abs);
    }
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    std::string log = render_sarif(run.results, XSC_VERSION, root);
    if (opt_output.empty()) {
      llvm::outs() << log;
    } else {
      std::error_code ec;
      llvm::raw_fd_ostream out(opt_output, ec, llvm::sys::fs::OF_Text);
      if (ec) fail("cannot write '" + opt_output + "': " + ec.message());
      out << log;
    }
  }

  if (missing || run.config_error || diagnostics.compile_errors > 0 || tool_status != 0 || python.error)
    return 2;
  return run.findings + python.findings > 0 ? 1 : 0;
}
