// Suppressions: findings the user has decided to accept.
//
// A suppressions file has one rule per line, `kind:pattern`, where kind is
// unordered_free, use_after_free, use_before_ready, reuse_race or `*`, and pattern is a
// glob (fnmatch: `*`, `?`, `[...]`) matched against every function name and
// source file (full path and base name) of the finding's stacks and against
// the kernel / operation name of its use. `#` starts a comment line; blank
// lines are ignored.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/finding.h"
#include "checker/engine/stack_depot.h"

namespace xsc {

class Suppressions {
 public:
  // Reads rules from `path`. On a bad line: false, *error = "PATH:LINE: ...".
  bool load_file(const std::string& path, std::string* error);
  // Same as load_file for text already in memory; `source` names it in errors.
  bool parse(std::string_view text, std::string_view source, std::string* error);

  // True when some rule suppresses `finding`; counts the rule's hit.
  bool suppresses(const Finding& finding, const NameTable& names, const StackDepot& stacks);

  bool empty() const { return rules_.empty(); }
  std::size_t size() const { return rules_.size(); }

 private:
  struct Rule {
    bool any_kind = false;
    FindingKind kind = FindingKind::kUnorderedFree;
    std::string pattern;
    std::uint64_t hits = 0;
  };
  std::vector<Rule> rules_;
};

}  // namespace xsc
