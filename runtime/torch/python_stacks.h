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

struct _ts;

namespace xsc::torch_adapter {

class PythonStacks {
 public:
  explicit PythonStacks(const xsc_host_api* api) : api_(api) {}

  // The calling thread's Python stack, innermost frame first, as a depot id;
  // 0 when the thread runs no Python code, the interpreter is not running, or
  // the thread is not known to Python (a pure C++ thread: taking the GIL
  // there could deadlock against a thread that holds it and waits for us).
  // For an allocation or a kernel launch: a thread that released the GIL
  // takes it only when its frames were never seen (or the frame records are
  // not trusted yet).
  std::uint32_t capture();

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
  std::uint32_t capture_taking_gil();
  // Reads `thread`'s frames without the GIL, which the calling thread, its
  // owner, does not hold. *known when they were named before (the id) or
  // there are none (0); false until the records are trusted.
  std::uint32_t capture_known(_ts* thread, bool* known);

  const xsc_host_api* api_;
};

// Captures that took the GIL (the thread had released it and its frames
// were new or could not be read without it), and captures of a thread that
// released the GIL answered without it, since the process started.
struct PythonStackCounts {
  std::uint64_t gil_taken = 0;
  std::uint64_t known_without_gil = 0;
};
PythonStackCounts python_stack_counts();

}  // namespace xsc::torch_adapter
