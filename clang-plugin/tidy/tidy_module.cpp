// clang-tidy -load=libxstream_tidy.so -checks='-*,xstream-*': the four checks
// as a clang-tidy module. NOLINT handling comes from clang-tidy itself.
//
// Options (per check):
//   ConfigFile   path of an .xstream-lint.yaml; default: the nearest one
//                above the main file.
#include <memory>
#include <string>

#include "analysis/analyzer.h"
#include "analysis/config.h"
#include "clang-tidy/ClangTidyCheck.h"
#include "clang-tidy/ClangTidyModule.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "llvm/ADT/DenseSet.h"

namespace xsc::lint {
namespace {

using namespace clang::ast_matchers;

class StreamOrderCheck : public clang::tidy::ClangTidyCheck {
 public:
  StreamOrderCheck(llvm::StringRef name, clang::tidy::ClangTidyContext* context, llvm::StringRef rule)
      : ClangTidyCheck(name, context), rule_(rule), config_file_(Options.get("ConfigFile", "").str()) {}

  bool isLanguageVersionSupported(const clang::LangOptions& lo) const override {
    return lo.CPlusPlus;
  }

  void storeOptions(clang::tidy::ClangTidyOptions::OptionMap& opts) override {
    Options.store(opts, "ConfigFile", config_file_);
  }

  void registerMatchers(MatchFinder* finder) override {
    finder->addMatcher(functionDecl(isDefinition(), unless(isExpansionInSystemHeader())).bind("fn"),
                       this);
    finder->addMatcher(lambdaExpr(unless(isExpansionInSystemHeader())).bind("lambda"), this);
  }

  void check(const MatchFinder::MatchResult& result) override {
    const clang::FunctionDecl* fd = result.Nodes.getNodeAs<clang::FunctionDecl>("fn");
    if (const auto* le = result.Nodes.getNodeAs<clang::LambdaExpr>("lambda"))
      fd = le->getCallOperator();
    if (!fd || !analyzed_.insert(fd).second) return;
    if (result.Context->getLangOpts().CUDAIsDevice) return;
    if (!analyzer_) start_translation_unit(*result.Context, *result.SourceManager);
    for (const Finding& f : analyzer_->analyze_function(fd)) {
      if (f.rule != rule_) continue;
      diag(f.loc, "%0") << f.message;
      for (const FindingNote& n : f.notes) diag(n.loc, "%0", clang::DiagnosticIDs::Note) << n.message;
    }
  }

  void onEndOfTranslationUnit() override {
    analyzer_.reset();
    analyzed_.clear();
  }

 private:
  void start_translation_unit(clang::ASTContext& ctx, const clang::SourceManager& sm) {
    std::string path = config_file_;
    if (path.empty())
      if (auto main = sm.getFileEntryRefForID(sm.getMainFileID())) path = find_config_for(main->getName());
    LintConfig config;
    if (!path.empty()) {
      std::string error;
      if (auto loaded = load_config_file(path, error))
        config = std::move(*loaded);
      else
        configurationDiag("%0") << error;
    }
    analyzer_ = std::make_unique<Analyzer>(ctx, std::move(config));
  }

  llvm::StringRef rule_;
  std::string config_file_;
  std::unique_ptr<Analyzer> analyzer_;
  llvm::DenseSet<const clang::FunctionDecl*> analyzed_;
};

class FreeBeforeWaitCheck : public StreamOrderCheck {
 public:
  FreeBeforeWaitCheck(llvm::StringRef name, clang::tidy::ClangTidyContext* context)
      : StreamOrderCheck(name, context, kRuleFreeBeforeWait) {}
};

class UnorderedFreeCheck : public StreamOrderCheck {
 public:
  UnorderedFreeCheck(llvm::StringRef name, clang::tidy::ClangTidyContext* context)
      : StreamOrderCheck(name, context, kRuleUnorderedFree) {}
};

class UseBeforeReadyCheck : public StreamOrderCheck {
 public:
  UseBeforeReadyCheck(llvm::StringRef name, clang::tidy::ClangTidyContext* context)
      : StreamOrderCheck(name, context, kRuleUseBeforeReady) {}
};

class WriteAfterReadCheck : public StreamOrderCheck {
 public:
  WriteAfterReadCheck(llvm::StringRef name, clang::tidy::ClangTidyContext* context)
      : StreamOrderCheck(name, context, kRuleWriteAfterRead) {}
};

class XstreamTidyModule : public clang::tidy::ClangTidyModule {
 public:
  void addCheckFactories(clang::tidy::ClangTidyCheckFactories& factories) override {
    factories.registerCheck<FreeBeforeWaitCheck>(kRuleFreeBeforeWait);
    factories.registerCheck<UnorderedFreeCheck>(kRuleUnorderedFree);
    factories.registerCheck<UseBeforeReadyCheck>(kRuleUseBeforeReady);
    factories.registerCheck<WriteAfterReadCheck>(kRuleWriteAfterRead);
  }
};

}  // namespace
}  // namespace xsc::lint

static clang::tidy::ClangTidyModuleRegistry::Add<xsc::lint::XstreamTidyModule> kRegisterModule(
    "xstream-module", "Cross-stream buffer lifetime checks.");
