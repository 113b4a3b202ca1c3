// Timeline pictures of findings (the timeline=DIR option): for each finding
// a Chrome trace-event file (Perfetto, chrome://tracing) and an SVG drawing,
// both of the same window: streams and host threads as lanes on top, the
// freed block and the reallocation that overlaps it as lanes below, each op
// coloured by the block it touches, record -> wait arrows and the missing
// edge drawn as the hazard.
//
// This is a renderer: it decides nothing about what is a bug. It keeps its
// own bounded record of the ops the session saw (a ring per stream and per
// host thread, plus a copy pinned when a finding first appears) and finds a
// finding's ops in it by address, stream, stack and name.
//
// Time in the pictures is a logical clock, not GPU time: each op's column is
// one past the previous op on its stream, past the record an event wait
// waits for, past what a host synchronization (or a host function that ran)
// waited for, and never before an op its host thread enqueued earlier. An
// op ordered before another on another stream by these edges is therefore
// drawn to its left; ops of two streams in one column are not ordered by
// any of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "checker/engine/event.h"
#include "checker/engine/finding.h"
#include "checker/engine/stack_depot.h"

namespace xsc {

// Ops kept per stream or host thread for pictures of findings that appear
// only at the end of a run, and copied when a finding first appears.
inline constexpr std::size_t kTimelineOpsPerLane = 512;
// The most ops one picture draws; the rest are elided as "...N ops...".
inline constexpr std::size_t kTimelineMaxOps = 300;

class TimelineRecorder {
 public:
  explicit TimelineRecorder(std::size_t ops_per_lane = kTimelineOpsPerLane);
  ~TimelineRecorder();
  TimelineRecorder(const TimelineRecorder&) = delete;
  TimelineRecorder& operator=(const TimelineRecorder&) = delete;

  // Every event, in host-call order, before the checker sees it.
  void on_event(const Event& event);
  // After the checker saw the event: a finding that is new since the last
  // call gets its ops pinned (copied out of the rings, then followed for a
  // while), so long runs keep the picture of a finding's first occurrence.
  // `findings` is the checker's list; indexes are stable.
  void note_findings(const std::vector<Finding>& findings);

  // Memory in use, for tests of the bound: ops held in rings and pins.
  std::size_t ops_held() const;

  struct Impl;

 private:
  friend struct TimelineWriter;
  std::unique_ptr<Impl> impl_;
};

struct TimelineInput {
  const Finding* finding = nullptr;
  std::size_t checker_index = 0;  // index in the checker's findings()
  std::size_t number = 0;         // N of finding-N, 1-based, report order
};

// Writes DIR/finding-N.json and DIR/finding-N.svg for each input (DIR is
// created when missing). paths->at(i) is "DIR/finding-N" (no extension)
// when both files of input i were written, "" otherwise. Returns false with
// a one-line *warning at the first failure; no file after it is attempted.
bool write_timelines(const TimelineRecorder& recorder, const std::vector<TimelineInput>& inputs,
                     const NameTable& names, const StackDepot& stacks, int pid,
                     const std::string& dir, std::vector<std::string>* paths,
                     std::string* warning);

}  // namespace xsc
