// Stream capture and CUDA graphs.
//
// Work enqueued on a capturing stream does not run: it becomes a node of
// the graph being captured. Its buffer uses are kept per capture, move to
// the graph at end of capture and to the executable graph at instantiation,
// and are fed to the checker each time the executable graph is launched: a
// kGraphLaunch, then the uses as kUse on the launch stream with `graph` set.
//
// A capture spreads to other streams through events (fork/join): a stream
// that waits on an event recorded inside a capture joins that capture.
// Event records, waits, allocations and host functions inside a capture are
// graph nodes, not host-visible ordering, and are not fed to the checker.
#include <atomic>
#include <memory>
#include <unordered_map>
#include <vector>

#include "runtime/ops.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

using Uses = std::vector<Event>;

// Guarded by the session mutex, except `active_captures`, which lets the
// common case (nothing is being captured) skip the lookups.
struct GraphState {
  std::atomic<int> active_captures{0};
  std::uint64_t next_capture = 1;
  std::unordered_map<StreamId, std::uint64_t> capturing;        // stream -> capture
  std::unordered_map<std::uint64_t, std::shared_ptr<Uses>> captures;
  std::unordered_map<EventId, std::uint64_t> captured_events;   // event -> capture
  std::unordered_map<std::uint64_t, std::shared_ptr<const Uses>> graphs;  // cudaGraph_t
  std::unordered_map<std::uint64_t, std::shared_ptr<const Uses>> execs;   // cudaGraphExec_t
};

GraphState& graphs() {
  static auto* state = new GraphState;
  return *state;
}

}  // namespace

bool capture_event(Locked&, const Event& event) {
  GraphState& g = graphs();
  if (g.active_captures.load(std::memory_order_relaxed) == 0) return false;
  if (event.kind == EventKind::kStreamWaitEvent) {
    auto source = g.captured_events.find(event.event);
    if (source != g.captured_events.end()) {
      // Fork: the waiting stream joins the capture.
      g.capturing[event.stream] = source->second;
      return true;
    }
  }
  auto it = g.capturing.find(event.stream);
  if (it == g.capturing.end()) return false;
  switch (event.kind) {
    case EventKind::kUse:
      g.captures[it->second]->push_back(event);
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

void on_begin_capture(Locked&, StreamId stream) {
  GraphState& g = graphs();
  const std::uint64_t capture = g.next_capture++;
  g.capturing[stream] = capture;
  g.captures[capture] = std::make_shared<Uses>();
  g.active_captures.fetch_add(1, std::memory_order_relaxed);
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
  auto uses = g.captures.find(capture);
  if (uses != g.captures.end()) {
    if (graph != 0) g.graphs[graph] = std::move(uses->second);
    g.captures.erase(uses);
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

void on_stream_begin_capture(StreamId stream) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_begin_capture(locked, stream);
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

void on_graph_exec_launch(std::uint64_t exec, StreamId stream) {
  if (!enabled()) return;
  const StackId stack = capture_stack();
  Locked locked;
  if (locked) on_graph_launch(locked, exec, stream, stack);
}

}  // namespace xsc::rt
