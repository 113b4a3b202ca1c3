// clang -fplugin=libxstream_plugin.so: the check runs after the normal
// compile action and reports through the compiler's own diagnostics.
//   -fplugin-arg-xstream-config=FILE   use FILE instead of .xstream-lint.yaml
#include <memory>
#include <string>

#include "analysis/analyzer.h"
#include "analysis/config.h"
#include "clang/AST/ASTConsumer.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendPluginRegistry.h"

namespace xsc::lint {
namespace {

class StreamOrderConsumer : public clang::ASTConsumer {
 public:
  StreamOrderConsumer(clang::CompilerInstance& ci, LintConfig config)
      : ci_(ci), config_(std::move(config)) {}

  void HandleTranslationUnit(clang::ASTContext& ctx) override {
    clang::DiagnosticsEngine& diags = ci_.getDiagnostics();
    // A broken AST gives meaningless paths; clang's errors already fail the build.
    if (diags.hasErrorOccurred()) return;
    // CUDA compiles each file once per side; report from the host side only.
    if (ctx.getLangOpts().CUDAIsDevice) return;
    Analyzer analyzer(ctx, config_);
    for (const Finding& f : analyzer.analyze_translation_unit(/*main_file_only=*/false))
      emit_finding(diags, ctx.getSourceManager(), f);
  }

 private:
  clang::CompilerInstance& ci_;
  LintConfig config_;
};

class StreamOrderAction : public clang::PluginASTAction {
 protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci,
                                                        llvm::StringRef in_file) override {
    std::string path = config_path_.empty() ? find_config_for(in_file) : config_path_;
    LintConfig config;
    if (!path.empty()) {
      std::string error;
      auto loaded = load_config_file(path, error);
      if (!loaded) {
        clang::DiagnosticsEngine& diags = ci.getDiagnostics();
        diags.Report(diags.getCustomDiagID(clang::DiagnosticsEngine::Error, "xstream: %0")) << error;
      } else {
        config = std::move(*loaded);
      }
    }
    return std::make_unique<StreamOrderConsumer>(ci, std::move(config));
  }

  bool ParseArgs(const clang::CompilerInstance& ci, const std::vector<std::string>& args) override {
    for (const std::string& arg : args) {
      llvm::StringRef a(arg);
      if (a.consume_front("config=")) {
        config_path_ = a.str();
        continue;
      }
      clang::DiagnosticsEngine& diags = ci.getDiagnostics();
      diags.Report(diags.getCustomDiagID(clang::DiagnosticsEngine::Error,
                                         "xstream: unknown plugin argument '%0' (known: config=FILE)"))
          << arg;
      return false;
    }
    return true;
  }

  ActionType getActionType() override { return AddAfterMainAction; }

 private:
  std::string config_path_;
};

}  // namespace
}  // namespace xsc::lint

static clang::FrontendPluginRegistry::Add<xsc::lint::StreamOrderAction> kRegisterPlugin(
    "xstream", "cross-stream buffer lifetime check (xstream-free-before-wait, xstream-unordered-free, xstream-use-before-ready, xstream-write-after-read)");
