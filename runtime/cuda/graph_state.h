// The state capture.cpp and graph.cpp share: captures under way, the work
// captured into each graph, and each executable graph's plan. Guarded by
// the session mutex, except `active_captures`, which lets the common case
// (nothing is being captured) skip the lookups.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/cuda/graph_work.h"
#include "runtime/rtl.h"

namespace xsc::rt {

struct Capture {
  explicit Capture(StreamId origin) : recorder(origin), origin(origin) {}

  graphs::CaptureRecorder recorder;
  // Where the capture's work goes in its graph: a capture into a graph the
  // application made (or one found under way) adds to what it holds.
  bool into_existing = false;
  graphs::Placement placement = graphs::Placement::kAfterAll;
  std::uint64_t driver_id = 0;  // the driver's capture id; 0: not known
  std::uint64_t graph = 0;      // the graph it captures into; 0: not known yet
  StreamId origin;
  // The dependencies cudaStreamGetCaptureInfo last gave the application
  // for each stream of the capture (what a node it adds by hand after them
  // depends on).
  std::unordered_map<StreamId, std::vector<std::uint64_t>> asked;
  // Conditional nodes added into the capture: node -> its branch and the
  // event recorded right after it.
  struct Node {
    graphs::Branch branch = 0;
    graphs::GraphEvent after = 0;
  };
  std::unordered_map<std::uint64_t, Node> nodes;
};

// An executable graph (cudaGraphExec_t).
struct Exec {
  std::shared_ptr<const graphs::Plan> plan;  // null: nothing known to replay
  // The streams and events that stand for its branches and graph events,
  // made at the first launch that needs them and kept for every later one
  // (launches of one executable graph are ordered with each other).
  std::vector<StreamId> branch_streams;  // [0] unused: the launch stream
  std::vector<EventId> events;
  EventId done = 0;  // recorded on the launch stream at the end of a launch
  StreamId last_stream = kLegacyStream;
  bool launched = false;
};

struct GraphState {
  std::atomic<int> active_captures{0};
  std::uint64_t next_capture = 1;
  std::unordered_map<StreamId, std::uint64_t> capturing;       // stream -> capture
  std::unordered_map<std::uint64_t, Capture> captures;
  std::unordered_map<EventId, std::uint64_t> captured_events;  // event -> capture
  std::unordered_map<std::uint64_t, std::shared_ptr<const graphs::GraphWork>> graphs;  // cudaGraph_t
  std::unordered_map<std::uint64_t, Exec> execs;                                  // cudaGraphExec_t
  std::uint64_t next_stand_in = 1;  // new_stand_in
  // Per host thread: the stand-in stream whose one-call captures feed the
  // nodes that thread adds by hand (capture.cpp).
  std::unordered_map<ThreadId, StreamId> node_streams;
  std::unordered_set<std::string> said;  // kUnchecked notices given
};

GraphState& graph_state();

// A stream or event id no application handle takes (event.h's
// kGraphBranchStreamBit): the stand-ins for graph branches and their events.
StreamId new_stand_in(GraphState& g);

// What the report's closing line names as not checked (kUnchecked).
inline constexpr const char* kUnknownBodies =
    "the bodies of conditional graph nodes nested more than 16 deep";
inline constexpr const char* kDeviceLaunch =
    "graph launches from the device (graphs instantiated with cudaGraphInstantiateFlagDeviceLaunch)";
inline constexpr const char* kGraphMemory =
    "allocations and frees inside graphs (graph memory nodes)";

// The capture `graph` is being captured by, or null.
Capture* capture_into(Locked& locked, GraphState& g, std::uint64_t graph);

// Says once, on the report's closing line, that `what` is not checked.
void say_unchecked(Locked& locked, GraphState& g, const char* what);

// capture.cpp: what the application asked of a capture
// (cudaStreamGetCaptureInfo: the graph and `stream`'s dependencies), a
// change of `stream`'s dependencies to `nodes`
// (cudaStreamUpdateCaptureDependencies), and a conditional node added by
// hand into `graph`: false when no capture is making `graph`.
void on_capture_info(Locked& locked, StreamId stream, std::uint64_t graph,
                     const std::uint64_t* deps, std::size_t ndeps);
void on_capture_dependencies(Locked& locked, StreamId stream, const std::uint64_t* nodes,
                             std::size_t count);
bool add_conditional_to_capture(Locked& locked, std::uint64_t graph, std::uint64_t node,
                                const std::uint64_t* deps, std::size_t ndeps,
                                graphs::ConditionalNode conditional);

// graph.cpp: a finished capture's work, given to `graph`.
void keep_captured_work(Locked& locked, std::uint64_t graph, Capture& capture);
// graph.cpp: `graph` with `work` added after what it holds, or, while a
// capture is making `graph`, that capture's work.
void add_after_all(Locked& locked, std::uint64_t graph, const graphs::GraphWork& work);

}  // namespace xsc::rt
