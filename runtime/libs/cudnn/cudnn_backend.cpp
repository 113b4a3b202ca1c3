// cuDNN's graph API (cudnnBackendExecute) as known writes.
//
// PyTorch's convolutions, and anything built with cudnn-frontend, run
// through cudnnBackendExecute(handle, plan, variantPack): the plan says
// which operations run on which tensors (by unique id), the variant pack
// which addresses those ids have. A finalized plan cannot be walked back
// (cuDNN 9.19 answers CUDNN_STATUS_NOT_SUPPORTED for an operation graph's
// operations, and tensors read back come with unique id -1), so the
// runtime watches the descriptors while they are built instead. It defines
// cudnnBackendCreateDescriptor, cudnnBackendSetAttribute,
// cudnnBackendFinalize, cudnnBackendGetAttribute,
// cudnnBackendDestroyDescriptor and cudnnBackendExecute; each forwards to
// the real function with its arguments untouched and returns its status
// untouched, and, after a call that succeeded, notes what was set:
//
//   tensor             unique id, data type, dims, strides, whether it is
//                      virtual (and whether it is vectorized, reordered,
//                      ragged or by value: such a tensor is never claimed)
//   operation          convolution forward (y), backward data (dx) and
//                      backward filter (dw) with their alpha and beta;
//                      pointwise (y; dx for the backward modes, which are
//                      the ones given a dx, and whose y is an input); matmul
//                      (c, unless an M, N or K override or an irregular
//                      batch count is set); reduction (y). Any other
//                      operation is left out: it claims nothing, and the
//                      known operations of its graph still do
//   operation graph    its operations
//   engine             its graph; engine config: its engine's graph;
//                      engine heuristics: its graph, and the engine
//                      configs that cudnnBackendGetAttribute fills with
//                      CUDNN_ATTR_ENGINEHEUR_RESULTS take that graph (so
//                      do an engine read back from a config and a config
//                      read back from a plan)
//   execution plan     its config's graph; at finalize, the list of
//                      (unique id, bytes, access) it claims (none for a
//                      plan told to run only some intermediates)
//   variant pack       unique ids and data pointers (not the workspace,
//                      which the call uses in ways not said), and whether
//                      it overrides shapes or strides
//
// A linked descriptor counts only when it was finalized (cuDNN takes no
// other), and what it said is copied then, so destroying it later, or a
// new descriptor at the same address, changes nothing already built. A
// descriptor is forgotten when destroyed.
//
// After the outermost interposed call succeeds (the depth is shared with
// the cuBLAS and classic cuDNN interposers, runtime/libs/cublas/blas_uses.h), every
// known operation's non-virtual output is fed as a known write
// (docs/rules.md) over its dense extent (runtime/libs/cudnn/cudnn_tensors.h; nothing
// for a tensor that is not dense or whose type is left out), on the
// handle's stream, named "cudnnBackendExecute", and also as a read when
// the operation blends with a beta known not to be 0. Each of these
// operations computes every element of its output. A convolution whose
// alpha is 0, or of a type other than float or double, claims nothing (the
// library may skip it); unset, alpha is 1 and beta 0, as cuDNN documents.
// Nothing is fed for a plan built from descriptors not seen (a plan from
// JSON, or made before the runtime was loaded), for a variant pack that
// lacks a claimed unique id or overrides shapes or strides, for a call
// that failed, or with cudnn_access=0 (nothing is noted then either).
// Inputs are not claimed: which of their elements an engine reads depends
// on the operation's geometry, which is not followed here.
//
// Nothing either for cudnnBackendPopulateCudaGraph (its kernels run when
// the CUDA graph is launched).
#if __has_include(<cudnn.h>) && __has_include(<cublas_v2.h>)
#include <cudnn.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/libs/cublas/blas_uses.h"
#include "runtime/libs/cudnn/cudnn_tensors.h"
#include "runtime/libs/real_symbol.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

#define XSC_CUDNN_EXPORT extern "C" __attribute__((visibility("default")))

