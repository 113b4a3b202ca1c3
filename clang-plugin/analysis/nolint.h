// NOLINT comments, read the way clang-tidy reads them, for the front ends
// that do not run inside clang-tidy (the plugin and xstream-lint):
//   code;  // NOLINT            or  // NOLINT(xstream-unordered-free, bugprone-*)
//   // NOLINTNEXTLINE(xstream-*)
//   // NOLINTBEGIN(xstream-*) ... // NOLINTEND(xstream-*)
#pragma once

#include "clang/Basic/SourceLocation.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/StringRef.h"

namespace xsc::lint {

bool is_suppressed_by_nolint(const clang::SourceManager& sm, clang::SourceLocation loc,
                             llvm::StringRef check_name);

}  // namespace xsc::lint
