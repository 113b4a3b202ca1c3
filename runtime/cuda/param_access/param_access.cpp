// Parameter access from mangled kernel names (param_access.h).
//
// The name is parsed by LLVM's Itanium demangler into its syntax tree, not
// by matching text: substitutions (S0_ standing for an earlier PKf),
// template parameters (PT_ with T = const float), nested template
// arguments, function pointer parameters and lambdas in template arguments
// all come out as typed nodes, and the function's parameters are the
// FunctionEncoding's parameter list, whatever the name around it holds.
#include "runtime/cuda/param_access/param_access.h"

#if XSC_HAVE_LLVM_DEMANGLE

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>

#include "llvm/Demangle/ItaniumDemangle.h"

namespace xsc::rt {
namespace {

namespace itd = llvm::itanium_demangle;
using itd::Node;

// The parser's node allocator: every node lives until the parse is over.
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
constexpr int kMaxDepth = 64;

// The node a reference stands for: a forward template reference (resolved
// by the parser once the template arguments are known) is followed.
const Node* resolved(const Node* n) {
  for (int depth = 0; n != nullptr && depth < kMaxDepth; ++depth) {
    if (n->getKind() != Node::KForwardTemplateReference) return n;
    n = static_cast<const itd::ForwardTemplateReference*>(n)->Ref;
  }
  return nullptr;
}

// Strips cv-qualifiers (and vendor qualifiers) off `n`, collecting them.
const Node* strip_qualifiers(const Node* n, unsigned* quals) {
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

// One parameter's type. Top-level qualifiers (a `float* const` parameter
// reached through a template argument) say nothing about the memory; the
// pointee's const does.
ParamAccess classify(const Node* type) {
  unsigned top = 0;
  const Node* n = strip_qualifiers(type, &top);
  if (n == nullptr || n->getKind() != Node::KPointerType) return ParamAccess::kUnknown;
  unsigned pointee_quals = 0;
  const Node* pointee =
      strip_qualifiers(static_cast<const itd::PointerType*>(n)->getPointee(), &pointee_quals);
  if (pointee == nullptr) return ParamAccess::kUnknown;
  return (pointee_quals & itd::QualConst) != 0 ? ParamAccess::kRead : ParamAccess::kUnknown;
}

// The elements of a template parameter pack, when `n` is one.
bool pack_elements(const Node* n, itd::NodeArray* out) {
  n = resolved(n);
  if (n == nullptr || n->getKind() != Node::KParameterPack) return false;
  static_cast<const itd::ParameterPack*>(n)->match([&](itd::NodeArray data) { *out = data; });
  return true;
}

// Appends the parameters a pack expansion stands for: `Ts... args` (each
// element classified as a parameter of its own) and `const Ts*... args`
// (all read). Any other pattern: false, nothing is known about the count.
bool expand(const itd::ParameterPackExpansion* expansion, std::vector<ParamAccess>* out) {
  const Node* pattern = expansion->getChild();
  itd::NodeArray elements;
  if (pack_elements(pattern, &elements)) {
    for (const Node* element : elements) out->push_back(classify(element));
    return true;
  }
  unsigned top = 0;
  const Node* n = strip_qualifiers(pattern, &top);
  if (n == nullptr || n->getKind() != Node::KPointerType) return false;
  unsigned pointee_quals = 0;
  const Node* pointee =
      strip_qualifiers(static_cast<const itd::PointerType*>(n)->getPointee(), &pointee_quals);
  if (!pack_elements(pointee, &elements)) return false;
  const ParamAccess access =
      (pointee_quals & itd::QualConst) != 0 ? ParamAccess::kRead : ParamAccess::kUnknown;
  out->insert(out->end(), elements.size(), access);
  return true;
}

}  // namespace

bool kernel_param_access(std::string_view mangled_name, std::vector<ParamAccess>* out) {
  out->clear();
  // Only function names: "_Z" followed by an encoding. Anything else
  // (extern "C" names) has no parameter types in it.
  if (mangled_name.size() < 3 || mangled_name.substr(0, 2) != "_Z") return false;
  Parser parser(mangled_name.data(), mangled_name.data() + mangled_name.size());
  const Node* root = parser.parse();
  if (root == nullptr || root->getKind() != Node::KFunctionEncoding) return false;
  const auto* function = static_cast<const itd::FunctionEncoding*>(root);
  for (const Node* param : function->getParams()) {
    if (param->getKind() == Node::KParameterPackExpansion) {
      if (!expand(static_cast<const itd::ParameterPackExpansion*>(param), out)) {
        out->clear();
        return false;
      }
      continue;
    }
    out->push_back(classify(param));
  }
  return true;
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
