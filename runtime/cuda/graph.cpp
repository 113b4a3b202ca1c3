// CUDA graphs: the work captured into each graph, executable graphs, and
// the replay of an executable graph's work at each launch.
//
// The work of a capture (capture.cpp) goes, when the capture ends, to the
// graph it was made into: a new graph for cudaStreamBeginCapture, the
// application's graph for a capture made "to graph", added to what earlier
// captures into it left (graph_work.h's append). A body graph of a
// conditional node is a graph like any other; the node itself is a step of
// its parent graph that names its bodies. Instantiation, in every form,
// turns the graph's work into a plan, with the bodies as they are then put
// in place (graph_work.h's plan); cudaGraphExecUpdate replaces it. Each
// launch feeds the plan to the checker: a kGraphLaunch on the launch
// stream, then the uses, records and waits of its branches, branch 0 on the
// launch stream and every other branch on a stream of its own that stands
// for it (branch_stream_id), forked from the launch stream and joined back.
// A launch waits for the executable graph's previous launch, as CUDA
// orders launches of one executable graph.
//
// An upload (cudaGraphUpload) runs nothing. A graph instantiated for device
// launch may also be launched from a kernel, which the host does not see:
// the report's closing line says so once. A kernel, copy, memset or child
// graph node added by hand adds its work after what its graph holds
// (capture.cpp feeds the call it stands for into a capture of one call);
// a graph memory node is said once to be unchecked.
#include "runtime/cuda/graph_state.h"
#include "runtime/cuda/ops.h"

