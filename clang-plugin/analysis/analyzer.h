// The static check's entry points: analyze a function (or every function of a
// translation unit) and get findings with clang source locations. Each front
// end (plugin, clang-tidy module, xstream-lint) turns findings into its own
// diagnostics.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "analysis/config.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/Diagnostic.h"
#include "llvm/ADT/StringRef.h"

namespace xsc::lint {

inline constexpr llvm::StringLiteral kRuleFreeBeforeWait = "xstream-free-before-wait";
inline constexpr llvm::StringLiteral kRuleUnorderedFree = "xstream-unordered-free";
inline constexpr llvm::StringLiteral kRuleUseBeforeReady = "xstream-use-before-ready";
inline constexpr llvm::StringLiteral kRuleWriteAfterRead = "xstream-write-after-read";

struct FindingNote {
  clang::SourceLocation loc;
  std::string message;
};

struct Finding {
  llvm::StringRef rule;  // one of the kRule* above
  clang::SourceLocation loc;
  std::string message;
  std::vector<FindingNote> notes;
  // Stable identity for fingerprints: does not move with line numbers.
  std::string function;
  std::string buffer;
  std::string free_stream;  // for kRuleUseBeforeReady and kRuleWriteAfterRead, the writing stream
  std::string use_stream;
};

class ApiModel;

class Analyzer {
 public:
  Analyzer(clang::ASTContext& ctx, LintConfig config);
  ~Analyzer();

  // Findings for one function body, in source order.
  std::vector<Finding> analyze_function(const clang::FunctionDecl* fd);

  // Findings for every function defined outside system headers; with
  // `main_file_only`, only functions in the main file.
  std::vector<Finding> analyze_translation_unit(bool main_file_only);

  // The functions analyze_translation_unit analyzes, in its order: valid,
  // non-dependent definitions (template instantiations and lambdas included).
  std::vector<const clang::FunctionDecl*> functions_to_analyze(bool main_file_only) const;

 private:
  clang::ASTContext& ctx_;
  LintConfig config_;
  std::unique_ptr<ApiModel> model_;
};

// Emits a finding through clang's diagnostics (warning + notes), unless a
// NOLINT comment suppresses it. Returns whether it was emitted.
bool emit_finding(clang::DiagnosticsEngine& diags, const clang::SourceManager& sm,
                  const Finding& finding);

}  // namespace xsc::lint
