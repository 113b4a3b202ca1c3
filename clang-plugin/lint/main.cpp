// xstream-lint: runs the stream-ordering check over files of a compilation
// database (or over a command line given after --).
//
// Exit status: 0 no findings, 1 findings, 2 errors (a file of which nothing
// could be analyzed, no compilation database, bad options). Functions that do
// not compile are left out and reported; --werror-compile makes any compile
// error fail the run instead.
#include <map>
#include <memory>
#include <optional>
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
#include "clang/Frontend/TextDiagnostic.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Tooling/CompilationDatabase.h"
#include "clang/Tooling/JSONCompilationDatabase.h"
#include "clang/Tooling/Tooling.h"
#include "lint/compile_args.h"
#include "lint/compile_errors.h"
#include "lint/nvcc_prelude.h"
#include "lint/python_inputs.h"
#include "lint/sarif.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

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
static cl::opt<bool> opt_werror_compile(
    "werror-compile",
    cl::desc("Compile errors fail the run (exit 2) and leave their file unanalyzed, instead of "
             "leaving out only the functions they are in"),
    cl::cat(kCategory));
static cl::opt<std::string> opt_source_root(
    "source-root", cl::desc("Directory SARIF paths are relative to (default: the current directory)"),
    cl::value_desc("dir"), cl::cat(kCategory));

namespace {

constexpr unsigned kFrontEndStackBytes = 256u << 20;

[[noreturn]] void fail(const llvm::Twine& message) {
  llvm::errs() << "xstream-lint: error: " << message << "\n";
  std::exit(2);
}


// Compile errors that leave a function (or file) unanalyzed are reported
// under this name, in the text output and as SARIF notifications.
constexpr llvm::StringLiteral kCompileErrorKind = "xstream-compile-error";

bool is_our_message(llvm::StringRef msg) {
  return msg.ends_with("[" + kRuleFreeBeforeWait.str() + "]") ||
         msg.ends_with("[" + kRuleUnorderedFree.str() + "]") ||
         msg.ends_with("[" + kRuleUseBeforeReady.str() + "]") ||
         msg.ends_with("[" + kRuleWriteAfterRead.str() + "]");
}

StoredDiagnostic store(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) {
  llvm::SmallString<256> text;
  info.FormatDiagnostic(text);
  return {level, info.getLocation(), std::string(text),
          std::vector<clang::CharSourceRange>(info.getRanges().begin(), info.getRanges().end())};
}

// Prints the check's warnings (with their notes); drops the project's other
// compiler warnings, as clang-tidy does. Clang's errors are kept until the
// file is parsed, when the lint knows which functions they leave out (with
// --werror-compile they are printed as they come).
class LintDiagnosticConsumer : public clang::DiagnosticConsumer {
 public:
  LintDiagnosticConsumer() : printer_(llvm::errs(), options_) {
    options_.ShowColors = llvm::errs().has_colors();
  }

  void BeginSourceFile(const clang::LangOptions& lo, const clang::Preprocessor* pp) override {
    errors.clear();
    errors_in_file = 0;
    printer_.BeginSourceFile(lo, pp);
    renderer_ = std::make_unique<clang::TextDiagnostic>(llvm::errs(), lo, options_, pp);
  }
  void EndSourceFile() override {
    // Errors of a file that never reached the analysis.
    if (!errors.empty()) {
      print_errors();
      ++unanalyzed_files;
    }
    renderer_.reset();
    printer_.EndSourceFile();
  }
  void finish() override { printer_.finish(); }

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level, const clang::Diagnostic& info) override {
    // The base class counts nothing: clang's "N warnings and M errors
    // generated" would count errors the lint reports as left-out functions.
    // print_summary writes the line instead.
    if (level == clang::DiagnosticsEngine::Note) {
      if (following_ == Following::kPrint) printer_.HandleDiagnostic(level, info);
      if (following_ == Following::kStore) errors.back().notes.push_back(store(level, info));
      return;
    }
    llvm::SmallString<256> text;
    info.FormatDiagnostic(text);
    bool ours = is_our_message(text);
    bool error = level >= clang::DiagnosticsEngine::Error && !ours;
    following_ = ours ? Following::kPrint : Following::kDrop;
    if (!error) {
      if (ours) printer_.HandleDiagnostic(level, info);
      return;
    }
    ++compile_errors;
    ++errors_in_file;
    if (opt_werror_compile || !info.hasSourceManager() || !renderer_) {
      // No source to attribute it to (the driver's): the run fails.
      if (!opt_werror_compile) ++unattributed_errors;
      following_ = Following::kPrint;
      printer_.HandleDiagnostic(level, info);
      return;
    }
    source_manager_ = &info.getSourceManager();
    errors.push_back({store(level, info), {}});
    following_ = Following::kStore;
  }

