// Names of the finding kinds as reports and suppressions spell them.
#include "checker/engine/finding.h"

namespace xsc {

std::string_view to_string(FindingKind kind) {
  switch (kind) {
    case FindingKind::kUnorderedFree: return "unordered-free";
    case FindingKind::kUseAfterFree: return "use-after-free";
    case FindingKind::kUseBeforeReady: return "use-before-ready";
    case FindingKind::kReuseRace: return "reuse-race";
    case FindingKind::kWriteAfterRead: return "write-after-read";
  }
  return "invalid";
}

std::string_view rule_id(FindingKind kind) {
  switch (kind) {
    case FindingKind::kUnorderedFree: return "xstream-unordered-free";
    case FindingKind::kUseAfterFree: return "xstream-use-after-free";
    case FindingKind::kUseBeforeReady: return "xstream-use-before-ready";
    case FindingKind::kReuseRace: return "xstream-reuse-race";
    case FindingKind::kWriteAfterRead: return "xstream-write-after-read";
  }
  return "xstream-invalid";
}

}  // namespace xsc
