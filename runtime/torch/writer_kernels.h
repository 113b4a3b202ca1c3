// Unboxed writer kernels for the writer operators a training step calls
// most: the in-place arithmetic of optimizers and gradient buckets (add_,
// mul_, copy_, zero_, ...) and their foreach forms over lists of tensors.
//
// A boxed kernel on the adapter's key (operator_access.cpp) costs an
// unboxed call twice: its arguments are boxed into a stack of IValues for
// the kernel, and unboxed again for the kernel below it it hands the call
// to. For a foreach operator that is two copies of a list of tensors, with
// a reference count taken and dropped on each. These operators instead get
// a kernel with their own C++ signature (from ATen's at::_ops), which
// follows the call exactly as the boxed one does (WriterCall) and hands it
// on unboxed. A boxed caller reaches it through the boxing wrapper the
// dispatcher makes for every unboxed kernel.
#pragma once

#include <cstdint>
#include <optional>

#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/dispatch/CppSignature.h>
#include <ATen/core/operator_name.h>

#include "runtime/torch/writer_call.h"

namespace xsc::torch_adapter {

struct UnboxedWriterKernel {
  c10::KernelFunction kernel;
  c10::impl::CppSignature signature;  // for the dispatcher to check callers against
};

// The unboxed writer kernel of `name` when it is one of the operators above
// and its schema has as many arguments as that kernel's signature; nullopt
// otherwise (the boxed kernel is registered instead). `writes` must live as
// long as the kernel.
std::optional<UnboxedWriterKernel> unboxed_writer_kernel(const c10::OperatorName& name,
                                                         const OperatorWrites* writes);

// Calls the unboxed kernels took, since the process started.
std::uint64_t unboxed_writer_calls();

}  // namespace xsc::torch_adapter
