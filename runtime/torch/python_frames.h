// Reading the calling thread's Python frames as (code object, instruction
// offset) pairs, innermost first. The caller holds the GIL.
//
// Two readers give the same pairs:
//   - the C API (PyEval_GetFrame, PyFrame_GetBack): portable, but since
//     CPython 3.11 it creates a frame object for every frame it passes that
//     has none yet. A training step allocates and frees hundreds of times
//     from fresh frames (each module call is one), so each walk allocates
//     and later frees a dozen GC-tracked objects, and feeds the cycle
//     collector's allocation count.
//   - the interpreter's own frame records (CPython 3.11 to 3.13): the
//     thread state's current frame and each record's link to its caller,
//     read in place; nothing is created. PythonStacks checks them against
//     the C API on its first captures and falls back to the C API for good
//     on any difference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

struct _ts;

namespace xsc::torch_adapter {

struct FrameKey {
  void* code;  // PyCodeObject*, borrowed while the GIL is held
  int lasti;   // byte offset of the current instruction, as PyFrame_GetLasti; -1 if none
  bool operator==(const FrameKey& other) const {
    return code == other.code && lasti == other.lasti;
  }
};

enum class FrameReader { kCApi, kInterpreterFrames };

// The reader to use in this process: the interpreter's frame records when
// the running CPython is a default (not free-threaded) build of 3.11, 3.12
// or 3.13 and provides the functions used, unless XSC_PYTHON_FRAMES=c-api
// asks for the C API. Needs the GIL (it reads sys.abiflags).
FrameReader preferred_frame_reader();

// "3.12" for the running interpreter; "" when it does not say.
std::string python_minor_version();

// Both fill `out` with at most `max` frames and return how many.
std::size_t read_frames_c_api(FrameKey* out, std::size_t max);
std::size_t read_interpreter_frames(FrameKey* out, std::size_t max);

// The frame records of `thread`, the calling thread's own state, read while
// the thread does not hold the GIL: a thread's records are pushed and
// popped only by that thread running Python, which it is not doing while it
// is in here, and nothing another thread does moves them. The code objects
// read are borrowed from frames that live until this thread returns to
// Python. Only for an interpreter whose records read_interpreter_frames was
// found to read right.
std::size_t read_interpreter_frames_of(_ts* thread, FrameKey* out, std::size_t max);

}  // namespace xsc::torch_adapter