  // Prints a diagnostic the lint composed, at a location of the current file.
  void render(clang::DiagnosticsEngine::Level level, clang::SourceLocation loc, llvm::StringRef message,
              llvm::ArrayRef<clang::CharSourceRange> ranges = {}) {
    if (!renderer_) return;
    clang::FullSourceLoc full = loc.isValid() && source_manager_ ? clang::FullSourceLoc(loc, *source_manager_)
                                                                 : clang::FullSourceLoc();
    renderer_->emitDiagnostic(full, level, message, ranges, {});
  }

  // The kept errors, as clang prints them; forgets them.
  void print_errors() {
    for (const CompileError& e : errors) {
      render(e.error.level, e.error.loc, e.error.message, e.error.ranges);
      for (const StoredDiagnostic& n : e.notes) render(n.level, n.loc, n.message, n.ranges);
    }
    errors.clear();
  }

  void set_source_manager(const clang::SourceManager& sm) { source_manager_ = &sm; }

  std::vector<CompileError> errors;  // this file's, until reported
  unsigned errors_in_file = 0;
  unsigned compile_errors = 0;       // in the whole run
  unsigned unattributed_errors = 0;  // errors printed without a file to report them in
  unsigned unanalyzed_files = 0;     // files whose errors were printed without analysis

 private:
  enum class Following { kDrop, kPrint, kStore };  // what a note does: as its diagnostic
  clang::DiagnosticOptions options_;
  clang::TextDiagnosticPrinter printer_;
  std::unique_ptr<clang::TextDiagnostic> renderer_;
  const clang::SourceManager* source_manager_ = nullptr;
  Following following_ = Following::kDrop;
};

// The line clang prints after a file's diagnostics ("2 warnings generated
// when compiling for host."), with the functions left out added.
void print_summary(const clang::LangOptions& lo, unsigned warnings, unsigned errors, unsigned unanalyzed) {
  std::string line;
  auto count = [](unsigned n, llvm::StringRef what) {
    return std::to_string(n) + " " + what.str() + (n == 1 ? "" : "s");
  };
  if (warnings) line = count(warnings, "warning");
  if (warnings && errors) line += " and ";
  if (errors) line += count(errors, "error");
  if (!line.empty()) {
    line += " generated";
    if (lo.CUDA) line += lo.CUDAIsDevice ? " when compiling for device" : " when compiling for host";
  }
  if (unanalyzed) line += (line.empty() ? "" : "; ") + count(unanalyzed, "function") + " not analyzed (compile errors)";
  if (!line.empty()) llvm::errs() << line << ".\n";
}

struct LintRun {
  const LintConfig* fixed_config = nullptr;  // --config, else per source
  std::map<std::string, LintConfig> configs;  // by config path
  LintDiagnosticConsumer* diagnostics = nullptr;
  std::vector<SarifResult> results;
  std::vector<SarifNotification> notifications;
  unsigned failed_files = 0;  // nothing analyzed: a fatal error, or no function built
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
    if (ctx.getLangOpts().CUDAIsDevice) return;
    const clang::SourceManager& sm = ctx.getSourceManager();
    const clang::LangOptions& lo = ctx.getLangOpts();
    LintDiagnosticConsumer& out = *run_.diagnostics;
    out.set_source_manager(sm);
    clang::DiagnosticsEngine& diags = ci_.getDiagnostics();
    if (diags.hasErrorOccurred() && opt_werror_compile) {  // printed as they came
      print_summary(lo, 0, out.errors_in_file, 0);
      return;
    }
    if (diags.hasFatalErrorOccurred()) {
      // A missing header or too many errors: the rest of the file was never parsed.
      std::optional<StoredDiagnostic> fatal;
      if (!out.errors.empty()) fatal = out.errors.back().error;
      unsigned errors = out.errors_in_file;
      out.print_errors();
      print_summary(lo, 0, errors, 0);
      fail_file(sm, fatal ? &*fatal : nullptr);
      return;
    }

