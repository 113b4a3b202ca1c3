// The few CPython C-API functions the adapter calls, declared weak.
//
// The adapter is loaded into whatever process loaded PyTorch: usually a Python
// interpreter (which exports these symbols from its executable or
// libpython), sometimes a C++ program linked against libtorch (which does
// not). Declaring them weak keeps the adapter loadable in both: absent
// symbols resolve to null and Python stacks are simply not collected. Only
// functions whose signatures are identical in CPython 3.11 to 3.13 are used,
// and objects are touched only through functions (never through struct
// fields or refcount macros), so no Python.h of a particular version is
// needed at build time. The one exception is python_frames.cpp, which reads
// the frame records of CPython 3.11 to 3.13 in place, only after checking
// the version.
#pragma once

#include <string>

extern "C" {

struct _object;
struct _frame;
struct _ts;
struct PyCodeObject;

using PyObjectPtr = _object*;

__attribute__((weak)) int Py_IsInitialized(void);
__attribute__((weak)) int _Py_IsFinalizing(void);  // 3.12
__attribute__((weak)) int Py_IsFinalizing(void);   // 3.13+

__attribute__((weak)) _ts* PyGILState_GetThisThreadState(void);
__attribute__((weak)) int PyGILState_Ensure(void);  // PyGILState_STATE is an int-sized enum
__attribute__((weak)) void PyGILState_Release(int state);
__attribute__((weak)) int PyGILState_Check(void);

__attribute__((weak)) extern const unsigned long Py_Version;  // 3.11+: PY_VERSION_HEX
__attribute__((weak)) _ts* PyThreadState_Get(void);            // needs the GIL
// 3.12+; the argument is a struct _PyInterpreterFrame*.
__attribute__((weak)) int PyUnstable_InterpreterFrame_GetLasti(void* frame);

__attribute__((weak)) _frame* PyEval_GetFrame(void);  // borrowed
__attribute__((weak)) PyCodeObject* PyFrame_GetCode(_frame* frame);  // new reference
__attribute__((weak)) _frame* PyFrame_GetBack(_frame* frame);  // new reference or null
__attribute__((weak)) int PyFrame_GetLasti(_frame* frame);
__attribute__((weak)) int PyCode_Addr2Line(PyCodeObject* code, int byte_offset);

__attribute__((weak)) _object* PyObject_GetAttrString(_object* object, const char* name);
__attribute__((weak)) _object* PySys_GetObject(const char* name);  // borrowed
__attribute__((weak)) const char* PyUnicode_AsUTF8(_object* unicode);
__attribute__((weak)) void PyErr_Clear(void);
__attribute__((weak)) void Py_IncRef(_object* object);
__attribute__((weak)) void Py_DecRef(_object* object);

__attribute__((weak)) _object* PyDict_New(void);
__attribute__((weak)) _object* PyRun_StringFlags(const char* source, int start, _object* globals,
                                                 _object* locals, void* flags);

}  // extern "C"

namespace xsc::torch_adapter {

// Py_file_input from CPython's compile.h (stable since Python 2).
inline constexpr int kPyFileInput = 257;

// True when every function the stack capture needs is present and the
// interpreter is running (not yet finalizing).
bool python_usable();

// True when the functions needed to run Python source are present.
bool python_can_run_source();

// Runs `source` (Python statements) in fresh globals, holding the GIL;
// false when it raised (the error is cleared) or no dict could be made.
bool run_python_source(const std::string& source);

// `text` as a Python string literal ('...', backslashes and quotes escaped).
std::string python_quoted(const std::string& text);

}  // namespace xsc::torch_adapter
