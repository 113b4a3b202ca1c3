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
// local or parameter container whose size the function never changes (it
// only reads it, indexes it or walks it). The loop must
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

  // Where a loop's elements are named: its range, and how many loops over
  // the same range enclose it. Loops nested in one another pick elements
  // of one range at once (`buffers[i]` and `buffers[j]` in `for i` and,
  // inside it, `for j` over the same bound), so their elements are told
  // apart; loops one after the other at the same depth name the same ones.
  struct Position {
    std::uint64_t range = 0;
    unsigned depth = 0;
  };

  // The position of a counted loop's counter; range 0 for any other
  // variable.
  Position counter(const clang::VarDecl* v) const;

  // A range-for's element variable: its position and the container it
  // walks.
  struct Element {
    Position position;
    const clang::Expr* container = nullptr;
  };
  const Element* element(const clang::VarDecl* v) const;

  // The range of a loop statement (a ForStmt or CXXForRangeStmt); 0 when
  // the loop is not one of these.
  std::uint64_t range_of_loop(const clang::Stmt* loop) const;

  // Whether the function writes `v` only in its declaration: never
  // assigned, stepped, bound to a non-const reference or its address taken.
  bool only_initialized(const clang::VarDecl* v) const { return never_written(v); }
  // The one place the function takes `v`'s address (`&v`) when it is
  // otherwise only read there: the out-argument of the call that sets it
  // (`cudaHostGetDevicePointer((void**)&d, h, 0)`). Null otherwise.
  const clang::UnaryOperator* sole_address_taken(const clang::VarDecl* v) const;

  // The marker an element's key carries: "[r<range hex>.<depth>]".
  static std::string marker(Position position);
  // The ranges whose markers a key's id carries.
  static std::vector<std::uint64_t> ranges_in(const std::string& key_id);
  // The key id with its markers' depths left out: equal for elements of
  // one container picked by counters of nested loops over one range.
  static std::string without_depths(const std::string& key_id);

 private:
  void visit(const clang::Stmt* s, const clang::Stmt* parent);
  std::uint64_t consider_for(const clang::ForStmt* loop);
  std::uint64_t consider_range_for(const clang::CXXForRangeStmt* loop);
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
  // Every loop, outer ones first, with the loops enclosing it.
  struct Loop {
    const clang::Stmt* stmt;
    std::vector<const clang::Stmt*> enclosing;
  };
  std::vector<Loop> all_loops_;
  std::vector<const clang::Stmt*> open_loops_;  // while visiting
  llvm::DenseMap<const clang::VarDecl*, Position> counters_;
  llvm::DenseMap<const clang::VarDecl*, Element> elements_;
  llvm::DenseMap<const clang::Stmt*, std::uint64_t> loops_;
};

}  // namespace xsc::lint
