#include "lint/sarif.h"

#include <map>

#include <nlohmann/json.hpp>

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/xxhash.h"

namespace xsc::lint {
namespace {

using json = nlohmann::ordered_json;

struct RuleInfo {
  const char* id;
  const char* name;
  const char* short_text;
  const char* full_text;
};

// Rule ids are stable: code scanning keys alerts by them.
constexpr RuleInfo kRules[] = {
    {"xstream-free-before-wait", "FreeBeforeWait",
     "Buffer freed before its allocation stream waits for another stream's use",
     "The buffer is freed on its stream before that stream waits on the event that follows the "
     "last use on another stream. Work allocated on the freeing stream in between can reuse the "
     "memory while the other stream still reads or writes it. Move the wait before the free."},
    {"xstream-unordered-free", "UnorderedFree",
     "Buffer freed while another stream may still use it",
     "The buffer is used by work on another stream and then freed on its stream with nothing "
     "ordering the freeing stream after that use. Record an event on the using stream after the "
     "last use and make the freeing stream wait on it before the free (or keep a reference and "
     "wait later, synchronize the host, or free on the using stream)."},
    {"xstream-use-before-ready", "UseBeforeReady",
     "Buffer used on a stream before another stream's write of it is ordered before the use",
     "The buffer is written by a copy, a memset or a kernel on one stream and then used by work on "
     "another stream, or read by the host (pinned memory), with nothing ordering the use after the "
     "write: the use may read the memory before the write lands. Record an event on the writing "
     "stream after the write and make the using stream wait on it before the use (or synchronize "
     "the host with the writing stream)."},
    {"xstream-write-after-read", "WriteAfterRead",
     "Buffer overwritten by a copy, memset or kernel while another stream may still use it",
     "A copy, a memset or a kernel on one stream, or the host (pinned memory), writes the buffer "
     "while work on another stream that used it may still be running, with nothing ordering the "
     "write after that use: the use may read the new contents, or its own writes may land after "
     "the write. Record an event on the using stream after the use and make the writing stream "
     "wait on it before the write (or synchronize the host with the using stream)."},
};

// Notification descriptors (tool.driver.notifications).
constexpr RuleInfo kNotifications[] = {
    {"xstream-compile-error", "CompileError", "Not analyzed: compile errors",
     "The function (or file) does not compile with the options given, so the stream-ordering "
     "check did not run on it; every other function of the file was analyzed. The message names "
     "the first error; the further locations are every error in it."},
};

std::string percent_encode(llvm::StringRef path) {
  std::string out;
  for (unsigned char c : path) {
    if (isalnum(c) || llvm::StringRef("/-_.~:").contains(static_cast<char>(c)))
      out += static_cast<char>(c);
    else
      out += "%" + llvm::utohexstr(c, /*LowerCase=*/false, /*Width=*/2);
  }
  return out;
}

json artifact_location(const std::string& file, const std::string& root) {
  json loc;
  llvm::StringRef f(file);
  if (!root.empty() && f.starts_with(root) && f.size() > root.size() && f[root.size()] == '/') {
    loc["uri"] = percent_encode(f.substr(root.size() + 1));
    loc["uriBaseId"] = "%SRCROOT%";
  } else {
    loc["uri"] = "file://" + percent_encode(f);
  }
  return loc;
}

json physical_location(const SarifLocation& l, const std::string& root) {
  json region;
  region["startLine"] = l.line;
  if (l.column) region["startColumn"] = l.column;
  return json{{"artifactLocation", artifact_location(l.file, root)}, {"region", region}};
}

std::string relative_to(const std::string& file, const std::string& root) {
  llvm::StringRef f(file);
  if (!root.empty() && f.starts_with(root + "/")) return f.substr(root.size() + 1).str();
  return file;
}

}  // namespace

std::string render_sarif(const std::vector<SarifResult>& results,
                         const std::vector<SarifNotification>& notifications, bool execution_successful,
                         const std::string& tool_version, const std::string& source_root) {
  json rules = json::array();
  std::map<std::string, size_t> rule_index;
  for (const RuleInfo& r : kRules) {
    rule_index[r.id] = rules.size();
    rules.push_back({{"id", r.id},
                     {"name", r.name},
                     {"shortDescription", {{"text", r.short_text}}},
                     {"fullDescription", {{"text", r.full_text}}},
                     {"defaultConfiguration", {{"level", "warning"}}},
                     {"properties", {{"tags", {"correctness", "cuda", "concurrency"}}}}});
  }

  json out_results = json::array();
  std::map<std::string, unsigned> occurrences;  // same identity twice: number them
  for (const SarifResult& r : results) {
    json result;
    result["ruleId"] = r.rule;
    if (auto it = rule_index.find(r.rule); it != rule_index.end()) result["ruleIndex"] = it->second;
    result["level"] = "warning";
    result["message"] = {{"text", r.message}};
    result["locations"] = json::array({{{"physicalLocation", physical_location(r.location, source_root)}}});
    if (!r.related.empty()) {
      json related = json::array();
      int id = 0;
      for (const SarifLocation& n : r.related)
        related.push_back({{"id", id++},
                           {"physicalLocation", physical_location(n, source_root)},
                           {"message", {{"text", n.message}}}});
      result["relatedLocations"] = related;
    }
    std::string identity =
        r.rule + "|" + relative_to(r.location.file, source_root) + "|" + r.identity;
    unsigned n = ++occurrences[identity];
    std::string hash = llvm::utohexstr(llvm::xxh3_64bits(llvm::StringRef(identity)), true, 16);
    result["partialFingerprints"] = {{"xstreamFindingHash/v1", hash + ":" + std::to_string(n)}};
    out_results.push_back(std::move(result));
  }

  json descriptors = json::array();
  std::map<std::string, size_t> descriptor_index;
  for (const RuleInfo& n : kNotifications) {
    descriptor_index[n.id] = descriptors.size();
    descriptors.push_back({{"id", n.id},
                           {"name", n.name},
                           {"shortDescription", {{"text", n.short_text}}},
                           {"fullDescription", {{"text", n.full_text}}}});
  }
  json out_notifications = json::array();
  for (const SarifNotification& n : notifications) {
    json notification;
    json descriptor = {{"id", n.id}};
    if (auto it = descriptor_index.find(n.id); it != descriptor_index.end())
      descriptor["index"] = it->second;
    notification["descriptor"] = descriptor;
    notification["level"] = n.level;
    notification["message"] = {{"text", n.message}};
    json locations = json::array();
    for (const SarifLocation& l : n.locations) {
      if (l.file.empty()) continue;
      json loc = {{"physicalLocation", physical_location(l, source_root)}};
      if (!l.message.empty()) loc["message"] = {{"text", l.message}};
      locations.push_back(loc);
    }
    if (!locations.empty()) notification["locations"] = locations;
    out_notifications.push_back(std::move(notification));
  }

  json run;
  run["tool"] = {{"driver",
                  {{"name", "xstream-lint"},
                   {"version", tool_version},
                   {"semanticVersion", tool_version},
                   {"rules", rules},
                   {"notifications", descriptors}}}};
  run["invocations"] = json::array({{{"executionSuccessful", execution_successful},
                                     {"toolExecutionNotifications", out_notifications}}});
  if (!source_root.empty())
    run["originalUriBaseIds"] = {{"%SRCROOT%", {{"uri", "file://" + percent_encode(source_root) + "/"}}}};
  run["results"] = out_results;

  json log;
  log["$schema"] = "https://json.schemastore.org/sarif-2.1.0.json";
  log["version"] = "2.1.0";
  log["runs"] = json::array({run});
  return log.dump(2) + "\n";
}

}  // namespace xsc::lint
