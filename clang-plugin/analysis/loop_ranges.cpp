#include "analysis/loop_ranges.h"

#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "llvm/ADT/StringExtras.h"

namespace xsc::lint {

using namespace clang;

namespace {

const Expr* bare(const Expr* e) { return e ? e->IgnoreParenImpCasts() : nullptr; }

const VarDecl* referenced_var(const Expr* e) {
  const auto* ref = dyn_cast_or_null<DeclRefExpr>(bare(e));
  const auto* vd = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
  return vd ? vd->getCanonicalDecl() : nullptr;
}

// Whether a loop's body can leave a round it started other than by ending
// it: a `break` of this loop (not of a loop or switch inside it) or a
// `goto`. A `continue` ends the round; a `return` leaves the function, so
// the loop's exit is not reached that way.
bool leaves_early(const Stmt* s, bool nested) {
  if (!s) return false;
  if (isa<GotoStmt>(s) || isa<IndirectGotoStmt>(s)) return true;
  if (isa<BreakStmt>(s)) return !nested;
  const bool opens = isa<ForStmt>(s) || isa<WhileStmt>(s) || isa<DoStmt>(s) ||
                     isa<CXXForRangeStmt>(s) || isa<SwitchStmt>(s);
  // A lambda's body is another function: its statements leave nothing here.
  if (isa<LambdaExpr>(s)) return false;
  for (const Stmt* child : s->children())
    if (leaves_early(child, nested || opens)) return true;
  return false;
}

// Container members that read it without changing its size.
bool size_keeping_member(const NamedDecl* member) {
  const IdentifierInfo* id = member ? member->getIdentifier() : nullptr;
  if (!id) return false;
  static const char* const kNames[] = {"size",  "empty", "data",   "begin", "end",
                                       "cbegin", "cend", "rbegin", "rend",  "at",
                                       "front", "back"};
  for (const char* name : kNames)
    if (id->getName() == name) return true;
  return false;
}

bool fixed_size_type(QualType t) {
  t = t.getNonReferenceType();
  if (t->isConstantArrayType()) return true;
  const auto* rd = t->getAsCXXRecordDecl();
  return rd && rd->isInStdNamespace() && rd->getIdentifier() && rd->getName() == "array";
}

}  // namespace

LoopRanges::LoopRanges(ASTContext& ctx, const Stmt* body) : ctx_(ctx) {
  if (!body) return;
  visit(body, nullptr);
  // Outer loops come first, so an enclosing loop's range is known when a
  // loop inside it counts its depth.
  for (const Loop& loop : all_loops_) {
    const auto* counted = dyn_cast<ForStmt>(loop.stmt);
    const auto* each = dyn_cast<CXXForRangeStmt>(loop.stmt);
    const std::uint64_t range = counted ? consider_for(counted) : consider_range_for(each);
    if (range == 0) continue;
    Position position{range, 0};
    for (const Stmt* outer : loop.enclosing)
      if (range_of_loop(outer) == range) ++position.depth;
    loops_[loop.stmt] = range;
    if (counted) {
      const auto* ds = dyn_cast<DeclStmt>(counted->getInit());
      const VarDecl* v = ds ? dyn_cast<VarDecl>(ds->getSingleDecl())
                            : referenced_var(cast<BinaryOperator>(counted->getInit())->getLHS());
      counters_[v->getCanonicalDecl()] = position;
    } else {
      elements_[each->getLoopVariable()->getCanonicalDecl()] =
          Element{position, each->getRangeInit()->IgnoreParenImpCasts()};
    }
  }
}

void LoopRanges::visit(const Stmt* s, const Stmt* parent) {
  if (!s) return;
  if (const auto* ref = dyn_cast<DeclRefExpr>(s))
    if (const auto* vd = dyn_cast<VarDecl>(ref->getDecl()))
      references_[vd->getCanonicalDecl()].push_back({ref, parent});
  const bool loop = isa<ForStmt>(s) || isa<CXXForRangeStmt>(s);
  if (loop) {
    all_loops_.push_back({s, open_loops_});
    open_loops_.push_back(s);
  }
  // Parentheses and added qualifiers are transparent: `(n)` is read as `n`
  // is, and `v.size()` of a non-const `v` calls size through a const `v`.
  const auto* cast = dyn_cast<ImplicitCastExpr>(s);
  const bool transparent = isa<ParenExpr>(s) || (cast && cast->getCastKind() == CK_NoOp);
  const Stmt* child_parent = transparent ? parent : s;
  for (const Stmt* child : s->children()) visit(child, child_parent);
  if (loop) open_loops_.pop_back();
}

bool LoopRanges::never_written(const VarDecl* v) const {
  if (!v) return false;
  const QualType t = v->getType();
  if (t.isConstQualified() && !t->isReferenceType()) return true;
  if (t->isReferenceType()) return false;  // may alias anything
  auto it = references_.find(v->getCanonicalDecl());
  if (it == references_.end()) return true;
  for (const Reference& r : it->second) {
    const auto* cast = dyn_cast_or_null<ImplicitCastExpr>(r.parent);
    if (!cast || cast->getCastKind() != CK_LValueToRValue) return false;
  }
  return true;
}

const UnaryOperator* LoopRanges::sole_address_taken(const VarDecl* v) const {
  if (!v || v->getType()->isReferenceType()) return nullptr;
  auto it = references_.find(v->getCanonicalDecl());
  if (it == references_.end()) return nullptr;
  const UnaryOperator* taken = nullptr;
  for (const Reference& r : it->second) {
    if (const auto* cast = dyn_cast_or_null<ImplicitCastExpr>(r.parent);
        cast && cast->getCastKind() == CK_LValueToRValue)
      continue;
    const auto* uo = dyn_cast_or_null<UnaryOperator>(r.parent);
    if (!uo || uo->getOpcode() != UO_AddrOf || taken) return nullptr;
    taken = uo;
  }
  return taken;
}

bool LoopRanges::size_never_changed(const VarDecl* v) const {
  if (!v) return false;
  // A reference parameter's container is taken to change only through
  // this function's own references to it, as a local's does.
  if (fixed_size_type(v->getType()) || v->getType().getNonReferenceType().isConstQualified())
    return true;
  auto it = references_.find(v->getCanonicalDecl());
  if (it == references_.end()) return true;
  for (const Reference& r : it->second) {
    const Stmt* p = r.parent;
    if (const auto* cast = dyn_cast_or_null<ImplicitCastExpr>(p);
        cast && cast->getCastKind() == CK_LValueToRValue)
      continue;  // copied
    if (const auto* me = dyn_cast_or_null<MemberExpr>(p); me && size_keeping_member(me->getMemberDecl()))
      continue;  // v.size(), v.data()
    if (const auto* op = dyn_cast_or_null<CXXOperatorCallExpr>(p);
        op && op->getOperator() == OO_Subscript && op->getNumArgs() > 0 && bare(op->getArg(0)) == r.ref)
      continue;  // v[i]
    if (const auto* ds = dyn_cast_or_null<DeclStmt>(p); ds && ds->isSingleDecl())
      if (const auto* range = dyn_cast<VarDecl>(ds->getSingleDecl()); range && range->isImplicit())
        continue;  // a range-for's own reference to what it walks
    return false;
  }
  return true;
}

bool LoopRanges::stable_bound(const Expr* e) const {
  if (!e) return false;
  e = e->IgnoreParenCasts();
  if (e->isValueDependent() || e->isTypeDependent()) return false;
  if (e->isIntegerConstantExpr(ctx_)) return true;
  if (const VarDecl* v = referenced_var(e)) return never_written(v);
  if (const auto* bo = dyn_cast<BinaryOperator>(e))
    return bo->isAdditiveOp() || bo->isMultiplicativeOp() ? stable_bound(bo->getLHS()) &&
                                                                stable_bound(bo->getRHS())
                                                          : false;
  if (const auto* call = dyn_cast<CXXMemberCallExpr>(e)) {
    const CXXMethodDecl* md = call->getMethodDecl();
    const VarDecl* object = referenced_var(call->getImplicitObjectArgument());
    return md && md->getIdentifier() && md->getName() == "size" && call->getNumArgs() == 0 &&
           object && size_never_changed(object);
  }
  return false;
}

std::uint64_t LoopRanges::signature(const char* kind, const Expr* a, const char* op,
                                    const Expr* b) const {
  llvm::FoldingSetNodeID id;
  id.AddString(kind);
  if (a) a->IgnoreParenImpCasts()->Profile(id, ctx_, /*Canonical=*/true);
  id.AddString(op);
  if (b) b->IgnoreParenImpCasts()->Profile(id, ctx_, /*Canonical=*/true);
  const std::uint64_t h = id.ComputeHash();
  return h == 0 ? 1 : h;
}

// The range a counted loop walks, or 0 where it is not one this analysis
// names.
std::uint64_t LoopRanges::consider_for(const ForStmt* loop) {
  // The counter and where it starts.
  const VarDecl* counter = nullptr;
  const Expr* first = nullptr;
  const Stmt* init_write = nullptr;  // `i = L`: the one write of i besides the step
  if (const auto* ds = dyn_cast_or_null<DeclStmt>(loop->getInit()); ds && ds->isSingleDecl()) {
    if (const auto* vd = dyn_cast<VarDecl>(ds->getSingleDecl()); vd && vd->getInit()) {
      counter = vd->getCanonicalDecl();
      first = vd->getInit();
    }
  } else if (const auto* bo = dyn_cast_or_null<BinaryOperator>(loop->getInit());
             bo && bo->getOpcode() == BO_Assign) {
    counter = referenced_var(bo->getLHS());
    first = bo->getRHS();
    init_write = bo->getLHS()->IgnoreParens();
  }
  if (!counter || !counter->getType()->isIntegerType() || counter->getType()->isReferenceType())
    return 0;

  // i < U, i <= U, i != U.
  const auto* cond = dyn_cast_or_null<BinaryOperator>(loop->getCond());
  if (!cond || referenced_var(cond->getLHS()) != counter) return 0;
  const char* op = nullptr;
  switch (cond->getOpcode()) {
    case BO_LT: op = "<"; break;
    case BO_LE: op = "<="; break;
    case BO_NE: op = "<"; break;  // counting up by one from below, != stops where < does
    default: return 0;
  }
  const Expr* last = cond->getRHS();

  // ++i, i++, i += 1.
  const Expr* step_write = nullptr;
  const Expr* inc = loop->getInc() ? loop->getInc()->IgnoreParens() : nullptr;
  if (const auto* uo = dyn_cast_or_null<UnaryOperator>(inc); uo && uo->isIncrementOp()) {
    if (referenced_var(uo->getSubExpr()) == counter) step_write = uo->getSubExpr()->IgnoreParens();
  } else if (const auto* ca = dyn_cast_or_null<CompoundAssignOperator>(inc);
             ca && ca->getOpcode() == BO_AddAssign && referenced_var(ca->getLHS()) == counter) {
    Expr::EvalResult one;
    if (ca->getRHS()->EvaluateAsInt(one, ctx_) && one.Val.getInt() == 1)
      step_write = ca->getLHS()->IgnoreParens();
  }
  if (!step_write) return 0;

  // The counter is only read elsewhere; the bounds never change; every
  // round runs to its end.
  auto it = references_.find(counter);
  if (it == references_.end()) return 0;
  for (const Reference& r : it->second) {
    if (r.ref == step_write || r.ref == init_write) continue;
    const auto* cast = dyn_cast_or_null<ImplicitCastExpr>(r.parent);
    if (!cast || cast->getCastKind() != CK_LValueToRValue) return 0;
  }
  if (!stable_bound(first) || !stable_bound(last)) return 0;
  if (leaves_early(loop->getBody(), false)) return 0;
  return signature("for", first, op, last);
}

// The range a range-for walks, or 0.
std::uint64_t LoopRanges::consider_range_for(const CXXForRangeStmt* loop) {
  const VarDecl* element = loop->getLoopVariable();
  const Expr* container = loop->getRangeInit() ? loop->getRangeInit()->IgnoreParenImpCasts() : nullptr;
  if (!element || !container) return 0;
  // A local or parameter whose size nothing here changes, or an array of
  // fixed size (a member's too).
  bool stable = false;
  if (const VarDecl* v = referenced_var(container))
    stable = v->isLocalVarDeclOrParm() && size_never_changed(v);
  else if (const auto* me = dyn_cast<MemberExpr>(container))
    stable = fixed_size_type(me->getType());
  if (!stable || leaves_early(loop->getBody(), false)) return 0;
  return signature("each", container, "", nullptr);
}

LoopRanges::Position LoopRanges::counter(const VarDecl* v) const {
  auto it = v ? counters_.find(v->getCanonicalDecl()) : counters_.end();
  return it == counters_.end() ? Position{} : it->second;
}

const LoopRanges::Element* LoopRanges::element(const VarDecl* v) const {
  auto it = v ? elements_.find(v->getCanonicalDecl()) : elements_.end();
  return it == elements_.end() ? nullptr : &it->second;
}

std::uint64_t LoopRanges::range_of_loop(const Stmt* loop) const {
  auto it = loops_.find(loop);
  return it == loops_.end() ? 0 : it->second;
}

std::string LoopRanges::marker(Position position) {
  return "[r" + llvm::utohexstr(position.range) + "." + std::to_string(position.depth) + "]";
}

std::vector<std::uint64_t> LoopRanges::ranges_in(const std::string& key_id) {
  std::vector<std::uint64_t> out;
  llvm::StringRef rest(key_id);
  for (std::size_t at = rest.find("[r"); at != llvm::StringRef::npos; at = rest.find("[r")) {
    rest = rest.drop_front(at + 2);
    const std::size_t end = rest.find_first_of(".]");
    if (end == llvm::StringRef::npos) break;
    std::uint64_t range = 0;
    if (!rest.take_front(end).getAsInteger(16, range)) out.push_back(range);
    rest = rest.drop_front(end);
  }
  return out;
}

std::string LoopRanges::without_depths(const std::string& key_id) {
  std::string out;
  llvm::StringRef rest(key_id);
  for (std::size_t at = rest.find("[r"); at != llvm::StringRef::npos; at = rest.find("[r")) {
    const std::size_t dot = rest.find('.', at);
    const std::size_t end = rest.find(']', at);
    if (dot == llvm::StringRef::npos || end == llvm::StringRef::npos || dot > end) break;
    out += rest.take_front(dot).str();
    rest = rest.drop_front(end);
  }
  out += rest.str();
  return out;
}

}  // namespace xsc::lint
