#include "runtime/torch/operator_access.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>

#include "runtime/torch/adapter_parts.h"
#include "runtime/torch/host_views.h"
#include "runtime/torch/python_api.h"
#include "runtime/torch/trace_steps.h"
#include "runtime/torch/writer_call.h"
#include "runtime/torch/writer_kernels.h"

namespace xsc::torch_adapter {
namespace {

const xsc_host_api* g_api = nullptr;
// g_api when the runtime times its parts (adapter_parts.h), else null.
const xsc_host_api* g_parts = nullptr;

// The dispatch key the writer kernels are registered on: a mode key (the
// threads that run operators include it in their dispatch keys), above every
// key PyTorch uses but the pre-dispatch and Python-dispatcher ones, so a
// writer kernel sees an operator call before autocast, autograd, functorch
// and Python modes, as a RecordFunction callback does. Nothing in PyTorch
// registers on it (its name says it is for PyTorch's own tests).
constexpr c10::DispatchKey kKey = kWriterKey;

// The device whose tensors' writes are fed: CUDA, or the CPU when
// XSC_TORCH_OP_DEVICE=cpu (bench/torch_op_hook.py and the CPU tests of the
// interception; writes are then reported on stream 0).
c10::DeviceType g_device = c10::DeviceType::CUDA;

std::atomic<std::uint64_t> g_writer_calls{0}, g_followed{0}, g_fed{0}, g_host_calls{0},
    g_writer_operators{0}, g_unboxed_operators{0}, g_adopted{0}, g_callback_calls{0},
    g_callback_switched_on{0};

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

// Whether `base`, an aten name without its namespace, is one of `names`.
template <std::size_t N>
bool listed(std::string_view base, const std::string_view (&names)[N]) {
  return std::find(std::begin(names), std::end(names), base) != std::end(names);
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

// Operators that touch no element of their tensors, though their schemas
// take tensors (and, for the in-place ones, mark them written): whether a
// tensor is pinned; pinning (of an already pinned tensor it returns the
// tensor itself; of another it reads pageable memory and writes a block it
// returns, neither of which is an argument in pinned memory); the factories
// that take only a tensor's shape and options (zeros_like(t) reads none of
// t); and the in-place operators that change a tensor's metadata, not its
// elements (unsqueeze_, requires_grad_). A host access counted for one of
// them would be a false report: `torch.zeros_like(buf)` while a copy into
// buf is pending reads nothing of it.
constexpr std::string_view kNoElementOperators[] = {
    "is_pinned",    "pin_memory",   "_pin_memory",  "empty_like",        "zeros_like",
    "ones_like",    "full_like",    "rand_like",    "randn_like",        "randint_like",
    "new_empty",    "new_empty_strided", "new_zeros", "new_ones",        "new_full",
    "requires_grad_", "detach_",    "squeeze_",     "unsqueeze_",        "t_",
    "transpose_",   "swapdims_",    "swapaxes_",    "as_strided_",       "rename_",
};

// A view: every result aliases an argument (`Tensor(a)`, `Tensor(a)[]`)
// and no argument is marked written (select, slice, view, detach, split,
// expand). It reads no element. One that copies when it must (reshape or
// contiguous of a strided tensor, to() with another dtype) does so by an
// operator of its own inside it (clone, _to_copy), which is followed as a
// host operator in its own right.
bool returns_views(const c10::FunctionSchema& schema) {
  if (schema.returns().empty()) return false;
  for (const c10::Argument& arg : schema.arguments())
    if (marked_written(arg)) return false;
  for (const c10::Argument& result : schema.returns())
    if (result.alias_info() == nullptr) return false;
  return true;
}

// The schema's word, and only where it means "all of this tensor is written
// when the operator returns": the out= arguments (keyword-only and marked;
// the result is written into them) and `self` of an in-place operator (an
// aten name ending in '_', marked), but for the partial writers above.
// Other marked arguments are left out: some are written only sometimes
// (_native_batch_norm_legit's running statistics only when training,
// _fused_adam_'s gradients only with a grad scale), and a write that did not
// happen, counted, would be a false report on a stream that only reads.
OperatorWrites describe(const c10::FunctionSchema& schema) {
  OperatorWrites writes;
  writes.name = schema.name();
  std::string_view base(schema.name());
  if (base.substr(0, 6) != "aten::") return writes;
  base.remove_prefix(6);
  if (listed(base, kNoElementOperators)) {
    writes.written.assign(schema.arguments().size(), 0);
    writes.reads_elements = false;
    return writes;
  }
  writes.reads_elements = !returns_views(schema);
  const bool in_place = !base.empty() && base.back() == '_' && !listed(base, kPartialWriters);
  for (const c10::Argument& arg : schema.arguments()) {
    const bool marked = marked_written(arg);
    const bool whole = marked && (arg.kwarg_only() || (in_place && arg.name() == "self"));
    writes.written.push_back(whole ? 1 : 0);
    writes.any = writes.any || whole;
  }
  return writes;
}

// Operators inside an operator this thread is already following (a
// composite's pieces) are left to it: its schema says what its caller's
// tensors become.
thread_local int t_depth = 0;
// Likewise host operators inside a host operator this thread follows
// (aten::item's aten::_local_scalar_dense): the outer one is the access.
thread_local int t_host_depth = 0;

// ---- the device path: one operator call that writes tensors whole ----------

void keep(const at::Tensor& t, c10::SmallVectorImpl<at::Tensor>* out) {
  if (t.defined() && t.device().type() == g_device && t.layout() == c10::kStrided)
    out->push_back(t);
}

// Calls f on each tensor a value holds: a Tensor, each of a Tensor[], each
// present one of a Tensor?[].
template <class F>
void for_each_tensor(const c10::IValue& value, F&& f) {
  if (value.isTensor()) {
    f(value.toTensor());
  } else if (value.isTensorList()) {
    for (const at::Tensor& t : value.toTensorVector()) f(t);
  } else if (value.isList()) {  // Tensor?[]
    for (const c10::IValue& element : value.toListRef())
      if (element.isTensor()) f(element.toTensor());
  }
}

// The CPU tensors of a value (strided ones); *device set when one is on a
// device.
template <class Tensors>
void collect_host(const c10::IValue& value, Tensors* out, bool* device) {
  for_each_tensor(value, [&](const at::Tensor& t) {
    if (!t.defined()) return;
    if (!t.device().is_cpu()) *device = true;
    else if (t.layout() == c10::kStrided) out->push_back(t);
  });
}

// The tensors of a call's boxed arguments, the last `writes.written.size()`
// values of `stack` (none when there are fewer), each with whether it is
// written.
void visit_boxed(const OperatorWrites& writes, c10::ArrayRef<c10::IValue> stack,
                 TensorVisitor visit) {
  const std::size_t n = writes.written.size();
  if (stack.size() < n) return;
  for (std::size_t i = 0; i < n; ++i) {
    const bool written = writes.written[i] != 0;
    for_each_tensor(stack[stack.size() - n + i], [&](const at::Tensor& t) { visit(t, written); });
  }
}

// At the start of an outermost writer operator: its written tensors, if
// any lies on the device (all on one device, whose current stream its
// kernels go to). True when the call is followed (t_depth raised).
bool begin_device_call(const OperatorWrites& writes, ArgumentTensors arguments,
                       DeviceCall* call) {
  arguments([&](const at::Tensor& t, bool written) {
    if (written) keep(t, &call->tensors);
  });
  if (call->tensors.empty()) return false;
  const c10::DeviceIndex device = call->tensors.front().device().index();
  for (const at::Tensor& t : call->tensors)
    if (t.device().index() != device) return false;
  call->name = writes.name.c_str();
  call->stream =
      g_device == c10::DeviceType::CUDA
          ? reinterpret_cast<std::uint64_t>(c10::cuda::getCurrentCUDAStream(device).stream())
          : 0;
  call->mark = g_api->enqueue_mark();
  ++t_depth;
  g_followed.fetch_add(1, std::memory_order_relaxed);
  return true;
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

// When the followed operator returned (or threw: what it enqueued before
// still ran).
void end_device_call(const DeviceCall& call) noexcept {
  --t_depth;
  // Nothing enqueued on the stream while the operator ran: it wrote
  // nothing there (record_stream, resize_, a collective on its own stream).
  if (g_api->enqueued_since(call.stream, call.mark) == 0) return;
  c10::SmallVector<xsc_operator_write, 2> writes;
  for (const at::Tensor& t : call.tensors) {
    xsc_operator_write w{};
    try {
      if (written_bytes(t, &w)) writes.push_back(w);
    } catch (...) {
      // A tensor without storage (a fake or functional wrapper): no bytes.
    }
  }
  if (writes.empty()) return;
  g_fed.fetch_add(1, std::memory_order_relaxed);
  g_api->operator_writes(call.name, call.stream, call.mark, writes.data(), writes.size());
}

// ---- host writers: CPU operators that write pinned memory whole ------------

// Set while the runtime says that device uses of pinned memory may be
// pending but all of them read it (pinned_pending_hook(2): uploads from
// pinned staging buffers). Only a host write can race with those, and an
// aten operator that writes a host tensor whole has a writer kernel: it is
// followed there, and the boxing RecordFunction callback stays off.
std::atomic<bool> g_host_writers{false};

// At the start of an outermost writer operator none of whose tensors is on a
// device: the host tensors it writes whole (HostWrites, writer_call.h).
// False when it is not such a call.
bool begin_host_writes(const OperatorWrites& writes, ArgumentTensors arguments,
                       HostWrites* call) {
  bool device = false;
  arguments([&](const at::Tensor& t, bool written) {
    if (device || !t.defined()) return;
    if (!t.device().is_cpu()) device = true;
    else if (written && t.layout() == c10::kStrided) call->tensors.push_back(t);
  });
  if (device || call->tensors.empty()) return false;
  call->name = writes.name.c_str();
  call->mark = g_api->enqueue_mark();
  ++t_host_depth;
  g_host_calls.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void end_host_writes(const HostWrites& call) noexcept {
  --t_host_depth;
  // Work it enqueued (a copy to the device) moved bytes by DMA: its copies
  // are the uses, as for the callback's host operators.
  if (g_api->enqueue_mark() != call.mark) return;
  for (const at::Tensor& t : call.tensors) {
    xsc_operator_write bytes{};
    try {
      if (!written_bytes(t, &bytes)) continue;
    } catch (...) {
      continue;  // no storage
    }
    g_api->host_access(bytes.addr, bytes.size, XSC_ACCESS_WRITE, call.name, 0);
  }
}

// ---- the dispatcher mechanism: a kernel per writer operator ----------------

}  // namespace

WriterCall::WriterCall(const OperatorWrites& writes, ArgumentTensors arguments) {
  g_writer_calls.fetch_add(1, std::memory_order_relaxed);
  if (t_depth == 0) {
    const AdapterPart part(g_parts, XSC_PART_OPERATOR_HOOK);
    device_followed_ = begin_device_call(writes, arguments, &device_);
  }
  if (!device_followed_ && t_depth == 0 && t_host_depth == 0 &&
      g_host_writers.load(std::memory_order_acquire) && !in_host_view()) {
    const AdapterPart part(g_parts, XSC_PART_OPERATOR_HOOK);
    host_followed_ = begin_host_writes(writes, arguments, &host_);
  }
  // The operators a followed call makes are its own pieces (t_depth,
  // t_host_depth): they skip the adapter's key, unboxed, instead of each
  // being boxed there only to be handed on (a foreach operator's
  // per-tensor fallback calls one per tensor).
  if (device_followed_ || host_followed_) pieces_.emplace(kKey);
}

// When the followed operator returned or threw (what it enqueued before
// still ran), timed as the operator hook.
WriterCall::~WriterCall() {
  pieces_.reset();
  if (!device_followed_ && !host_followed_) return;
  const AdapterPart part(g_parts, XSC_PART_OPERATOR_HOOK);
  if (device_followed_) end_device_call(device_);
  else end_host_writes(host_);
}

namespace {

// Registered on kKey for one writer operator that has no unboxed kernel
// (writer_kernels.h): follows the call and hands it on to the keys below.
class WriterKernel final : public c10::OperatorKernel {
 public:
  explicit WriterKernel(const OperatorWrites* writes) : writes_(writes) {}

  void operator()(const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                  torch::jit::Stack* stack) {
    auto arguments = [&](TensorVisitor visit) { visit_boxed(*writes_, *stack, visit); };
    const WriterCall call(*writes_, arguments);
    op.redispatchBoxed(keys_below_writer_key(keys), stack);
  }

 private:
  const OperatorWrites* writes_;  // never freed: kernels live as long as the process
};

std::mutex g_register_mu;
// Kept for the life of the process: dropping one would deregister.
std::vector<c10::RegistrationHandleRAII>* g_registrations = nullptr;
// aten operators registered after the enumeration (the listener may not
// register from inside the dispatcher's lock): registered at the next
// sampled callback.
std::vector<c10::OperatorName>* g_pending = nullptr;
std::atomic<bool> g_have_pending{false};

// Registers the writer kernel of one operator, when its schema writes
// something whole. Called with g_register_mu held, outside the dispatcher's
// own lock.
void register_writer(const c10::OperatorName& name) {
  if (name.name.rfind("aten::", 0) != 0) return;
  std::optional<c10::OperatorHandle> op = c10::Dispatcher::singleton().findSchema(name);
  if (!op.has_value()) return;
  auto* writes = new OperatorWrites(describe(op->schema()));
  if (!writes->any) {
    delete writes;
    return;
  }
  if (std::optional<UnboxedWriterKernel> unboxed = unboxed_writer_kernel(name, writes)) {
    g_registrations->push_back(c10::Dispatcher::singleton().registerImpl(
        name, kKey, std::move(unboxed->kernel), unboxed->signature, nullptr,
        "xstream-check operator writes (unboxed)"));
    g_unboxed_operators.fetch_add(1, std::memory_order_relaxed);
  } else {
    g_registrations->push_back(c10::Dispatcher::singleton().registerImpl(
        name, kKey,
        c10::KernelFunction::makeFromBoxedKernel(
            c10::BoxedKernel::makeFromFunctor(std::make_unique<WriterKernel>(writes))),
        std::nullopt, nullptr, "xstream-check operator writes"));
  }
  g_writer_operators.fetch_add(1, std::memory_order_relaxed);
}

class LateOperators final : public c10::OpRegistrationListener {
 public:
  void onOperatorRegistered(const c10::OperatorHandle& op) override {
    if (!enumerated_) return;  // the ones there at the start are enumerated apart
    const c10::OperatorName& name = op.operator_name();
    if (name.name.rfind("aten::", 0) != 0) return;
    std::lock_guard<std::mutex> lock(g_pending_mu);
    g_pending->push_back(name);
    g_have_pending.store(true, std::memory_order_release);
  }
  void onOperatorDeregistered(const c10::OperatorHandle&) override {}
  bool enumerated_ = false;
  static std::mutex g_pending_mu;
};
std::mutex LateOperators::g_pending_mu;
LateOperators* g_listener = nullptr;

void register_pending() {
  std::vector<c10::OperatorName> pending;
  {
    std::lock_guard<std::mutex> lock(LateOperators::g_pending_mu);
    pending.swap(*g_pending);
    g_have_pending.store(false, std::memory_order_release);
  }
  std::lock_guard<std::mutex> lock(g_register_mu);
  for (const c10::OperatorName& name : pending) {
    try {
      register_writer(name);
    } catch (const std::exception&) {
    }
  }
}

// This thread's dispatch keys include kKey (ThreadLocalState carries it to
// the autograd engine's workers and at::launch tasks).
void adopt_thread() noexcept {
  if (c10::impl::tls_is_dispatch_key_included(kKey)) return;
  c10::impl::tls_set_dispatch_key_included(kKey, true);
  g_adopted.fetch_add(1, std::memory_order_relaxed);
}

std::atomic<bool> g_dispatcher_installed{false};

// A sampled RecordFunction callback without inputs, on every thread: it
// gives kKey to threads the runtime did not start (threads that existed
// before the install, and all threads when the runtime is not preloaded),
// within a few dozen operators, and registers late aten operators. Taken
// on about one operator call in kAdoptionPeriod, it costs the others a
// countdown.
constexpr double kAdoptionPeriod = 32.0;

std::unique_ptr<at::ObserverContext> on_sampled_start(const at::RecordFunction&) {
  adopt_thread();
  if (g_have_pending.load(std::memory_order_acquire)) register_pending();
  return nullptr;
}

void thread_start_hook() { adopt_thread(); }

bool install_dispatcher(std::string* why) {
  try {
    c10::Dispatcher& dispatcher = c10::Dispatcher::singleton();
    if (dispatcher.hasBackendFallbackForDispatchKey(kKey)) {
      *why = std::string("another library registered on the dispatch key ") + c10::toString(kKey);
      return false;
    }
    g_registrations = new std::vector<c10::RegistrationHandleRAII>;
    g_pending = new std::vector<c10::OperatorName>;
    g_registrations->push_back(dispatcher.registerFallback(
        kKey, c10::KernelFunction::makeFallthrough(), "xstream-check operator writes"));
    g_listener = new LateOperators;
    // The listener is called at once for every operator there; those are
    // enumerated below instead, outside the dispatcher's lock.
    g_registrations->push_back(dispatcher.addRegistrationListener(
        std::unique_ptr<c10::OpRegistrationListener>(g_listener)));
    {
      std::lock_guard<std::mutex> lock(g_register_mu);
      g_listener->enumerated_ = true;
      for (const c10::OperatorName& name : dispatcher.getAllOpNames()) register_writer(name);
    }
    if (g_have_pending.load()) register_pending();
    adopt_thread();
    at::addGlobalCallback(at::RecordFunctionCallback(&on_sampled_start)
                              .needsInputs(false)
                              .samplingProb(1.0 / kAdoptionPeriod)
                              .scopes({at::RecordScope::FUNCTION}));
    if (g_api->version >= 4 && g_api->set_thread_start_hook != nullptr)
      g_api->set_thread_start_hook(&thread_start_hook);
    g_dispatcher_installed.store(true);
    return true;
  } catch (const std::exception& e) {
    *why = std::string("the dispatcher refused the operator-write kernels: ") + e.what();
    return false;
  }
}

// ---- the RecordFunction mechanism: host operators, and the fallback --------

// A per-thread cache of each operator's schema reading, by the name and
// overload pointers RecordFunction hands out (schemas live as long as their
// operators). Entries are never freed; the strings are compared on each hit.
struct CachedWrites {
  std::string name_key, overload_key;
  OperatorWrites writes;
};
struct PointerPairHash {
  std::size_t operator()(const std::pair<const char*, const char*>& key) const {
    return std::hash<const void*>()(key.first) * 31 + std::hash<const void*>()(key.second);
  }
};
std::mutex g_cache_mu;
auto* g_cache =
    new std::unordered_map<std::pair<const char*, const char*>, const CachedWrites*,
                           PointerPairHash>;

struct RecentOperator {
  const char* name = nullptr;
  const char* overload = nullptr;
  const CachedWrites* writes = nullptr;
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
      recent.writes->name_key == name && recent.writes->overload_key == overload)
    return &recent.writes->writes;
  const CachedWrites* writes = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto it = g_cache->find({name, overload});
    if (it != g_cache->end() && it->second->name_key == name &&
        it->second->overload_key == overload)
      writes = it->second;
  }
  if (writes == nullptr) {
    auto* described = new CachedWrites;
    described->name_key = name;
    described->overload_key = overload;
    const std::optional<c10::FunctionSchema> schema = fn.operator_schema();
    if (schema.has_value()) described->writes = describe(*schema);
    described->writes.name = name;
    std::lock_guard<std::mutex> lock(g_cache_mu);
    auto [it, inserted] = g_cache->insert_or_assign({name, overload}, described);
    writes = it->second;
  }
  recent = {name, overload, writes};
  return &writes->writes;
}

// What the start callback keeps for the end.
struct OperatorCall final : at::ObserverContext {
  DeviceCall device;
  // A host operator (all its tensors on the CPU): its tensors and each
  // one's access, XSC_ACCESS_READ or XSC_ACCESS_WRITE.
  bool host = false;
  const char* name = nullptr;
  std::uint64_t mark = 0;
  std::vector<at::Tensor> tensors;
  std::vector<int> accesses;
};

// Whether the runtime takes host accesses (host API version 3).
bool g_host_accesses = false;
// Whether the RecordFunction callback follows device writers too (the
// fallback mechanism), or host operators only.
bool g_record_function_devices = false;

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
    collect_host(inputs[i], &call->tensors, &cuda);
    if (cuda) return nullptr;
    call->accesses.resize(call->tensors.size(),
                          writes->written[i] ? XSC_ACCESS_WRITE : XSC_ACCESS_READ);
  }
  if (call->tensors.empty()) return nullptr;
  call->name = name;
  call->host = true;
  return call;
}

std::unique_ptr<at::ObserverContext> on_operator_start(const at::RecordFunction& fn) {
  g_callback_calls.fetch_add(1, std::memory_order_relaxed);
  if (t_depth > 0) return nullptr;
  const char* name = fn.name();
  if (name == nullptr || std::strncmp(name, "aten::", 6) != 0) return nullptr;
  const OperatorWrites* writes = writes_of(fn, name);
  if (g_host_accesses && t_host_depth == 0 && !in_host_view() &&
      g_api->pinned_memory_seen() != 0 && writes->reads_elements) {
    // Not counted in t_depth: the pieces of a host operator that turn out
    // to copy to the device (aten::to's copy_) are followed as usual.
    if (auto host = host_operator(fn, name, writes)) {
      host->mark = g_api->enqueue_mark();
      ++t_host_depth;
      g_host_calls.fetch_add(1, std::memory_order_relaxed);
      return host;
    }
  }
  // Device writers are the writer kernels' (dispatcher mechanism), but
  // where those could not be registered.
  if (!g_record_function_devices || !writes->any) return nullptr;
  g_writer_calls.fetch_add(1, std::memory_order_relaxed);
  auto call = std::make_unique<OperatorCall>();
  const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
  if (inputs.size() != writes->written.size()) return nullptr;
  auto arguments = [&](TensorVisitor visit) {
    visit_boxed(*writes, c10::ArrayRef<c10::IValue>(inputs.data(), inputs.size()), visit);
  };
  if (!begin_device_call(*writes, arguments, &call->device)) return nullptr;
  return call;
}

void on_operator_end(const at::RecordFunction&, at::ObserverContext* context) {
  if (context == nullptr) return;
  auto* call = static_cast<OperatorCall*>(context);
  if (!call->host) {
    end_device_call(call->device);
    return;
  }
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
}

std::once_flag g_record_function_once;
std::atomic<bool> g_record_function_added{false};
at::CallbackHandle g_record_function_handle = 0;  // set once, before g_record_function_added
// Whether the callback runs: added and not disabled (pinned_pending_hook).
std::atomic<bool> g_record_function_on{false};

bool add_record_function(std::string* why) {
  std::call_once(g_record_function_once, [&] {
    try {
      g_record_function_handle =
          at::addGlobalCallback(at::RecordFunctionCallback(&on_operator_start, &on_operator_end)
                                    .needsInputs(true)
                                    .scopes({at::RecordScope::FUNCTION}));
      g_record_function_added = true;
      g_record_function_on = true;
    } catch (const std::exception& e) {
      *why = std::string("at::addGlobalCallback failed: ") + e.what();
    }
  });
  if (!g_record_function_added.load() && why->empty())
    *why = "at::addGlobalCallback failed earlier";
  return g_record_function_added.load();
}

// The one call of a runtime of host API version 4 or 5 (at its first
// pinned memory), which cannot say when no device use of it is pending:
// from then on every operator's arguments are needed.
void pinned_memory_hook() {
  std::string why;
  if (!add_record_function(&why) && g_api != nullptr && g_api->notice != nullptr)
    g_api->notice(("PyTorch host operators on pinned memory not observed: " + why).c_str());
}

// The runtime's calls, alternating (runtime/host/pinned_uses.cpp): 1 when a
// device use of pinned memory may be pending, so that a CPU operator's
// access to pinned memory may be unordered with it and every operator's
// arguments are needed; 0 once every such use is done. Boxing every
// operator's arguments costs a host-bound training step about 1 ms
// (docs/performance.md), and `loss.item()` uses pinned memory at every
// step: the callback is disabled in between, not removed (removing a
// global callback is not thread-safe; disabling one is, and spares the
// boxing: PyTorch rebuilds each thread's callback list at its next
// operator).
std::mutex g_pending_hook_mu;
bool g_exiting = false;  // under g_pending_hook_mu

// Registered with atexit after PyTorch's callback registry was made, so it
// runs before that registry is destroyed: from then on (a synchronization
// in a destructor, fed on the checker's thread) the hook does nothing.
void stop_pinned_pending_hook() {
  std::lock_guard<std::mutex> lock(g_pending_hook_mu);
  g_exiting = true;
}

void pinned_pending_hook(int pending) {
  std::lock_guard<std::mutex> lock(g_pending_hook_mu);
  if (g_exiting) return;
  // 2: only device reads of pinned memory may be pending; the writer
  // kernels follow host writers, which is all that can race with them.
  const bool writers_only = pending == 2 && g_dispatcher_installed.load();
  const bool callback = pending != 0 && !writers_only;
  // Before the callback goes off, seen by every thread that sees it off.
  if (writers_only) g_host_writers.store(true);
  if (callback && !g_record_function_added.load()) {
    pinned_memory_hook();
  } else if (g_record_function_added.load() && callback != g_record_function_on.load()) {
    try {
      if (callback) {
        at::reenableCallback(g_record_function_handle);
        g_callback_switched_on.fetch_add(1, std::memory_order_relaxed);
      } else {
        at::disableCallback(g_record_function_handle);
      }
      g_record_function_on = callback;
    } catch (const std::exception&) {
      // Left as it was: on follows too much, off is not reached.
    }
  }
  // Host writers are left to the writer kernels only once the callback,
  // which follows them too, is off: never both, never neither.
  if (!writers_only) g_host_writers.store(false, std::memory_order_relaxed);
}

std::atomic<const char*> g_mechanism{"none"};

}  // namespace

