// SARIF 2.1.0 report, for code-scanning dashboards and IDEs.
#include <nlohmann/json.hpp>

#include "checker/report/report.h"

namespace xsc {
namespace {

using nlohmann::json;

struct RuleDescription {
  FindingKind kind;
  const char* name;
  const char* short_text;
  const char* full_text;
};

constexpr RuleDescription kRules[] = {
    {FindingKind::kUnorderedFree, "UnorderedFree",
     "A buffer is freed before its allocation stream is ordered after a use on another stream.",
     "The allocator may hand the block to a later allocation on the allocation stream while a "
     "kernel, copy or collective on another stream still uses it. Record an event on the using "
     "stream after its last use and make the allocation stream wait on it before the free."},
    {FindingKind::kUseAfterFree, "UseAfterFree",
     "A stream uses a buffer after it was freed.",
     "Work was enqueued on a buffer whose free had already been issued; the memory may belong to "
     "another allocation by the time the work runs."},
    {FindingKind::kUseBeforeReady, "UseBeforeReady",
     "A stream uses a stream-ordered allocation before it is ordered after the allocation.",
     "A stream-ordered allocation is valid only on its allocation stream until another stream is "
     "ordered after it; the use may run before the memory is available."},
    {FindingKind::kReuseRace, "ReuseRace",
     "Memory is used again on a stream not ordered after an earlier buffer's use of it.",
     "The memory was freed after every use of the earlier buffer was ordered on its allocation "
     "stream, then handed out again and used on another stream that never waited for that "
     "stream: the two uses may run at the same time. Make the using stream wait first, or "
     "allocate the buffer under it after the wait."},
    {FindingKind::kWriteAfterRead, "WriteAfterRead",
     "A copy, memset or collective writes bytes another stream's use may still read.",
     "The write is not ordered after an earlier use of the same bytes on another stream (a "
     "kernel's pointer argument counts as the bytes at the pointer): the use may see the new "
     "data. Make the writing stream wait for the using stream first."},
};

std::size_t rule_index(FindingKind kind) {
  for (std::size_t i = 0; i < std::size(kRules); ++i)
    if (kRules[i].kind == kind) return i;
  return 0;
}

std::string artifact_uri(const std::string& file) {
  // Absolute paths become file:// URIs; relative ones stay relative to the
  // source root, as SARIF allows.
  if (!file.empty() && file.front() == '/') return "file://" + file;
  return file;
}

// A SARIF location for the frame that best locates `id`; null when the stack
// has nothing a location can be made of.
json location(const StackDepot& stacks, StackId id, const std::string& message) {
  std::vector<Frame> frames = stacks.frames(id);
  const std::size_t at = locating_frame(frames);
  if (at >= frames.size()) return nullptr;  // none, or only xstream-check's own
  const Frame& frame = frames[at];
  json loc = json::object();
  if (!frame.file.empty()) {
    json physical = {{"artifactLocation", {{"uri", artifact_uri(frame.file)}}}};
    if (frame.line != 0) physical["region"] = {{"startLine", frame.line}};
    loc["physicalLocation"] = physical;
  }
  if (!frame.function.empty())
    loc["logicalLocations"] = json::array({{{"name", frame.function}, {"kind", "function"}}});
  if (loc.empty()) return nullptr;
  if (!message.empty()) loc["message"] = {{"text", message}};
  return loc;
}

std::string result_message(const Finding& f, const NameTable& names) {
  std::string use = describe_use(f.use, names) + " on " + describe_stream(f.use.stream);
  switch (f.kind) {
    case FindingKind::kUnorderedFree:
      return "Free on " + describe_stream(f.free.stream) + " (" + std::string(free_kind_word(f.free.kind)) +
             ") is not ordered after the last use by " + use + ". Fix: " + fix_advice(f) + ".";
    case FindingKind::kUseAfterFree:
      return "Use by " + use + " after the buffer was freed on " + describe_stream(f.free.stream) +
             ". Fix: " + fix_advice(f) + ".";
    case FindingKind::kUseBeforeReady:
      if (f.has_earlier)
        return "Use by " + use + " is not ordered after the write by " +
               describe_use(f.earlier, names) + " on " + describe_stream(f.earlier.stream) +
               ". Fix: " + fix_advice(f) + ".";
      return "Use by " + use + " is not ordered after the allocation on " +
             describe_stream(f.alloc.stream) + ". Fix: " + fix_advice(f) + ".";
    case FindingKind::kWriteAfterRead:
      return "Write by " + use + " is not ordered after the use by " + describe_use(f.earlier, names) +
             " on " + describe_stream(f.earlier.stream) + ". Fix: " + fix_advice(f) + ".";
    case FindingKind::kReuseRace:
      return "Use by " + describe_use(f.reuse.use, names) + " on " +
             describe_stream(f.reuse.use.stream) +
             " is not ordered after the earlier use of this memory by " + use + ". Fix: " +
             fix_advice(f) + ".";
  }
  return "";
}

}  // namespace

void write_sarif_report(const std::vector<Finding>& findings, const ReportContext& ctx,
                        std::ostream& out) {
  const NameTable& names = *ctx.names;
  const StackDepot& stacks = *ctx.stacks;

  json rules = json::array();
  for (const RuleDescription& r : kRules) {
    rules.push_back({{"id", std::string(rule_id(r.kind))},
                     {"name", r.name},
                     {"shortDescription", {{"text", r.short_text}}},
                     {"fullDescription", {{"text", r.full_text}}},
                     {"defaultConfiguration", {{"level", "error"}}}});
  }

  json results = json::array();
  const std::vector<const Finding*> all = reported_findings(findings, ctx);
  for (const Finding* finding : all) {
    const Finding& f = *finding;
    // A latent free-before-wait outside strict is a note: this run never
    // used the memory again while the use could still run.
    const bool note = f.latent && !ctx.strict;
    json result;
    result["ruleId"] = std::string(rule_id(f.kind));
    result["ruleIndex"] = rule_index(f.kind);
    result["level"] = note ? "note" : "error";
    std::string message = result_message(f, names);
    if (f.latent)
      message += " This run never used the memory again while the use could still run "
                 "(a latent free-before-wait).";
    result["message"] = {{"text", message}};
    json primary = location(stacks, primary_stack(f), "");
    result["locations"] = primary.is_null() ? json::array() : json::array({primary});

    json related = json::array();
    auto add_related = [&](StackId id, const std::string& text) {
      json loc = location(stacks, id, text);
      if (loc.is_null()) return;
      loc["id"] = related.size();
      related.push_back(std::move(loc));
    };
    if (f.kind != FindingKind::kUnorderedFree && f.kind != FindingKind::kUseBeforeReady &&
        f.kind != FindingKind::kWriteAfterRead)
      add_related(f.free.stack, "free on " + describe_stream(f.free.stream));
    if (f.has_earlier)
      add_related(f.earlier.stack, std::string(f.kind != FindingKind::kUseBeforeReady ? "the earlier use: "
                                               : f.earlier_first_use ? "the new block's first use (its fill): "
                                                                     : "the write: ") +
                                       describe_use(f.earlier, names) + " on " +
                                       describe_stream(f.earlier.stream));
    if (f.kind == FindingKind::kUnorderedFree || f.kind == FindingKind::kReuseRace)
      add_related(f.use.stack, std::string(f.kind == FindingKind::kReuseRace ? "earlier use: " : "last use: ") +
                                   describe_use(f.use, names) + " on " + describe_stream(f.use.stream));
    add_related(f.alloc.stack, "allocation on " + describe_stream(f.alloc.stream));
    if (f.has_late_wait)
      add_related(f.late_wait.stack, "late wait on " + describe_stream(f.late_wait.stream) +
                                         ": move it before the free");
    if (f.has_reuse) {
      if (f.reuse.has_alloc)
        add_related(f.reuse.alloc.stack, "allocated again on " + describe_stream(f.reuse.alloc.stream));
      if (f.kind != FindingKind::kReuseRace)
        add_related(f.reuse.use.stack, "used again by " + describe_use(f.reuse.use, names) + " on " +
                                           describe_stream(f.reuse.use.stream) +
                                           " while the last use may still run");
    }
    if (!related.empty()) result["relatedLocations"] = related;
    // The timeline pictures (timeline=DIR), as attachments of the result.
    std::size_t index = results.size();
    if (index < ctx.timelines.size() && !ctx.timelines[index].empty()) {
      const std::string& base = ctx.timelines[index];
      result["attachments"] = json::array(
          {{{"description", {{"text", "timeline of the finding (SVG)"}}},
            {"artifactLocation", {{"uri", artifact_uri(base + ".svg")}}}},
           {{"description", {{"text", "timeline of the finding (Chrome trace-event JSON: Perfetto, chrome://tracing)"}}},
            {"artifactLocation", {{"uri", artifact_uri(base + ".json")}}}}});
    }
    result["partialFingerprints"] = {{"xstreamFingerprint/v1", fingerprint(f, names, stacks)}};
    result["occurrenceCount"] = f.count;
    result["properties"] = {{"pid", ctx.pid}, {"latent", f.latent}};
    if (ctx.rank >= 0) result["properties"]["rank"] = ctx.rank;
    // The direction of the finding's use, and of the earlier use it is not
    // ordered with: "read", "write" or "unknown" (a kernel argument the
    // kernel's signature does not mark const).
    result["properties"]["access"] = access_name(f.use.access);
    if (f.has_earlier) result["properties"]["earlierAccess"] = access_name(f.earlier.access);
    if (f.test != kNoName) result["properties"]["test"] = std::string(names.get(f.test));
    results.push_back(std::move(result));
  }

  json invocation = {{"executionSuccessful", true}};
  json notes = json::array();
  notes.push_back({{"level", "note"},
                   {"message", {{"text", std::to_string(findings.size()) + " finding(s) (" +
                                             std::to_string(ctx.suppressed) + " suppressed)" +
                                             latent_summary(ctx)}}}});
  if (ctx.advisory && ctx.parked.max_parked > 0) {
    json note = {{"level", "note"},
                 {"message",
                  {{"text", "record_stream parked up to " + std::to_string(ctx.parked.max_parked) +
                                " blocks (" + std::to_string(ctx.parked.peak_parked_bytes) +
                                " bytes) waiting for their streams' events; keep a reference and "
                                "make the allocation stream wait_event on the consumer's event "
                                "before dropping it (keepalive)"}}}};
    json site = location(stacks, ctx.parked.top_site, "");
    if (!site.is_null()) note["locations"] = json::array({site});
    notes.push_back(std::move(note));
  }
  if (ctx.missing_own_stream_uses)
    notes.push_back({{"level", "warning"},
                     {"descriptor", {{"id", "xstream-missing-own-stream-uses"}}},
                     {"message", {{"text", "xstream-check: " + own_stream_uses_notice(ctx) + "."}}}});
  for (const std::string& what : ctx.unchecked)
    notes.push_back({{"level", "note"},
                     {"descriptor", {{"id", "xstream-not-checked"}}},
                     {"message", {{"text", "xstream-check: not checked: " + what + "."}}}});
  invocation["toolExecutionNotifications"] = notes;

  json log = {
      {"version", "2.1.0"},
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
      {"runs", json::array({{{"tool",
                              {{"driver",
                                {{"name", "xstream-check"},
                                 {"version", kVersion},
                                 {"rules", rules}}}}},
                             {"invocations", json::array({invocation})},
                             {"results", results}}})}};
  if (ctx.missing_own_stream_uses) log["runs"][0]["properties"] = {{"ownStreamUses", false}};
  out << log.dump(2) << '\n';
}

}  // namespace xsc
