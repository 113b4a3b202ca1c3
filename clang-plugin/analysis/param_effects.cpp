#include "analysis/param_effects.h"

#include <algorithm>

#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/Stmt.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace clang;

namespace xsc::lint {
namespace {

// Which parameters a pointer or a memory location may come from: bit i for
// parameter i. Parameters past the 63rd are not followed.
using Roots = std::uint64_t;
constexpr unsigned kMaxFollowed = 63;
// A local pointer that was also given something other than a parameter
// (nullptr, shared memory, another array): what it points to is still
// taken to be each parameter it may hold.
constexpr Roots kElsewhere = Roots{1} << 63;

bool is_const_pointee(QualType t) {
  t = t.getNonReferenceType();
  if (const auto* pt = t->getAs<PointerType>()) return pt->getPointeeType().isConstQualified();
  return false;
}

// A parameter that passes memory without letting the callee write it.
bool read_only_param(QualType t) {
  if (t->isReferenceType()) return t.getNonReferenceType().isConstQualified();
  return is_const_pointee(t);
}

bool names_starting(const FunctionDecl* fd, std::initializer_list<llvm::StringRef> prefixes) {
  const IdentifierInfo* id = fd ? fd->getIdentifier() : nullptr;
  if (!id) return false;
  for (llvm::StringRef p : prefixes)
    if (id->getName().starts_with(p)) return true;
  return false;
}

// Device built-ins whose first argument is memory they write: atomics
// (atomicAdd, atomicCAS, ...; clang's and the toolkit's spellings), the
// cache-hinted stores (__stcg, __stcs, __stwb, __stwt) and the device-side
// memcpy and memset.
bool writes_through_first(const FunctionDecl* fd) {
  if (names_starting(fd, {"atomic", "__atomic", "__nv_atomic", "__hip_atomic", "__stcg", "__stcs", "__stwb",
                          "__stwt"}))
    return true;
  const IdentifierInfo* id = fd ? fd->getIdentifier() : nullptr;
  return id && (id->getName() == "memcpy" || id->getName() == "memset" || id->getName() == "memmove");
}

// System-scope atomics (atomicAdd_system, atomicCAS_system, ...): the
// memory is shared with the host while the kernel runs, on purpose.
bool system_scope_atomic(const FunctionDecl* fd) {
  const IdentifierInfo* id = fd ? fd->getIdentifier() : nullptr;
  return id && names_starting(fd, {"atomic", "__nv_atomic"}) && id->getName().ends_with("_system");
}

class BodyScan {
 public:
  BodyScan(const FunctionDecl* def, ParamEffects& model)
      : def_(def), model_(model), parents_(const_cast<Stmt*>(def->getBody())) {
    const unsigned n = def->getNumParams();
    effects_.assign(n, ParamEffect::kNone);
    for (unsigned i = 0; i < n && i < kMaxFollowed; ++i) {
      const ParmVarDecl* p = def->getParamDecl(i);
      const QualType t = p->getType();
      if (t->isPointerType())
        pointers_[p] = Roots{1} << i;
      else if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified())
        references_[p] = Roots{1} << i;
    }
  }

  std::vector<ParamEffect> run() {
    collect_locals();
    classify(def_->getBody());
    return std::move(effects_);
  }

  // After run(): the parameters the body reaches through a volatile lvalue
  // or a system-scope atomic (ParamEffects::shared_with_host).
  Roots shared() const { return shared_ & ~kElsewhere; }

 private:
  // --- which locals hold parameters' pointers -------------------------------

