// Stream capture: which streams are capturing, and what their captures
// record.
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
// What a capture records (graph_work.h): its uses, each on the branch of
// the stream that made it, and the records and waits between its streams.
// A conditional node added by hand into a graph under capture (after
// cudaStreamGetCaptureInfo, as NVIDIA's graphConditionalNodes sample does)
// takes its place on the branch of the stream whose dependencies it was
// given; cudaStreamUpdateCaptureDependencies then orders that stream after
// it. At the end of the capture the work goes to the graph it was made
// into (graph.cpp), where a launch replays it.
#include <algorithm>

#include "runtime/cuda/graph_state.h"
#include "runtime/cuda/ops.h"
#include "runtime/cuda/stream_id.h"

namespace xsc::rt {
namespace {

// CU_STREAM_CAPTURE_STATUS_ACTIVE
constexpr int kCaptureActive = 1;

// Asks the driver whether `stream` is capturing, its capture's id (0 when
// only cuStreamIsCapturing is there) and the graph it captures into (0 when
// not asked for or not known). The query is a driver call made inside a
// CUPTI callback: the guard keeps its own callbacks from being taken as the
// application's.
bool query_capture(StreamId stream, std::uint64_t* driver_id, std::uint64_t* graph = nullptr) {
  *driver_id = 0;
  if (graph != nullptr) *graph = 0;
  std::uint64_t handle = stream;
  if (stream == per_thread_stream()) handle = kPerThreadHandle;
  else if (!may_query_stream(stream)) return false;
  const DriverApi& api = driver();
  int status = 0;
  ReentrancyGuard guard;
  if (api.cuStreamGetCaptureInfo_v2 != nullptr) {
    unsigned long long id = 0;
    void* captured_graph = nullptr;
    if (api.cuStreamGetCaptureInfo_v2(reinterpret_cast<void*>(handle), &status, &id,
                                      graph != nullptr ? &captured_graph : nullptr, nullptr,
                                      nullptr) != 0)
      return false;
    *driver_id = id;
    if (graph != nullptr) *graph = reinterpret_cast<std::uint64_t>(captured_graph);
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
  Capture& c = g.captures.try_emplace(capture, stream).first->second;
  c.into_existing = into_existing;
  c.driver_id = driver_id;
  g.active_captures.fetch_add(1, std::memory_order_relaxed);
  return capture;
}

Capture* capture_of(GraphState& g, StreamId stream) {
  auto it = g.capturing.find(stream);
  if (it == g.capturing.end()) return nullptr;
  auto c = g.captures.find(it->second);
  return c != g.captures.end() ? &c->second : nullptr;
}

bool same_nodes(std::vector<std::uint64_t> a, std::vector<std::uint64_t> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

bool capture_event(Locked& locked, const Event& event) {
  GraphState& g = graph_state();
  if (g.active_captures.load(std::memory_order_relaxed) == 0) return false;
  if (event.kind == EventKind::kStreamWaitEvent) {
    auto source = g.captured_events.find(event.event);
    if (source != g.captured_events.end()) {
      // Fork (the waiting stream joins the capture until it ends) or join.
      g.capturing[event.stream] = source->second;
      auto c = g.captures.find(source->second);
      if (c != g.captures.end()) c->second.recorder.wait(event.stream, event.event);
      return true;
    }
  }
  auto it = g.capturing.find(event.stream);
  if (it == g.capturing.end()) {
    // An event recorded again outside the capture no longer joins it.
    if (event.kind == EventKind::kEventRecord) g.captured_events.erase(event.event);
    return false;
  }
  auto c = g.captures.find(it->second);
  switch (event.kind) {
    case EventKind::kUse:
      if (c != g.captures.end()) c->second.recorder.use(event.stream, event);
      return true;
    case EventKind::kEventRecord:
      g.captured_events[event.event] = it->second;
      if (c != g.captures.end()) c->second.recorder.record(event.stream, event.event);
      return true;
    case EventKind::kAlloc:
    case EventKind::kFree:
      // cudaMallocAsync / cudaFreeAsync captured: graph memory nodes. A
      // caching allocator's blocks handed out during a capture (PyTorch's
      // graph pools) are host actions, taken out of the capture as before.
      if ((event.kind == EventKind::kAlloc && event.alloc_kind == AllocKind::kStreamOrdered) ||
          (event.kind == EventKind::kFree && event.free_kind == FreeKind::kStreamOrdered))
        say_unchecked(locked, g, kGraphMemory);
      return true;
    case EventKind::kStreamWaitEvent:  // on an event recorded outside the capture
    case EventKind::kHostFunc:
    case EventKind::kGraphLaunch:      // a child graph: its work follows as events
      return true;
    default:
      return false;
  }
}

bool captures_underway(Locked&) {
  return graph_state().active_captures.load(std::memory_order_relaxed) != 0;
}

void note_capture_state(Locked&, StreamId stream) {
  std::uint64_t driver_id = 0;
  if (!query_capture(stream, &driver_id)) return;
  GraphState& g = graph_state();
  if (driver_id != 0) {
    for (auto& [capture, c] : g.captures) {
      if (c.driver_id != driver_id) continue;
      // A stream joined to a known capture by a fork the runtime did not
      // see: taken as running in line with the capture's first stream.
      g.capturing[stream] = capture;
      c.recorder.put_on(stream, 0);
      return;
    }
  }
  begin(g, stream, /*into_existing=*/true, driver_id);
}

void on_begin_capture(Locked&, StreamId stream, bool to_graph) {
  std::uint64_t driver_id = 0;
  query_capture(stream, &driver_id);
  begin(graph_state(), stream, to_graph, driver_id);
}

void on_end_capture(Locked& locked, StreamId stream, std::uint64_t graph) {
  GraphState& g = graph_state();
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
    if (graph == 0) graph = c.graph;  // cudaStreamEndCapture(stream, nullptr) into a body
    if (graph != 0) keep_captured_work(locked, graph, c);
    g.captures.erase(found);
  }
  g.active_captures.fetch_sub(1, std::memory_order_relaxed);
}

void on_event_destroyed(Locked&, EventId event) { graph_state().captured_events.erase(event); }

Capture* capture_into(Locked&, GraphState& g, std::uint64_t graph) {
  if (graph == 0) return nullptr;
  for (auto& [id, c] : g.captures)
    if (c.graph == graph) return &c;
  // A graph handle the application got some other way than the calls the
  // runtime follows: ask the driver what each capture captures into.
  for (auto& [id, c] : g.captures) {
    if (c.graph != 0) continue;
    std::uint64_t driver_id = 0, captured = 0;
    if (query_capture(c.origin, &driver_id, &captured) && captured != 0) c.graph = captured;
    if (c.graph == graph) return &c;
  }
  return nullptr;
}

// A conditional node added by hand into a graph under capture: on the
// branch of the stream whose dependencies it was given; with none, a root
// of the graph; with others, after everything the capture holds.
bool add_conditional_to_capture(Locked& locked, std::uint64_t graph, std::uint64_t node,
                                const std::uint64_t* deps, std::size_t ndeps,
                                graphs::ConditionalNode conditional) {
  GraphState& g = graph_state();
  Capture* c = capture_into(locked, g, graph);
  if (c == nullptr) return false;
  const std::vector<std::uint64_t> given(deps, deps + (deps != nullptr ? ndeps : 0));
  graphs::GraphWork& work = c->recorder.work();
  graphs::Branch branch = 0;
  bool placed = false;
  for (const auto& [stream, asked] : c->asked) {
    if (!same_nodes(asked, given)) continue;
    branch = c->recorder.branch_of(stream);
    placed = true;
    break;
  }
  if (!placed && given.empty()) {
    branch = work.add_branch();
  } else if (!placed) {
    c->recorder.join_all(c->origin);
    branch = 0;
  }
  const graphs::GraphEvent after = work.add_conditional(branch, std::move(conditional));
  if (node != 0) c->nodes[node] = Capture::Node{branch, after};
  return true;
}

void on_capture_info(Locked&, StreamId stream, std::uint64_t graph, const std::uint64_t* deps,
                     std::size_t ndeps) {
  Capture* c = capture_of(graph_state(), stream);
  if (c == nullptr) return;
  if (graph != 0) c->graph = graph;
  c->asked[stream].assign(deps, deps + (deps != nullptr ? ndeps : 0));
}

void on_capture_dependencies(Locked&, StreamId stream, const std::uint64_t* nodes,
                             std::size_t count) {
  Capture* c = capture_of(graph_state(), stream);
  if (c == nullptr) return;
  c->asked.erase(stream);
  bool all_known = true;
  for (std::size_t i = 0; nodes != nullptr && i < count; ++i)
    all_known = all_known && c->nodes.count(nodes[i]) != 0;
  if (!all_known) {
    // Nodes the runtime did not see added: the stream is taken as after
    // everything the capture holds.
    c->recorder.join_all(stream);
    return;
  }
  const graphs::Branch own = c->recorder.branch_of(stream);
  for (std::size_t i = 0; nodes != nullptr && i < count; ++i) {
    const Capture::Node& node = c->nodes[nodes[i]];
    if (node.branch != own) c->recorder.wait_graph_event(stream, node.after);
  }
}

// ---- unlocked entry points for the CUPTI dispatch -------------------------

// A node added by hand is fed as the call it stands for, on a stream that
// captures into the node's graph for that one call: the capture making the
// graph when there is one (after everything it holds), else a stand-in
// stream of the calling thread's, whose capture ends right after and adds
// its work after what the graph holds. Taking the node as after everything
// can hide a race between nodes added by hand, never invent one.
NodeByHand begin_node_by_hand(std::uint64_t graph) {
  NodeByHand node;
  if (!enabled() || graph == 0) return node;
  Locked locked;
  if (!locked) return node;
  GraphState& g = graph_state();
  if (Capture* c = capture_into(locked, g, graph)) {
    c->recorder.join_all(c->origin);
    node.stream = c->origin;
    node.ready = true;
    return node;
  }
  auto [it, fresh] = g.node_streams.try_emplace(current_thread(), kLegacyStream);
  if (fresh) {
    it->second = new_stand_in(g);
    on_stream_created(locked, it->second, StreamFlags::kNonBlocking);
  }
  const std::uint64_t capture = begin(g, it->second, /*into_existing=*/true, 0);
  Capture& c = g.captures.at(capture);
  c.graph = graph;
  c.placement = graphs::Placement::kAfterAll;
  node.stream = it->second;
  node.ready = true;
  node.own_capture = true;
  return node;
}

void end_node_by_hand(std::uint64_t graph, const NodeByHand& node) {
  if (!node.own_capture || !enabled()) return;
  Locked locked;
  if (locked) on_end_capture(locked, node.stream, graph);
}

void on_stream_begin_capture(StreamId stream, std::uint64_t graph, bool to_graph,
                             bool has_dependencies) {
  if (!enabled()) return;
  Locked locked;
  if (!locked) return;
  on_begin_capture(locked, stream, to_graph);
  Capture* c = capture_of(graph_state(), stream);
  if (c == nullptr) return;
  if (graph != 0) c->graph = graph;
  c->placement = has_dependencies ? graphs::Placement::kAfterAll : graphs::Placement::kRoot;
}

void on_stream_end_capture(StreamId stream, std::uint64_t graph) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_end_capture(locked, stream, graph);
}

void on_stream_capture_info(StreamId stream, std::uint64_t graph, const std::uint64_t* deps,
                            std::size_t ndeps) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_capture_info(locked, stream, graph, deps, ndeps);
}

void on_stream_capture_dependencies(StreamId stream, const std::uint64_t* nodes,
                                    std::size_t count) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_capture_dependencies(locked, stream, nodes, count);
}

}  // namespace xsc::rt