bool install_operator_access(const xsc_host_api* api, std::string* why) {
  if (api->version < 2 || api->operator_access_wanted == nullptr ||
      api->enqueue_mark == nullptr || api->enqueued_since == nullptr ||
      api->operator_writes == nullptr) {
    *why = "the runtime predates operator writes";
    return false;
  }
  if (api->operator_access_wanted() == 0) return true;
  static std::once_flag once;
  static bool installed = false;
  std::call_once(once, [&] {
    g_api = api;
    g_parts = parts_api(api);
    if (const char* device = std::getenv("XSC_TORCH_OP_DEVICE");
        device != nullptr && std::strcmp(device, "cpu") == 0)
      g_device = c10::DeviceType::CPU;
    g_host_accesses = api->version >= 3 && api->pinned_memory_seen != nullptr &&
                      api->host_access != nullptr;
    const char* hook = std::getenv("XSC_TORCH_OP_HOOK");
    const bool want_dispatcher = hook == nullptr || std::strcmp(hook, "record-function") != 0;
    std::string dispatcher_why;
    if (want_dispatcher && install_dispatcher(&dispatcher_why)) {
      trace_step("operator writes: writer kernels on the dispatcher",
                 static_cast<unsigned>(g_writer_operators.load()), true);
      g_mechanism.store("dispatcher");
      installed = true;
      // Host operators: the RecordFunction callback while a device use of
      // pinned memory may be pending (for good from the first pinned
      // memory with a runtime of version 4 or 5, which cannot say when none
      // is; at once with an older one).
      if (g_host_accesses) {
        if (api->version >= 6 && api->set_pinned_pending_hook != nullptr) {
          std::atexit(&stop_pinned_pending_hook);
          api->set_pinned_pending_hook(&pinned_pending_hook);
        } else if (api->version >= 4 && api->set_pinned_memory_hook != nullptr)
          api->set_pinned_memory_hook(&pinned_memory_hook);
        else
          installed = add_record_function(why);
      }
      return;
    }
    if (want_dispatcher && api->notice != nullptr)
      api->notice(("PyTorch operator writes through RecordFunction (slower): " + dispatcher_why)
                      .c_str());
    g_record_function_devices = true;
    installed = add_record_function(why);
    if (installed) g_mechanism.store("record-function");
  });
  if (!installed && why->empty()) *why = "the operator-write hooks failed earlier";
  return installed;
}

