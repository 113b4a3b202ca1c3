#include "runtime/torch/python_frames.h"

#include <cstdlib>
#include <cstring>

#include "runtime/torch/python_api.h"

namespace xsc::torch_adapter {
namespace {

// CPython 3.12's layouts, x86-64 and aarch64 (LP64), release builds:
//   Include/cpython/pystate.h: struct _ts { prev, next, interp; 4-byte
//     _status; six ints; _PyCFrame* cframe; ... } puts cframe at 56;
//     struct _PyCFrame { _PyInterpreterFrame* current_frame; ... }.
//   Include/internal/pycore_frame.h: struct _PyInterpreterFrame { f_code,
//     previous, f_funcobj, f_globals, f_builtins, f_locals, frame_obj,
//     prev_instr (8 bytes each), int stacktop, uint16_t return_offset,
//     char owner; ... } puts owner at 70.
// These do not change within a minor release. 3.11 and 3.13 differ, so
// only 3.12 is read this way; any other version uses the C API.
constexpr std::size_t kThreadStateCFrame = 56;
constexpr std::size_t kCFrameCurrentFrame = 0;
constexpr std::size_t kFrameCode = 0;
constexpr std::size_t kFramePrevious = 8;
constexpr std::size_t kFrameOwner = 70;
// enum _frameowner: the entry record the interpreter pushes when C code
// calls into Python; it is no Python frame (PyFrame_GetBack skips it too).
constexpr char kFrameOwnedByCStack = 3;

template <class T>
T read_at(const void* base, std::size_t offset) {
  T value;
  std::memcpy(&value, static_cast<const char*>(base) + offset, sizeof value);
  return value;
}

bool running_python_3_12() {
  if (&Py_Version == nullptr) return false;  // weak: older than 3.11, or no Python
  return (Py_Version >> 16) == 0x030C;
}

bool interpreter_frames_readable() {
  return running_python_3_12() && PyThreadState_Get != nullptr &&
         PyUnstable_InterpreterFrame_GetLasti != nullptr;
}

}  // namespace

FrameReader preferred_frame_reader() {
  const char* chosen = std::getenv("XSC_PYTHON_FRAMES");
  if (chosen != nullptr && std::strcmp(chosen, "c-api") == 0) return FrameReader::kCApi;
  return interpreter_frames_readable() ? FrameReader::kInterpreterFrames : FrameReader::kCApi;
}

std::size_t read_frames_c_api(FrameKey* out, std::size_t max) {
  std::size_t depth = 0;
  _frame* frame = PyEval_GetFrame();
  if (frame) Py_IncRef(reinterpret_cast<_object*>(frame));
  while (frame && depth < max) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    out[depth++] = {code, PyFrame_GetLasti(frame)};
    // The frame still references its code object, so dropping ours now is
    // safe while we hold the GIL; the stack cache takes its own reference.
    Py_DecRef(reinterpret_cast<_object*>(code));
    _frame* back = PyFrame_GetBack(frame);
    Py_DecRef(reinterpret_cast<_object*>(frame));
    frame = back;
  }
  if (frame) Py_DecRef(reinterpret_cast<_object*>(frame));
  return depth;
}

std::size_t read_interpreter_frames(FrameKey* out, std::size_t max) {
  _ts* thread = PyThreadState_Get();
  if (thread == nullptr) return 0;
  const void* cframe = read_at<const void*>(thread, kThreadStateCFrame);
  if (cframe == nullptr) return 0;
  void* record = read_at<void*>(cframe, kCFrameCurrentFrame);
  std::size_t depth = 0;
  while (record != nullptr && depth < max) {
    if (read_at<char>(record, kFrameOwner) != kFrameOwnedByCStack) {
      const int lasti = PyUnstable_InterpreterFrame_GetLasti(record);
      // A frame that has not started (before its first instruction) is
      // left out, as PyEval_GetFrame and PyFrame_GetBack leave it out.
      if (lasti >= 0) out[depth++] = {read_at<void*>(record, kFrameCode), lasti};
    }
    record = read_at<void*>(record, kFramePrevious);
  }
  return depth;
}

}  // namespace xsc::torch_adapter