namespace xsc::rt {
namespace {

using libs::call_real;
using libs::RealSymbol;

RealSymbol real_CreateDescriptor{"cudnnBackendCreateDescriptor"};
RealSymbol real_DestroyDescriptor{"cudnnBackendDestroyDescriptor"};
RealSymbol real_SetAttribute{"cudnnBackendSetAttribute"};
RealSymbol real_GetAttribute{"cudnnBackendGetAttribute"};
RealSymbol real_Finalize{"cudnnBackendFinalize"};
RealSymbol real_Execute{"cudnnBackendExecute"};

bool wanted() { return enabled() && options().cudnn_access; }

// Attributes of releases newer than the oldest cuDNN 9 headers the runtime
// compiles with: by their numeric values (cudnn_graph.h of a newer
// release) where the header lacks them. A library of that release takes
// them whatever header this was built with, so a program that sets them is
// followed either way.
#if CUDNN_VERSION >= 91800
constexpr cudnnBackendAttributeName_t kVariantPackOverrideUniqueIds =
    CUDNN_ATTR_VARIANT_PACK_OVERRIDE_UNIQUE_IDS;
constexpr cudnnBackendAttributeName_t kVariantPackOverrideShapes =
    CUDNN_ATTR_VARIANT_PACK_OVERRIDE_SHAPES;
constexpr cudnnBackendAttributeName_t kVariantPackOverrideStrides =
    CUDNN_ATTR_VARIANT_PACK_OVERRIDE_STRIDES;
static_assert(kVariantPackOverrideUniqueIds == 1010 && kVariantPackOverrideShapes == 1011 &&
              kVariantPackOverrideStrides == 1012);
#else
// CUDNN_ATTR_VARIANT_PACK_OVERRIDE_{UNIQUE_IDS,SHAPES,STRIDES}, since 9.18.0.
constexpr auto kVariantPackOverrideUniqueIds = static_cast<cudnnBackendAttributeName_t>(1010);
constexpr auto kVariantPackOverrideShapes = static_cast<cudnnBackendAttributeName_t>(1011);
constexpr auto kVariantPackOverrideStrides = static_cast<cudnnBackendAttributeName_t>(1012);
#endif

// ---- what was set -------------------------------------------------------------

struct Tensor {
  bool has_uid = false, has_type = false;
  std::int64_t uid = 0;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  std::vector<std::int64_t> dims, strides;
  bool is_virtual = false;
  // Vectorized, reordered, ragged or by value: its dims do not say its
  // bytes plainly.
  bool unusual = false;
};

// A host scalar as set: not set (cuDNN's default applies), 0, not 0, or
// of a type not read here.
enum class Value { kUnset, kZero, kNonZero, kUnknown };

Value scalar_value(cudnnBackendAttributeType_t type, std::int64_t count, const void* p) {
  if (p == nullptr || count != 1) return Value::kUnknown;
  if (type == CUDNN_TYPE_FLOAT) {
    float v = 0;
    std::memcpy(&v, p, sizeof v);
    return v == 0.0f ? Value::kZero : Value::kNonZero;
  }
  if (type == CUDNN_TYPE_DOUBLE) {
    double v = 0;
    std::memcpy(&v, p, sizeof v);
    return v == 0.0 ? Value::kZero : Value::kNonZero;
  }
  return Value::kUnknown;
}

// A known operation: the outputs it writes whole, and its blend.
struct Op {
  static constexpr int kOutputs = 2;
  std::shared_ptr<const Tensor> outputs[kOutputs];
  Value alpha = Value::kUnset, beta = Value::kUnset;
  bool skipped = false;  // an override that makes its extent unknown
  // A pointwise operation given a dx runs a backward mode: it writes dx,
  // and a y set on it is the forward output it reads, never written.
  bool writes_dx = false;
};

struct Graph {
  std::vector<std::shared_ptr<const Op>> ops;  // the known ones
};

struct Claim {
  std::int64_t uid = 0;
  std::uint64_t bytes = 0;
  Access access = Access::kUnknown;
};

struct Record {
  explicit Record(cudnnBackendDescriptorType_t t) : type(t) {}
  cudnnBackendDescriptorType_t type;
  bool finalized = false;
  // tensor
  Tensor tensor;
  std::shared_ptr<const Tensor> tensor_done;
  // known operation
  Op op;
  std::shared_ptr<const Op> op_done;
  // operation graph: its known operations; at finalize, `graph`
  std::vector<std::shared_ptr<const Op>> ops;
  // graph, engine, engine config, heuristics, plan: the graph they run
  std::shared_ptr<const Graph> graph;
  // plan: at finalize, what it claims; whether it runs part of its graph
  std::shared_ptr<const std::vector<Claim>> claims;
  bool partial = false;
  // variant pack
  std::vector<std::int64_t> uids;
  std::vector<void*> pointers;
  bool overrides = false;
};

// Descriptors as built. Leaked: libraries destroy theirs from exit
// handlers that may run after static destructors.
struct Registry {
  std::mutex mu;
  std::unordered_map<cudnnBackendDescriptor_t, Record> records;
};

Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

Record* find(Registry& r, cudnnBackendDescriptor_t desc) {
  auto it = r.records.find(desc);
  return it == r.records.end() ? nullptr : &it->second;
}

// The one descriptor in a CUDNN_TYPE_BACKEND_DESCRIPTOR attribute; nullptr
// for anything else.
cudnnBackendDescriptor_t linked(cudnnBackendAttributeType_t type, std::int64_t count,
                                const void* elements) {
  if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR || count != 1 || elements == nullptr) return nullptr;
  return *static_cast<const cudnnBackendDescriptor_t*>(elements);
}

// The finalized tensor behind a link; nullptr when it was not seen.
std::shared_ptr<const Tensor> linked_tensor(Registry& r, cudnnBackendAttributeType_t type,
                                            std::int64_t count, const void* elements) {
  const Record* t = find(r, linked(type, count, elements));
  return t != nullptr && t->finalized ? t->tensor_done : nullptr;
}

// The graph a finalized descriptor runs; nullptr when not known.
std::shared_ptr<const Graph> linked_graph(Registry& r, cudnnBackendAttributeType_t type,
                                          std::int64_t count, const void* elements) {
  const Record* g = find(r, linked(type, count, elements));
  return g != nullptr && g->finalized ? g->graph : nullptr;
}

std::vector<std::int64_t> int64s(cudnnBackendAttributeType_t type, std::int64_t count,
                                 const void* elements) {
  if (type != CUDNN_TYPE_INT64 || count <= 0 || count > 64 || elements == nullptr) return {};
  const auto* p = static_cast<const std::int64_t*>(elements);
  return std::vector<std::int64_t>(p, p + count);
}

// The output slot that an attribute of a known operation type links; -1
// for any other attribute.
int output_slot(cudnnBackendDescriptorType_t op, cudnnBackendAttributeName_t name) {
  switch (op) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
      return name == CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y ? 0 : -1;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
      return name == CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX ? 0 : -1;
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
      return name == CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW ? 0 : -1;
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
      return name == CUDNN_ATTR_OPERATION_POINTWISE_YDESC    ? 0
             : name == CUDNN_ATTR_OPERATION_POINTWISE_DXDESC ? 1
                                                             : -1;
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
      return name == CUDNN_ATTR_OPERATION_MATMUL_CDESC ? 0 : -1;
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
      return name == CUDNN_ATTR_OPERATION_REDUCTION_YDESC ? 0 : -1;
    default:
      return -1;
  }
}