  // A pointer value's roots, from its form alone.
  Roots pointer_roots(const Expr* e) const {
    if (!e) return 0;
    e = e->IgnoreParens();
    if (const auto* cast = dyn_cast<CastExpr>(e)) {
      if (cast->getCastKind() == CK_ArrayToPointerDecay) return memory_roots(cast->getSubExpr());
      return pointer_roots(cast->getSubExpr());
    }
    if (const auto* ref = dyn_cast<DeclRefExpr>(e)) return lookup(pointers_, ref->getDecl());
    if (const auto* bo = dyn_cast<BinaryOperator>(e)) {
      if (bo->getOpcode() == BO_Comma) return pointer_roots(bo->getRHS());
      if (bo->isAssignmentOp()) return pointer_roots(bo->getRHS());
      if (bo->getType()->isPointerType()) return pointer_roots(bo->getLHS()) | pointer_roots(bo->getRHS());
      return 0;
    }
    if (const auto* co = dyn_cast<AbstractConditionalOperator>(e))
      return pointer_roots(co->getTrueExpr()) | pointer_roots(co->getFalseExpr());
    if (const auto* uo = dyn_cast<UnaryOperator>(e)) {
      if (uo->getOpcode() == UO_AddrOf) return memory_roots(uo->getSubExpr());
      if (uo->isIncrementDecrementOp()) return pointer_roots(uo->getSubExpr());
    }
    return 0;
  }

  // An lvalue's roots: memory a parameter points to.
  Roots memory_roots(const Expr* e) const {
    if (!e) return 0;
    e = e->IgnoreParens();
    if (const auto* cast = dyn_cast<CastExpr>(e))
      return cast->getCastKind() == CK_LValueToRValue ? 0 : memory_roots(cast->getSubExpr());
    if (const auto* sub = dyn_cast<ArraySubscriptExpr>(e)) return pointer_roots(sub->getBase());
    if (const auto* uo = dyn_cast<UnaryOperator>(e))
      return uo->getOpcode() == UO_Deref ? pointer_roots(uo->getSubExpr()) : 0;
    if (const auto* me = dyn_cast<MemberExpr>(e))
      return me->isArrow() ? pointer_roots(me->getBase()) : memory_roots(me->getBase());
    if (const auto* ref = dyn_cast<DeclRefExpr>(e)) return lookup(references_, ref->getDecl());
    return 0;
  }

  static Roots lookup(const llvm::DenseMap<const ValueDecl*, Roots>& in, const ValueDecl* d) {
    auto it = in.find(d);
    return it == in.end() ? 0 : it->second;
  }

  // Local pointers and references given a parameter's pointer or memory,
  // to a fixpoint (a loop's `q = q + 1` after `T* q = p`).
  void collect_locals() {
    for (int round = 0; round < 8; ++round) {
      bool changed = false;
      gather(def_->getBody(), &changed);
      if (!changed) return;
    }
  }

  void gather(const Stmt* s, bool* changed) {
    if (!s || isa<LambdaExpr>(s)) return;
    if (const auto* ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl* d : ds->decls())
        if (const auto* vd = dyn_cast<VarDecl>(d); vd && vd->hasLocalStorage())
          give(vd, vd->getInit(), changed);
    } else if (const auto* bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp()) {
      if (const auto* ref = dyn_cast<DeclRefExpr>(bo->getLHS()->IgnoreParens()))
        if (const auto* vd = dyn_cast<VarDecl>(ref->getDecl()); vd && vd->hasLocalStorage()) {
          // `p += offset` moves a pointer; `i += step` adds the step's terms to `i`'s.
          if (bo->isCompoundAssignmentOp() && vd->getType()->isPointerType()) {
            if (!offset_locals_.contains(vd) && parameter_offset(bo->getRHS())) {
              offset_locals_.insert(vd);
              *changed = true;
            }
          } else {
            give(vd, bo->getRHS(), changed);
          }
        }
    }
    for (const Stmt* child : s->children()) gather(child, changed);
  }

