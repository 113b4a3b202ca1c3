// Options shared by the runtime (XSC_OPTIONS, like TSAN_OPTIONS) and the
// command-line tool (--name=value flags).
#pragma once

#include <string>
#include <string_view>

namespace xsc {

enum class ReportFormat : unsigned char { kText, kJson, kSarif };

// Which CUPTI callbacks carry the runtime's kernel launches (the runtime
// only; see runtime/cuda/cupti_callbacks.cpp). kAuto: the runtime API's launch
// callbacks for the first launches, then only the driver's once those were
// shown to describe the same launches; kRuntime: both, always; kDriver: the
// driver's only, from the start.
enum class LaunchCallbacks : unsigned char { kAuto, kRuntime, kDriver };

// Which CUPTI callbacks carry the runtime API's copies, memsets, event
// records, stream waits and event destroys. kAuto: the runtime's for each
// such function's first calls, then only the driver's once its nested
// driver calls were shown to do the same; kRuntime: the runtime's always.
enum class CallCallbacks : unsigned char { kAuto, kRuntime };

struct Options {
  ReportFormat report = ReportFormat::kText;  // report=text|json|sarif
  std::string suppressions;   // suppressions=FILE
  std::string log_path;       // log_path=PREFIX: report to PREFIX.<pid>
                              // (PREFIX.<rank>.<pid> under a launcher);
                              // empty: stderr
  std::string record;         // record=TRACE: write the replayable trace
  std::string timeline;       // timeline=DIR: a picture of each finding,
                              // DIR/finding-N.json and .svg
  int exitcode = 66;          // exitcode=N: exit status when findings exist
  bool advisory = true;       // advisory=0|1: record_stream parked-block note
  int stack_depth = 24;       // stack_depth=N: frames captured per stack
  int verbosity = 0;          // verbosity=N
  bool use_after_free = true;     // use_after_free=0|1
  bool use_before_ready = true;   // use_before_ready=0|1
  bool reuse_race = true;         // reuse_race=0|1
  bool write_after_read = true;   // write_after_read=0|1
  // first_use_writes=0|1: a new caching block's first use by a kernel of
  // unknown direction on its allocation stream counts as the write that
  // fills it, for use before ready (CheckerConfig::first_use_writes).
  bool first_use_writes = true;
  bool strict = false;            // strict=0|1: every free before a wait is
                                  // a finding (CheckerConfig::strict)
  LaunchCallbacks launch_callbacks = LaunchCallbacks::kAuto;  // launch_callbacks=auto|runtime|driver
  CallCallbacks call_callbacks = CallCallbacks::kAuto;  // call_callbacks=auto|runtime
  // torch_op_access=0|1: the PyTorch adapter feeds what each aten operator
  // wrote (its schema's in-place self and out= arguments) as known writes
  // (the runtime only; docs/pytorch.md).
  bool torch_op_access = true;
  // cublas_access=0|1: the runtime feeds what cuBLAS GEMMs and
  // cublasLtMatmul read and wrote (A and B read, the output written, dense
  // extents only) as uses on the call's stream, the write a known write
  // (runtime/libs/cublas/cublas.cpp, runtime/libs/cublas/cublaslt.cpp, docs/rules.md).
  bool cublas_access = true;
  // builtin_suppressions=0|1: apply the suppressions the checker ships for
  // races inside libraries that no user can fix (checker/
  // builtin_suppressions.cpp); their findings count as suppressed.
  bool builtin_suppressions = true;
  // cudnn_access=0|1: the runtime feeds what cuDNN's batch norm and classic
  // convolution calls read and wrote (dense tensors only) as uses on the
  // handle's stream, the outputs known writes (runtime/libs/cudnn/cudnn.cpp,
  // docs/rules.md).
  bool cudnn_access = true;
  // host_guard=0|1: while a copy that reads or writes pinned host memory is
  // pending, the runtime mprotects the pages it covers, so that a plain C or
  // C++ load or store there faults and is reported as a host access with
  // its stack (the runtime only; runtime/host/host_guard.cpp, docs/rules.md).
  // Off by default: a system call given such a page fails with EFAULT.
  bool host_guard = false;
  // checker_thread=0|1: 1, the default, feeds the checker from a thread of
  // the runtime's own, so that the program's threads only hand events over
  // (the runtime only; runtime/checker_thread.cpp,
  // docs/performance-knobs.md). 0: every event is checked on the thread
  // that made it, as it is made.
  bool checker_thread = true;
  // host_sync=0|1: 1, the default, follows semaphores (CPython's locks and
  // queues), a C++ program's own locks and joins between threads,
  // preloaded (the runtime only; runtime/host/host_sync.cpp and
  // host_locks.cpp, docs/rules.md). 0: threads are ordered only by their
  // starts.
  bool host_sync = true;
  // param_fills=0|1: of the kernel parameters PyTorch fills only in part
  // (cat's, foreach kernels' and fused optimizers' tables of pointers, a
  // reduction's second output, sizes and strides set below a tensor's
  // dimensions), the runtime reads only the words the launch filled that
  // can hold a pointer; 0 reads every word of every parameter (the runtime
  // only; runtime/cuda/param_access/param_fill.h lists them, docs/rules.md).
  bool param_fills = true;
};

// Parses "name=value" items separated by ':' , ' ' or ',' into *options.
// Unknown names or bad values: false with a one-line message in *error.
bool parse_options(std::string_view text, Options* options, std::string* error);

// Applies $XSC_OPTIONS (if set) on top of *options.
bool apply_env_options(Options* options, std::string* error);

bool parse_report_format(std::string_view text, ReportFormat* out);

}  // namespace xsc
