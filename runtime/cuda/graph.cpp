// Stream capture and CUDA graphs.
//
// Work enqueued on a capturing stream does not run: it becomes a node of
// the graph being captured. Whether a stream is capturing is a state of the
// stream, however the capture began: cudaStreamBeginCapture,
// cudaStreamBeginCaptureToGraph and their driver twins (every _ptsz/_v2
// form, any capture mode), a wait on an event recorded inside a capture
// (the waiting stream joins it until it ends), or, for a stream the runtime
// meets for the first time, the driver's own answer (note_capture_state:
// a capture begun before the runtime attached or by an entry point it does
// not observe). A launch, copy, memset, event record, wait, allocation,
// free or host function on a capturing stream is a graph node, never an
// execution, and is not fed to the checker.
//
// The buffer uses of a capture are kept per capture and move, at the end
// of the capture, to the graph it was made into: a new graph for
// cudaStreamBeginCapture, the user's graph for a capture made "to graph"
// (appended to what earlier captures into it left). Instantiation gives
// them to the executable graph (cudaGraphExecUpdate replaces them), and
// each launch of it feeds them to the checker: a kGraphLaunch, then the
// uses as kUse on the launch stream with `graph` set.
//
// The body graphs of conditional nodes (IF, WHILE, SWITCH) are not
// modelled: their uses are dropped at the end of a capture into them, so
// they never run in the model, and the report's closing line says once that
// they were not checked (a kUnchecked event). Graphs built node by node
// carry no uses either.
#include <atomic>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/cuda/ops.h"
#include "runtime/rtl.h"
#include "runtime/cuda/stream_id.h"

