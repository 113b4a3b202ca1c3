// SARIF 2.1.0 output for GitHub code scanning and other SARIF consumers.
#pragma once

#include <string>
#include <vector>

namespace xsc::lint {

struct SarifLocation {
  std::string file;  // absolute path
  unsigned line = 0;
  unsigned column = 0;
  std::string message;  // related locations only
};

struct SarifResult {
  std::string rule;  // xstream-free-before-wait / xstream-unordered-free
  std::string message;
  SarifLocation location;
  std::vector<SarifLocation> related;  // the notes
  // What identifies the finding independent of line numbers.
  std::string identity;
};

// Renders a complete SARIF log. Paths under `source_root` become relative
// URIs against the %SRCROOT% base.
std::string render_sarif(const std::vector<SarifResult>& results, const std::string& tool_version,
                         const std::string& source_root);

}  // namespace xsc::lint
