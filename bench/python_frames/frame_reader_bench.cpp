// What a Python stack capture costs the PyTorch adapter, by frame reader,
// on a CPU: an embedded CPython runs a loop whose every iteration calls
// three fresh Python frames deep and captures the stack at the bottom, as
// an allocation inside a module's forward pass does. Reported per capture,
// with the loop's own cost (no capture) taken off.
//
// Build and run with bench/python_frames/run.sh (it finds python3.N-config).
// Usage: frame_reader_bench [ITERATIONS]
// Prints: "CPython 3.N: none X ns, records Y ns (+a), c-api Z ns (+b)".
#include <Python.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/torch/python_frames.h"

namespace {

using xsc::torch_adapter::FrameKey;

constexpr std::size_t kMaxFrames = 64;
enum class Mode { kNone, kRecords, kCApi };
Mode mode = Mode::kNone;
std::size_t frames_read = 0;  // keeps the reads from being optimized away

PyObject* capture(PyObject*, PyObject*) {
  FrameKey frames[kMaxFrames];
  if (mode == Mode::kRecords)
    frames_read += xsc::torch_adapter::read_interpreter_frames(frames, kMaxFrames);
  else if (mode == Mode::kCApi)
    frames_read += xsc::torch_adapter::read_frames_c_api(frames, kMaxFrames);
  Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"capture", capture, METH_NOARGS, "Reads the stack with the current reader."},
    {nullptr, nullptr, 0, nullptr},
};
PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "frame_bench", nullptr, -1, methods};
PyObject* init_module() { return PyModule_Create(&module_def); }

// Seconds per iteration of the loop, best of five.
double time_loop(long iterations) {
  const std::string source =
      "import time\n"
      "from frame_bench import capture\n"
      "def leaf(x):\n    capture()\n    return x\n"
      "def layer(x):\n    return leaf(x) + 1\n"
      "def forward(x):\n    return layer(x) * 2\n"
      "def run(n):\n"
      "    best = None\n"
      "    for _ in range(5):\n"
      "        start = time.perf_counter()\n"
      "        for i in range(n):\n            forward(i)\n"
      "        took = time.perf_counter() - start\n"
      "        best = took if best is None or took < best else best\n"
      "    return best / n\n"
      "result = run(" + std::to_string(iterations) + ")\n";
  PyObject* globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject* done = PyRun_String(source.c_str(), Py_file_input, globals, globals);
  double seconds = -1;
  if (done == nullptr) {
    PyErr_Print();
  } else {
    seconds = PyFloat_AsDouble(PyDict_GetItemString(globals, "result"));
    Py_DECREF(done);
  }
  Py_DECREF(globals);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 200000;
  if (iterations <= 0) {
    std::fprintf(stderr, "frame_reader_bench: ITERATIONS must be a positive number\n");
    return 2;
  }
  if (PyImport_AppendInittab("frame_bench", &init_module) < 0) return 2;
  Py_Initialize();
  const bool records = xsc::torch_adapter::preferred_frame_reader() ==
                       xsc::torch_adapter::FrameReader::kInterpreterFrames;
  mode = Mode::kNone;
  const double none = time_loop(iterations);
  double with_records = -1;
  if (records) {
    mode = Mode::kRecords;
    with_records = time_loop(iterations);
  }
  mode = Mode::kCApi;
  const double with_api = time_loop(iterations);
  const std::string version = xsc::torch_adapter::python_minor_version();
  Py_FinalizeEx();
  if (none < 0 || with_api < 0) return 1;
  std::printf("CPython %s: none %.0f ns", version.c_str(), none * 1e9);
  if (records)
    std::printf(", records %.0f ns (+%.0f)", with_records * 1e9, (with_records - none) * 1e9);
  else
    std::printf(", records not readable on this version");
  std::printf(", c-api %.0f ns (+%.0f) per iteration (%zu frames read)\n", with_api * 1e9,
              (with_api - none) * 1e9, frames_read);
  return 0;
}
