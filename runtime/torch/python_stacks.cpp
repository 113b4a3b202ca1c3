#include "runtime/torch/python_stacks.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/torch/autograd_nodes.h"
#include "runtime/torch/python_api.h"
#include "runtime/torch/python_frames.h"
#include "runtime/torch/trace_steps.h"

namespace xsc::torch_adapter {

bool python_usable() {
  if (!Py_IsInitialized || !PyGILState_GetThisThreadState || !PyGILState_Ensure ||
      !PyGILState_Release || !PyEval_GetFrame || !PyFrame_GetCode || !PyFrame_GetBack ||
      !PyFrame_GetLasti || !PyCode_Addr2Line || !PyObject_GetAttrString || !PyUnicode_AsUTF8 ||
      !PyErr_Clear || !Py_IncRef || !Py_DecRef)
    return false;
  if (!Py_IsInitialized()) return false;
  if (Py_IsFinalizing && Py_IsFinalizing()) return false;
  if (_Py_IsFinalizing && _Py_IsFinalizing()) return false;
  return true;
}

bool python_can_run_source() {
  return python_usable() && PyDict_New && PyRun_StringFlags;
}

bool run_python_source(const std::string& source) {
  const int gil = PyGILState_Ensure();
  bool ok = false;
  _object* globals = PyDict_New();
  if (globals != nullptr) {
    _object* result = PyRun_StringFlags(source.c_str(), kPyFileInput, globals, globals, nullptr);
    if (result != nullptr) {
      ok = true;
      Py_DecRef(result);
    } else {
      PyErr_Clear();
    }
    Py_DecRef(globals);
  } else {
    PyErr_Clear();
  }
  PyGILState_Release(gil);
  return ok;
}

std::string python_quoted(const std::string& text) {
  std::string quoted = "'";
  for (char ch : text) {
    if (ch == '\\' || ch == '\'') quoted += '\\';
    quoted += ch;
  }
  quoted += "'";
  return quoted;
}

namespace {

constexpr std::size_t kMaxFrames = 64;

std::size_t hash_frames(const FrameKey* frames, std::size_t count) {
  std::size_t h = 1469598103934665603ull;
  for (std::size_t i = 0; i < count; ++i) {
    h = (h ^ reinterpret_cast<std::uintptr_t>(frames[i].code)) * 1099511628211ull;
    h = (h ^ static_cast<std::size_t>(frames[i].lasti)) * 1099511628211ull;
  }
  return h;
}

// A walked stack, looked up in the shared cache without copying it into a
// key first (the keys' hash and equality are transparent).
struct FrameSpan {
  const FrameKey* frames;
  std::size_t count;
};

struct StackKeyHash {
  using is_transparent = void;
  std::size_t operator()(const std::vector<FrameKey>& key) const {
    return hash_frames(key.data(), key.size());
  }
  std::size_t operator()(const FrameSpan& key) const { return hash_frames(key.frames, key.count); }
};

struct StackKeyEqual {
  using is_transparent = void;
  static bool same(const FrameKey* a, std::size_t na, const FrameKey* b, std::size_t nb) {
    return na == nb && std::equal(a, a + na, b);
  }
  bool operator()(const std::vector<FrameKey>& a, const std::vector<FrameKey>& b) const {
    return same(a.data(), a.size(), b.data(), b.size());
  }
  bool operator()(const FrameSpan& a, const std::vector<FrameKey>& b) const {
    return same(a.frames, a.count, b.data(), b.size());
  }
  bool operator()(const std::vector<FrameKey>& a, const FrameSpan& b) const {
    return same(a.data(), a.size(), b.frames, b.count);
  }
};

// Stacks seen so far. The code objects in the keys are kept alive (one
// reference each, never dropped) so that a key can never be matched by a
// different code object that reuses a freed address.
struct StackCache {
  std::mutex mu;
  std::unordered_map<std::vector<FrameKey>, std::uint32_t, StackKeyHash, StackKeyEqual> ids;
};

StackCache& cache() {
  static auto* c = new StackCache;  // leaked: used until the last allocator free
  return *c;
}

// The stacks this thread looked up last: a training step launches from the
// same few Python lines over and over, and a hit costs neither the shared
// cache's mutex nor a heap key. Every key here is also in the shared cache,
// which holds its code objects, so an address in a key is never reused.
struct RecentPythonStack {
  std::size_t hash = 0;
  std::size_t count = 0;
  std::uint32_t id = 0;
  FrameKey frames[kMaxFrames];
};
// A training step allocates and frees from a few dozen Python lines, each
// once or more per step; a handful of entries would miss on most captures.
constexpr std::size_t kRecentPythonStacks = 64;
struct RecentPythonStacks {
  RecentPythonStack entries[kRecentPythonStacks];
};
thread_local RecentPythonStacks recent_python_stacks;

RecentPythonStack& recent_entry(std::size_t hash) {
  return recent_python_stacks.entries[(hash >> 7) % kRecentPythonStacks];
}

std::string string_attr(_object* object, const char* name) {
  _object* value = PyObject_GetAttrString(object, name);
  if (!value) {
    PyErr_Clear();
    return {};
  }
  const char* text = PyUnicode_AsUTF8(value);
  std::string result = text ? text : "";
  if (!text) PyErr_Clear();
  Py_DecRef(value);
  return result;
}

// Holds the GIL for its lifetime (re-entrant when the thread already has it).
class GilHold {
 public:
  GilHold() : state_(PyGILState_Ensure()) {}
  ~GilHold() { PyGILState_Release(state_); }
  GilHold(const GilHold&) = delete;
  GilHold& operator=(const GilHold&) = delete;

