// What PyTorch operators write, from their schemas, as known writes.
//
// A global RecordFunction callback (the dispatcher's own observer hook, as
// the profiler uses; no Python dispatch mode) sees every aten operator call
// with its boxed arguments. For an operator whose schema marks an argument
// written (`Tensor(a!)`) and that writes all of it, the written tensors are
// reported to the runtime when the operator returns, on the stream that was
// current for it, which feeds them as known writes (checker/
// check_write_after_read.cpp): a read on another stream not ordered after
// such a write is a use before ready, such a write not ordered after a read
// on another stream a write after read.
//
// Only writes: each argument an operator reads is already a use through
// its kernels' arguments, and a read of the whole tensor would claim bytes
// that some operators do not touch (index_select reads some rows,
// zeros_like none).
#pragma once

#include <string>

#include "xstream_check/host_api.h"

namespace xsc::torch_adapter {

// Adds the callback (once). False, with *why, when this runtime does not
// take operator writes or the callback cannot be added; true also when the
// runtime was told not to want them (torch_op_access=0), in which case
// nothing is added.
bool install_operator_access(const xsc_host_api* api, std::string* why);

}  // namespace xsc::torch_adapter