namespace xsc::rt {
namespace {

// cudaGraphInstantiateFlagDeviceLaunch, CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH
constexpr unsigned long long kDeviceLaunchFlag = 4;

StreamId stand_in(GraphState& g) { return new_stand_in(g); }

void make_plan(Locked& locked, GraphState& g, Exec& exec, std::uint64_t graph) {
  auto it = g.graphs.find(graph);
  // A graph nothing was captured or added into (host and event nodes
  // only) has no recorded work.
  if (it == g.graphs.end()) {
    exec.plan = nullptr;
    return;
  }
  const graphs::GraphLookup lookup = [&g](std::uint64_t body) -> const graphs::GraphWork* {
    auto found = g.graphs.find(body);
    return found != g.graphs.end() ? found->second.get() : nullptr;
  };
  auto plan = std::make_shared<graphs::Plan>(graphs::plan(*it->second, lookup));
  if (plan->unknown_bodies) say_unchecked(locked, g, kUnknownBodies);
  exec.plan = std::move(plan);
}

// The streams and events standing for `exec`'s branches and graph events,
// made as its plan needs them.
void make_stand_ins(Locked& locked, GraphState& g, Exec& exec) {
  const graphs::Plan& plan = *exec.plan;
  if (exec.branch_streams.empty()) exec.branch_streams.push_back(kLegacyStream);
  while (exec.branch_streams.size() < plan.branches) {
    const StreamId stream = stand_in(g);
    // Non-blocking: a branch is ordered only through the launch stream.
    on_stream_created(locked, stream, StreamFlags::kNonBlocking);
    exec.branch_streams.push_back(stream);
  }
  while (exec.events.size() < plan.events) exec.events.push_back(stand_in(g));
  if (exec.done == 0) exec.done = stand_in(g);
}

Event sync_event(EventKind kind, StreamId stream, EventId id, StackId stack) {
  Event event;
  event.kind = kind;
  event.stream = stream;
  event.event = id;
  event.stack = stack;
  return event;
}

}  // namespace

GraphState& graph_state() {
  static auto* state = new GraphState;
  return *state;
}

// The bit above the per-thread streams' (stream_id.h) is reserved for
// stand-ins (event.h).
StreamId new_stand_in(GraphState& g) { return kGraphBranchStreamBit | g.next_stand_in++; }

void say_unchecked(Locked& locked, GraphState& g, const char* what) {
  if (!g.said.insert(what).second) return;
  Event event;
  event.kind = EventKind::kUnchecked;
  event.name = locked.names().intern(what);
  locked.emit(event);
}

void keep_captured_work(Locked&, std::uint64_t graph, Capture& c) {
  GraphState& g = graph_state();
  graphs::GraphWork& work = c.recorder.work();
  auto existing = g.graphs.find(graph);
  // A graph the capture made itself replaces whatever had its handle.
  if (c.into_existing && existing != g.graphs.end()) {
    existing->second =
        std::make_shared<graphs::GraphWork>(graphs::append(*existing->second, work, c.placement));
  } else {
    g.graphs[graph] = std::make_shared<graphs::GraphWork>(std::move(work));
  }
}

void add_after_all(Locked& locked, std::uint64_t graph, const graphs::GraphWork& work) {
  GraphState& g = graph_state();
  if (Capture* c = capture_into(locked, g, graph)) {
    c->recorder.work() = graphs::append(c->recorder.work(), work, graphs::Placement::kAfterAll);
    return;
  }
  auto it = g.graphs.find(graph);
  g.graphs[graph] = std::make_shared<graphs::GraphWork>(
      it != g.graphs.end() ? graphs::append(*it->second, work, graphs::Placement::kAfterAll) : work);
}

bool graph_uses_pending(Locked& locked) {
  const GraphState& g = graph_state();
  return captures_underway(locked) || !g.graphs.empty() || !g.execs.empty();
}

void on_instantiate(Locked& locked, std::uint64_t exec, std::uint64_t graph) {
  GraphState& g = graph_state();
  make_plan(locked, g, g.execs[exec], graph);
}

void on_graph_launch(Locked& locked, std::uint64_t exec_id, StreamId stream, StackId stack) {
  GraphState& g = graph_state();
  Event launch;
  launch.kind = EventKind::kGraphLaunch;
  launch.stream = stream;
  launch.graph = exec_id;
  launch.stack = stack;
  locked.emit(launch);
  auto it = g.execs.find(exec_id);
  if (it == g.execs.end() || it->second.plan == nullptr) return;
  Exec& exec = it->second;
  make_stand_ins(locked, g, exec);
  // Launched into a capture (a child graph of the graph being captured),
  // the replay below is captured too, and this is no launch of its own.
  const bool into_capture = g.capturing.count(stream) != 0;
  // Copies: emit may capture into a graph, and adds to g then.
  const std::shared_ptr<const graphs::Plan> plan = exec.plan;
  const std::vector<StreamId> streams = exec.branch_streams;
  const std::vector<EventId> events = exec.events;
  const EventId done = exec.done;
  // After the executable graph's previous launch, wherever it ran.
  if (!into_capture && exec.launched && exec.last_stream != stream)
    locked.emit(sync_event(EventKind::kStreamWaitEvent, stream, done, stack));
  if (!into_capture) {
    exec.launched = true;
    exec.last_stream = stream;
  }
  auto branch_stream = [&](graphs::Branch b) { return b == 0 ? stream : streams[b]; };
  for (const graphs::Step& step : plan->steps) {
    switch (step.kind) {
      case graphs::StepKind::kUse: {
        Event use = step.use;
        use.stream = branch_stream(step.branch);
        use.graph = exec_id;
        locked.emit(use);
        break;
      }
      case graphs::StepKind::kRecord:
        locked.emit(sync_event(EventKind::kEventRecord, branch_stream(step.branch),
                               events[step.event], stack));
        break;
      case graphs::StepKind::kWait:
        locked.emit(sync_event(EventKind::kStreamWaitEvent, branch_stream(step.branch),
                               events[step.event], stack));
        break;
      case graphs::StepKind::kJoinAll:
      case graphs::StepKind::kConditional:
        break;  // not in a plan
    }
  }
  if (!into_capture) locked.emit(sync_event(EventKind::kEventRecord, stream, done, stack));
}

// ---- unlocked entry points for the CUPTI dispatch -------------------------

void on_graph_instantiate(std::uint64_t exec, std::uint64_t graph, unsigned long long flags) {
  if (!enabled() || exec == 0) return;
  Locked locked;
  if (!locked) return;
  on_instantiate(locked, exec, graph);
  if ((flags & kDeviceLaunchFlag) != 0) say_unchecked(locked, graph_state(), kDeviceLaunch);
}

void on_graph_exec_update(std::uint64_t exec, std::uint64_t graph) {
  // An executable graph updated in place runs the new graph's nodes.
  on_graph_instantiate(exec, graph, 0);
}

void on_graph_exec_launch(std::uint64_t exec, StreamId stream) {
  if (!enabled()) return;
  const StackId stack = capture_stack();
  Locked locked;
  if (locked) on_graph_launch(locked, exec, stream, stack);
}

void on_graph_exec_destroy(std::uint64_t exec_id) {
  if (!enabled()) return;
  Locked locked;
  if (!locked) return;
  GraphState& g = graph_state();
  auto it = g.execs.find(exec_id);
  if (it == g.execs.end()) return;
  // Its branches' work still completes; a device synchronization waits for
  // it (a destroyed stream's clock stays in the device's).
  for (std::size_t b = 1; b < it->second.branch_streams.size(); ++b)
    on_stream_destroyed(locked, it->second.branch_streams[b]);
  g.execs.erase(it);
}

void on_graph_forget(std::uint64_t graph) {
  // A graph created (the driver may hand a destroyed graph's handle out
  // again) or destroyed: nothing the runtime knew of that handle holds.
  if (!enabled() || graph == 0) return;
  Locked locked;
  if (locked) graph_state().graphs.erase(graph);
}

void on_graph_clone(std::uint64_t clone, std::uint64_t original) {
  if (!enabled() || clone == 0) return;
  Locked locked;
  if (!locked) return;
  GraphState& g = graph_state();
  auto it = g.graphs.find(original);
  if (it == g.graphs.end()) g.graphs.erase(clone);
  else g.graphs[clone] = it->second;  // the work is never changed in place
}

void on_conditional_node(std::uint64_t graph, std::uint64_t node, const std::uint64_t* deps,
                         std::size_t ndeps, int type, const std::uint64_t* bodies,
                         unsigned count) {
  if (!enabled()) return;
  Locked locked;
  if (!locked) return;
  GraphState& g = graph_state();
  graphs::ConditionalNode conditional;
  conditional.type = type == 1   ? graphs::ConditionalType::kWhile
                     : type == 2 ? graphs::ConditionalType::kSwitch
                                 : graphs::ConditionalType::kIf;
  for (unsigned i = 0; bodies != nullptr && i < count; ++i) {
    if (bodies[i] == 0) continue;
    // A fresh, empty graph, whatever had its handle before.
    g.graphs.erase(bodies[i]);
    conditional.bodies.push_back(bodies[i]);
  }
  if (add_conditional_to_capture(locked, graph, node, deps, ndeps, conditional)) return;
  // A graph not under capture (built by hand, or captured already):
  // the node is taken as after what the graph holds.
  auto it = g.graphs.find(graph);
  auto work = it != g.graphs.end() ? std::make_shared<graphs::GraphWork>(*it->second)
                                   : std::make_shared<graphs::GraphWork>();
  work->add_conditional(0, std::move(conditional));
  g.graphs[graph] = std::move(work);
}

void on_child_graph_node(std::uint64_t graph, std::uint64_t child) {
  if (!enabled() || graph == 0) return;
  Locked locked;
  if (!locked) return;
  GraphState& g = graph_state();
  auto it = g.graphs.find(child);
  // The child is cloned into the node: its work as it is now.
  if (it == g.graphs.end()) return;
  const std::shared_ptr<const graphs::GraphWork> work = it->second;
  add_after_all(locked, graph, *work);
}

void on_graph_memory_node() {
  if (!enabled()) return;
  Locked locked;
  if (locked) say_unchecked(locked, graph_state(), kGraphMemory);
}

}  // namespace xsc::rt