  void give(const VarDecl* vd, const Expr* value, bool* changed) {
    const QualType t = vd->getType();
    if (t->isIntegralOrEnumerationType()) {
      if (value && definitions_[vd].insert(value).second) *changed = true;
      return;
    }
    if (t->isPointerType() && value && !offset_locals_.contains(vd) && offset_pointer_value(value)) {
      offset_locals_.insert(vd);
      *changed = true;
    }
    llvm::DenseMap<const ValueDecl*, Roots>* into = nullptr;
    Roots roots = 0;
    if (t->isPointerType()) {
      into = &pointers_;
      roots = value ? pointer_roots(value) : 0;
    } else if (t->isReferenceType() && !t.getNonReferenceType().isConstQualified()) {
      into = &references_;
      roots = value ? memory_roots(value) : 0;
    } else {
      return;
    }
    if (roots == 0) roots = kElsewhere;
    Roots& have = (*into)[vd];
    if ((have | roots) != have) {
      have |= roots;
      *changed = true;
    }
  }

  // --- offsets a scalar parameter picks ---------------------------------------

  // Whether the integer `e` adds a term that only scalar parameters make:
  // `offset + i`, `chunk * size + threadIdx.x`, a loop index started at a
  // parameter. A term that also depends on the thread's index (`y * width`
  // with `y` from blockIdx and threadIdx) covers the threads' range, not
  // an offset.
  bool parameter_offset(const Expr* e) const {
    llvm::SmallPtrSet<const VarDecl*, 8> seen;
    std::vector<const Expr*> terms;
    additive_terms(e, seen, terms);
    for (const Expr* term : terms) {
      llvm::SmallPtrSet<const VarDecl*, 8> visited;
      bool param = false, thread = false;
      mentions(term, visited, param, thread);
      if (param && !thread) return true;
    }
    return false;
  }

  void additive_terms(const Expr* e, llvm::SmallPtrSet<const VarDecl*, 8>& seen,
                      std::vector<const Expr*>& out) const {
    e = e->IgnoreParenImpCasts();
    if (const auto* bo = dyn_cast<BinaryOperator>(e); bo && (bo->getOpcode() == BO_Add || bo->getOpcode() == BO_Sub)) {
      additive_terms(bo->getLHS(), seen, out);
      additive_terms(bo->getRHS(), seen, out);
      return;
    }
    if (const auto* ref = dyn_cast<DeclRefExpr>(e))
      if (const auto* vd = dyn_cast<VarDecl>(ref->getDecl()); vd && definitions_.count(vd)) {
        if (seen.insert(vd).second)
          for (const Expr* def : definitions_.find(vd)->second) additive_terms(def, seen, out);
        return;
      }
    out.push_back(e);
  }

  void mentions(const Stmt* s, llvm::SmallPtrSet<const VarDecl*, 8>& visited, bool& param, bool& thread) const {
    if (!s) return;
    if (isa<CallExpr>(s)) thread = true;  // a rank or an index from a function: not a parameter's alone
    if (const auto* ref = dyn_cast<DeclRefExpr>(s)) {
      if (const auto* p = dyn_cast<ParmVarDecl>(ref->getDecl());
          p && p->getDeclContext() == def_ && p->getType()->isIntegralOrEnumerationType())
        param = true;
      if (const auto* vd = dyn_cast<VarDecl>(ref->getDecl())) {
        // threadIdx, blockIdx, blockDim, gridDim
        if (!vd->hasLocalStorage() && vd->getIdentifier() &&
            (vd->getName().ends_with("Idx") || vd->getName().ends_with("Dim")))
          thread = true;
        auto defs = definitions_.find(vd);
        if (defs != definitions_.end() && visited.insert(vd).second)
          for (const Expr* def : defs->second) mentions(def, visited, param, thread);
      }
    }
    for (const Stmt* child : s->children()) mentions(child, visited, param, thread);
  }

