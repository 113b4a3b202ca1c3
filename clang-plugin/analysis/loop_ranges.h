// Loops over a range the analysis can name, so that the elements one loop
// touches (`streams[i]`, `done[i]`, `w.stream` of `for (auto& w : workers)`)
// are the same keys as those another loop over the same range touches: a
// fan-out that launches on `streams[i]` and records `done[i]`, and a fan-in
// written as a second loop that makes one stream wait on each `done[j]`,
// order every element's work.
//
// Two loops share a range when no statement of the function can change it
// between them: a counted `for` (`for (int i = L; i < U; ++i)`, also `<=`
// and `!=`, `i++` and `i += 1`) whose bounds are constants or variables the
// function never writes, or a range-for over a fixed-size array or over a
// local container whose size the function never changes. The loop must
// run every round it starts to its end (no `break` or `goto` out of it)
// and must not change its counter.
//
// Where such a loop's range is empty, no loop over it ran a round: the
// loop's skip edge (entering the loop and leaving it at once) carries
// that, and nothing bound to the range exists on it
// (OpKind::kAssumeEmpty).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Stmt.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/DenseMap.h"

namespace xsc::lint {

class LoopRanges {
 public:
  LoopRanges(clang::ASTContext& ctx, const clang::Stmt* body);

  // The range a counted loop's counter runs over; 0 for any other variable.
  std::uint64_t counter_range(const clang::VarDecl* v) const;

  // A range-for's element variable: the range and the container it walks.
  struct Element {
    std::uint64_t range = 0;
    const clang::Expr* container = nullptr;
  };
  const Element* element(const clang::VarDecl* v) const;

  // The range of a loop statement (a ForStmt or CXXForRangeStmt); 0 when
  // the loop is not one of these.
  std::uint64_t range_of_loop(const clang::Stmt* loop) const;

  // The marker an element's key carries: "[r<hex>]".
  static std::string marker(std::uint64_t range);
  // The ranges whose markers a key's id carries.
  static std::vector<std::uint64_t> ranges_in(const std::string& key_id);

 private:
  void visit(const clang::Stmt* s, const clang::Stmt* parent);
  void consider_for(const clang::ForStmt* loop);
  void consider_range_for(const clang::CXXForRangeStmt* loop);
  bool stable_bound(const clang::Expr* e) const;
  bool never_written(const clang::VarDecl* v) const;
  bool size_never_changed(const clang::VarDecl* v) const;
  std::uint64_t signature(const char* kind, const clang::Expr* a, const char* op,
                          const clang::Expr* b) const;

  clang::ASTContext& ctx_;
  // Every reference to a variable, with the expression it appears in.
  struct Reference {
    const clang::DeclRefExpr* ref;
    const clang::Stmt* parent;
  };
  llvm::DenseMap<const clang::VarDecl*, std::vector<Reference>> references_;
  std::vector<const clang::ForStmt*> for_loops_;
  std::vector<const clang::CXXForRangeStmt*> range_for_loops_;
  llvm::DenseMap<const clang::VarDecl*, std::uint64_t> counters_;
  llvm::DenseMap<const clang::VarDecl*, Element> elements_;
  llvm::DenseMap<const clang::Stmt*, std::uint64_t> loops_;
};

}  // namespace xsc::lint