bool known_op(cudnnBackendDescriptorType_t type) {
  switch (type) {
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR:
    case CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR:
      return true;
    default:
      return false;
  }
}

void note_tensor(Record& rec, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                 std::int64_t count, const void* elements) {
  Tensor& t = rec.tensor;
  switch (name) {
    case CUDNN_ATTR_TENSOR_UNIQUE_ID:
      t.has_uid = type == CUDNN_TYPE_INT64 && count == 1;
      if (t.has_uid) std::memcpy(&t.uid, elements, sizeof t.uid);
      break;
    case CUDNN_ATTR_TENSOR_DATA_TYPE:
      t.has_type = type == CUDNN_TYPE_DATA_TYPE && count == 1;
      if (t.has_type) std::memcpy(&t.type, elements, sizeof t.type);
      break;
    case CUDNN_ATTR_TENSOR_DIMENSIONS:
      t.dims = int64s(type, count, elements);
      break;
    case CUDNN_ATTR_TENSOR_STRIDES:
      t.strides = int64s(type, count, elements);
      break;
    case CUDNN_ATTR_TENSOR_IS_VIRTUAL:
      // Unreadable as a bool: taken as virtual, which claims nothing.
      t.is_virtual = true;
      if (type == CUDNN_TYPE_BOOLEAN && count == 1) {
        bool v = true;
        std::memcpy(&v, elements, sizeof v);
        t.is_virtual = v;
      }
      break;
    // Each of these, set to anything but its default, makes the tensor
    // unusual; so does a value not read. The vectorized dimension matters
    // only with a vector count other than 1.
    case CUDNN_ATTR_TENSOR_VECTOR_COUNT: {
      const std::vector<std::int64_t> v = int64s(type, count, elements);
      if (v.size() != 1 || v[0] != 1) t.unusual = true;
      break;
    }
    case CUDNN_ATTR_TENSOR_IS_BY_VALUE: {
      bool v = true;
      if (type == CUDNN_TYPE_BOOLEAN && count == 1) std::memcpy(&v, elements, sizeof v);
      if (v) t.unusual = true;
      break;
    }
    case CUDNN_ATTR_TENSOR_REORDERING_MODE: {
      cudnnBackendTensorReordering_t v = CUDNN_TENSOR_REORDERING_INT8x32;
      if (type == CUDNN_TYPE_TENSOR_REORDERING_MODE && count == 1)
        std::memcpy(&v, elements, sizeof v);
      if (v != CUDNN_TENSOR_REORDERING_NONE) t.unusual = true;
      break;
    }
    case CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC:
      t.unusual = true;
      break;
    default:
      break;
  }
}

