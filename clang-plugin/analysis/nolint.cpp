#include "analysis/nolint.h"

#include <vector>

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/GlobPattern.h"

namespace xsc::lint {
namespace {

// Whether the check list that follows a NOLINT marker names `check`. No list
// (or an empty one) means every check.
bool list_matches(llvm::StringRef after_marker, llvm::StringRef check) {
  if (!after_marker.starts_with("(")) return true;
  size_t close = after_marker.find(')');
  if (close == llvm::StringRef::npos) return false;  // malformed: clang-tidy ignores it too
  llvm::SmallVector<llvm::StringRef, 4> globs;
  after_marker.slice(1, close).split(globs, ',', -1, false);
  if (globs.empty()) return true;
  for (llvm::StringRef g : globs) {
    g = g.trim();
    if (g.empty()) continue;
    auto pattern = llvm::GlobPattern::create(g);
    if (pattern && pattern->match(check)) return true;
  }
  return false;
}

// Finds `marker` in `line` not immediately followed by an identifier character,
// so that NOLINT does not match NOLINTNEXTLINE.
bool line_has_marker(llvm::StringRef line, llvm::StringRef marker, llvm::StringRef check) {
  size_t from = 0;
  while (true) {
    size_t pos = line.find(marker, from);
    if (pos == llvm::StringRef::npos) return false;
    llvm::StringRef rest = line.substr(pos + marker.size());
    if (rest.empty() || !(isalnum(static_cast<unsigned char>(rest[0])) || rest[0] == '_')) {
      if (list_matches(rest, check)) return true;
    }
    from = pos + marker.size();
  }
}

}  // namespace

bool is_suppressed_by_nolint(const clang::SourceManager& sm, clang::SourceLocation loc,
                             llvm::StringRef check_name) {
  if (loc.isInvalid()) return false;
  loc = sm.getExpansionLoc(loc);
  auto [fid, offset] = sm.getDecomposedLoc(loc);
  bool invalid = false;
  llvm::StringRef buffer = sm.getBufferData(fid, &invalid);
  if (invalid || offset > buffer.size()) return false;

  size_t line_start = buffer.rfind('\n', offset == 0 ? 0 : offset - 1);
  line_start = (line_start == llvm::StringRef::npos || offset == 0) ? 0 : line_start + 1;
  size_t line_end = buffer.find('\n', offset);
  if (line_end == llvm::StringRef::npos) line_end = buffer.size();
  llvm::StringRef line = buffer.slice(line_start, line_end);
  if (line_has_marker(line, "NOLINT", check_name)) return true;

  if (line_start > 0) {
    size_t prev_start = buffer.rfind('\n', line_start - 1);
    prev_start = prev_start == llvm::StringRef::npos ? 0 : prev_start + 1;
    llvm::StringRef prev = buffer.slice(prev_start, line_start - 1);
    if (line_has_marker(prev, "NOLINTNEXTLINE", check_name)) return true;
  }

  // NOLINTBEGIN/NOLINTEND regions before the location.
  int open = 0;
  llvm::StringRef before = buffer.substr(0, line_start);
  llvm::SmallVector<llvm::StringRef, 0> lines;
  if (!before.contains("NOLINTBEGIN")) return false;
  before.split(lines, '\n');
  for (llvm::StringRef l : lines) {
    if (line_has_marker(l, "NOLINTBEGIN", check_name)) ++open;
    if (line_has_marker(l, "NOLINTEND", check_name) && open > 0) --open;
  }
  return open > 0;
}

}  // namespace xsc::lint