    ErrorAttribution attribution;
    bool had_errors = !out.errors.empty();
    if (had_errors) attribution = attribute_compile_errors(ctx, out.errors);
    Analyzer analyzer(ctx, config_);
    std::vector<Finding> findings;
    unsigned analyzed_in_main_file = 0;
    for (const clang::FunctionDecl* fd : analyzer.functions_to_analyze(/*main_file_only=*/false)) {
      if (attribution.skipped.contains(fd)) continue;
      if (sm.isInMainFile(sm.getExpansionLoc(fd->getLocation()))) ++analyzed_in_main_file;
      std::vector<Finding> f = analyzer.analyze_function(fd);
      findings.insert(findings.end(), std::make_move_iterator(f.begin()), std::make_move_iterator(f.end()));
    }

    report_compile_errors(sm, attribution);
    unsigned warnings = 0;
    for (const Finding& f : findings) {
      if (is_suppressed_by_nolint(sm, f.loc, f.rule)) continue;
      SarifResult r;
      r.rule = f.rule.str();
      r.message = f.message;
      r.location = sarif_location(sm, f.loc);
      // A header's finding shows up in every file that includes it: once is enough.
      if (!run_.seen.emplace(r.location.file, r.location.line, r.location.column, r.rule).second)
        continue;
      emit_finding(diags, sm, f);
      for (const FindingNote& n : f.notes) r.related.push_back(sarif_location(sm, n.loc, n.message));
      r.identity = f.function + "|" + f.buffer + "|" + f.free_stream + "|" + f.use_stream;
      run_.results.push_back(std::move(r));
      ++run_.findings;
      ++warnings;
    }
    print_summary(lo, warnings, 0, attribution.functions.size());
    if (had_errors && analyzed_in_main_file == 0) fail_file(sm, nullptr);
    out.errors.clear();
  }

 private:
  // The functions the compile errors left out, each once per run (a header's
  // show up in every file that includes it), and the errors outside functions.
  void report_compile_errors(const clang::SourceManager& sm, const ErrorAttribution& attribution) {
    LintDiagnosticConsumer& out = *run_.diagnostics;
    const std::vector<CompileError>& errors = out.errors;
    auto first_time = [&](clang::SourceLocation loc) {
      SarifLocation l = sarif_location(sm, loc);
      return run_.seen.emplace(l.file, l.line, l.column, kCompileErrorKind.str()).second;
    };
    auto print_error = [&](const CompileError& e, clang::DiagnosticsEngine::Level level) {
      out.render(level, e.error.loc, e.error.message, e.error.ranges);
      for (const StoredDiagnostic& n : e.notes) out.render(n.level, n.loc, n.message, n.ranges);
    };
    // In source order: functions by their name, other errors by their place.
    struct Item {
      clang::SourceLocation loc;
      const UnanalyzedFunction* function;  // else errors[error]
      size_t error;
    };
    std::vector<Item> items;
    for (const UnanalyzedFunction& f : attribution.functions) items.push_back({f.loc, &f, 0});
    for (size_t i : attribution.outside_functions) items.push_back({errors[i].error.loc, nullptr, i});
    std::stable_sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
      if (a.loc.isInvalid() || b.loc.isInvalid()) return a.loc.isValid() && b.loc.isInvalid();
      return sm.isBeforeInTranslationUnit(sm.getExpansionLoc(a.loc), sm.getExpansionLoc(b.loc));
    });
    for (const Item& item : items) {
      if (!item.function) {
        const CompileError& e = errors[item.error];
        if (e.error.loc.isValid() && !first_time(e.error.loc)) continue;
        std::string message = "compile error outside any function: " + e.error.message;
        out.render(clang::DiagnosticsEngine::Warning, e.error.loc,
                   message + " [" + kCompileErrorKind.str() + "]", e.error.ranges);
        for (const StoredDiagnostic& n : e.notes) out.render(n.level, n.loc, n.message, n.ranges);
        run_.notifications.push_back(
            {kCompileErrorKind.str(), "warning", message, {sarif_location(sm, e.error.loc)}});
        continue;
      }
      const UnanalyzedFunction& f = *item.function;
      if (!first_time(f.loc)) continue;
      std::string message = "function '" + f.name + "' is not analyzed: ";
      if (!f.errors.empty()) {
        message += errors[f.errors.front()].error.message;
        if (f.errors.size() > 1)
          message += " (and " + std::to_string(f.errors.size() - 1) + " more error" +
                     (f.errors.size() > 2 ? "s" : "") + ")";
      } else if (!f.left_out_callee.empty()) {
        message += "it calls '" + f.left_out_callee + "', which is not analyzed";
      } else {
        message += "part of it did not build because of an error outside it";
      }
      out.render(clang::DiagnosticsEngine::Warning, f.loc, message + " [" + kCompileErrorKind.str() + "]");
      SarifNotification n{kCompileErrorKind.str(), "warning", message, {sarif_location(sm, f.loc)}};
      for (size_t i : f.errors) {
        print_error(errors[i], clang::DiagnosticsEngine::Note);
        n.locations.push_back(sarif_location(sm, errors[i].error.loc, errors[i].error.message));
      }
      if (f.errors.empty() && !f.left_out_callee.empty()) {
        std::string called = "'" + f.left_out_callee + "' is called here";
        out.render(clang::DiagnosticsEngine::Note, f.call, called);
        n.locations.push_back(sarif_location(sm, f.call, called));
      } else if (f.errors.empty()) {
        out.render(clang::DiagnosticsEngine::Note, f.invalid_part, "this part did not build");
        n.locations.push_back(sarif_location(sm, f.invalid_part, "this part did not build"));
      }
      run_.notifications.push_back(std::move(n));
    }
  }

  // Nothing of the main file could be analyzed.
  void fail_file(const clang::SourceManager& sm, const StoredDiagnostic* why) {
    ++run_.failed_files;
    std::string file;
    if (auto entry = sm.getFileEntryRefForID(sm.getMainFileID())) file = entry->getName().str();
    std::string message = "'" + file + "' is not analyzed: " +
                          (why ? why->message : std::string("no function in it compiles"));
    llvm::errs() << "xstream-lint: error: " << message << "\n";
    SarifNotification n{kCompileErrorKind.str(), "error", message, {}};
    if (why) n.locations.push_back(sarif_location(sm, why->loc, why->message));
    run_.notifications.push_back(std::move(n));
  }

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
    tool.mapVirtualFile(kNvccPreludePath, kNvccPrelude);
    tool.setDiagnosticConsumer(&diagnostics);
    tool.setPrintErrorMessage(false);
    run.diagnostics = &diagnostics;
    LintActionFactory factory(run);
    // Deeply nested input (thousands of parentheses) recurses in clang's
    // parser past a default 8 MiB stack: the front end runs on a thread
    // with room for it.
    llvm::thread front_end(std::optional<unsigned>(kFrontEndStackBytes),
                           [&] { tool_status = tool.run(&factory); });
    front_end.join();
  }

  PythonCheckResult python = run_python_check(python_inputs, argv[0], run.results, run.notifications);

  auto run_failed = [&] {
    return missing || run.config_error || tool_status != 0 || run.failed_files > 0 ||
           diagnostics.unanalyzed_files > 0 || diagnostics.unattributed_errors > 0 ||
           (opt_werror_compile && diagnostics.compile_errors > 0) || python.error;
  };

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
    std::string log = render_sarif(run.results, run.notifications, !run_failed(), XSC_VERSION, root);
    if (opt_output.empty()) {
      llvm::outs() << log;
    } else {
      std::error_code ec;
      llvm::raw_fd_ostream out(opt_output, ec, llvm::sys::fs::OF_Text);
      if (ec) fail("cannot write '" + opt_output + "': " + ec.message());
      out << log;
    }
  }

  if (run_failed()) return 2;
  return run.findings + python.findings > 0 ? 1 : 0;
}