void note_op(Registry& r, Record& rec, cudnnBackendAttributeName_t name,
             cudnnBackendAttributeType_t type, std::int64_t count, const void* elements) {
  const int slot = output_slot(rec.type, name);
  if (slot >= 0) {
    rec.op.outputs[slot] = linked_tensor(r, type, count, elements);
    if (name == CUDNN_ATTR_OPERATION_POINTWISE_DXDESC) rec.op.writes_dx = true;
    return;
  }
  switch (name) {
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA:
      rec.op.alpha = scalar_value(type, count, elements);
      break;
    case CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA:
    case CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA:
      rec.op.beta = scalar_value(type, count, elements);
      break;
    case CUDNN_ATTR_OPERATION_MATMUL_IRREGULARLY_STRIDED_BATCH_COUNT:
    case CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC:
    case CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC:
    case CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC:
      if (rec.type == CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR) rec.op.skipped = true;
      break;
    default:
      break;
  }
}

void note_attribute(Registry& r, Record& rec, cudnnBackendAttributeName_t name,
                    cudnnBackendAttributeType_t type, std::int64_t count, const void* elements) {
  if (elements == nullptr) return;
  if (rec.type == CUDNN_BACKEND_TENSOR_DESCRIPTOR) {
    note_tensor(rec, name, type, count, elements);
  } else if (known_op(rec.type)) {
    note_op(r, rec, name, type, count, elements);
  } else if (name == CUDNN_ATTR_OPERATIONGRAPH_OPS) {
    rec.ops.clear();
    if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR) return;
    const auto* ops = static_cast<const cudnnBackendDescriptor_t*>(elements);
    for (std::int64_t i = 0; i < count; ++i) {
      const Record* op = find(r, ops[i]);
      if (op != nullptr && op->finalized && op->op_done != nullptr) rec.ops.push_back(op->op_done);
    }
  } else if (name == CUDNN_ATTR_ENGINE_OPERATION_GRAPH || name == CUDNN_ATTR_ENGINECFG_ENGINE ||
             name == CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH ||
             name == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) {
    if (!rec.partial) rec.graph = linked_graph(r, type, count, elements);
  } else if (name == CUDNN_ATTR_EXECUTION_PLAN_RUN_ONLY_INTERMEDIATE_UIDS) {
    // A plan that runs only part of its graph: which part is not followed.
    rec.graph = nullptr;
    rec.partial = true;
  } else if (name == CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS) {
    rec.uids = type == CUDNN_TYPE_INT64 && count > 0 && elements != nullptr
                   ? std::vector<std::int64_t>(static_cast<const std::int64_t*>(elements),
                                               static_cast<const std::int64_t*>(elements) + count)
                   : std::vector<std::int64_t>{};
  } else if (name == CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS) {
    rec.pointers = type == CUDNN_TYPE_VOID_PTR && count > 0 && elements != nullptr
                       ? std::vector<void*>(static_cast<void* const*>(elements),
                                            static_cast<void* const*>(elements) + count)
                       : std::vector<void*>{};
  } else if (name == kVariantPackOverrideUniqueIds || name == kVariantPackOverrideShapes ||
             name == kVariantPackOverrideStrides) {
    rec.overrides = true;
  }
}

