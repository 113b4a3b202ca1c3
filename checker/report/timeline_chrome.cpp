// A finding's picture as Chrome trace-event JSON (Perfetto,
// chrome://tracing): one process for the streams and host threads, one for
// the memory blocks, slots of logical time as microseconds.
#include <string>

#include <nlohmann/json.hpp>

#include "checker/report/report.h"
#include "checker/report/timeline_picture.h"

namespace xsc::timeline {

using nlohmann::json;

namespace {

constexpr int kSlotUs = 100;   // one slot of logical time, in the format's microseconds

const char* chrome_colour(const PItem& item) {
  if (item.late) return "yellow";
  if (item.shape == Shape::kElision) return "grey";
  if (item.block == 0) return "rail_response";
  if (item.block == 1) return "good";
  if (item.mark == Mark::kFree) return "terrible";
  return "generic_work";
}

}  // namespace

std::string flow_name(FlowKind kind) {
  switch (kind) {
    case FlowKind::kHb: return "record -> wait";
    case FlowKind::kHazard: return "hazard: missing edge";
    case FlowKind::kRace: return "race";
    case FlowKind::kLateWait: return "late wait";
  }
  return "flow";
}

std::string flow_category(FlowKind kind) {
  switch (kind) {
    case FlowKind::kHb: return "happens-before";
    case FlowKind::kHazard: return "hazard";
    case FlowKind::kRace: return "race";
    case FlowKind::kLateWait: return "late-wait";
  }
  return "flow";
}

std::string render_json(const Picture& pic) {
  json events = json::array();
  constexpr int kTopPid = 1, kBlockPid = 2;
  events.push_back({{"ph", "M"}, {"pid", kTopPid}, {"name", "process_name"},
                    {"args", {{"name", "streams and host threads (logical clock, not GPU time)"}}}});
  events.push_back({{"ph", "M"}, {"pid", kTopPid}, {"name", "process_sort_index"}, {"args", {{"sort_index", 0}}}});
  events.push_back({{"ph", "M"}, {"pid", kBlockPid}, {"name", "process_name"}, {"args", {{"name", "memory blocks"}}}});
  events.push_back({{"ph", "M"}, {"pid", kBlockPid}, {"name", "process_sort_index"}, {"args", {{"sort_index", 1}}}});
  auto pid_of = [&](std::size_t lane) { return pic.lanes[lane].block ? kBlockPid : kTopPid; };
  auto tid_of = [&](std::size_t lane) { return static_cast<int>(lane) + 1; };
  for (std::size_t i = 0; i < pic.lanes.size(); ++i) {
    const PLane& lane = pic.lanes[i];
    std::string name = lane.label + (lane.detail.empty() ? "" : " (" + lane.detail + ")");
    events.push_back({{"ph", "M"}, {"pid", pid_of(i)}, {"tid", tid_of(i)}, {"name", "thread_name"},
                      {"args", {{"name", name}}}});
    events.push_back({{"ph", "M"}, {"pid", pid_of(i)}, {"tid", tid_of(i)}, {"name", "thread_sort_index"},
                      {"args", {{"sort_index", i}}}});
  }
  auto ts_of = [&](const PItem& item) {
    return static_cast<std::int64_t>(item.slot) * kSlotUs + static_cast<std::int64_t>(item.dx * kSlotUs / kSlotW);
  };
  auto dur_of = [&](const PItem& item) {
    return std::max<std::int64_t>(2, static_cast<std::int64_t>(item.w * kSlotUs / kSlotW));
  };
  for (const PItem& item : pic.items) {
    std::string cat = item.shape == Shape::kElision ? "elided"
                      : item.shape == Shape::kSlice ? "op"
                                                    : "marker";
    json args = {{"detail", item.detail}, {"logical_time", item.col}};
    if (item.block >= 0) args["block"] = pic.block_names[static_cast<std::size_t>(item.block)];
    if (item.hazard) args["hazard"] = true;
    if (item.late) args["late_wait"] = true;
    events.push_back({{"ph", "X"}, {"pid", pid_of(item.lane)}, {"tid", tid_of(item.lane)}, {"ts", ts_of(item)},
                      {"dur", dur_of(item)}, {"name", item.label}, {"cat", cat}, {"cname", chrome_colour(item)},
                      {"args", args}});
  }
  int id = 1;
  for (const PFlow& flow : pic.flows) {
    const PItem& from = pic.items[flow.from];
    const PItem& to = pic.items[flow.to];
    std::string name = flow.detail.empty() ? flow_name(flow.kind) : flow.detail;
    events.push_back({{"ph", "s"}, {"id", id}, {"pid", pid_of(from.lane)}, {"tid", tid_of(from.lane)},
                      {"ts", ts_of(from) + dur_of(from) / 2}, {"name", name}, {"cat", flow_category(flow.kind)}});
    events.push_back({{"ph", "f"}, {"bp", "e"}, {"id", id}, {"pid", pid_of(to.lane)}, {"tid", tid_of(to.lane)},
                      {"ts", ts_of(to) + dur_of(to) / 2}, {"name", name}, {"cat", flow_category(flow.kind)}});
    ++id;
  }
  json doc = {{"traceEvents", events},
              {"displayTimeUnit", "ms"},
              {"otherData",
               {{"tool", std::string("xstream-check ") + kVersion},
                {"title", pic.title},
                {"summary", pic.subtitle},
                {"clock", kClockText},
                {"slot_us", kSlotUs},
                {"ops_drawn", pic.ops_drawn},
                {"ops_elided", pic.ops_elided},
                {"note", pic.note}}}};
  return doc.dump(1) + "\n";
}

}  // namespace xsc::timeline
