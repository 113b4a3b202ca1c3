#include "runtime/cuda/graph_work.h"

#include <utility>

namespace xsc::rt::graphs {

GraphEvent GraphWork::add_conditional(Branch branch, ConditionalNode node) {
  Step step;
  step.kind = StepKind::kConditional;
  step.branch = branch;
  step.conditional = static_cast<std::uint32_t>(conditionals.size());
  conditionals.push_back(std::move(node));
  steps.push_back(step);
  Step after;
  after.kind = StepKind::kRecord;
  after.branch = branch;
  after.event = events++;
  steps.push_back(after);
  return after.event;
}

Branch CaptureRecorder::branch_of(StreamId stream) {
  auto [it, fresh] = streams_.try_emplace(stream, 0);
  if (fresh) it->second = work_.add_branch();
  return it->second;
}

void CaptureRecorder::use(StreamId stream, const Event& use) {
  Step step;
  step.kind = StepKind::kUse;
  step.branch = branch_of(stream);
  step.use = use;
  work_.steps.push_back(step);
}

void CaptureRecorder::record(StreamId stream, EventId event) {
  Step step;
  step.kind = StepKind::kRecord;
  step.branch = branch_of(stream);
  step.event = work_.events++;
  recorded_[event] = step.event;  // a wait takes the latest record
  work_.steps.push_back(step);
}

bool CaptureRecorder::wait(StreamId stream, EventId event) {
  auto it = recorded_.find(event);
  if (it == recorded_.end()) return false;
  wait_graph_event(stream, it->second);
  return true;
}

void CaptureRecorder::wait_graph_event(StreamId stream, GraphEvent event) {
  Step step;
  step.kind = StepKind::kWait;
  step.branch = branch_of(stream);
  step.event = event;
  work_.steps.push_back(step);
}

void CaptureRecorder::join_all(StreamId stream) {
  Step step;
  step.kind = StepKind::kJoinAll;
  step.branch = branch_of(stream);
  work_.steps.push_back(step);
}

GraphWork append(const GraphWork& graph, const GraphWork& capture, Placement placement) {
  if (graph.empty() && graph.conditionals.empty()) return capture;
  GraphWork out = graph;
  // The capture's branch 0 continues the graph's branch 0 (after a join of
  // every branch) or starts a branch of its own; its other branches are new.
  std::vector<Branch> branch(capture.branches);
  if (placement == Placement::kAfterAll) {
    Step join;
    join.kind = StepKind::kJoinAll;
    join.branch = 0;
    out.steps.push_back(join);
    branch[0] = 0;
  } else {
    branch[0] = out.add_branch();
  }
  for (Branch b = 1; b < capture.branches; ++b) branch[b] = out.add_branch();
  const GraphEvent event_base = out.events;
  out.events += capture.events;
  const auto conditional_base = static_cast<std::uint32_t>(out.conditionals.size());
  out.conditionals.insert(out.conditionals.end(), capture.conditionals.begin(),
                          capture.conditionals.end());
  for (Step step : capture.steps) {
    step.branch = branch[step.branch];
    if (step.kind == StepKind::kRecord || step.kind == StepKind::kWait) step.event += event_base;
    if (step.kind == StepKind::kConditional) step.conditional += conditional_base;
    out.steps.push_back(step);
  }
  return out;
}

namespace {

class Planner {
 public:
  explicit Planner(const GraphLookup& lookup) : lookup_(lookup) {}

  // `graph`'s steps with its branch 0 on `entry`; its other branches fork
  // from `entry` first and join back into it last.
  void place(const GraphWork& graph, Branch entry, int depth) {
    std::vector<Branch> branch(graph.branches);
    branch[0] = entry;
    for (Branch b = 1; b < graph.branches; ++b) branch[b] = plan_.branches++;
    std::vector<GraphEvent> event(graph.events);
    for (GraphEvent& e : event) e = plan_.events++;
    if (graph.branches > 1) {
      const GraphEvent start = plan_.events++;
      emit(StepKind::kRecord, entry, start);
      for (Branch b = 1; b < graph.branches; ++b) emit(StepKind::kWait, branch[b], start);
    }
    for (const Step& step : graph.steps) {
      switch (step.kind) {
        case StepKind::kUse: {
          Step use = step;
          use.branch = branch[step.branch];
          plan_.steps.push_back(use);
          break;
        }
        case StepKind::kRecord:
        case StepKind::kWait:
          emit(step.kind, branch[step.branch], event[step.event]);
          break;
        case StepKind::kJoinAll:
          for (Branch b = 0; b < graph.branches; ++b) {
            if (b == step.branch) continue;
            const GraphEvent joined = plan_.events++;
            emit(StepKind::kRecord, branch[b], joined);
            emit(StepKind::kWait, branch[step.branch], joined);
          }
          break;
        case StepKind::kConditional:
          for (std::uint64_t body : graph.conditionals[step.conditional].bodies) {
            if (depth >= kMaxBodyDepth) {
              plan_.unknown_bodies = true;
              continue;
            }
            // A body nothing was captured or added into runs nothing.
            if (const GraphWork* work = lookup_(body))
              place(*work, branch[step.branch], depth + 1);
          }
          break;
      }
    }
    for (Branch b = 1; b < graph.branches; ++b) {
      const GraphEvent end = plan_.events++;
      emit(StepKind::kRecord, branch[b], end);
      emit(StepKind::kWait, entry, end);
    }
  }

  Plan take() { return std::move(plan_); }

 private:
  void emit(StepKind kind, Branch branch, GraphEvent event) {
    Step step;
    step.kind = kind;
    step.branch = branch;
    step.event = event;
    plan_.steps.push_back(step);
  }

  const GraphLookup& lookup_;
  Plan plan_;
};

}  // namespace

Plan plan(const GraphWork& graph, const GraphLookup& lookup) {
  Planner planner(lookup);
  planner.place(graph, 0, 0);
  return planner.take();
}

}  // namespace xsc::rt::graphs