// What a plan running `graph` claims: each known operation's non-virtual
// outputs of dense extent.
std::shared_ptr<const std::vector<Claim>> plan_claims(const Graph& graph) {
  auto claims = std::make_shared<std::vector<Claim>>();
  for (const auto& op : graph.ops) {
    if (op->skipped || op->alpha == Value::kZero || op->alpha == Value::kUnknown) continue;
    for (int slot = 0; slot < Op::kOutputs; ++slot) {
      const std::shared_ptr<const Tensor>& t = op->outputs[slot];
      if (slot == 0 && op->writes_dx) continue;  // y, read by a backward mode
      if (t == nullptr || t->is_virtual || t->unusual || !t->has_uid || !t->has_type ||
          t->dims.size() != t->strides.size())
        continue;
      const std::uint64_t bytes = cudnn::dense_tensor_bytes(
          t->type, static_cast<int>(t->dims.size()), t->dims.data(), t->strides.data());
      if (bytes == 0) continue;
      if (op->beta == Value::kNonZero) claims->push_back({t->uid, bytes, Access::kRead});
      claims->push_back({t->uid, bytes, Access::kWrite});
    }
  }
  return claims;
}

void note_finalized(Record& rec) {
  rec.finalized = true;
  if (rec.type == CUDNN_BACKEND_TENSOR_DESCRIPTOR) {
    rec.tensor_done = std::make_shared<const Tensor>(rec.tensor);
  } else if (known_op(rec.type)) {
    rec.op_done = std::make_shared<const Op>(rec.op);
  } else if (rec.type == CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR) {
    auto graph = std::make_shared<Graph>();
    graph->ops = rec.ops;
    rec.graph = std::move(graph);
  } else if (rec.type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR) {
    rec.claims = rec.graph != nullptr ? plan_claims(*rec.graph) : nullptr;
  }
}

// Descriptors that cudnnBackendGetAttribute filled: engine configs from
// heuristics' results, an engine from a config, a config from a plan. They
// come back finalized, running the source's graph.
void note_filled(Registry& r, cudnnBackendDescriptor_t source, cudnnBackendAttributeName_t name,
                 cudnnBackendAttributeType_t type, std::int64_t filled, void* elements) {
  if (type != CUDNN_TYPE_BACKEND_DESCRIPTOR || elements == nullptr || filled <= 0) return;
  if (name != CUDNN_ATTR_ENGINEHEUR_RESULTS && name != CUDNN_ATTR_ENGINECFG_ENGINE &&
      name != CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG)
    return;
  const Record* src = find(r, source);
  const std::shared_ptr<const Graph> graph =
      src != nullptr && src->finalized ? src->graph : nullptr;
  auto* out = static_cast<cudnnBackendDescriptor_t*>(elements);
  for (std::int64_t i = 0; i < filled; ++i) {
    Record* rec = find(r, out[i]);
    if (rec == nullptr) continue;
    rec->graph = graph;
    rec->finalized = graph != nullptr;
  }
}

// The uses of one cudnnBackendExecute, from its plan's claims and the
// variant pack's pointers; none when any claim is not resolved.
std::vector<blas::Touch> execute_touches(cudnnBackendDescriptor_t plan,
                                         cudnnBackendDescriptor_t pack) {
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  const Record* p = find(r, plan);
  const Record* v = find(r, pack);
  if (p == nullptr || !p->finalized || p->claims == nullptr || p->claims->empty() ||
      v == nullptr || v->overrides || v->uids.size() != v->pointers.size())
    return {};
  std::vector<blas::Touch> touches;
  touches.reserve(p->claims->size());
  for (const Claim& c : *p->claims) {
    const void* addr = nullptr;
    for (std::size_t i = 0; i < v->uids.size() && addr == nullptr; ++i)
      if (v->uids[i] == c.uid) addr = v->pointers[i];
    if (addr == nullptr) return {};
    touches.push_back({reinterpret_cast<Addr>(addr), c.bytes, c.access});
  }
  return touches;
}

}  // namespace
}  // namespace xsc::rt

