#include "lint/compile_errors.h"

#include <algorithm>

#include "analysis/op_builder.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/SourceManager.h"

namespace xsc::lint {

using namespace clang;

namespace {

struct Definition {
  const FunctionDecl* fd;
  SourceLocation begin, end;  // expansion locations
};

// Every function definition outside system headers, valid or not, dependent
// or not: errors are attributed to the source of a definition, which its
// template instantiations and lambdas share.
class DefinitionCollector : public RecursiveASTVisitor<DefinitionCollector> {
 public:
  explicit DefinitionCollector(const SourceManager& sm) : sm_(sm) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  bool TraverseDecl(Decl* d) {
    if (!d) return true;
    if (!isa<TranslationUnitDecl>(d) && in_system_header(d->getLocation())) return true;
    return RecursiveASTVisitor::TraverseDecl(d);
  }

  bool VisitFunctionDecl(FunctionDecl* fd) {
    add(fd);
    return true;
  }

  bool VisitLambdaExpr(LambdaExpr* le) {
    add(le->getCallOperator());
    return true;
  }

  std::vector<Definition> definitions;

 private:
  bool in_system_header(SourceLocation loc) const {
    return loc.isValid() && sm_.isInSystemHeader(sm_.getExpansionLoc(loc));
  }

  void add(const FunctionDecl* fd) {
    if (!fd || !fd->doesThisDeclarationHaveABody() || !seen_.insert(fd).second) return;
    CharSourceRange range = sm_.getExpansionRange(fd->getSourceRange());
    if (range.getBegin().isInvalid() || range.getEnd().isInvalid()) return;
    if (in_system_header(range.getBegin())) return;
    definitions.push_back({fd, range.getBegin(), range.getEnd()});
  }

  const SourceManager& sm_;
  llvm::DenseSet<const FunctionDecl*> seen_;
};

// The first part of a body the front end could not build: an invalid
// declaration or an expression that contains errors (a RecoveryExpr). An
// error elsewhere (a class that failed to compile) leaves such parts behind
// without an error of their own inside the body.
class InvalidPartFinder : public RecursiveASTVisitor<InvalidPartFinder> {
 public:
  bool VisitExpr(Expr* e) {
    if (e->containsErrors()) found = e->getBeginLoc();
    return found.isInvalid();
  }
  bool VisitDecl(Decl* d) {
    if (d->isInvalidDecl()) found = d->getLocation();
    return found.isInvalid();
  }
  SourceLocation found;
};

SourceLocation first_invalid_part(const FunctionDecl* fd) {
  if (fd->isInvalidDecl()) return fd->getLocation();
  InvalidPartFinder finder;
  finder.TraverseStmt(fd->getBody());
  return finder.found;
}

// The first call in a body to a function in `left_out`, as the analysis
// would inline it (not kernel launches, not operators other than a call of a
// lambda or another function object).
class LeftOutCallFinder : public RecursiveASTVisitor<LeftOutCallFinder> {
 public:
  explicit LeftOutCallFinder(const llvm::DenseSet<const FunctionDecl*>& left_out) : left_out_(left_out) {}
  // A lambda's body is a definition of its own, inlined where it is called,
  // not where it is written.
  bool TraverseLambdaExpr(LambdaExpr*) { return true; }
  bool VisitCallExpr(CallExpr* call) {
    if (isa<CUDAKernelCallExpr>(call)) return true;
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() != OO_Call) return true;
    const FunctionDecl* callee = call->getDirectCallee();
    const FunctionDecl* definition = nullptr;
    if (!callee || !callee->hasBody(definition) || !left_out_.contains(definition)) return true;
    found = definition;
    at = static_cast<const Stmt*>(call)->getBeginLoc();
    return false;
  }
  const FunctionDecl* found = nullptr;
  SourceLocation at;

 private:
  const llvm::DenseSet<const FunctionDecl*>& left_out_;
};

std::string display_name(const FunctionDecl* fd) {
  if (const FunctionDecl* pattern = fd->getTemplateInstantiationPattern()) fd = pattern;
  if (const auto* method = dyn_cast<CXXMethodDecl>(fd); method && method->getParent()->isLambda()) {
    const auto* enclosing = dyn_cast<FunctionDecl>(method->getParent()->getDeclContext());
    return enclosing ? "(lambda in " + display_name(enclosing) + ")" : "(lambda)";
  }
  return fd->getQualifiedNameAsString();
}

}  // namespace

