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
  std::string rule;  // an xstream-* rule id (sarif.cpp's kRules)
  std::string message;
  SarifLocation location;
  std::vector<SarifLocation> related;  // the notes
  // What identifies the finding independent of line numbers.
  std::string identity;
};

// Something met while running that is not a finding: a function or a file
// left out of the analysis because it does not compile. Written as the
// invocation's toolExecutionNotifications.
struct SarifNotification {
  std::string id;     // xstream-compile-error
  std::string level;  // "warning": a function left out; "error": a whole file
  std::string message;
  std::vector<SarifLocation> locations;  // the function, then each error (with its text)
};

// Renders a complete SARIF log. Paths under `source_root` become relative
// URIs against the %SRCROOT% base. `execution_successful` is false when a
// file could not be analyzed at all.
std::string render_sarif(const std::vector<SarifResult>& results,
                         const std::vector<SarifNotification>& notifications, bool execution_successful,
                         const std::string& tool_version, const std::string& source_root);

}  // namespace xsc::lint
