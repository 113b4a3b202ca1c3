// xstream-check merge: fold per-process JSON reports (one per rank under a
// launcher, one per pytest-xdist worker) into one summary. A finding is
// identified across processes by its fingerprint, which leaves out
// addresses, pids and stream handles, and by the test it is attributed to:
// the same bug in two tests is two findings, listed under each test.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <regex>

#include "commands.h"

namespace xsc::cli {
namespace {

using nlohmann::json;

struct Origin {
  long long rank = -1;
  long long pid = 0;
  std::uint64_t count = 0;
};

struct MergedFinding {
  std::string test;  // "" when attributed to none
  std::string kind;
  std::string site;
  std::string fix;
  std::uint64_t total = 0;
  std::vector<Origin> origins;
};

// The rank from a log_path file name, PREFIX.rank<R>.<pid>, for reports
// whose objects do not carry one.
long long rank_from_name(const std::string& path) {
  static const std::regex pattern(R"(\.rank([0-9]+)\.[0-9]+$)");
  std::smatch m;
  if (std::regex_search(path, m, pattern)) return std::stoll(m[1].str());
  return -1;
}

std::string origin_text(const Origin& o) {
  std::string text = o.rank >= 0 ? "rank " + std::to_string(o.rank) + " (pid " + std::to_string(o.pid) + ")"
                                  : "pid " + std::to_string(o.pid);
  if (o.count > 1) text += " x" + std::to_string(o.count);
  return text;
}

}  // namespace

int merge_command(const std::vector<std::string>& args) {
  if (args.empty()) return usage_error("merge needs at least one JSON report (xstream-check merge REPORT.json...)");
  std::map<std::string, MergedFinding> by_key;  // fingerprint and test
  std::vector<std::string> order;  // keys in order of first sight
  std::uint64_t suppressed = 0;
  std::set<std::string> latent;  // fingerprints of latent free-before-wait
  // Reports whose summary says "own_stream_uses":false: replays of traces
  // whose runtime left own-stream uses of caching blocks out.
  std::size_t reports_missing_uses = 0;

  for (const std::string& path : args) {
    if (path.rfind("--", 0) == 0) return usage_error("unknown flag '" + path + "' for merge");
    std::ifstream in(path, std::ios::binary);
    if (!in) return usage_error("cannot open report '" + path + "'");
    long long name_rank = rank_from_name(path);
    std::string line;
    std::size_t line_no = 0;
    bool saw_summary = false;
    auto fail = [&](const std::string& message) {
      std::fprintf(stderr, "%s:%zu: %s\n", path.c_str(), line_no, message.c_str());
      return kUsageExit;
    };
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_discarded() || !j.is_object()) return fail("not a JSON object (is this a report=json report?)");
      if (j.contains("summary")) {
        const json& s = j["summary"];
        if (!s.is_object()) return fail("'summary' must be an object");
        if (s.contains("suppressed") && s["suppressed"].is_number_unsigned()) suppressed += s["suppressed"].get<std::uint64_t>();
        if (s.contains("own_stream_uses") && s["own_stream_uses"] == false) ++reports_missing_uses;
        saw_summary = true;
        continue;
      }
      auto text = [&](const char* key) -> const json* {
        auto it = j.find(key);
        return it != j.end() && it->is_string() ? &*it : nullptr;
      };
      const json* fp = text("fingerprint");
      const json* kind = text("kind");
      if (fp == nullptr || kind == nullptr) return fail("finding lacks string fields 'fingerprint' and 'kind'");
      auto count_it = j.find("count");
      auto pid_it = j.find("pid");
      if (count_it == j.end() || !count_it->is_number_unsigned() || pid_it == j.end() || !pid_it->is_number_integer())
        return fail("finding lacks numeric fields 'count' and 'pid'");
      Origin origin;
      origin.count = count_it->get<std::uint64_t>();
      origin.pid = pid_it->get<long long>();
      auto rank_it = j.find("rank");
      origin.rank = rank_it != j.end() && rank_it->is_number_integer() ? rank_it->get<long long>() : name_rank;

      // A note-level result is a latent free-before-wait, not a finding.
      if (const json* level = text("level"); level && *level == "note") {
        latent.insert(fp->get<std::string>());
        continue;
      }
      auto test_it = j.find("test");
      if (test_it != j.end() && !test_it->is_string() && !test_it->is_null())
        return fail("finding field 'test' must be a string or null");
      const std::string test = test_it != j.end() && test_it->is_string() ? test_it->get<std::string>() : "";
      // A fingerprint is hex digits: a newline cannot occur in it.
      const std::string key = fp->get<std::string>() + '\n' + test;
      auto [it, inserted] = by_key.try_emplace(key);
      MergedFinding& m = it->second;
      if (inserted) {
        order.push_back(key);
        m.test = test;
        m.kind = kind->get<std::string>();
        if (const json* site = text("site")) m.site = site->get<std::string>();
        if (const json* fix = text("fix")) m.fix = fix->get<std::string>();
      }
      m.total += origin.count;
      m.origins.push_back(origin);
    }
    if (line_no == 0) return fail("empty report");
    if (!saw_summary) return fail("report has no summary object (truncated?)");
  }

  // The findings of one test together, the tests in order of first sight.
  std::vector<std::string> tests;
  for (const std::string& key : order)
    if (std::find(tests.begin(), tests.end(), by_key[key].test) == tests.end()) tests.push_back(by_key[key].test);
  std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
    return std::find(tests.begin(), tests.end(), by_key[a].test) <
           std::find(tests.begin(), tests.end(), by_key[b].test);
  });

  std::cout << "xstream-check: merged " << args.size() << " report(s)\n";
  for (const std::string& key : order) {
    const MergedFinding& m = by_key[key];
    std::cout << "  " << m.kind << ' ' << (m.site.empty() ? "<unknown>" : m.site) << '\n';
    if (!m.test.empty()) std::cout << "    test: " << m.test << '\n';
    std::cout << "    seen " << m.total << " time(s) in " << m.origins.size() << " process(es): ";
    for (std::size_t i = 0; i < m.origins.size(); ++i) std::cout << (i ? ", " : "") << origin_text(m.origins[i]);
    std::cout << '\n';
    std::cout << "    fingerprint " << key.substr(0, key.find('\n')) << '\n';
    if (!m.fix.empty()) std::cout << "    fix: " << m.fix << '\n';
  }
  std::cout << "xstream-check: " << order.size() << " distinct finding(s) (" << suppressed << " suppressed)";
  if (!latent.empty())
    std::cout << "; " << latent.size() << " latent free-before-wait (strict=1 reports them)";
  if (reports_missing_uses > 0)
    std::cout << "; " << reports_missing_uses
              << " report(s) of traces without own-stream uses of caching blocks, whose unordered "
                 "frees count as latent (--strict reports them)";
  std::cout << '\n';
  return order.empty() ? 0 : kFindingsExit;
}

}  // namespace xsc::cli