ErrorAttribution attribute_compile_errors(ASTContext& ctx, const std::vector<CompileError>& errors) {
  const SourceManager& sm = ctx.getSourceManager();
  DefinitionCollector collector(sm);
  collector.TraverseDecl(ctx.getTranslationUnitDecl());
  std::vector<Definition>& defs = collector.definitions;

  auto within = [&](SourceLocation loc, const Definition& d) {
    return sm.isPointWithin(loc, d.begin, d.end);
  };
  // The definitions holding `loc`, outermost first.
  auto holders = [&](SourceLocation loc) {
    std::vector<const Definition*> out;
    if (loc.isInvalid()) return out;
    loc = sm.getExpansionLoc(loc);
    for (const Definition& d : defs)
      if (within(loc, d)) out.push_back(&d);
    std::stable_sort(out.begin(), out.end(), [&](const Definition* a, const Definition* b) {
      if (a->begin == b->begin) return false;
      return sm.isBeforeInTranslationUnit(a->begin, b->begin);
    });
    return out;
  };

  ErrorAttribution result;
  // Reports by the outermost definition's first location: a template and its
  // instantiations are one entry.
  std::vector<std::pair<const Definition*, UnanalyzedFunction>> reports;
  auto report_for = [&](const Definition* d) -> UnanalyzedFunction& {
    for (auto& [def, report] : reports)
      if (def->begin == d->begin) return report;
    UnanalyzedFunction r;
    r.name = display_name(d->fd);
    r.loc = d->fd->getLocation();
    reports.emplace_back(d, std::move(r));
    return reports.back().second;
  };

  for (size_t i = 0; i < errors.size(); ++i) {
    std::vector<const Definition*> in = holders(errors[i].error.loc);
    for (size_t n = 0; in.empty() && n < errors[i].notes.size(); ++n) in = holders(errors[i].notes[n].loc);
    if (in.empty()) {
      result.outside_functions.push_back(i);
      continue;
    }
    for (const Definition* d : in) result.skipped.insert(d->fd);
    // Every definition that shares the outermost one's source (a template's
    // instantiations) is left out too.
    for (const Definition& d : defs)
      if (d.begin == in.front()->begin) result.skipped.insert(d.fd);
    report_for(in.front()).errors.push_back(i);
  }

  // Bodies an error outside them left with invalid parts.
  for (const Definition& d : defs) {
    if (result.skipped.contains(d.fd) || d.fd->isDependentContext()) continue;
    SourceLocation bad = first_invalid_part(d.fd);
    if (bad.isInvalid()) continue;
    result.skipped.insert(d.fd);
    std::vector<const Definition*> in = holders(d.begin);
    UnanalyzedFunction& r = report_for(in.empty() ? &d : in.front());
    if (r.errors.empty() && r.invalid_part.isInvalid()) r.invalid_part = bad;
  }

  // Helpers are inlined into their callers, four levels deep (op_builder.h,
  // kMaxInlineDepth): a caller of a left-out function would be analyzed
  // without what that function does (a wait it makes, say).
  for (int level = 0; level < ApiModel::kMaxInlineDepth; ++level) {
    llvm::DenseSet<const FunctionDecl*> left_out = result.skipped;
    bool more = false;
    for (const Definition& d : defs) {
      if (left_out.contains(d.fd) || d.fd->isDependentContext()) continue;
      LeftOutCallFinder finder(left_out);
      finder.TraverseStmt(d.fd->getBody());
      if (!finder.found) continue;
      result.skipped.insert(d.fd);
      more = true;
      // Named on its own: a lambda's enclosing function is still analyzed.
      UnanalyzedFunction& r = report_for(&d);
      if (r.errors.empty() && r.invalid_part.isInvalid() && r.left_out_callee.empty()) {
        r.left_out_callee = display_name(finder.found);
        r.call = finder.at;
      }
    }
    if (!more) break;
  }

  std::stable_sort(reports.begin(), reports.end(), [&](const auto& a, const auto& b) {
    if (a.first->begin == b.first->begin) return false;
    return sm.isBeforeInTranslationUnit(a.first->begin, b.first->begin);
  });
  for (auto& [def, report] : reports) result.functions.push_back(std::move(report));
  return result;
}

}  // namespace xsc::lint
