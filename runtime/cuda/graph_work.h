// What a CUDA graph does when it runs, as the runtime learns it from stream
// capture: the buffer uses of its nodes, the branches they run on, the
// orderings between branches, and its conditional nodes, whose bodies are
// graphs of their own. Pure (no CUDA, no lock): capture.cpp records it,
// graph.cpp turns an instantiated graph's work into the Plan each launch
// replays, and the unit tests check both halves.
//
// A branch is a chain of nodes the graph runs in order: the stream a
// capture began on is branch 0, each stream that joined it (by waiting on
// an event recorded inside it) a branch of its own. Nodes of one branch are
// ordered; nodes of two branches only through the records and waits
// between them, as the capture made them. A launch runs branch 0 on the
// launch stream and every other branch apart from it, each after the
// launch stream's earlier work and before its later work.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "checker/engine/event.h"

namespace xsc::rt::graphs {

using Branch = std::uint32_t;      // 0: the branch the graph's capture began on
using GraphEvent = std::uint32_t;  // an event in the graph's own numbering

enum class StepKind : std::uint8_t {
  kUse,          // `use` runs on `branch`
  kRecord,       // `branch` records `event`
  kWait,         // `branch` waits for `event`
  kJoinAll,      // `branch` waits for every other branch's work so far: an
                 // ordering made through node handles, which the runtime
                 // does not follow one by one (taking more as ordered can
                 // hide a race, never invent one)
  kConditional,  // conditional node `conditional`: its bodies run on
                 // `branch`, each zero or more times, after the branch's
                 // earlier steps and before its later ones
};

struct Step {
  StepKind kind = StepKind::kUse;
  Branch branch = 0;
  GraphEvent event = 0;           // kRecord, kWait
  std::uint32_t conditional = 0;  // kConditional: index into conditionals
  Event use;                      // kUse; its stream is set at each launch
};

enum class ConditionalType : std::uint8_t { kIf, kWhile, kSwitch };

struct ConditionalNode {
  ConditionalType type = ConditionalType::kIf;
  // The body graphs (CUDA's phGraph_out): IF has one (two with an ELSE),
  // WHILE one, SWITCH one per case. At most one body of an IF or SWITCH
  // runs per execution, a WHILE body any number of times in a row.
  std::vector<std::uint64_t> bodies;
};

struct GraphWork {
  std::vector<Step> steps;
  std::vector<ConditionalNode> conditionals;
  Branch branches = 1;
  GraphEvent events = 0;

  bool empty() const { return steps.empty(); }
  // A conditional node added to the graph on `branch`, after its earlier
  // steps there; returns the event recorded right after it (what a later
  // dependency on the node waits for).
  GraphEvent add_conditional(Branch branch, ConditionalNode node);
  Branch add_branch() { return branches++; }
};

// The steps of one capture, as its calls come: each stream of the capture
// gets its branch the first time it is named.
class CaptureRecorder {
 public:
  explicit CaptureRecorder(StreamId origin) { streams_[origin] = 0; }

  // `stream`'s branch; a stream not yet part of the capture gets a new one.
  Branch branch_of(StreamId stream);
  // `stream` takes `branch` (a stream that joined the capture without a
  // fork the runtime saw: it is taken as running in line with `branch`).
  void put_on(StreamId stream, Branch branch) { streams_[stream] = branch; }
  bool has(StreamId stream) const { return streams_.count(stream) != 0; }

  void use(StreamId stream, const Event& use);
  void record(StreamId stream, EventId event);
  // `stream` waits for `event`'s latest record in this capture; false (and
  // nothing recorded) when the capture never recorded it.
  bool wait(StreamId stream, EventId event);
  void wait_graph_event(StreamId stream, GraphEvent event);
  void join_all(StreamId stream);

  GraphWork& work() { return work_; }
  const GraphWork& work() const { return work_; }

 private:
  GraphWork work_;
  std::unordered_map<StreamId, Branch> streams_;
  std::unordered_map<EventId, GraphEvent> recorded_;
};

// Where a capture's work goes in the graph it was captured into.
enum class Placement : std::uint8_t {
  kRoot,      // no dependencies: beside what the graph holds, from its start
  kAfterAll,  // after everything the graph holds
};

// `graph` with `capture` added (a capture into a graph that may hold work
// already: cudaStreamBeginCaptureToGraph, a capture found under way).
GraphWork append(const GraphWork& graph, const GraphWork& capture, Placement placement);

// What each launch of an executable graph replays: its graph's steps with
// every conditional body put in place, numbered for the executable graph
// as a whole. Only kUse, kRecord and kWait steps; branch 0 is the launch
// stream, the others the executable graph's own.
struct Plan {
  std::vector<Step> steps;
  Branch branches = 1;
  GraphEvent events = 0;
  // Conditional bodies nested deeper than kMaxBodyDepth: they run nothing
  // in the plan.
  bool unknown_bodies = false;
};

// The work captured into graph handle `graph`, or null (nothing captured
// into it and no node added by hand: an empty graph).
using GraphLookup = std::function<const GraphWork*(std::uint64_t graph)>;

// Conditional bodies nested deeper than this are not followed.
inline constexpr int kMaxBodyDepth = 16;

// The plan of `graph`, its bodies looked up as they are when it is
// instantiated. Each body runs once, in place of its node: on the node's
// branch (its own branches forked from there and joined back), so that it
// is ordered after the node's dependencies and before its dependents, and
// ordered with the other bodies of the node, of which at most one runs per
// execution. One run stands for any number: WHILE iterations are ordered
// with each other, so a race a body takes part in is one its first run has.
// A body's records and waits order nothing outside it; a run of zero
// leaves the graph's own orderings as they are.
Plan plan(const GraphWork& graph, const GraphLookup& lookup);

}  // namespace xsc::rt::graphs
