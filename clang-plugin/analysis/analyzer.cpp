#include "analysis/analyzer.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/nolint.h"
#include "analysis/op_builder.h"
#include "analysis/ops.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/DenseSet.h"

namespace xsc::lint {

using namespace clang;

namespace {

// At most this many uses are shown as notes under one warning.
constexpr std::size_t kMaxNotedUses = 3;

struct Describer {
  const FunctionOps& ops;

  const std::string& key(KeyId k) const {
    static const std::string unknown = "an unknown stream";
    return k < ops.keys.size() ? ops.keys[k].display : unknown;
  }
  // "stream 'name'", or a description such as "the legacy default stream".
  std::string stream(KeyId k) const {
    if (k < ops.keys.size() && (ops.keys[k].is_legacy || ops.keys[k].is_host)) return ops.keys[k].display;
    return "stream " + key(k);
  }
  // stream(k), told apart from stream(other) when the two read the same:
  // locals of the same name in two inlined helpers, each named with the
  // function it belongs to ("stream 'stream' of 'setup'").
  std::string stream_beside(KeyId k, KeyId other) const {
    std::string shown = stream(k);
    if (k == other || k >= ops.keys.size() || other >= ops.keys.size() || shown != stream(other))
      return shown;
    llvm::StringRef root = key_root(ops.key_ids[k]);
    auto it = ops.root_vars.find(root.str());
    if (it == ops.root_vars.end()) return shown;
    const auto* owner = dyn_cast_or_null<FunctionDecl>(it->second->getParentFunctionOrMethod());
    return owner ? shown + " of '" + owner->getNameAsString() + "'" : shown;
  }
  SourceLocation loc(SiteId s) const { return ops.sites[s].loc; }
  bool is_destructor(SiteId s) const { return ops.sites[s].is_destructor; }
};

// A finding at `at` about `buffer` and two streams: the freeing (or
// writing) one and the using one.
Finding finding_at(const Describer& d, llvm::StringRef rule, SiteId at, const std::string& function,
                   const std::string& buffer, KeyId first_stream, KeyId use_stream) {
  Finding f;
  f.rule = rule;
  f.loc = d.loc(at);
  f.function = function;
  f.buffer = buffer;
  f.free_stream = d.stream(first_stream);
  f.use_stream = d.stream(use_stream);
  return f;
}

std::vector<Finding> findings_from(const FunctionOps& ops, const DataflowResult& flow,
                                   const std::string& function) {
  Describer d{ops};
  std::map<SiteId, std::vector<const UnorderedFree*>> by_free;
  for (const UnorderedFree& uf : flow.unordered) by_free[uf.free_site].push_back(&uf);

  std::vector<Finding> out;
  for (const auto& [free_site, entries] : by_free) {
    std::vector<const UnorderedFree*> late, unordered;
    for (const UnorderedFree* uf : entries) (uf->has_late_wait ? late : unordered).push_back(uf);
    const UnorderedFree& first = *entries.front();
    const std::string& buf = d.key(first.buffer);
    const char* how = d.is_destructor(free_site) ? " by its destructor" : "";

    auto base = [&](llvm::StringRef rule, const UnorderedFree& uf) {
      return finding_at(d, rule, free_site, function, buf, uf.free_stream, uf.use_stream);
    };

    if (!late.empty()) {
      const UnorderedFree& uf = *late.front();
      Finding f = base(kRuleFreeBeforeWait, uf);
      f.message = buf + " is freed" + how + " on " + d.stream(uf.free_stream) + " before " +
                  d.stream(uf.free_stream) + " waits for its use on " + d.stream(uf.use_stream);
      llvm::DenseSet<SiteId> noted_waits;
      std::size_t shown = 0;
      for (const UnorderedFree* l : late) {
        if (shown == kMaxNotedUses) break;
        FindingNote use{d.loc(l->use_site), buf + " is used on " + d.stream(l->use_stream) +
                                                " here, and the wait orders " +
                                                d.stream(l->free_stream) + " after it"};
        if (noted_waits.insert(l->late_wait_site).second)
          f.notes.push_back({d.loc(l->late_wait_site), "move this wait before the free"});
        bool repeated = false;  // uses inlined from one call share its location
        for (const FindingNote& n : f.notes) repeated |= n.loc == use.loc && n.message == use.message;
        if (repeated) continue;
        f.notes.push_back(std::move(use));
        ++shown;
      }
      out.push_back(std::move(f));
    }
    if (!unordered.empty()) {
      const UnorderedFree& uf = *unordered.front();
      Finding f = base(kRuleUnorderedFree, uf);
      f.message = buf + " is freed" + how + " on " + d.stream(uf.free_stream) + " while " +
                  d.stream(uf.use_stream) + " may still be using it; nothing orders " +
                  d.stream(uf.free_stream) + " after that use";
      std::size_t shown = 0;
      for (const UnorderedFree* u : unordered) {
        if (shown == kMaxNotedUses) break;
        FindingNote note{d.loc(u->use_site),
                         buf + " is used on " + d.stream(u->use_stream) +
                             " here; record an event on " + d.stream(u->use_stream) +
                             " after this use and make " + d.stream(u->free_stream) +
                             " wait on it before the free"};
        // Uses inlined from one call of a helper or lambda share its
        // location: one note says it.
        bool repeated = false;
        for (const FindingNote& n : f.notes) repeated |= n.loc == note.loc && n.message == note.message;
        if (repeated) continue;
        f.notes.push_back(std::move(note));
        ++shown;
      }
      out.push_back(std::move(f));
    }
  }
  // How `later` (a stream, or the host) is ordered after `earlier`'s access.
  auto fix = [&](KeyId later_key, const std::string& earlier, const char* access, const std::string& later) {
    if (later_key == ops.graph.host)
      return "synchronize the host with " + earlier + " (cudaStreamSynchronize, or cudaEventSynchronize on an " +
             "event recorded after this " + access + ")";
    return "record an event on " + earlier + " after this " + access + " and make " + later + " wait on it";
  };
  // One warning per access, for the first earlier access it is not ordered
  // after; `word(finding, access, later stream, earlier stream)` words it.
  // The finding's identity names the writing stream first. The host's
  // accesses are many (a loop checking each element): one warning per
  // stream access it is not ordered after, at the first.
  auto each_first = [&](const std::vector<UnorderedAccess>& found, llvm::StringRef rule, bool later_writes,
                        auto&& word) {
    std::map<SiteId, const UnorderedAccess*> first;
    std::set<std::pair<KeyId, SiteId>> host_warned;  // (buffer, earlier site)
    for (const UnorderedAccess& a : found) first.try_emplace(a.site, &a);
    for (const auto& [site, a] : first) {
      if (a->stream == ops.graph.host && !host_warned.emplace(a->buffer, a->earlier_site).second) continue;
      const std::string later = d.stream_beside(a->stream, a->earlier_stream);
      const std::string earlier = d.stream_beside(a->earlier_stream, a->stream);
      const KeyId writing = later_writes ? a->stream : a->earlier_stream;
      const KeyId using_stream = later_writes ? a->earlier_stream : a->stream;
      Finding f = finding_at(d, rule, site, function, d.key(a->buffer), writing, using_stream);
      word(f, *a, later, earlier);
      out.push_back(std::move(f));
    }
  };
  each_first(flow.not_ready, kRuleUseBeforeReady, /*later_writes=*/false,
             [&](Finding& f, const UnorderedAccess& a, const std::string& use, const std::string& write) {
               f.message = f.buffer + " is used on " + use + " before its write on " + write +
                           " is ordered before this use; nothing makes " + use + " wait for " + write +
                           " after the write";
               f.notes.push_back({d.loc(a.earlier_site), f.buffer + " is written on " + write + " here; " +
                                                             fix(a.stream, write, "write", use) +
                                                             " before the use"});
             });
  each_first(flow.overwritten, kRuleWriteAfterRead, /*later_writes=*/true,
             [&](Finding& f, const UnorderedAccess& a, const std::string& write, const std::string& use) {
               f.message = f.buffer + " is written on " + write + " while " + use +
                           " may still be using it; nothing orders " + write + " after that use";
               f.notes.push_back({d.loc(a.earlier_site), f.buffer + " is used on " + use + " here; " +
                                                             fix(a.stream, use, "use", write) +
                                                             " before the write"});
             });
  return out;
}

class FunctionCollector : public RecursiveASTVisitor<FunctionCollector> {
 public:
  FunctionCollector(const SourceManager& sm, bool main_file_only)
      : sm_(sm), main_file_only_(main_file_only) {}

