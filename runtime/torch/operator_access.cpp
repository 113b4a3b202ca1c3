#include "runtime/torch/operator_access.h"

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/cuda/CUDAStream.h>

#include "runtime/torch/host_views.h"

namespace xsc::torch_adapter {
namespace {

const xsc_host_api* g_api = nullptr;

// In-place aten operators that do not write all of `self`: the ones that
// write the indexed, the masked, the diagonal or a triangle (another stream
// may legitimately touch the rest), the ones that change its size or
// storage (resize_ copies the old bytes into the new storage and leaves the
// rest unwritten), and _amp_update_scale_, which writes the scale only when
// it changes.
constexpr std::string_view kPartialWriters[] = {
    "index_put_",      "_index_put_impl_", "index_copy_",     "_index_copy_",
    "index_fill_",     "index_add_",       "index_reduce_",   "scatter_",
    "scatter_add_",    "scatter_reduce_",  "masked_scatter_", "masked_fill_",
    "put_",            "fill_diagonal_",   "triu_",           "tril_",
    "embedding_renorm_", "resize_",        "resize_as_",      "resize_as_sparse_",
    "set_",            "_amp_update_scale_",
};

bool partial_writer(std::string_view base) {
  for (std::string_view name : kPartialWriters)
    if (base == name) return true;
  return false;
}

// An argument annotated as written: `Tensor(a!)`, `Tensor(a!)[]`,
// `Tensor(a!)?` (the list form carries the mark on its element type).
bool marked_written(const c10::Argument& arg) {
  const c10::AliasInfo* alias = arg.alias_info();
  if (alias == nullptr) return false;
  if (alias->isWrite()) return true;
  for (const c10::AliasInfo& element : alias->containedTypes())
    if (element.isWrite()) return true;
  return false;
}

// Which arguments of one operator count as written whole, from its schema.
struct OperatorWrites {
  std::string name, overload;          // to confirm a cache hit
  std::vector<std::uint8_t> written;   // per argument, in schema order
  bool any = false;
};

// The schema's word, and only where it means "all of this tensor is written
// when the operator returns": the out= arguments (keyword-only and marked;
// the result is written into them) and `self` of an in-place operator (an
// aten name ending in '_', marked), but for the partial writers above.
// Other marked arguments are left out: some are written only sometimes
// (_native_batch_norm_legit's running statistics only when training,
// _fused_adam_'s gradients only with a grad scale), and a write that did not
// happen, counted, would be a false report on a stream that only reads.
OperatorWrites* describe(const at::RecordFunction& fn) {
  auto* writes = new OperatorWrites;
  writes->name = fn.name();
  writes->overload = fn.overload_name();
  const std::optional<c10::FunctionSchema> schema = fn.operator_schema();
  if (!schema.has_value()) return writes;
  std::string_view base(schema->name());
  if (base.substr(0, 6) != "aten::") return writes;
  base.remove_prefix(6);
  const bool in_place = !base.empty() && base.back() == '_' && !partial_writer(base);
  for (const c10::Argument& arg : schema->arguments()) {
    const bool marked = marked_written(arg);
    const bool whole = marked && (arg.kwarg_only() || (in_place && arg.name() == "self"));
    writes->written.push_back(whole ? 1 : 0);
    writes->any = writes->any || whole;
  }
  return writes;
}

// Schemas live as long as their operators, so the name and overload
// pointers RecordFunction hands out identify an operator. Entries are never
// freed; the strings are compared on each hit all the same.
struct PointerPairHash {
  std::size_t operator()(const std::pair<const char*, const char*>& key) const {
    return std::hash<const void*>()(key.first) * 31 + std::hash<const void*>()(key.second);
  }
};
std::mutex g_cache_mu;
auto* g_cache =
    new std::unordered_map<std::pair<const char*, const char*>, const OperatorWrites*,
                           PointerPairHash>;

// A per-thread direct-mapped front for the shared cache: no lock on the
// path every operator call takes. Trivially destructible, so a plain
// thread_local.
struct RecentOperator {
  const char* name = nullptr;
  const char* overload = nullptr;
  const OperatorWrites* writes = nullptr;
};
constexpr std::size_t kRecentOperators = 128;
thread_local RecentOperator t_recent[kRecentOperators];

const OperatorWrites* writes_of(const at::RecordFunction& fn, const char* name) {
  const char* overload = fn.overload_name();
  const std::size_t slot =
      (reinterpret_cast<std::uintptr_t>(name) >> 4 ^ reinterpret_cast<std::uintptr_t>(overload) >> 3) %
      kRecentOperators;
  RecentOperator& recent = t_recent[slot];
  if (recent.name == name && recent.overload == overload && recent.writes != nullptr &&
      recent.writes->name == name && recent.writes->overload == overload)
    return recent.writes;
  const OperatorWrites* writes = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = g_cache->find({name, overload});
    if (it != g_cache->end() && it->second->name == name && it->second->overload == overload)
      writes = it->second;
  }
  if (writes == nullptr) {
    const OperatorWrites* described = describe(fn);
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto [it, inserted] = g_cache->insert_or_assign({name, overload}, described);
    writes = it->second;
  }
  recent = {name, overload, writes};
  return writes;
}

// What the start callback keeps for the end: the written tensors (their
// data may move, for an out= argument the operator resizes, so the bytes
// are read at the end), the stream and the mark of enqueued work.
struct OperatorCall final : at::ObserverContext {
  const char* name = nullptr;
  std::uint64_t stream = 0;
  std::uint64_t mark = 0;
  std::vector<at::Tensor> tensors;
  // A host operator (all its tensors on the CPU): each tensor's access,
  // XSC_ACCESS_READ or XSC_ACCESS_WRITE, in the order of `tensors`.
  bool host = false;
  std::vector<int> accesses;
};

// Whether the runtime takes host accesses (host API version 3), and has
// seen pinned memory: before that no CPU operator can touch any.
bool g_host_accesses = false;

// Operators inside an operator this thread is already following (a
// composite's pieces) are left to it: its schema says what its caller's
// tensors become.
thread_local int t_depth = 0;
// Likewise host operators inside a host operator this thread follows
// (aten::item's aten::_local_scalar_dense): the outer one is the access.
thread_local int t_host_depth = 0;

// Host operators that read no element of their tensors: whether a tensor
// is pinned, and pinning (of an already pinned tensor it returns the
// tensor itself; of another it reads pageable memory and writes a block
// it returns, neither of which is an argument in pinned memory).
bool reads_no_element(std::string_view name) {
  return name == "aten::is_pinned" || name == "aten::pin_memory" || name == "aten::_pin_memory";
}

void keep(const at::Tensor& t, std::vector<at::Tensor>* out) {
  if (t.defined() && t.is_cuda() && t.layout() == c10::kStrided) out->push_back(t);
}

void collect(const c10::IValue& value, std::vector<at::Tensor>* out) {
  if (value.isTensor()) {
    keep(value.toTensor(), out);
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorVector()) keep(t, out);
  } else if (value.isList()) {  // Tensor?[]
    for (const c10::IValue& element : value.toListRef())
      if (element.isTensor()) keep(element.toTensor(), out);
  }
}

