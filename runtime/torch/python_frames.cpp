#include "runtime/torch/python_frames.h"

#include <cstdlib>
#include <cstring>

#include "runtime/torch/python_api.h"

namespace xsc::torch_adapter {
namespace {

// CPython's layouts, LP64 release builds, from its headers (checked with
// offsetof against 3.12.1's and 3.13.0's):
//   Include/cpython/pystate.h, struct _ts: 3.12 reaches the current frame
//     through `_PyCFrame* cframe` at 56 (whose first field is the frame);
//     3.13 keeps `_PyInterpreterFrame* current_frame` at 72 itself.
//   Include/internal/pycore_frame.h, struct _PyInterpreterFrame: the code
//     object (3.12 f_code, 3.13 f_executable) at 0, `previous` at 8, and
//     after six more pointers, an int and a uint16_t, `char owner` at 70.
// These do not change within a minor release; 3.11 and 3.14 differ, and
// read through the C API.
struct Layout {
  std::size_t thread_state_frame;  // offset in the thread state
  bool through_cframe;             // that field is a _PyCFrame*, not a frame
};
constexpr Layout kPython312{56, true};
constexpr Layout kPython313{72, false};
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

// The running interpreter's layout, or null for a version not listed.
const Layout* running_layout() {
  if (&Py_Version == nullptr) return nullptr;  // weak: older than 3.11, or no Python
  switch (Py_Version >> 16) {
    case 0x030C: return &kPython312;
    case 0x030D: return &kPython313;
    default: return nullptr;
  }
}

bool interpreter_frames_readable() {
  return running_layout() != nullptr && PyThreadState_Get != nullptr &&
         PyUnstable_InterpreterFrame_GetLasti != nullptr;
}

}  // namespace

FrameReader preferred_frame_reader() {
  const char* chosen = std::getenv("XSC_PYTHON_FRAMES");
  if (chosen != nullptr && std::strcmp(chosen, "c-api") == 0) return FrameReader::kCApi;
  return interpreter_frames_readable() ? FrameReader::kInterpreterFrames : FrameReader::kCApi;
}

std::string python_minor_version() {
  if (&Py_Version == nullptr) return {};
  return std::to_string(Py_Version >> 24) + "." + std::to_string((Py_Version >> 16) & 0xFF);
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
  const Layout* layout = running_layout();
  if (layout == nullptr) return 0;
  _ts* thread = PyThreadState_Get();
  if (thread == nullptr) return 0;
  void* record = read_at<void*>(thread, layout->thread_state_frame);
  if (layout->through_cframe && record != nullptr) record = read_at<void*>(record, 0);
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
