// What PyTorch operators write, from their schemas, as known writes.
//
// For an aten operator whose schema marks an argument written (`Tensor(a!)`)
// and that writes all of it (in-place `self`, out= arguments), the written
// tensors are reported to the runtime when the operator returns, on the
// stream that was current for it, which feeds them as known writes
// (checker/check_write_after_read.cpp): a read on another stream not
// ordered after such a write is a use before ready, such a write not
// ordered after a read on another stream a write after read.
//
// Which operators write is decided once per operator, from the dispatcher's
// schemas, never per call. Only those operators are intercepted: the
// adapter registers a boxed kernel for each of them on a dispatch key of its
// own (TESTING_ONLY_GenericMode, the dispatcher's one mode key nothing else
// uses), an unboxed one for the few a training step calls most
// (writer_kernels.h), with a fallthrough for every other operator, and
// includes that key in each thread's dispatch keys (the installing thread,
// each thread the runtime starts, and any other thread within a few
// operators, through a sampled RecordFunction callback). An operator that
// writes nothing then costs the dispatcher nothing: no RecordFunction, no
// boxing. Where that key cannot be had (another library registered on it),
// a global RecordFunction callback with boxed inputs does the same for
// every operator, as before.
//
// CPU operators on pinned memory (host reads and writes) need every
// operator's arguments: the RecordFunction callback for them runs only while
// a device use of pinned memory may be pending (the runtime says when).
// While all such uses read pinned memory (uploads from staging buffers), only
// host writes can race with them, and the writer kernels follow the CPU
// operators that write a tensor whole in the callback's place.
//
// Only writes: each argument an operator reads is already a use through
// its kernels' arguments, and a read of the whole tensor would claim bytes
// that some operators do not touch (index_select reads some rows,
// zeros_like none).
#pragma once

#include <cstdint>
#include <string>

#include "xstream_check/host_api.h"

namespace xsc::torch_adapter {

// Installs the interception (once). False, with *why, when this runtime
// does not take operator writes or nothing could be installed; true also
// when the runtime was told not to want them (torch_op_access=0), in which
// case nothing is installed.
bool install_operator_access(const xsc_host_api* api, std::string* why);

// The mechanism in use, for diagnostics and the benchmark: "dispatcher",
// "record-function", or "none".
const char* operator_access_mechanism();

// Counters (monotonic, all threads): operators the writer kernels or the
// callback followed, and the writes reported.
struct OperatorAccessCounts {
  std::uint64_t writer_calls = 0;   // writer operators intercepted
  std::uint64_t followed = 0;       // of them, outermost on a device: followed
  std::uint64_t fed = 0;            // operator_writes() calls made
  std::uint64_t host_calls = 0;     // host operators followed (pinned memory)
  std::uint64_t writer_operators = 0;  // operators with a writer kernel
  std::uint64_t unboxed_operators = 0;  // of them, with an unboxed one (writer_kernels.h)
  std::uint64_t unboxed_calls = 0;      // writer calls the unboxed kernels took
  std::uint64_t adopted_threads = 0;   // threads given the adapter's key
  bool host_callback = false;  // the RecordFunction callback with inputs runs
  bool host_writers = false;   // the writer kernels follow host writers instead
  std::uint64_t callback_calls = 0;        // operators that callback saw
  std::uint64_t callback_switched_on = 0;  // times it was re-enabled
};
OperatorAccessCounts operator_access_counts();

// Python, with the GIL held: lets torch's higher-order operators (torch.cond,
// invoke_subgraph, ...) fall through the adapter's key, as they do for the
// other keys that mark no tensor. No-op unless the dispatcher mechanism is
// installed.
void patch_higher_order_operators();

// Gives this thread the adapter's key now (a thread the adapter meets in a
// hook of its own before the sampled callback did). No-op unless the
// dispatcher mechanism is installed.
void adopt_current_thread();

}  // namespace xsc::torch_adapter
