// JSON Lines report: one object per finding, then one summary object.
#include <nlohmann/json.hpp>

#include "checker/report/report.h"

namespace xsc {
namespace {

using nlohmann::json;

std::string_view kind_name(AllocKind kind) {
  switch (kind) {
    case AllocKind::kStreamOrdered: return "stream-ordered";
    case AllocKind::kCachingAllocator: return "caching-allocator";
    case AllocKind::kSynchronous: return "synchronous";
    case AllocKind::kPinnedHost: return "pinned-host";
  }
  return "unknown";
}

std::string_view kind_name(FreeKind kind) {
  switch (kind) {
    case FreeKind::kStreamOrdered: return "stream-ordered";
    case FreeKind::kCachingAllocator: return "caching-allocator";
    case FreeKind::kSynchronous: return "synchronous";
    case FreeKind::kPinnedHost: return "pinned-host";
  }
  return "unknown";
}

std::string_view what_name(UseWhat what) {
  switch (what) {
    case UseWhat::kKernel: return "kernel";
    case UseWhat::kMemcpy: return "memcpy";
    case UseWhat::kMemset: return "memset";
    case UseWhat::kCollective: return "collective";
    case UseWhat::kAnnotated: return "annotated";
    case UseWhat::kHostAccess: return "host-access";
    case UseWhat::kOperator: return "operator";
  }
  return "unknown";
}

json stack_json(const StackDepot& stacks, StackId id) {
  json frames = json::array();
  for (const Frame& f : stacks.frames(id)) {
    frames.push_back({{"function", f.function},
                      {"file", f.file},
                      {"line", f.line},
                      {"module", f.module},
                      {"pc", f.pc}});
  }
  return frames;
}

json use_json(const UseInfo& u, const NameTable& names, const StackDepot& stacks) {
  json j = {{"addr", u.addr},
          {"size", u.size},
          {"stream", u.stream},
          {"what", what_name(u.what)},
          {"name", names.get(u.name)},
          {"access", access_name(u.access)},
          {"graph", u.graph},
          {"thread", u.thread},
          {"stack", stack_json(stacks, u.stack)}};
  // Copies only, and only when set: a synchronous call, a pageable host side.
  if (u.synchronous) j["synchronous"] = true;
  if (u.pageable) j["pageable"] = true;
  return j;
}

}  // namespace

void write_json_report(const std::vector<Finding>& findings, const ReportContext& ctx,
                       std::ostream& out) {
  const NameTable& names = *ctx.names;
  const StackDepot& stacks = *ctx.stacks;
  const std::vector<const Finding*> all = reported_findings(findings, ctx);
  for (const Finding* finding : all) {
    const Finding& f = *finding;
    json j;
    j["kind"] = std::string(to_string(f.kind));
    j["rule"] = std::string(rule_id(f.kind));
    // A latent free-before-wait outside strict is a note, not a finding.
    j["level"] = f.latent && !ctx.strict ? "note" : "error";
    j["latent"] = f.latent;
    j["count"] = f.count;
    j["pid"] = ctx.pid;
    if (ctx.rank >= 0) j["rank"] = ctx.rank;
    // Finding::test says which test: the free's, or the use's without one.
    if (f.test != kNoName) {
      j["test"] = std::string(names.get(f.test));
    } else {
      j["test"] = nullptr;
    }
    j["fingerprint"] = fingerprint(f, names, stacks);
    j["site"] = site_text(stacks.frames(primary_stack(f)));
    j["alloc"] = {{"addr", f.alloc.addr},
                  {"size", f.alloc.size},
                  {"stream", f.alloc.stream},
                  {"kind", kind_name(f.alloc.kind)},
                  {"thread", f.alloc.thread},
                  {"stack", stack_json(stacks, f.alloc.stack)}};
    if (f.kind == FindingKind::kUseBeforeReady || f.kind == FindingKind::kWriteAfterRead) {
      j["free"] = nullptr;
    } else {
      j["free"] = {{"addr", f.free.addr},
                   {"stream", f.free.stream},
                   {"kind", kind_name(f.free.kind)},
                   {"deferred", f.free.deferred},
                   {"thread", f.free.thread},
                   {"stack", stack_json(stacks, f.free.stack)}};
    }
    j["use"] = use_json(f.use, names, stacks);
    if (f.has_late_wait) {
      j["late_wait"] = {{"stream", f.late_wait.stream},
                        {"event", f.late_wait.event},
                        {"thread", f.late_wait.thread},
                        {"stack", stack_json(stacks, f.late_wait.stack)}};
    } else {
      j["late_wait"] = nullptr;
    }
    if (f.has_earlier) {
      j["earlier"] = use_json(f.earlier, names, stacks);
      // use before ready: the earlier use is a new block's first use on its
      // allocation stream, taken as the write that fills it.
      j["earlier"]["first_use"] = f.earlier_first_use;
    } else {
      j["earlier"] = nullptr;
    }
    if (f.has_reuse) {
      json reuse;
      if (f.reuse.has_alloc) {
        reuse["alloc"] = {{"addr", f.reuse.alloc.addr},
                          {"size", f.reuse.alloc.size},
                          {"stream", f.reuse.alloc.stream},
                          {"kind", kind_name(f.reuse.alloc.kind)},
                          {"thread", f.reuse.alloc.thread},
                          {"stack", stack_json(stacks, f.reuse.alloc.stack)}};
      } else {
        reuse["alloc"] = nullptr;
      }
      reuse["use"] = use_json(f.reuse.use, names, stacks);
      j["reuse"] = reuse;
    } else {
      j["reuse"] = nullptr;
    }
    j["fix"] = fix_advice(f);
    out << j.dump() << '\n';
  }
  json summary = {{"findings", findings.size()},
                  {"suppressed", ctx.suppressed},
                  {"latent", latent_sites(ctx)},
                  {"pid", ctx.pid}};
  if (ctx.rank >= 0) summary["rank"] = ctx.rank;
  // Only for a replayed trace that may lack own-stream uses: a current one
  // adds nothing.
  if (ctx.missing_own_stream_uses) {
    summary["own_stream_uses"] = false;
    summary["notice"] = own_stream_uses_notice(ctx);
  }
  if (!ctx.unchecked.empty()) summary["unchecked"] = ctx.unchecked;
  const ParkedBlockStats& p = ctx.parked;
  summary["parked"] = {{"deferred_frees", p.deferred_frees},
                       {"max_parked", p.max_parked},
                       {"peak_parked_bytes", p.peak_parked_bytes},
                       {"top_site_count", p.top_site_count},
                       {"top_site", stack_json(stacks, p.top_site)}};
  out << json{{"summary", summary}}.dump() << '\n';
}

}  // namespace xsc
