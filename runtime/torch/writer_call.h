// One call of a writer operator (operator_access.h), as the adapter's
// kernels on its dispatch key see it: the boxed kernel every writer
// operator has (operator_access.cpp) and the unboxed ones of the operators
// a training step calls most (writer_kernels.cpp) share this, so that both
// follow exactly the same calls and report exactly the same writes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/DispatchKey.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <c10/util/FunctionRef.h>
#include <c10/util/SmallVector.h>

namespace xsc::torch_adapter {

// The dispatch key the writer kernels are registered on (operator_access.cpp).
constexpr c10::DispatchKey kWriterKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

// Which arguments of one operator count as written whole, from its schema.
struct OperatorWrites {
  std::string name;                    // "aten::add_", for reports
  std::vector<std::uint8_t> written;   // per argument, in schema order
  bool any = false;
  // False for an operator that reads no element of its tensors (a view, a
  // factory that takes only a tensor's shape and options, is_pinned): as a
  // host operator on pinned memory it is no access.
  bool reads_elements = true;
};

// Calls its argument on each tensor argument of one call, in schema order,
// with whether the schema writes that argument whole.
using TensorVisitor = c10::function_ref<void(const at::Tensor&, bool written)>;
using ArgumentTensors = c10::function_ref<void(TensorVisitor)>;

// What a followed call keeps from its start to its end: the written
// tensors on a device (their data may move, for an out= argument the
// operator resizes, so the bytes are read at the end), the stream and the
// mark of enqueued work.
struct DeviceCall {
  const char* name = nullptr;
  std::uint64_t stream = 0;
  std::uint64_t mark = 0;
  c10::SmallVector<at::Tensor, 2> tensors;
};

// Written host tensors of a call with no device tensor.
struct HostWrites {
  const char* name = nullptr;
  std::uint64_t mark = 0;
  c10::SmallVector<at::Tensor, 2> tensors;
};

// Alive around the operator's redispatch: at construction it decides
// whether the call is followed (the outermost writer operator on this
// thread, with a tensor it writes on a device, or on the host while host
// writers are followed), and if so keeps the operators the call makes from
// the adapter's key (its pieces); at destruction, once the operator
// returned or threw, it reports what was written.
class WriterCall {
 public:
  WriterCall(const OperatorWrites& writes, ArgumentTensors arguments);
  ~WriterCall();
  WriterCall(const WriterCall&) = delete;
  WriterCall& operator=(const WriterCall&) = delete;

 private:
  DeviceCall device_;
  HostWrites host_;
  bool device_followed_ = false;
  bool host_followed_ = false;
  std::optional<c10::impl::ExcludeDispatchKeyGuard> pieces_;
};

// The keys below the adapter's, for a kernel on it to hand the call on.
inline c10::DispatchKeySet keys_below_writer_key(c10::DispatchKeySet keys) {
  return keys & c10::DispatchKeySet(c10::DispatchKeySet::FULL_AFTER, kWriterKey);
}

}  // namespace xsc::torch_adapter
