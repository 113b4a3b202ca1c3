// The declared parameters of a mangled kernel name, as nodes of LLVM's
// Itanium demangler tree. Internal to xsc_param_access: param_access.cpp
// (which parameters are pointers to const) and param_fill.cpp (which
// parameters are tables filled in part) read the same parameter list.
//
// The name is parsed into its syntax tree, not matched as text:
// substitutions (S0_ standing for an earlier PKf), template parameters (PT_
// with T = const float), nested template arguments, function pointer
// parameters and lambdas in template arguments all come out as typed nodes,
// and the function's parameters are the FunctionEncoding's parameter list,
// whatever the name around it holds.
#pragma once

#if XSC_HAVE_LLVM_DEMANGLE

#include <cstddef>
#include <memory>
#include <new>
#include <string_view>
#include <utility>
#include <vector>

#include "llvm/Demangle/ItaniumDemangle.h"
#include "runtime/cuda/param_access/param_access.h"

namespace xsc::rt::demangled {

namespace itd = llvm::itanium_demangle;
using itd::Node;

// The parser's node allocator: every node lives until the parser is gone.
// Blocks of 4 KiB (bigger requests get their own), freed together.
class NodeArena {
 public:
  NodeArena() = default;
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;

  void reset() {
    blocks_.clear();
    used_ = kBlock;
  }
  template <class T, class... Args>
  T* makeNode(Args&&... args) {
    return new (allocate(sizeof(T))) T(std::forward<Args>(args)...);
  }
  void* allocateNodeArray(std::size_t n) { return allocate(n * sizeof(Node*)); }

 private:
  static constexpr std::size_t kBlock = 4096;
  static constexpr std::size_t kAlign = alignof(std::max_align_t);
  void* allocate(std::size_t size) {
    size = (size + kAlign - 1) / kAlign * kAlign;
    if (size > kBlock) {
      blocks_.emplace_back(new char[size]);
      return blocks_.back().get();
    }
    if (used_ + size > kBlock) {
      blocks_.emplace_back(new char[kBlock]);
      used_ = 0;
    }
    void* p = blocks_.back().get() + used_;
    used_ += size;
    return p;
  }
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::size_t used_ = kBlock;
};

using Parser = itd::ManglingParser<NodeArena>;

// Forward template references and substitutions can make the tree cyclic in
// malformed names; no sensible type is this deep.
inline constexpr int kMaxDepth = 64;

// The node a reference stands for: a forward template reference (resolved
// by the parser once the template arguments are known) is followed.
inline const Node* resolved(const Node* n) {
  for (int depth = 0; n != nullptr && depth < kMaxDepth; ++depth) {
    if (n->getKind() != Node::KForwardTemplateReference) return n;
    n = static_cast<const itd::ForwardTemplateReference*>(n)->Ref;
  }
  return nullptr;
}

// Strips cv-qualifiers (and vendor qualifiers) off `n`, collecting them.
inline const Node* strip_qualifiers(const Node* n, unsigned* quals) {
  for (int depth = 0; depth < kMaxDepth; ++depth) {
    n = resolved(n);
    if (n == nullptr) return nullptr;
    if (n->getKind() == Node::KQualType) {
      const auto* q = static_cast<const itd::QualType*>(n);
      *quals |= q->getQuals();
      n = q->getChild();
    } else if (n->getKind() == Node::KVendorExtQualType) {
      n = static_cast<const itd::VendorExtQualType*>(n)->getTy();
    } else {
      return n;
    }
  }
  return nullptr;
}

// `n` as a pointer type once its qualifiers are stripped (they are added
// to *quals); null when it is no pointer.
inline const itd::PointerType* as_pointer(const Node* n, unsigned* quals) {
  n = strip_qualifiers(n, quals);
  if (n == nullptr || n->getKind() != Node::KPointerType) return nullptr;
  return static_cast<const itd::PointerType*>(n);
}

// The elements of a template parameter pack, when `n` is one.
inline bool pack_elements(const Node* n, itd::NodeArray* out) {
  n = resolved(n);
  if (n == nullptr || n->getKind() != Node::KParameterPack) return false;
  static_cast<const itd::ParameterPack*>(n)->match([&](itd::NodeArray data) { *out = data; });
  return true;
}

// One declared parameter, packs expanded. An element of `Ts... args` has its
// own type; an element of `const Ts*... args` (or `Ts*... args`) has none
// here, only whether its pointer is to const.
struct Param {
  const Node* type = nullptr;
  bool pointer_to_const = false;
};

// Only function names have parameter types: "_Z" followed by an encoding
// (extern "C" names are plain identifiers).
inline bool mangled_function_name(std::string_view name) {
  return name.size() >= 3 && name.substr(0, 2) == "_Z";
}

// Parses the name `parser` was made over (it must be a
// mangled_function_name) and lists its parameters, and sets *name to the
// function's name (with its template arguments) when `name` is given.
// False, with `out` empty, when the name is not a function's, does not
// parse, or holds a pack expansion of another form. The nodes live as long
// as `parser`.
inline bool function_params(Parser& parser, std::vector<Param>* out,
                            const Node** name = nullptr) {
  out->clear();
  const Node* root = parser.parse();
  if (root == nullptr || root->getKind() != Node::KFunctionEncoding) return false;
  const auto* function = static_cast<const itd::FunctionEncoding*>(root);
  if (name != nullptr) *name = function->getName();
  for (const Node* param : function->getParams()) {
    if (param->getKind() != Node::KParameterPackExpansion) {
      out->push_back({param, false});
      continue;
    }
    const Node* pattern = static_cast<const itd::ParameterPackExpansion*>(param)->getChild();
    itd::NodeArray elements;
    if (pack_elements(pattern, &elements)) {
      for (const Node* element : elements) out->push_back({element, false});
      continue;
    }
    unsigned top = 0;
    const itd::PointerType* pointer = as_pointer(pattern, &top);
    if (pointer == nullptr) {
      out->clear();
      return false;
    }
    unsigned pointee_quals = 0;
    const Node* pointee = strip_qualifiers(pointer->getPointee(), &pointee_quals);
    if (!pack_elements(pointee, &elements)) {
      out->clear();
      return false;
    }
    const bool to_const = (pointee_quals & itd::QualConst) != 0;
    out->insert(out->end(), elements.size(), Param{nullptr, to_const});
  }
  return true;
}

// Parses a mangled function name's parameters and calls f(params) while
// the parser that owns their nodes lives; false when the name is no
// function's or its parameters cannot be read (f is not called).
template <class F>
bool with_function_params(std::string_view mangled_name, F&& f) {
  if (!mangled_function_name(mangled_name)) return false;
  Parser parser(mangled_name.data(), mangled_name.data() + mangled_name.size());
  std::vector<Param> params;
  if (!function_params(parser, &params)) return false;
  f(params);
  return true;
}

// The same, calling f(name, params) with the function's name.
template <class F>
bool with_function(std::string_view mangled_name, F&& f) {
  if (!mangled_function_name(mangled_name)) return false;
  Parser parser(mangled_name.data(), mangled_name.data() + mangled_name.size());
  std::vector<Param> params;
  const Node* name = nullptr;
  if (!function_params(parser, &params, &name) || name == nullptr) return false;
  f(name, params);
  return true;
}

// What one parameter's declaration says of the memory it points to
// (param_access.cpp).
ParamAccess access_of(const Param& param);

}  // namespace xsc::rt::demangled

#endif  // XSC_HAVE_LLVM_DEMANGLE
