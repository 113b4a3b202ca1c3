#include "runtime/torch/writer_kernels.h"

#include <atomic>
#include <cstddef>
#include <utility>

#include <ATen/ops/_chunk_cat_ops.h>
#include <ATen/ops/_foreach_add_ops.h>
#include <ATen/ops/_foreach_addcdiv_ops.h>
#include <ATen/ops/_foreach_addcmul_ops.h>
#include <ATen/ops/_foreach_clamp_max_ops.h>
#include <ATen/ops/_foreach_copy_ops.h>
#include <ATen/ops/_foreach_div_ops.h>
#include <ATen/ops/_foreach_lerp_ops.h>
#include <ATen/ops/_foreach_maximum_ops.h>
#include <ATen/ops/_foreach_mul_ops.h>
#include <ATen/ops/_foreach_neg_ops.h>
#include <ATen/ops/_foreach_reciprocal_ops.h>
#include <ATen/ops/_foreach_sqrt_ops.h>
#include <ATen/ops/_foreach_sub_ops.h>
#include <ATen/ops/_foreach_zero_ops.h>
#include <ATen/ops/add_ops.h>
#include <ATen/ops/addcdiv_ops.h>
#include <ATen/ops/addcmul_ops.h>
#include <ATen/ops/copy_ops.h>
#include <ATen/ops/div_ops.h>
#include <ATen/ops/fill_ops.h>
#include <ATen/ops/lerp_ops.h>
#include <ATen/ops/mul_ops.h>
#include <ATen/ops/split_with_sizes_copy_ops.h>
#include <ATen/ops/sqrt_ops.h>
#include <ATen/ops/sub_ops.h>
#include <ATen/ops/zero_ops.h>

namespace xsc::torch_adapter {
namespace {

std::atomic<std::uint64_t> g_unboxed_calls{0};

// The tensors one argument holds, with whether the schema writes it: a
// Tensor, each of a Tensor[]; nothing for any other type (the operators
// below take no optional tensors).
inline void visit_argument(const at::Tensor& tensor, bool written, TensorVisitor visit) {
  visit(tensor, written);
}
inline void visit_argument(c10::ArrayRef<at::Tensor> tensors, bool written, TensorVisitor visit) {
  for (const at::Tensor& tensor : tensors) visit(tensor, written);
}
template <class T>
void visit_argument(const T&, bool, TensorVisitor) {}

template <class Op, class Schema = typename Op::schema>
struct UnboxedWriter;

// The kernel of operator Op, with Op's own signature after the keys.
template <class Op, class Ret, class... Args>
struct UnboxedWriter<Op, Ret(Args...)> {
  static constexpr std::size_t kArguments = sizeof...(Args);
  // Set once, when the kernel is registered; never freed.
  static inline const OperatorWrites* writes = nullptr;

  static Ret call(c10::DispatchKeySet keys, Args... args) {
    g_unboxed_calls.fetch_add(1, std::memory_order_relaxed);
    auto arguments = [&](TensorVisitor visit) {
      std::size_t i = 0;
      (visit_argument(args, writes->written[i++] != 0, visit), ...);
    };
    const WriterCall follow(*writes, arguments);
    return Op::redispatch(keys_below_writer_key(keys), std::forward<Args>(args)...);
  }

  static UnboxedWriterKernel make(const OperatorWrites* described) {
    writes = described;
    return {c10::KernelFunction::makeFromUnboxedFunction(TORCH_FN(call)),
            c10::impl::CppSignature::make<decltype(call)>()};
  }
};

struct Entry {
  const char* name;
  const char* overload;
  std::size_t arguments;
  UnboxedWriterKernel (*make)(const OperatorWrites*);
};

template <class Op>
constexpr Entry entry() {
  return {Op::name, Op::overload_name, UnboxedWriter<Op>::kArguments, &UnboxedWriter<Op>::make};
}

// Adam and AdamW (foreach, the default on a GPU), SGD with momentum,
// gradient clipping, DDP's gradient buckets, FSDP2's copy-in and copy-out
// (_foreach_copy_, split_with_sizes_copy(out=), _chunk_cat(out=)) and the
// gradient zeroing and loss scaling of training loops.
const Entry kEntries[] = {
    entry<at::_ops::copy_>(),
    entry<at::_ops::zero_>(),
    entry<at::_ops::fill__Scalar>(),
    entry<at::_ops::add__Tensor>(),
    entry<at::_ops::add__Scalar>(),
    entry<at::_ops::sub__Tensor>(),
    entry<at::_ops::mul__Tensor>(),
    entry<at::_ops::mul__Scalar>(),
    entry<at::_ops::div__Tensor>(),
    entry<at::_ops::div__Scalar>(),
    entry<at::_ops::addcmul_>(),
    entry<at::_ops::addcdiv_>(),
    entry<at::_ops::lerp__Scalar>(),
    entry<at::_ops::sqrt_>(),
    entry<at::_ops::_foreach_add__Scalar>(),
    entry<at::_ops::_foreach_add__List>(),
    entry<at::_ops::_foreach_add__ScalarList>(),
    entry<at::_ops::_foreach_add__Tensor>(),
    entry<at::_ops::_foreach_sub__Scalar>(),
    entry<at::_ops::_foreach_sub__List>(),
    entry<at::_ops::_foreach_mul__Scalar>(),
    entry<at::_ops::_foreach_mul__List>(),
    entry<at::_ops::_foreach_mul__ScalarList>(),
    entry<at::_ops::_foreach_mul__Tensor>(),
    entry<at::_ops::_foreach_div__Scalar>(),
    entry<at::_ops::_foreach_div__List>(),
    entry<at::_ops::_foreach_div__ScalarList>(),
    entry<at::_ops::_foreach_div__Tensor>(),
    entry<at::_ops::_foreach_lerp__Scalar>(),
    entry<at::_ops::_foreach_lerp__List>(),
    entry<at::_ops::_foreach_addcmul__Scalar>(),
    entry<at::_ops::_foreach_addcmul__ScalarList>(),
    entry<at::_ops::_foreach_addcmul__Tensor>(),
    entry<at::_ops::_foreach_addcdiv__Scalar>(),
    entry<at::_ops::_foreach_addcdiv__ScalarList>(),
    entry<at::_ops::_foreach_addcdiv__Tensor>(),
    entry<at::_ops::_foreach_sqrt_>(),
    entry<at::_ops::_foreach_neg_>(),
    entry<at::_ops::_foreach_reciprocal_>(),
    entry<at::_ops::_foreach_maximum__List>(),
    entry<at::_ops::_foreach_clamp_max__Scalar>(),
    entry<at::_ops::_foreach_zero_>(),
    entry<at::_ops::_foreach_copy_>(),
    entry<at::_ops::split_with_sizes_copy_out>(),
    entry<at::_ops::_chunk_cat_out>(),
};

}  // namespace

std::optional<UnboxedWriterKernel> unboxed_writer_kernel(const c10::OperatorName& name,
                                                         const OperatorWrites* writes) {
  for (const Entry& e : kEntries) {
    if (name.name != e.name || name.overload_name != e.overload) continue;
    // The schema and the C++ signature count the same arguments; a torch
    // whose operator differs gets the boxed kernel.
    if (writes->written.size() != e.arguments) return std::nullopt;
    return e.make(writes);
  }
  return std::nullopt;
}

std::uint64_t unboxed_writer_calls() { return g_unboxed_calls.load(std::memory_order_relaxed); }

}  // namespace xsc::torch_adapter