// Tensors of a value, CPU or CUDA; `cuda` set when one is on the device.
void collect_any(const c10::IValue& value, std::vector<at::Tensor>* out, bool* cuda) {
  auto take = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    if (!t.device().is_cpu()) *cuda = true;
    else if (t.layout() == c10::kStrided) out->push_back(t);
  };
  if (value.isTensor()) {
    take(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorVector()) take(t);
  } else if (value.isList()) {  // Tensor?[]
    for (const c10::IValue& element : value.toListRef())
      if (element.isTensor()) take(element.toTensor());
  }
}

// A CPU operator (no tensor of it on a device) reads its arguments and
// writes those its schema marks written whole (as for device operators);
// the runtime keeps only the accesses to pinned memory. An operator with a
// CUDA tensor (copy_ between the host and the device) is a copy the runtime
// sees as a cudaMemcpyAsync: not a host access.
std::unique_ptr<OperatorCall> host_operator(const at::RecordFunction& fn, const char* name,
                                            const OperatorWrites* writes) {
  const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  if (inputs.size() != writes->written.size()) return nullptr;
  auto call = std::make_unique<OperatorCall>();
  bool cuda = false;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::size_t before = call->tensors.size();
    collect_any(inputs[i], &call->tensors, &cuda);
    if (cuda) return nullptr;
    (void)before;
    call->accesses.resize(call->tensors.size(),
                          writes->written[i] ? XSC_ACCESS_WRITE : XSC_ACCESS_READ);
  }
  if (call->tensors.empty()) return nullptr;
  call->name = name;
  call->host = true;
  return call;
}

