// The picture of one finding, independent of its rendering: lanes, items
// placed in slots of logical time, and the arrows between them. Built by
// timeline_picture.cpp from the recorder's ops; written as Chrome trace-event
// JSON by timeline_chrome.cpp and as SVG by timeline_svg.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "checker/engine/finding.h"
#include "checker/engine/stack_depot.h"
#include "checker/report/timeline.h"
#include "checker/report/timeline_ops.h"

namespace xsc::timeline {

enum class Shape : std::uint8_t { kSlice, kMarker, kElision };
enum class Mark : std::uint8_t { kNone, kAlloc, kFree, kRealloc, kRecord, kWait, kSync, kFreeDone };
enum class FlowKind : std::uint8_t { kHb, kHazard, kRace, kLateWait };

struct PLane {
  std::string label;
  std::string detail;
  bool block = false;
  bool host = false;
};

struct PItem {
  std::size_t lane = 0;
  std::uint64_t col = 0;
  bool elision_slot = false;  // sorts before the ops of its column
  std::size_t slot = 0;       // x position, filled in by layout
  double dx = 0, w = 0;       // place within the slot, in pixels of kSlotW
  bool labelled = true;       // a marker beside no slice gets its label drawn
  std::size_t label_chars = 14;
  Shape shape = Shape::kSlice;
  Mark mark = Mark::kNone;
  int block = -1;             // 0: the freed block, 1: the reallocation
  bool hazard = false;        // the unordered use / racing op / free
  bool late = false;          // the late wait
  std::string label;          // short, drawn
  std::string detail;         // tooltip / args
  std::uint64_t seq = 0;
};

struct PFlow {
  std::size_t from = 0, to = 0;  // item indexes
  FlowKind kind = FlowKind::kHb;
  std::string label;   // short, drawn on the arrow
  std::string detail;  // the sentence, in the tooltip and the JSON
};

// One slot of logical time is this many pixels wide in the SVG; the JSON
// uses the same proportions.
constexpr int kSlotW = 108;
constexpr double kMarkW = 12, kMarkGap = 4, kMarkSpacing = 30;

struct Picture {
  std::size_t number = 0;
  std::string title;
  std::string subtitle;
  std::string note;  // elided or missing ops, latent
  std::vector<PLane> lanes;
  std::size_t first_block_lane = 0;
  std::vector<PItem> items;
  std::vector<PFlow> flows;
  std::vector<std::uint64_t> slot_cols;  // logical time of each slot
  std::vector<std::string> block_names;  // legend text per block
  std::size_t ops_drawn = 0, ops_elided = 0;
};

const char* const kClockText =
    "x: the checker's logical clock, not GPU time: enqueue order along each stream, shifted "
    "right past the event records waited for, host synchronizations and host functions; "
    "ops of two streams in one column are not ordered by any of these edges";

// The picture of finding `f` (number `number` of the report) from the ops
// the recorder kept for it; `anchor` is the event during which it appeared.
Picture build_picture(const Finding& f, std::vector<Op> ops, std::uint64_t anchor,
                      const NameTable& names, const StackDepot& stacks,
                      const std::unordered_map<ThreadId, NameId>& thread_names,
                      std::size_t number, int pid);

// Fits `text` in about `chars` characters, keeping its start (timeline_svg.cpp).
std::string fit(const std::string& text, std::size_t chars);

// An arrow's name and category, as the Chrome trace and the SVG legend say
// them (timeline_chrome.cpp).
std::string flow_name(FlowKind kind);
std::string flow_category(FlowKind kind);

// The two renderings of a picture.
std::string render_json(const Picture& pic);  // timeline_chrome.cpp
std::string render_svg(const Picture& pic);   // timeline_svg.cpp

}  // namespace xsc::timeline