  // A pointer value at an offset a scalar parameter picks: `p + offset`,
  // `&p[offset]`, or a local pointer set so.
  bool offset_pointer_value(const Expr* e) const {
    e = e->IgnoreParenCasts();
    if (const auto* bo = dyn_cast<BinaryOperator>(e); bo && bo->getType()->isPointerType()) {
      const Expr* pointer = bo->getLHS()->getType()->isPointerType() ? bo->getLHS() : bo->getRHS();
      const Expr* offset = pointer == bo->getLHS() ? bo->getRHS() : bo->getLHS();
      return parameter_offset(offset) || offset_pointer_value(pointer);
    }
    if (const auto* uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_AddrOf)
      if (const auto* sub = dyn_cast<ArraySubscriptExpr>(uo->getSubExpr()->IgnoreParens()))
        return parameter_offset(sub->getIdx()) || offset_pointer_value(sub->getBase());
    if (const auto* ref = dyn_cast<DeclRefExpr>(e)) return offset_locals_.contains(ref->getDecl());
    return false;
  }

  // --- what each mention of one does ----------------------------------------

  void classify(const Stmt* s) {
    if (!s) return;
    if (const auto* le = dyn_cast<LambdaExpr>(s)) {
      // A lambda's body is not followed: what it captures is unknown.
      for (const Expr* init : le->capture_inits()) mark(init ? held_roots(init) : 0, ParamEffect::kUnknown);
      return;
    }
    if (const auto* ref = dyn_cast<DeclRefExpr>(s)) {
      offset_ = offset_locals_.contains(ref->getDecl());
      if (Roots r = lookup(pointers_, ref->getDecl()) & ~kElsewhere) follow_pointer(ref, r);
      if (Roots r = lookup(references_, ref->getDecl()) & ~kElsewhere) follow_memory(ref, r);
      return;
    }
    if (const auto* as = dyn_cast<GCCAsmStmt>(s)) {
      // Inline assembly may store through any operand.
      for (const Stmt* operand : as->children()) mark(held_roots(operand), ParamEffect::kUnknown);
    }
    for (const Stmt* child : s->children()) classify(child);
  }

  Roots held_roots(const Stmt* s) const {
    if (const auto* e = dyn_cast_or_null<Expr>(s)) return (pointer_roots(e) | memory_roots(e)) & ~kElsewhere;
    return 0;
  }

  void mark(Roots roots, ParamEffect effect) {
    if (effect == ParamEffect::kWrite && offset_) effect = ParamEffect::kWritePart;
    roots &= ~kElsewhere;
    for (unsigned i = 0; roots != 0 && i < effects_.size(); ++i, roots >>= 1) {
      if (!(roots & 1)) continue;
      effects_[i] = std::max(effects_[i], effect);
    }
  }

  // What consumes `at`, past parentheses (`at` becomes the outermost of
  // them); null at the top of the body.
  const Stmt* consumer(const Stmt*& at) const {
    for (;;) {
      const Stmt* up = parents_.getParent(const_cast<Stmt*>(at));
      if (!up || !isa<ParenExpr>(up)) return up;
      at = up;
    }
  }