std::unique_ptr<at::ObserverContext> on_operator_start(const at::RecordFunction& fn) {
  if (t_depth > 0) return nullptr;
  const char* name = fn.name();
  if (name == nullptr || std::strncmp(name, "aten::", 6) != 0) return nullptr;
  const OperatorWrites* writes = writes_of(fn, name);
  if (g_host_accesses && t_host_depth == 0 && !in_host_view() &&
      g_api->pinned_memory_seen() != 0 && !reads_no_element(name)) {
    // Not counted in t_depth: the pieces of a host operator that turn out
    // to copy to the device (aten::to's copy_) are followed as usual.
    if (auto host = host_operator(fn, name, writes)) {
      host->mark = g_api->enqueue_mark();
      ++t_host_depth;
      return host;
    }
  }
  if (!writes->any) return nullptr;
  const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  if (inputs.size() != writes->written.size()) return nullptr;
  auto call = std::make_unique<OperatorCall>();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (writes->written[i]) collect(inputs[i], &call->tensors);
  if (call->tensors.empty()) return nullptr;
  // One device, whose current stream the operator's kernels go to.
  const c10::DeviceIndex device = call->tensors.front().device().index();
  for (const at::Tensor& t : call->tensors)
    if (t.device().index() != device) return nullptr;
  call->name = name;
  call->stream = reinterpret_cast<std::uint64_t>(c10::cuda::getCurrentCUDAStream(device).stream());
  call->mark = g_api->enqueue_mark();
  ++t_depth;
  return call;
}

// The bytes a written tensor certainly covers: all of them when it is dense
// (no gaps, no overlap: a contiguous tensor, a permuted one), else only its
// first element (a strided view's elements are spread among bytes other
// views may own).
bool written_bytes(const at::Tensor& t, xsc_operator_write* out) {
  const std::int64_t numel = t.numel();
  if (numel <= 0) return false;
  const void* data = t.const_data_ptr();
  if (data == nullptr) return false;
  const auto element = static_cast<std::uint64_t>(t.element_size());
  out->addr = reinterpret_cast<std::uint64_t>(data);
  out->size = t.is_non_overlapping_and_dense() ? static_cast<std::uint64_t>(numel) * element
                                               : element;
  return true;
}

void on_operator_end(const at::RecordFunction&, at::ObserverContext* context) {
  if (context == nullptr) return;
  auto* call = static_cast<OperatorCall*>(context);
  if (call->host) {
    --t_host_depth;
    // An operator that enqueued device work (a CPU tensor's .to("cuda"),
    // pin_memory's copy made by the device) moved bytes by DMA, not by the
    // host: its copies are the uses.
    if (g_api->enqueue_mark() != call->mark) return;
    // Read and written while the operator ran, on this thread; fed at its
    // end, when an out= tensor has its final storage.
    for (std::size_t i = 0; i < call->tensors.size(); ++i) {
      xsc_operator_write bytes{};
      try {
        if (!written_bytes(call->tensors[i], &bytes)) continue;
      } catch (const std::exception&) {
        continue;  // no storage
      }
      g_api->host_access(bytes.addr, bytes.size, call->accesses[i], call->name, 0);
    }
    return;
  }
  --t_depth;
  // Nothing enqueued on the stream while the operator ran: it wrote
  // nothing there (record_stream, resize_, a collective on its own stream).
  if (g_api->enqueued_since(call->stream, call->mark) == 0) return;
  std::vector<xsc_operator_write> writes;
  writes.reserve(call->tensors.size());
  for (const at::Tensor& t : call->tensors) {
    xsc_operator_write w{};
    try {
      if (written_bytes(t, &w)) writes.push_back(w);
    } catch (const std::exception&) {
      // A tensor without storage (a fake or functional wrapper): no bytes.
    }
  }
  if (!writes.empty())
    g_api->operator_writes(call->name, call->stream, call->mark, writes.data(), writes.size());
}

}  // namespace

bool install_operator_access(const xsc_host_api* api, std::string* why) {
  if (api->version < 2 || api->operator_access_wanted == nullptr ||
      api->enqueue_mark == nullptr || api->enqueued_since == nullptr ||
      api->operator_writes == nullptr) {
    *why = "the runtime predates operator writes";
    return false;
  }
  if (api->operator_access_wanted() == 0) return true;
  g_host_accesses = api->version >= 3 && api->pinned_memory_seen != nullptr &&
                    api->host_access != nullptr;
  static std::once_flag once;
  static bool added = false;
  std::call_once(once, [&] {
    g_api = api;
    try {
      at::addGlobalCallback(at::RecordFunctionCallback(&on_operator_start, &on_operator_end)
                                .needsInputs(true)
                                .scopes({at::RecordScope::FUNCTION}));
      added = true;
    } catch (const std::exception& e) {
      *why = std::string("at::addGlobalCallback failed: ") + e.what();
    }
  });
  if (!added && why->empty()) *why = "at::addGlobalCallback failed earlier";
  return added;
}

}  // namespace xsc::torch_adapter
