#include "runtime/torch/python_frames.h"

#include <cstdlib>
#include <cstring>

#include "runtime/torch/python_api.h"

namespace xsc::torch_adapter {
namespace {

// CPython's layouts, LP64 release builds, from its headers (checked with
// offsetof against 3.11.7's, 3.12.1's and 3.13.0's):
//   Include/cpython/pystate.h, struct _ts: 3.11 and 3.12 reach the current
//     frame through `_PyCFrame* cframe` at 56 (in 3.11 the frame is the
//     _PyCFrame's second field, after `use_tracing`; in 3.12 its first);
//     3.13 keeps `_PyInterpreterFrame* current_frame` at 72 itself.
//   Include/internal/pycore_frame.h, struct _PyInterpreterFrame:
//     3.12 and 3.13: the code object (f_code, f_executable) at 0,
//       `previous` at 8, `char owner` at 70;
//     3.11: f_code at 32, `previous` at 48, `prev_instr` at 56, `owner`
//       at 69.
//   3.11's instruction offset is not exported as a function: it is
//   prev_instr's distance from the code object's instructions
//   (PyCodeObject::co_code_adaptive, at 184), and a frame is still being
//   set up while prev_instr is before _co_firsttraceable (an int at 168,
//   in 2-byte code units), unless a generator owns it.
// These do not change within a minor release of a default (GIL) build;
// 3.10, 3.14 and free-threaded builds differ, and read through the C API.
struct Layout {
  std::size_t thread_state_frame;  // offset in the thread state
  bool through_cframe;             // that field is a _PyCFrame*, not a frame
  std::size_t cframe_frame;        // the frame's offset in the _PyCFrame
  std::size_t frame_code;
  std::size_t frame_previous;
  std::size_t frame_owner;
  // 3.12+: the owner of the entry record the interpreter pushes when C
  // calls into Python; no Python frame (PyFrame_GetBack skips it). -1: none.
  int owner_c_stack;
  // 3.11: the instruction offset computed from these (see above).
  bool lasti_from_code;
  std::size_t frame_prev_instr;
  std::size_t code_instructions;
  std::size_t code_first_traceable;
};
constexpr int kOwnedByGenerator = 1;  // enum _frameowner, 3.11 to 3.13
constexpr Layout kPython311{56, true, 8, 32, 48, 69, -1, true, 56, 184, 168};
constexpr Layout kPython312{56, true, 0, 0, 8, 70, 3, false, 0, 0, 0};
constexpr Layout kPython313{72, false, 0, 0, 8, 70, 3, false, 0, 0, 0};

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
    case 0x030B: return &kPython311;
    case 0x030C: return &kPython312;
    case 0x030D: return &kPython313;
    default: return nullptr;
  }
}

// A free-threaded build ("t" in sys.abiflags) lays its objects and thread
// states out differently; its frames are read through the C API.
bool free_threaded_build() {
  if (PySys_GetObject == nullptr || PyUnicode_AsUTF8 == nullptr) return true;  // cannot tell
  _object* flags = PySys_GetObject("abiflags");
  if (flags == nullptr) return false;  // not a POSIX build: no free-threaded flag to read
  const char* text = PyUnicode_AsUTF8(flags);
  if (text == nullptr) {
    if (PyErr_Clear != nullptr) PyErr_Clear();
    return true;
  }
  return std::strchr(text, 't') != nullptr;
}

bool interpreter_frames_readable() {
  const Layout* layout = running_layout();
  return layout != nullptr && PyThreadState_Get != nullptr &&
         (layout->lasti_from_code || PyUnstable_InterpreterFrame_GetLasti != nullptr) &&
         !free_threaded_build();
}

// The record's instruction offset in bytes, as PyFrame_GetLasti gives it;
// -1 while the frame is still being set up (the C API skips such frames).
int record_lasti(const Layout& layout, void* record) {
  if (!layout.lasti_from_code) {
    const int lasti = PyUnstable_InterpreterFrame_GetLasti(record);
    return lasti >= 0 ? lasti : -1;
  }
  const char* code = read_at<const char*>(record, layout.frame_code);
  const char* instructions = code + layout.code_instructions;
  const char* prev_instr = read_at<const char*>(record, layout.frame_prev_instr);
  constexpr std::ptrdiff_t kCodeUnit = 2;  // sizeof(_Py_CODEUNIT)
  const std::ptrdiff_t first_traceable =
      read_at<int>(code, layout.code_first_traceable) * kCodeUnit;
  if (read_at<char>(record, layout.frame_owner) != kOwnedByGenerator &&
      prev_instr - instructions < first_traceable)
    return -1;
  return static_cast<int>(prev_instr - instructions);
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
  return read_interpreter_frames_of(PyThreadState_Get(), out, max);
}

std::size_t read_interpreter_frames_of(_ts* thread, FrameKey* out, std::size_t max) {
  const Layout* layout = running_layout();
  if (layout == nullptr || thread == nullptr) return 0;
  void* record = read_at<void*>(thread, layout->thread_state_frame);
  if (layout->through_cframe && record != nullptr)
    record = read_at<void*>(record, layout->cframe_frame);
  std::size_t depth = 0;
  while (record != nullptr && depth < max) {
    if (layout->owner_c_stack < 0 ||
        read_at<char>(record, layout->frame_owner) != layout->owner_c_stack) {
      const int lasti = record_lasti(*layout, record);
      // A frame that has not started (before its first instruction) is
      // left out, as PyEval_GetFrame and PyFrame_GetBack leave it out.
      if (lasti >= 0) out[depth++] = {read_at<void*>(record, layout->frame_code), lasti};
    }
    record = read_at<void*>(record, layout->frame_previous);
  }
  return depth;
}

}  // namespace xsc::torch_adapter