  bool shouldVisitTemplateInstantiations() const { return true; }

  bool TraverseDecl(Decl* d) {
    if (!d) return true;
    if (!isa<TranslationUnitDecl>(d) && skip_location(d->getLocation())) return true;
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

  std::vector<const FunctionDecl*> functions;

 private:
  bool skip_location(SourceLocation loc) const {
    if (loc.isInvalid()) return false;
    loc = sm_.getExpansionLoc(loc);
    if (sm_.isInSystemHeader(loc)) return true;
    return main_file_only_ && !sm_.isInMainFile(loc);
  }

  void add(const FunctionDecl* fd) {
    if (!fd || !fd->doesThisDeclarationHaveABody() || fd->isDependentContext()) return;
    if (fd->isInvalidDecl() || skip_location(fd->getLocation())) return;
    if (seen_.insert(fd).second) functions.push_back(fd);
  }

  const SourceManager& sm_;
  bool main_file_only_;
  llvm::DenseSet<const FunctionDecl*> seen_;
};

}  // namespace

Analyzer::Analyzer(ASTContext& ctx, LintConfig config)
    : ctx_(ctx), config_(std::move(config)), model_(std::make_unique<ApiModel>(config_)) {}

Analyzer::~Analyzer() = default;

std::vector<Finding> Analyzer::analyze_function(const FunctionDecl* fd) {
  const Stmt* body = fd ? fd->getBody() : nullptr;
  if (!body || fd->isDependentContext()) return {};
  if (!model_->body_may_find(body)) return {};

  CFG::BuildOptions options;
  options.AddImplicitDtors = true;
  options.AddTemporaryDtors = true;
  options.setAllAlwaysAdd();
  std::unique_ptr<CFG> cfg = CFG::buildCFG(fd, const_cast<Stmt*>(body), &ctx_, options);
  if (!cfg) return {};

  std::unique_ptr<FunctionOps> ops = build_function_ops(ctx_, *model_, *cfg, body, /*split_range_loops=*/true);
  for (KeyId k = 0; k < ops->keys.size(); ++k) {
    if (ops->keys[k].is_legacy) ops->graph.implicitly_ordered.push_back(k);
    if (ops->keys[k].is_host) ops->graph.host = k;
    if (ops->key_ids[k] == "legacy") ops->graph.legacy = k;
  }
  DataflowResult flow = run_stream_order_dataflow(ops->graph);
  if (flow.gave_up) return {};
  std::vector<Finding> findings = findings_from(*ops, flow, fd->getQualifiedNameAsString());
  const SourceManager& sm = ctx_.getSourceManager();
  std::stable_sort(findings.begin(), findings.end(), [&](const Finding& a, const Finding& b) {
    return sm.isBeforeInTranslationUnit(a.loc, b.loc);
  });
  return findings;
}

std::vector<const FunctionDecl*> Analyzer::functions_to_analyze(bool main_file_only) const {
  FunctionCollector collector(ctx_.getSourceManager(), main_file_only);
  collector.TraverseDecl(ctx_.getTranslationUnitDecl());
  return std::move(collector.functions);
}

std::vector<Finding> Analyzer::analyze_translation_unit(bool main_file_only) {
  std::vector<Finding> all;
  for (const FunctionDecl* fd : functions_to_analyze(main_file_only)) {
    std::vector<Finding> f = analyze_function(fd);
    all.insert(all.end(), std::make_move_iterator(f.begin()), std::make_move_iterator(f.end()));
  }
  return all;
}

bool emit_finding(DiagnosticsEngine& diags, const SourceManager& sm, const Finding& finding) {
  if (is_suppressed_by_nolint(sm, finding.loc, finding.rule)) return false;
  unsigned warning = diags.getCustomDiagID(DiagnosticsEngine::Warning, "%0 [%1]");
  unsigned note = diags.getCustomDiagID(DiagnosticsEngine::Note, "%0");
  diags.Report(finding.loc, warning) << finding.message << finding.rule;
  for (const FindingNote& n : finding.notes) diags.Report(n.loc, note) << n.message;
  return true;
}

}  // namespace xsc::lint
