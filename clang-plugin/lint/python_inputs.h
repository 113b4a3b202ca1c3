// Python inputs of xstream-lint: `.py` files and directories go to the
// Python check (python/xstream_check/lint, the same rules), and its findings
// come back as clang-style diagnostics and SARIF results.
#pragma once

#include <string>
#include <vector>

#include "lint/sarif.h"
#include "llvm/ADT/StringRef.h"

namespace xsc::lint {

// A .py file or a directory (checked as a tree of Python files).
bool is_python_input(llvm::StringRef path);

struct PythonCheckResult {
  unsigned findings = 0;
  bool error = false;  // a file that does not parse, or the check could not run
};

// Runs the Python check over `inputs` with the interpreter in $XSC_PYTHON
// (default: python3 on PATH), prints its findings to stderr as clang
// diagnostics and appends them to `results`; a file that does not parse is
// also a notification (as a C++ file that does not compile). `argv0` locates
// the package in an installed layout (<prefix>/share/xstream-check/python).
PythonCheckResult run_python_check(const std::vector<std::string>& inputs, const char* argv0,
                                   std::vector<SarifResult>& results,
                                   std::vector<SarifNotification>& notifications);

}  // namespace xsc::lint
