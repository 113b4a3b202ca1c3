// Compile errors in a file xstream-lint analyzes anyway: which function
// definitions they fall in, so that those are left out of the analysis and
// named in the report, while every other function is analyzed.
#pragma once

#include <string>
#include <vector>

#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceLocation.h"
#include "llvm/ADT/DenseSet.h"

namespace xsc::lint {

// One of clang's diagnostics, kept until the translation unit is parsed.
struct StoredDiagnostic {
  clang::DiagnosticsEngine::Level level;
  clang::SourceLocation loc;
  std::string message;
  std::vector<clang::CharSourceRange> ranges;
};

struct CompileError {
  StoredDiagnostic error;
  std::vector<StoredDiagnostic> notes;  // clang's notes that followed it
};

// A definition that is not analyzed, and why.
struct UnanalyzedFunction {
  std::string name;           // qualified, without template arguments
  clang::SourceLocation loc;  // its name
  std::vector<size_t> errors;  // the compile errors inside it (indices)
  // Without errors of its own: the first part of its body that did not
  // build (a declaration or expression an error elsewhere made invalid).
  clang::SourceLocation invalid_part;
  // Without either: a call to a function that is left out, which the
  // analysis would have inlined without what that function does.
  std::string left_out_callee;
  clang::SourceLocation call;
};

struct ErrorAttribution {
  // Definitions not to analyze: every one that holds a compile error or a
  // part that did not build, including lambdas and template instantiations,
  // and their callers up to the analysis' inlining depth.
  llvm::DenseSet<const clang::FunctionDecl*> skipped;
  // The outermost of those, once per definition in the source, in source order.
  std::vector<UnanalyzedFunction> functions;
  // Errors in no function definition (declarations at namespace or class scope).
  std::vector<size_t> outside_functions;
};

// Attributes the errors of a parsed translation unit to the function
// definitions (outside system headers) whose source they lie in. An error
// in a system header counts for the definition that its notes (such as "in
// instantiation of ... requested here") point into.
ErrorAttribution attribute_compile_errors(clang::ASTContext& ctx, const std::vector<CompileError>& errors);

}  // namespace xsc::lint