namespace xsc::rt {
namespace {

using Uses = std::vector<Event>;

struct Capture {
  std::shared_ptr<Uses> uses = std::make_shared<Uses>();
  // The capture adds to a graph that may hold nodes already (a capture "to
  // graph", or one the runtime found under way): its uses are appended to
  // the graph's, not put in their place.
  bool into_existing = false;
  std::uint64_t driver_id = 0;  // the driver's capture id; 0: not known
};

// Guarded by the session mutex, except `active_captures`, which lets the
// common case (nothing is being captured) skip the lookups.
struct GraphState {
  std::atomic<int> active_captures{0};
  std::uint64_t next_capture = 1;
  std::unordered_map<StreamId, std::uint64_t> capturing;        // stream -> capture
  std::unordered_map<std::uint64_t, Capture> captures;
  std::unordered_map<EventId, std::uint64_t> captured_events;   // event -> capture
  std::unordered_map<std::uint64_t, std::shared_ptr<const Uses>> graphs;  // cudaGraph_t
  std::unordered_map<std::uint64_t, std::shared_ptr<const Uses>> execs;   // cudaGraphExec_t
  // Body graphs of conditional nodes: what is captured into them is dropped.
  std::unordered_set<std::uint64_t> bodies;
  bool conditional_said = false;
};

GraphState& graphs() {
  static auto* state = new GraphState;
  return *state;
}

constexpr const char* kConditionalUnchecked = "the bodies of conditional graph nodes (IF, WHILE, SWITCH)";

// CU_STREAM_CAPTURE_STATUS_ACTIVE
constexpr int kCaptureActive = 1;

// Asks the driver whether `stream` is capturing, and its capture's id
// (0 when only cuStreamIsCapturing is there). The query is a driver call
// made inside a CUPTI callback: the guard keeps its own callbacks from
// being taken as the application's.
bool query_capture(StreamId stream, std::uint64_t* driver_id) {
  *driver_id = 0;
  std::uint64_t handle = stream;
  if (stream == per_thread_stream()) handle = kPerThreadHandle;
  else if (!may_query_stream(stream)) return false;
  const DriverApi& api = driver();
  int status = 0;
  ReentrancyGuard guard;
  if (api.cuStreamGetCaptureInfo_v2 != nullptr) {
    unsigned long long id = 0;
    if (api.cuStreamGetCaptureInfo_v2(reinterpret_cast<void*>(handle), &status, &id, nullptr,
                                      nullptr, nullptr) != 0)
      return false;
    *driver_id = id;
    return status == kCaptureActive;
  }
  if (api.cuStreamIsCapturing == nullptr ||
      api.cuStreamIsCapturing(reinterpret_cast<void*>(handle), &status) != 0)
    return false;
  return status == kCaptureActive;
}

std::uint64_t begin(GraphState& g, StreamId stream, bool into_existing, std::uint64_t driver_id) {
  auto old = g.capturing.find(stream);
  if (old != g.capturing.end()) {
    // Already taken as capturing (found under way, or joined): the capture
    // this call begins is the one the runtime knows.
    auto known = g.captures.find(old->second);
    if (known != g.captures.end() && known->second.driver_id == 0)
      known->second.driver_id = driver_id;
    return old->second;
  }
  const std::uint64_t capture = g.next_capture++;
  g.capturing[stream] = capture;
  Capture& c = g.captures[capture];
  c.into_existing = into_existing;
  c.driver_id = driver_id;
  g.active_captures.fetch_add(1, std::memory_order_relaxed);
  return capture;
}

void say_conditional_unchecked(Locked& locked, GraphState& g) {
  if (g.conditional_said) return;
  g.conditional_said = true;
  Event event;
  event.kind = EventKind::kUnchecked;
  event.name = locked.session().names().intern(kConditionalUnchecked);
  locked.emit(event);
}

}  // namespace

bool capture_event(Locked&, const Event& event) {
  GraphState& g = graphs();
  if (g.active_captures.load(std::memory_order_relaxed) == 0) return false;
  if (event.kind == EventKind::kStreamWaitEvent) {
    auto source = g.captured_events.find(event.event);
    if (source != g.captured_events.end()) {
      // Fork: the waiting stream joins the capture until it ends.
      g.capturing[event.stream] = source->second;
      return true;
    }
  }
  auto it = g.capturing.find(event.stream);
  if (it == g.capturing.end()) {
    // An event recorded again outside the capture no longer joins it.
    if (event.kind == EventKind::kEventRecord) g.captured_events.erase(event.event);
    return false;
  }
  switch (event.kind) {
    case EventKind::kUse:
      g.captures[it->second].uses->push_back(event);
      return true;
    case EventKind::kEventRecord:
      g.captured_events[event.event] = it->second;
      return true;
    case EventKind::kStreamWaitEvent:
    case EventKind::kAlloc:
    case EventKind::kFree:
    case EventKind::kHostFunc:
    case EventKind::kGraphLaunch:
      return true;
    default:
      return false;
  }
}

bool captures_underway(Locked&) {
  return graphs().active_captures.load(std::memory_order_relaxed) != 0;
}

bool graph_uses_pending(Locked& locked) {
  const GraphState& g = graphs();
  return captures_underway(locked) || !g.graphs.empty() || !g.execs.empty();
}

void note_capture_state(Locked&, StreamId stream) {
  std::uint64_t driver_id = 0;
  if (!query_capture(stream, &driver_id)) return;
  GraphState& g = graphs();
  if (driver_id != 0) {
    for (auto& [capture, c] : g.captures) {
      if (c.driver_id != driver_id) continue;
      g.capturing[stream] = capture;  // a stream joined to a known capture
      return;
    }
  }
  begin(g, stream, /*into_existing=*/true, driver_id);
}

void on_begin_capture(Locked&, StreamId stream, bool to_graph) {
  std::uint64_t driver_id = 0;
  query_capture(stream, &driver_id);
  begin(graphs(), stream, to_graph, driver_id);
}

void on_end_capture(Locked&, StreamId stream, std::uint64_t graph) {
  GraphState& g = graphs();
  auto it = g.capturing.find(stream);
  if (it == g.capturing.end()) return;
  const std::uint64_t capture = it->second;
  for (auto s = g.capturing.begin(); s != g.capturing.end();)
    s = s->second == capture ? g.capturing.erase(s) : std::next(s);
  for (auto e = g.captured_events.begin(); e != g.captured_events.end();)
    e = e->second == capture ? g.captured_events.erase(e) : std::next(e);
  auto found = g.captures.find(capture);
  if (found != g.captures.end()) {
    Capture& c = found->second;
    // A graph the capture made itself is nobody's body, whatever graph
    // had its handle before.
    if (!c.into_existing) g.bodies.erase(graph);
    if (graph != 0 && g.bodies.count(graph) == 0) {
      auto existing = g.graphs.find(graph);
      if (c.into_existing && existing != g.graphs.end() && !existing->second->empty()) {
        auto merged = std::make_shared<Uses>(*existing->second);
        merged->insert(merged->end(), c.uses->begin(), c.uses->end());
        existing->second = std::move(merged);
      } else {
        g.graphs[graph] = std::move(c.uses);
      }
    }
    g.captures.erase(found);
  }
  g.active_captures.fetch_sub(1, std::memory_order_relaxed);
}

void on_instantiate(Locked&, std::uint64_t exec, std::uint64_t graph) {
  GraphState& g = graphs();
  auto it = g.graphs.find(graph);
  // A graph built node by node (not captured) has no recorded uses.
  if (it == g.graphs.end()) g.execs.erase(exec);
  else g.execs[exec] = it->second;
}

void on_graph_launch(Locked& locked, std::uint64_t exec, StreamId stream, StackId stack) {
  GraphState& g = graphs();
  Event launch;
  launch.kind = EventKind::kGraphLaunch;
  launch.stream = stream;
  launch.graph = exec;
  launch.stack = stack;
  locked.emit(launch);
  auto it = g.execs.find(exec);
  if (it == g.execs.end()) return;
  const std::shared_ptr<const Uses> uses = it->second;  // emit may capture into a graph
  for (Event use : *uses) {
    use.stream = stream;
    use.graph = exec;
    locked.emit(use);
  }
}

void on_event_destroyed(Locked&, EventId event) { graphs().captured_events.erase(event); }

// ---- unlocked entry points for the CUPTI dispatch -------------------------

void on_stream_begin_capture(StreamId stream, bool to_graph) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_begin_capture(locked, stream, to_graph);
}