const char* operator_access_mechanism() { return g_mechanism.load(); }

OperatorAccessCounts operator_access_counts() {
  OperatorAccessCounts counts;
  counts.writer_calls = g_writer_calls.load(std::memory_order_relaxed);
  counts.followed = g_followed.load(std::memory_order_relaxed);
  counts.fed = g_fed.load(std::memory_order_relaxed);
  counts.host_calls = g_host_calls.load(std::memory_order_relaxed);
  counts.writer_operators = g_writer_operators.load(std::memory_order_relaxed);
  counts.unboxed_operators = g_unboxed_operators.load(std::memory_order_relaxed);
  counts.unboxed_calls = unboxed_writer_calls();
  counts.adopted_threads = g_adopted.load(std::memory_order_relaxed);
  counts.host_callback = g_record_function_on.load();
  counts.host_writers = g_host_writers.load();
  counts.callback_calls = g_callback_calls.load(std::memory_order_relaxed);
  counts.callback_switched_on = g_callback_switched_on.load(std::memory_order_relaxed);
  return counts;
}

void adopt_current_thread() {
  if (g_dispatcher_installed.load(std::memory_order_relaxed)) adopt_thread();
}

void patch_higher_order_operators() {
  if (!g_dispatcher_installed.load()) return;
  if (!python_can_run_source() || PyGILState_GetThisThreadState() == nullptr) return;
  // HigherOrderOperator.__call__ dispatches on the highest key of its
  // arguments and the thread's included keys, and raises for a key it has
  // no kernel or fallthrough for; kKey marks no tensor, like the keys
  // PyTorch lets every higher-order operator fall through by default.
  // Python's DispatchKey enum does not name the key; it takes its number.
  static const char* kSource = R"PY(
def _xsc_patch():
    import torch._ops as ops
    key = ops.DispatchKey(_xsc_key)
    defaults = getattr(ops, "_HIGHER_ORDER_OP_DEFAULT_FALLTHROUGH_DISPATCH_KEYS", None)
    if isinstance(defaults, list) and key not in defaults:
        defaults.append(key)
    for op in list(getattr(ops, "_higher_order_ops", {}).values()):
        try:
            op.fallthrough(key)
        except Exception:
            pass
_xsc_patch()
)PY";
  const std::string source =
      "_xsc_key = " + std::to_string(static_cast<unsigned>(kKey)) + "\n" + kSource;
  run_python_source(source);
}

}  // namespace xsc::torch_adapter
