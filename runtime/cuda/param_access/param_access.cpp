// Parameter access from mangled kernel names (param_access.h).
//
// The parameter list comes from LLVM's Itanium demangler tree
// (demangled_params.h).
#include "runtime/cuda/param_access/param_access.h"

#if XSC_HAVE_LLVM_DEMANGLE

#include "runtime/cuda/param_access/demangled_params.h"

namespace xsc::rt {
namespace {

namespace itd = demangled::itd;
using demangled::Node;
using demangled::strip_qualifiers;

// One parameter's type. Top-level qualifiers (a `float* const` parameter
// reached through a template argument) say nothing about the memory; the
// pointee's const does.
ParamAccess classify(const Node* type) {
  unsigned top = 0;
  const itd::PointerType* pointer = demangled::as_pointer(type, &top);
  if (pointer == nullptr) return ParamAccess::kUnknown;
  unsigned pointee_quals = 0;
  const Node* pointee = strip_qualifiers(pointer->getPointee(), &pointee_quals);
  if (pointee == nullptr) return ParamAccess::kUnknown;
  return (pointee_quals & itd::QualConst) != 0 ? ParamAccess::kRead : ParamAccess::kUnknown;
}

}  // namespace

// An element of `Ts... args` is classified as a parameter of its own; an
// element of `const Ts*... args` is a read.
ParamAccess demangled::access_of(const demangled::Param& param) {
  if (param.type != nullptr) return classify(param.type);
  return param.pointer_to_const ? ParamAccess::kRead : ParamAccess::kUnknown;
}

bool kernel_param_access(std::string_view mangled_name, std::vector<ParamAccess>* out) {
  out->clear();
  return demangled::with_function_params(
      mangled_name, [&](const std::vector<demangled::Param>& params) {
        for (const demangled::Param& param : params) out->push_back(demangled::access_of(param));
      });
}

bool kernel_param_access_available() { return true; }

}  // namespace xsc::rt

#else  // !XSC_HAVE_LLVM_DEMANGLE

namespace xsc::rt {

bool kernel_param_access(std::string_view, std::vector<ParamAccess>* out) {
  out->clear();
  return false;
}

bool kernel_param_access_available() { return false; }

}  // namespace xsc::rt

#endif
