// Embeds CPython and checks the PyTorch adapter's two Python frame readers
// (runtime/torch/python_frames.cpp) against each other: the script given on
// the command line calls frame_readers.check() from Python code of many
// shapes, and each call reads the calling thread's stack both ways, and
// then the frame records once more with the GIL released (as a PyTorch
// operator releases it around its allocations), through the thread's own
// state.
//
// Usage: frame_reader_driver [--free-threaded-flags] SCRIPT.py
// (--free-threaded-flags sets sys.abiflags to "t" first, as a free-threaded
// build has it, which must steer the adapter to the C API.)
// Prints the reader this interpreter gets, then, at exit,
// "checks=N disagreements=M" and "GIL released: checks=N disagreements=M";
// a disagreement also prints both stacks.
// Exit status: 0 when the script ran, made at least one check, and every
// check agreed.
#include <Python.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "runtime/torch/python_frames.h"

namespace {

using xsc::torch_adapter::FrameKey;
using xsc::torch_adapter::FrameReader;

constexpr std::size_t kMaxFrames = 64;  // as the adapter reads
long checks = 0;
long disagreements = 0;
long released_disagreements = 0;

void print_stack(const char* label, const FrameKey* frames, std::size_t count) {
  std::fprintf(stderr, "  %s, %zu frames:\n", label, count);
  for (std::size_t i = 0; i < count; ++i) {
    auto* code = static_cast<PyCodeObject*>(frames[i].code);
    PyObject* name = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_qualname");
    const char* text = name != nullptr ? PyUnicode_AsUTF8(name) : nullptr;
    std::fprintf(stderr, "    #%zu %s line %d (offset %d)\n", i, text != nullptr ? text : "?",
                 PyCode_Addr2Line(code, frames[i].lasti), frames[i].lasti);
    Py_XDECREF(name);
    PyErr_Clear();
  }
}

// frame_readers.check() -> the depth read; records a disagreement.
PyObject* check(PyObject*, PyObject*) {
  FrameKey records[kMaxFrames];
  FrameKey api[kMaxFrames];
  const std::size_t from_records = xsc::torch_adapter::read_interpreter_frames(records, kMaxFrames);
  const std::size_t from_api = xsc::torch_adapter::read_frames_c_api(api, kMaxFrames);
  ++checks;
  if (from_records != from_api || !std::equal(records, records + from_records, api)) {
    ++disagreements;
    std::fprintf(stderr, "frame_reader_driver: the readers disagree at check %ld\n", checks);
    print_stack("frame records", records, from_records);
    print_stack("C API", api, from_api);
  }
  // The same records, read by their thread while it does not hold the GIL.
  FrameKey released[kMaxFrames];
  std::size_t from_released = 0;
  _ts* self = PyGILState_GetThisThreadState();
  Py_BEGIN_ALLOW_THREADS
  from_released = xsc::torch_adapter::read_interpreter_frames_of(self, released, kMaxFrames);
  Py_END_ALLOW_THREADS
  if (from_released != from_records || !std::equal(records, records + from_records, released)) {
    ++released_disagreements;
    std::fprintf(stderr, "frame_reader_driver: the GIL-released read differs at check %ld\n",
                 checks);
    print_stack("frame records", records, from_records);
    print_stack("GIL released", released, from_released);
  }
  return PyLong_FromSize_t(from_records);
}

PyMethodDef methods[] = {
    {"check", check, METH_NOARGS, "Reads the stack both ways; returns the depth."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "frame_readers", nullptr, -1, methods};

PyObject* init_module() { return PyModule_Create(&module_def); }

}  // namespace

int main(int argc, char** argv) {
  const bool free_threaded_flags = argc == 3 && std::string(argv[1]) == "--free-threaded-flags";
  if (argc != 2 && !free_threaded_flags) {
    std::fprintf(stderr, "usage: frame_reader_driver [--free-threaded-flags] SCRIPT.py\n");
    return 2;
  }
  const char* path = argv[argc - 1];
  FILE* script = std::fopen(path, "r");
  if (script == nullptr) {
    std::fprintf(stderr, "frame_reader_driver: cannot open %s\n", path);
    return 2;
  }
  if (PyImport_AppendInittab("frame_readers", &init_module) < 0) return 2;
  Py_Initialize();
  if (free_threaded_flags && PyRun_SimpleString("import sys; sys.abiflags = 't'") != 0) return 2;
  const bool records = xsc::torch_adapter::preferred_frame_reader() ==
                       FrameReader::kInterpreterFrames;
  std::printf("reader: %s (CPython %s)\n", records ? "interpreter frame records" : "C API",
              xsc::torch_adapter::python_minor_version().c_str());
  std::fflush(stdout);
  const int failed = PyRun_SimpleFileEx(script, path, /*closeit=*/1);
  std::fflush(stdout);
  if (Py_FinalizeEx() < 0) return 1;
  std::printf("checks=%ld disagreements=%ld\n", checks, disagreements);
  std::printf("GIL released: checks=%ld disagreements=%ld\n", checks, released_disagreements);
  return failed != 0 || checks == 0 || disagreements != 0 || released_disagreements != 0 ? 1 : 0;
}