 private:
  int state_;
};

// Threads Python knows that run no Python code: PyTorch's autograd workers
// get a thread state (for Python hooks) but launch the backward pass's
// kernels and allocate its buffers from C++. Taking the GIL there yields
// no frame, every time. After kEmptyBeforeSkip such captures in a row the
// thread is taken for a C++ thread, and only every kProbeInterval-th
// capture looks again (a Python hook may run there now and then).
constexpr std::uint32_t kEmptyBeforeSkip = 32;
constexpr std::uint32_t kProbeInterval = 256;
struct FramelessThread {
  std::uint32_t empty_streak = 0;
  std::uint32_t skipped = 0;
};
thread_local FramelessThread frameless;

bool skip_frameless_thread() {
  if (frameless.empty_streak < kEmptyBeforeSkip) return false;
  if (++frameless.skipped < kProbeInterval) return true;
  frameless.skipped = 0;
  return false;
}

std::uint32_t note_frames(std::uint32_t id) {
  frameless.empty_streak = id == 0 ? frameless.empty_streak + 1 : 0;
  return id;
}

}  // namespace

namespace {

// A Python stack goes on record for the autograd nodes its operator may
// create; no Python stack, on a thread evaluating a node, is that node's
// backward (autograd_nodes.h).
std::uint32_t forward_or_backward(std::uint32_t id) {
  if (id != 0) {
    note_forward_stack(id);
    return id;
  }
  return backward_stack();
}

}  // namespace

std::uint32_t PythonStacks::capture() {
  if (!python_usable()) return backward_stack();
  _ts* thread = PyGILState_GetThisThreadState();
  if (thread == nullptr) return backward_stack();
  // The allocator is mostly called from Python code, which holds the GIL.
  if (PyGILState_Check && PyGILState_Check())
    return forward_or_backward(note_frames(capture_holding_gil()));
  bool known = false;
  const std::uint32_t id = capture_known(thread, &known);
  if (known) return forward_or_backward(note_frames(id));
  if (skip_frameless_thread()) return backward_stack();
  return forward_or_backward(note_frames(capture_taking_gil()));
}

namespace {

int traced_walks = 0;  // trace_first counter

// The frame reader in use (FrameReader), and how many more captures check
// the interpreter's frame records against the C API before they are
// trusted alone. Both change only while the GIL is held.
constexpr int kRecordsChecked = 64;
std::atomic<int> frame_reader{-1};
int records_left_to_check = kRecordsChecked;
// Set once the frame records agreed on all of those: from then on a thread
// may read its own records without the GIL (read_interpreter_frames_of).
std::atomic<bool> g_records_trusted{false};

// python_stack_counts().
struct StackCounts {
  std::atomic<std::uint64_t> gil_taken{0};
  std::atomic<std::uint64_t> known{0};
};
StackCounts g_stack_counts;

FrameReader current_frame_reader() {
  int reader = frame_reader.load(std::memory_order_relaxed);
  if (reader < 0) {
    const FrameReader chosen = preferred_frame_reader();
    if (chosen == FrameReader::kInterpreterFrames) {
      const std::string what = "python frames: reading the interpreter's frame records (CPython " +
                               python_minor_version() + ")";
      trace_step(what.c_str());
    } else {
      trace_step("python frames: reading through the C API");
    }
    reader = static_cast<int>(chosen);
    frame_reader.store(reader, std::memory_order_relaxed);
  }
  return static_cast<FrameReader>(reader);
}

// Reads the calling thread's frames with the current reader. While the
// interpreter's records are still being checked, the C API reads them too;
// on any difference the C API is used from then on.
std::size_t read_frames(FrameKey* out, std::size_t max, const xsc_host_api* api) {
  if (current_frame_reader() == FrameReader::kCApi) return read_frames_c_api(out, max);
  const std::size_t depth = read_interpreter_frames(out, max);
  if (records_left_to_check == 0) return depth;
  FrameKey expected[kMaxFrames];
  const std::size_t expected_depth = read_frames_c_api(expected, std::min(kMaxFrames, max));
  if (expected_depth == depth && std::equal(out, out + depth, expected)) {
    if (--records_left_to_check == 0) {
      g_records_trusted.store(true, std::memory_order_release);
      const std::string what =
          "python frames: the interpreter's frame records agreed with the C API on " +
          std::to_string(kRecordsChecked) + " stacks";
      trace_step(what.c_str());
    }
    return depth;
  }
  frame_reader.store(static_cast<int>(FrameReader::kCApi), std::memory_order_relaxed);
  records_left_to_check = 0;
  trace_step(
      "python frames: the interpreter's frame records disagreed with the C API; C API from now "
      "on");
  if (api->notice != nullptr)
    api->notice("Python stacks: this interpreter's frame records gave another stack than its "
                "C API; reading stacks through the C API from now on (slower)");
  std::copy(expected, expected + expected_depth, out);
  return expected_depth;
}

}  // namespace

namespace {
thread_local int t_skip_innermost = 0;
}  // namespace

PythonStacks::SkipInnermost::SkipInnermost(int frames) : saved_(t_skip_innermost) {
  t_skip_innermost = frames;
}

PythonStacks::SkipInnermost::~SkipInnermost() { t_skip_innermost = saved_; }

namespace {

// Leaves out the innermost frames a SkipInnermost asked to; returns the
// depth left.
std::size_t skip_innermost(FrameKey* walked, std::size_t depth) {
  if (t_skip_innermost <= 0 || depth <= static_cast<std::size_t>(t_skip_innermost)) return depth;
  const std::size_t skip = static_cast<std::size_t>(t_skip_innermost);
  std::copy(walked + skip, walked + depth, walked);
  return depth - skip;
}

std::uint32_t remember_recent(const FrameKey* walked, std::size_t depth, std::size_t hash,
                              std::uint32_t id) {
  RecentPythonStack& recent = recent_entry(hash);
  recent.hash = hash;
  recent.count = depth;
  recent.id = id;
  std::copy(walked, walked + depth, recent.frames);
  return id;
}

// The id of a walked stack seen before, from this thread's recent stacks or
// the shared cache; 0 when it was never interned. Needs no GIL: the frames'
// code objects live while the frames do, and the cache's keys hold theirs.
std::uint32_t interned_id(const FrameKey* walked, std::size_t depth, std::size_t hash) {
  const RecentPythonStack& recent = recent_entry(hash);
  if (recent.id != 0 && recent.hash == hash && recent.count == depth &&
      std::equal(walked, walked + depth, recent.frames))
    return recent.id;
  std::uint32_t id = 0;
  {
    StackCache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.ids.find(FrameSpan{walked, depth});
    if (it == c.ids.end() || it->second == 0) return 0;
    id = it->second;
  }
  return remember_recent(walked, depth, hash, id);
}

}  // namespace

std::uint32_t PythonStacks::capture_known(_ts* thread, bool* known) {
  *known = false;
  // Once the frame records have agreed with the C API: a thread that
  // released the GIL then reads its own frames without taking it.
  if (!g_records_trusted.load(std::memory_order_acquire)) return 0;
  FrameKey walked[kMaxFrames];
  const std::size_t depth =
      skip_innermost(walked, read_interpreter_frames_of(thread, walked, kMaxFrames));
  if (depth == 0) {
    *known = true;  // no Python frame: a C++ thread
    return 0;
  }
  const std::uint32_t id = interned_id(walked, depth, hash_frames(walked, depth));
  *known = id != 0;
  if (*known) g_stack_counts.known.fetch_add(1, std::memory_order_relaxed);
  return id;
}

std::uint32_t PythonStacks::capture_taking_gil() {
  g_stack_counts.gil_taken.fetch_add(1, std::memory_order_relaxed);
  GilHold gil;
  return capture_holding_gil();
}

std::uint32_t PythonStacks::capture_holding_gil() {
  FrameKey walked[kMaxFrames];
  const std::size_t depth = skip_innermost(walked, read_frames(walked, kMaxFrames, api_));
  trace_first(&traced_walks, 6, "python stack: frames read", depth);
  if (depth == 0) return 0;

  const std::size_t hash = hash_frames(walked, depth);
  if (const std::uint32_t id = interned_id(walked, depth, hash)) return id;
  std::vector<FrameKey> key(walked, walked + depth);

  // First sighting: symbolize (needs the GIL, which we hold; not the cache
  // lock, which we do not) and intern.
  std::vector<std::string> functions, files;
  std::vector<std::uint32_t> lines;
  functions.reserve(key.size());
  files.reserve(key.size());
  lines.reserve(key.size());
  for (const FrameKey& f : key) {
    auto* code = static_cast<_object*>(f.code);
    std::string name = string_attr(code, "co_qualname");  // 3.11+
    if (name.empty()) name = string_attr(code, "co_name");
    functions.push_back(std::move(name));
    files.push_back(string_attr(code, "co_filename"));
    int line = PyCode_Addr2Line(static_cast<PyCodeObject*>(f.code), f.lasti);
    lines.push_back(line > 0 ? static_cast<std::uint32_t>(line) : 0);
  }
  std::vector<xsc_frame> frames(key.size());
  for (std::size_t i = 0; i < key.size(); ++i)
    frames[i] = xsc_frame{functions[i].c_str(), files[i].c_str(), lines[i]};
  trace_first(&traced_walks, 6, "python stack: symbolized frames", frames.size());
  std::uint32_t id = api_->intern_frames(frames.data(), frames.size());
  trace_first(&traced_walks, 6, "python stack: interned as", id);
  if (id == 0) return 0;

  StackCache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto [it, inserted] = c.ids.emplace(std::move(key), id);
    if (inserted)
      for (const FrameKey& f : it->first) Py_IncRef(static_cast<_object*>(f.code));
    id = it->second;
  }
  return remember_recent(walked, depth, hash, id);
}

PythonStackCounts python_stack_counts() {
  return {g_stack_counts.gil_taken.load(std::memory_order_relaxed),
          g_stack_counts.known.load(std::memory_order_relaxed)};
}

}  // namespace xsc::torch_adapter