  // `at` is a pointer value that may point into the roots' memory: walk up
  // to what consumes it.
  void follow_pointer(const Stmt* at, Roots roots) {
    for (int steps = 0; steps < 64; ++steps) {
      const Stmt* up = consumer(at);
      if (!up) return;
      if (const auto* cast = dyn_cast<CastExpr>(up)) {
        const QualType to = cast->getType();
        if (to->isPointerType() || cast->getCastKind() == CK_LValueToRValue || cast->getCastKind() == CK_NoOp) {
          at = up;
          continue;
        }
        if (to->isBooleanType() || cast->getCastKind() == CK_ToVoid) return;  // `if (p)`, `(void)p`
        return mark(roots, ParamEffect::kUnknown);  // to an integer: not followed
      }
      if (const auto* bo = dyn_cast<BinaryOperator>(up)) {
        if (bo->isComparisonOp() || bo->isLogicalOp()) return;
        if (bo->getOpcode() == BO_Comma) {
          if (bo->getLHS() == at) return;
          at = up;
          continue;
        }
        if (bo->isAssignmentOp()) {
          if (bo->getLHS() == at) return;  // the pointer itself changes
          // Given to a local pointer: followed through it (collect_locals).
          if (assigns_local(bo->getLHS())) return;
          return mark(roots, ParamEffect::kUnknown);  // stored elsewhere
        }
        if (bo->getType()->isPointerType()) {
          offset_ |= parameter_offset(bo->getLHS() == at ? bo->getRHS() : bo->getLHS());
          at = up;
          continue;
        }
        return;  // `p - q`: a distance
      }
      if (const auto* co = dyn_cast<AbstractConditionalOperator>(up)) {
        if (co->getCond() == at) return;
        at = up;
        continue;
      }
      if (const auto* uo = dyn_cast<UnaryOperator>(up)) {
        if (uo->isIncrementDecrementOp() || uo->getOpcode() == UO_LNot) return;
        if (uo->getOpcode() == UO_Deref) return follow_memory(up, roots);
        return mark(roots, ParamEffect::kUnknown);
      }
      if (const auto* sub = dyn_cast<ArraySubscriptExpr>(up)) {
        if (sub->getBase() != at) return;  // used as an index
        offset_ |= parameter_offset(sub->getIdx());
        return follow_memory(up, roots);
      }
      if (const auto* me = dyn_cast<MemberExpr>(up)) {
        if (!me->isArrow()) return mark(roots, ParamEffect::kUnknown);
        if (isa<CXXMethodDecl>(me->getMemberDecl())) return follow_method(me, roots);
        return follow_memory(up, roots);
      }
      if (const auto* call = dyn_cast<CallExpr>(up)) return follow_argument(call, at, roots);
      if (const auto* ctor = dyn_cast<CXXConstructExpr>(up)) return follow_construct(ctor, at, roots);
      if (const auto* ds = dyn_cast<DeclStmt>(up)) return follow_init(ds, at, roots, /*memory=*/false);
      if (isa<IfStmt>(up) || isa<WhileStmt>(up) || isa<ForStmt>(up) || isa<DoStmt>(up)) return;
      if (isa<UnaryExprOrTypeTraitExpr>(up) || isa<CompoundStmt>(up)) return;  // sizeof(p); `p;`
      return mark(roots, ParamEffect::kUnknown);  // returned, aggregated, captured
    }
    mark(roots, ParamEffect::kUnknown);
  }

