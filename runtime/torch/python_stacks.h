// Python stacks of the calling thread, interned into the runtime's depot.
//
// A stack is read while the thread holds the GIL and no allocator lock (see
// allocator_tracker.cpp for when that is), keyed by its (code object,
// instruction offset) pairs, and symbolized only the first time that key is
// seen. The resulting frames are interned as ready frames, so a report never
// needs Python again: findings printed at exit, after the interpreter has
// finalized, still show Python file:line.
#pragma once

#include <cstdint>

#include "xstream_check/host_api.h"

namespace xsc::torch_adapter {

class PythonStacks {
 public:
  explicit PythonStacks(const xsc_host_api* api) : api_(api) {}

  // The calling thread's Python stack, innermost frame first, as a depot id;
  // 0 when the thread runs no Python code, the interpreter is not running, or
  // the thread is not known to Python (a pure C++ thread: taking the GIL
  // there could deadlock against a thread that holds it and waits for us).
  std::uint32_t capture();

  // For a kernel launch: like capture(), but the GIL is taken only when
  // `may_take_gil` is set; otherwise a thread that released it (every
  // PyTorch operator does, around its kernels) yields 0.
  std::uint32_t capture_for_launch(bool may_take_gil);

  // While one is alive on a thread, that thread's captures leave out its
  // `frames` innermost Python frames (the adapter's own wrappers of
  // Tensor.numpy and the like, host_views.cpp): the stack starts at the
  // caller's line.
  class SkipInnermost {
   public:
    explicit SkipInnermost(int frames);
    ~SkipInnermost();
    SkipInnermost(const SkipInnermost&) = delete;
    SkipInnermost& operator=(const SkipInnermost&) = delete;

   private:
    int saved_;
  };

 private:
  std::uint32_t capture_holding_gil();

  const xsc_host_api* api_;
};

}  // namespace xsc::torch_adapter