namespace rt = xsc::rt;

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBackendCreateDescriptor(
    cudnnBackendDescriptorType_t descriptorType, cudnnBackendDescriptor_t* descriptor) {
  const cudnnStatus_t status = rt::call_real<decltype(&cudnnBackendCreateDescriptor)>(
      rt::real_CreateDescriptor, descriptorType, descriptor);
  if (status != CUDNN_STATUS_SUCCESS || descriptor == nullptr || !rt::wanted()) return status;
  rt::cudnn::check_release();
  rt::Registry& r = rt::registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  // A fresh record, whatever a destroyed descriptor at this address said.
  r.records.insert_or_assign(*descriptor, rt::Record(descriptorType));
  return status;
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
  if (rt::wanted()) {
    rt::Registry& r = rt::registry();
    const std::lock_guard<std::mutex> lock(r.mu);
    r.records.erase(descriptor);
  }
  return rt::call_real<decltype(&cudnnBackendDestroyDescriptor)>(rt::real_DestroyDescriptor,
                                                                 descriptor);
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
                                                        cudnnBackendAttributeName_t attributeName,
                                                        cudnnBackendAttributeType_t attributeType,
                                                        int64_t elementCount,
                                                        const void* arrayOfElements) {
  const cudnnStatus_t status = rt::call_real<decltype(&cudnnBackendSetAttribute)>(
      rt::real_SetAttribute, descriptor, attributeName, attributeType, elementCount,
      arrayOfElements);
  if (status != CUDNN_STATUS_SUCCESS || !rt::wanted()) return status;
  rt::Registry& r = rt::registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  rt::Record* rec = rt::find(r, descriptor);
  if (rec != nullptr && !rec->finalized)
    rt::note_attribute(r, *rec, attributeName, attributeType, elementCount, arrayOfElements);
  return status;
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
  const cudnnStatus_t status =
      rt::call_real<decltype(&cudnnBackendFinalize)>(rt::real_Finalize, descriptor);
  if (status != CUDNN_STATUS_SUCCESS || !rt::wanted()) return status;
  rt::Registry& r = rt::registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  rt::Record* rec = rt::find(r, descriptor);
  if (rec != nullptr && !rec->finalized) rt::note_finalized(*rec);
  return status;
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBackendGetAttribute(
    cudnnBackendDescriptor_t const descriptor, cudnnBackendAttributeName_t attributeName,
    cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount,
    int64_t* elementCount, void* arrayOfElements) {
  const cudnnStatus_t status = rt::call_real<decltype(&cudnnBackendGetAttribute)>(
      rt::real_GetAttribute, descriptor, attributeName, attributeType, requestedElementCount,
      elementCount, arrayOfElements);
  if (status != CUDNN_STATUS_SUCCESS || elementCount == nullptr || !rt::wanted()) return status;
  // At most the requested count is filled, whatever count is said.
  const int64_t filled = *elementCount < requestedElementCount ? *elementCount
                                                               : requestedElementCount;
  rt::Registry& r = rt::registry();
  const std::lock_guard<std::mutex> lock(r.mu);
  rt::note_filled(r, descriptor, attributeName, attributeType, filled, arrayOfElements);
  return status;
}

XSC_CUDNN_EXPORT cudnnStatus_t cudnnBackendExecute(cudnnHandle_t handle,
                                                   cudnnBackendDescriptor_t executionPlan,
                                                   cudnnBackendDescriptor_t variantPack) {
  using Fn = decltype(&cudnnBackendExecute);
  if (!rt::wanted()) return rt::call_real<Fn>(rt::real_Execute, handle, executionPlan, variantPack);
  const rt::blas::OuterCall call;
  const cudnnStatus_t status =
      rt::call_real<Fn>(rt::real_Execute, handle, executionPlan, variantPack);
  if (status != CUDNN_STATUS_SUCCESS || !call.outer()) return status;
  const rt::PartScope part(rt::Part::kInterposers);
  std::vector<rt::blas::Touch> touches = rt::execute_touches(executionPlan, variantPack);
  xsc::StreamId stream = xsc::kLegacyStream;
  if (touches.empty() || !rt::cudnn::handle_stream(handle, &stream)) return status;
  rt::feed_operator_uses("cudnnBackendExecute", stream, touches.data(), touches.size());
  return status;
}

#endif  // __has_include(<cudnn.h>) && __has_include(<cublas_v2.h>)