  // `at` is an lvalue in the roots' memory: walk up to what it does there.
  void follow_memory(const Stmt* at, Roots roots) {
    if (const auto* e = dyn_cast<Expr>(at); e && e->getType().isVolatileQualified()) shared_ |= roots;
    for (int steps = 0; steps < 64; ++steps) {
      const Stmt* up = consumer(at);
      if (!up) return;
      if (const auto* cast = dyn_cast<CastExpr>(up)) {
        switch (cast->getCastKind()) {
          case CK_LValueToRValue:
            return mark(roots, ParamEffect::kRead);
          case CK_ArrayToPointerDecay:
            return follow_pointer(up, roots);
          case CK_NoOp:
          case CK_DerivedToBase:
          case CK_UncheckedDerivedToBase:
          case CK_LValueBitCast:
            at = up;
            continue;
          default:
            if (cast->isGLValue()) {
              at = up;
              continue;
            }
            return mark(roots, ParamEffect::kRead);  // converted to a value
        }
      }
      if (const auto* me = dyn_cast<MemberExpr>(up)) {
        if (isa<CXXMethodDecl>(me->getMemberDecl())) return follow_method(me, roots);
        at = up;  // a field of it
        continue;
      }
      if (const auto* sub = dyn_cast<ArraySubscriptExpr>(up)) {
        if (sub->getBase() != at) return mark(roots, ParamEffect::kRead);  // used as an index
        offset_ |= parameter_offset(sub->getIdx());
        at = up;
        continue;
      }
      if (const auto* bo = dyn_cast<BinaryOperator>(up)) {
        if (bo->isAssignmentOp() && bo->getLHS() == at) return mark(roots, ParamEffect::kWrite);
        if (bo->getOpcode() == BO_Comma && bo->getRHS() == at) {
          at = up;
          continue;
        }
        return mark(roots, ParamEffect::kRead);
      }
      if (const auto* uo = dyn_cast<UnaryOperator>(up)) {
        if (uo->isIncrementDecrementOp()) return mark(roots, ParamEffect::kWrite);
        if (uo->getOpcode() == UO_AddrOf) return follow_pointer(up, roots);
        return mark(roots, ParamEffect::kRead);
      }
      if (const auto* co = dyn_cast<AbstractConditionalOperator>(up)) {
        if (co->getCond() == at || !co->isGLValue()) return mark(roots, ParamEffect::kRead);
        at = up;
        continue;
      }
      if (const auto* call = dyn_cast<CallExpr>(up)) return follow_argument(call, at, roots);
      if (const auto* ctor = dyn_cast<CXXConstructExpr>(up)) return follow_construct(ctor, at, roots);
      if (const auto* ds = dyn_cast<DeclStmt>(up)) return follow_init(ds, at, roots, /*memory=*/true);
      if (isa<UnaryExprOrTypeTraitExpr>(up) || isa<CompoundStmt>(up)) return;
      return mark(roots, ParamEffect::kUnknown);
    }
    mark(roots, ParamEffect::kUnknown);
  }

  static bool assigns_local(const Expr* lhs) {
    const auto* ref = dyn_cast<DeclRefExpr>(lhs->IgnoreParens());
    const auto* vd = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
    return vd && vd->hasLocalStorage() && vd->getType()->isPointerType();
  }

  // `T* q = p;` or `T& r = p[i];` follow through the local; a value copy
  // (`T v = p[i];`, `uintptr_t a = (uintptr_t)p;` handled by the cast) reads.
  void follow_init(const DeclStmt* ds, const Stmt* at, Roots roots, bool memory) {
    for (const Decl* d : ds->decls()) {
      const auto* vd = dyn_cast<VarDecl>(d);
      if (!vd || vd->getInit() != at) continue;
      const QualType t = vd->getType();
      if (!vd->hasLocalStorage()) return mark(roots, ParamEffect::kUnknown);
      if (!memory && t->isPointerType()) return;
      if (memory && t->isReferenceType() && !t.getNonReferenceType().isConstQualified()) return;
      if (memory && !t->isReferenceType()) return mark(roots, ParamEffect::kRead);  // a copy of the value
      if (memory && t.getNonReferenceType().isConstQualified()) return mark(roots, ParamEffect::kRead);
      return mark(roots, ParamEffect::kUnknown);
    }
  }

  // `p->method()`, `p[i].method()`: a const method reads.
  void follow_method(const MemberExpr* me, Roots roots) {
    const auto* md = cast<CXXMethodDecl>(me->getMemberDecl());
    mark(roots, md->isConst() || md->isStatic() ? ParamEffect::kRead : ParamEffect::kUnknown);
  }

  void follow_construct(const CXXConstructExpr* ctor, const Stmt* at, Roots roots) {
    const CXXConstructorDecl* cd = ctor->getConstructor();
    for (unsigned i = 0; i < ctor->getNumArgs(); ++i) {
      if (ctor->getArg(i) != at) continue;
      if (cd && i < cd->getNumParams() && read_only_param(cd->getParamDecl(i)->getType()))
        return mark(roots, ParamEffect::kRead);
      if (cd && cd->isCopyOrMoveConstructor()) return mark(roots, ParamEffect::kRead);  // a copy
      return mark(roots, ParamEffect::kUnknown);
    }
    mark(roots, ParamEffect::kUnknown);
  }