void on_stream_end_capture(StreamId stream, std::uint64_t graph) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_end_capture(locked, stream, graph);
}

void on_graph_instantiate(std::uint64_t exec, std::uint64_t graph) {
  if (!enabled() || exec == 0) return;
  Locked locked;
  if (locked) on_instantiate(locked, exec, graph);
}

void on_graph_exec_update(std::uint64_t exec, std::uint64_t graph) {
  // An executable graph updated in place runs the new graph's nodes.
  on_graph_instantiate(exec, graph);
}

void on_graph_exec_launch(std::uint64_t exec, StreamId stream) {
  if (!enabled()) return;
  const StackId stack = capture_stack();
  Locked locked;
  if (locked) on_graph_launch(locked, exec, stream, stack);
}

void on_graph_forget(std::uint64_t graph) {
  // A graph created (the driver may hand a destroyed graph's handle out
  // again) or destroyed: nothing the runtime knew of that handle holds.
  if (!enabled() || graph == 0) return;
  Locked locked;
  if (!locked) return;
  GraphState& g = graphs();
  g.graphs.erase(graph);
  g.bodies.erase(graph);
}

void on_conditional_node(const std::uint64_t* bodies, unsigned count) {
  if (!enabled()) return;
  Locked locked;
  if (!locked) return;
  GraphState& g = graphs();
  for (unsigned i = 0; bodies != nullptr && i < count; ++i)
    if (bodies[i] != 0) {
      g.bodies.insert(bodies[i]);
      g.graphs.erase(bodies[i]);
    }
  say_conditional_unchecked(locked, g);
}

}  // namespace xsc::rt
