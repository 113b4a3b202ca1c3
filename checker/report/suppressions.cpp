#include "checker/report/suppressions.h"

#include <fnmatch.h>

#include <fstream>
#include <sstream>

namespace xsc {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool parse_kind(std::string_view text, bool* any, FindingKind* kind) {
  *any = false;
  if (text == "*") *any = true;
  else if (text == "unordered_free") *kind = FindingKind::kUnorderedFree;
  else if (text == "use_after_free") *kind = FindingKind::kUseAfterFree;
  else if (text == "use_before_ready") *kind = FindingKind::kUseBeforeReady;
  else if (text == "reuse_race") *kind = FindingKind::kReuseRace;
  else if (text == "write_after_read") *kind = FindingKind::kWriteAfterRead;
  else return false;
  return true;
}

bool glob_match(const std::string& pattern, const std::string& text) {
  return !text.empty() && fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// Every string a rule's pattern is tried against.
std::vector<std::string> subjects(const Finding& f, const NameTable& names, const StackDepot& stacks) {
  std::vector<std::string> out;
  auto add_stack = [&](StackId id) {
    if (id == kNoStack) return;
    for (const Frame& frame : stacks.frames(id)) {
      if (!frame.function.empty()) out.push_back(frame.function);
      if (!frame.file.empty()) {
        out.push_back(frame.file);
        auto slash = frame.file.rfind('/');
        if (slash != std::string::npos) out.push_back(frame.file.substr(slash + 1));
      }
    }
  };
  add_stack(f.alloc.stack);
  if (f.kind != FindingKind::kUseBeforeReady && f.kind != FindingKind::kWriteAfterRead)
    add_stack(f.free.stack);
  add_stack(f.use.stack);
  if (f.has_late_wait) add_stack(f.late_wait.stack);
  if (f.has_earlier) add_stack(f.earlier.stack);
  if (f.has_reuse) {
    add_stack(f.reuse.use.stack);
    if (f.reuse.has_alloc) add_stack(f.reuse.alloc.stack);
    std::string_view racing = names.get(f.reuse.use.name);
    if (!racing.empty()) out.emplace_back(racing);
  }
  std::string_view op = names.get(f.use.name);
  if (!op.empty()) out.emplace_back(op);
  return out;
}

}  // namespace

bool Suppressions::load_file(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path + ": cannot open suppressions file";
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, error);
}

bool Suppressions::parse(std::string_view text, std::string_view source, std::string* error) {
  std::vector<Rule> parsed;
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    std::size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    auto fail = [&](const std::string& why) {
      *error = std::string(source) + ":" + std::to_string(line_no) + ": " + why;
      return false;
    };
    if (line.find('\0') != std::string_view::npos) return fail("binary data in suppressions file");
    std::size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return fail("expected 'kind:pattern', got '" + std::string(line) + "'");
    Rule rule;
    std::string_view kind = trim(line.substr(0, colon));
    if (!parse_kind(kind, &rule.any_kind, &rule.kind))
      return fail("unknown suppression kind '" + std::string(kind) +
                  "' (expected unordered_free, use_after_free, use_before_ready, reuse_race, write_after_read or *)");
    rule.pattern = trim(line.substr(colon + 1));
    if (rule.pattern.empty()) return fail("empty pattern");
    parsed.push_back(std::move(rule));
  }
  rules_.insert(rules_.end(), parsed.begin(), parsed.end());
  return true;
}

bool Suppressions::suppresses(const Finding& finding, const NameTable& names, const StackDepot& stacks) {
  if (rules_.empty()) return false;
  std::vector<std::string> texts = subjects(finding, names, stacks);
  for (Rule& rule : rules_) {
    if (!rule.any_kind && rule.kind != finding.kind) continue;
    for (const std::string& text : texts) {
      if (glob_match(rule.pattern, text)) {
        ++rule.hits;
        return true;
      }
    }
  }
  return false;
}

}  // namespace xsc