  void follow_argument(const CallExpr* call, const Stmt* at, Roots roots) {
    const FunctionDecl* callee = call->getDirectCallee();
    if (call->getCallee() == at) return mark(roots, ParamEffect::kUnknown);  // a pointer called
    unsigned arg = 0;
    while (arg < call->getNumArgs() && call->getArg(arg) != at) ++arg;
    if (arg == call->getNumArgs()) return mark(roots, ParamEffect::kUnknown);
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call)) {
      if (arg == 0 && (op->isAssignmentOp() || op->getOperator() == OO_PlusPlus ||
                       op->getOperator() == OO_MinusMinus))
        return mark(roots, ParamEffect::kWrite);
      if (const auto* md = dyn_cast_or_null<CXXMethodDecl>(callee); md && !md->isStatic()) {
        if (arg == 0) return mark(roots, md->isConst() ? ParamEffect::kRead : ParamEffect::kUnknown);
        --arg;  // the object is the operator's first argument
      }
    }
    if (system_scope_atomic(callee) || model_.shared_with_host(callee, arg)) shared_ |= roots;
    mark(roots, model_.effect_of_argument(callee, arg));
  }

  const FunctionDecl* def_;
  ParamEffects& model_;
  ParentMap parents_;
  llvm::DenseMap<const ValueDecl*, Roots> pointers_;    // parameters and local pointers
  llvm::DenseMap<const ValueDecl*, Roots> references_;  // reference parameters and locals
  std::vector<ParamEffect> effects_;
  // Partial writes (ParamEffect::kWritePart): each integer local's values
  // (its initializer, what it is assigned, what is added to it), the local
  // pointers set at a parameter's offset, and whether the walk under way
  // passed an offset a scalar parameter picks.
  llvm::DenseMap<const VarDecl*, llvm::SmallPtrSet<const Expr*, 2>> definitions_;
  llvm::SmallPtrSet<const ValueDecl*, 4> offset_locals_;
  bool offset_ = false;
  Roots shared_ = 0;
};

}  // namespace

const std::vector<ParamEffect>& ParamEffects::effects_of(const FunctionDecl* fd) {
  static const std::vector<ParamEffect> kNone;
  const FunctionDecl* def = nullptr;
  if (!fd || !fd->hasBody(def) || !def || def->isDependentContext()) return kNone;
  auto [it, fresh] = cache_.try_emplace(def, def->getNumParams(), ParamEffect::kUnknown);
  std::vector<ParamEffect>& slot = it->second;  // the scan may rehash: iterators go, references stay
  if (fresh) {
    BodyScan scan(def, *this);
    slot = scan.run();
    if (Roots shared = scan.shared()) shared_[def] = shared;
  }
  return slot;
}

bool ParamEffects::shared_with_host(const FunctionDecl* fd, unsigned arg) {
  const FunctionDecl* def = nullptr;
  if (!fd || !fd->hasBody(def) || !def || arg >= 63) return false;
  effects_of(def);
  auto it = shared_.find(def);
  return it != shared_.end() && (it->second >> arg & 1);
}

ParamEffect ParamEffects::effect_of_argument(const FunctionDecl* callee, unsigned arg) {
  if (!callee) return ParamEffect::kUnknown;
  if (writes_through_first(callee)) return arg == 0 ? ParamEffect::kWrite : ParamEffect::kRead;
  const std::vector<ParamEffect>& body = effects_of(callee);
  if (arg < body.size()) return body[arg];
  if (arg >= callee->getNumParams()) return ParamEffect::kUnknown;  // variadic
  return read_only_param(callee->getParamDecl(arg)->getType()) ? ParamEffect::kRead : ParamEffect::kUnknown;
}

bool ParamEffects::writes_some_param(const FunctionDecl* kernel) {
  for (ParamEffect e : effects_of(kernel))
    if (is_write(e)) return true;
  return false;
}

}  // namespace xsc::lint
