// The picture of one finding (timeline_picture.h): the finding's own ops
// found among the recorder's, the window around them, and its lanes, items
// and arrows.
#include "checker/report/timeline_picture.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <string_view>

#include "checker/report/report.h"

namespace xsc::timeline {
namespace {

std::string mib_text(std::uint64_t bytes) {
  char buf[48];
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
    std::snprintf(buf, sizeof buf, "%" PRIu64 " MiB", bytes >> 20);
  else if (bytes >= 1024 && bytes % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%" PRIu64 " KiB", bytes >> 10);
  else
    std::snprintf(buf, sizeof buf, "%" PRIu64 " bytes", bytes);
  return buf;
}

// "vectorized_elementwise_kernel" for "void at::native::vectorized_
// elementwise_kernel<4, ...>(int, ...)": what fits in a slice. The full
// name stays in the tooltip and the JSON's args.
std::string short_name(std::string_view name) {
  std::string_view n = name;
  if (n.substr(0, 5) == "void ") n.remove_prefix(5);
  std::size_t cut = n.find_first_of("(<");
  if (cut != std::string_view::npos && cut > 0) n = n.substr(0, cut);
  std::size_t scope = n.rfind("::");
  if (scope != std::string_view::npos && scope + 2 < n.size()) n.remove_prefix(scope + 2);
  return n.empty() ? std::string(name) : std::string(n);
}

std::string stream_label(StreamId s) {
  return s == kLegacyStream ? "stream 0 (legacy default)" : "stream " + hex(s);
}

class Builder {
 public:
  Builder(const Finding& f, std::vector<Op> ops, std::uint64_t anchor, const NameTable& names,
          const StackDepot& stacks, const std::unordered_map<ThreadId, NameId>& thread_names)
      : f_(f), ops_(std::move(ops)), anchor_(anchor), names_(names), stacks_(stacks),
        thread_names_(thread_names) {}

  Picture build(std::size_t number, int pid);

 private:
  const Op* last_before(std::uint64_t limit, const std::function<bool(const Op&)>& pred) const {
    const Op* found = nullptr;
    for (const Op& op : ops_)
      if (op.seq <= limit && pred(op)) found = &op;
    return found;
  }
  const Op* first_after(std::uint64_t after, const std::function<bool(const Op&)>& pred) const {
    for (const Op& op : ops_)
      if (op.seq > after && pred(op)) return &op;
    return nullptr;
  }
  bool is_use(const Op& op, const UseInfo& u) const {
    if (op.kind != OpKind::kUse || op.stack != u.stack || op.name != u.name || op.what != u.what) return false;
    if (u.what == UseWhat::kHostAccess ? op.thread != u.thread : op.stream != u.stream) return false;
    return op_touches(op, u.addr, u.addr + 1);
  }
  bool is_alloc(const Op& op, const AllocInfo& a) const {
    return op.kind == OpKind::kAlloc && op.addr == a.addr && op.stack == a.stack && op.stream == a.stream;
  }
  bool is_free(const Op& op, const FreeInfo& fr) const {
    return op.kind == OpKind::kFree && (op.addr == fr.addr || op.addr == f_.alloc.addr) &&
           op.stack == fr.stack && op.stream == fr.stream;
  }

  std::string op_name(const Op& op, bool full = false) const;
  std::string site(StackId stack) const { return site_text(stacks_.frames(stack)); }
  std::string lane_label(const LaneKey& key) const;
  std::string event_label(EventId e) {
    auto [it, inserted] = event_names_.try_emplace(e, "e" + std::to_string(event_names_.size() + 1));
    return it->second;
  }

  const Finding& f_;
  std::vector<Op> ops_;
  std::uint64_t anchor_;
  const NameTable& names_;
  const StackDepot& stacks_;
  const std::unordered_map<ThreadId, NameId>& thread_names_;
  std::map<EventId, std::string> event_names_;
};

std::string Builder::op_name(const Op& op, bool full) const {
  std::string_view name = names_.get(op.name);
  switch (op.kind) {
    case OpKind::kUse:
      if (!name.empty()) return full ? std::string(name) : short_name(name);
      return std::string(what_word(op.what));
    case OpKind::kHostFunc: return "host function";
    case OpKind::kGraphLaunch: return name.empty() ? "graph " + hex(op.graph) : "graph " + std::string(name);
    case OpKind::kRecord: return "record";
    case OpKind::kWait: return "wait";
    case OpKind::kAlloc: return "alloc";
    case OpKind::kFree: return "free";
    case OpKind::kFreeDone: return "free done";
    case OpKind::kStreamSync: return "stream sync";
    case OpKind::kEventSync: return "event sync";
    case OpKind::kDeviceSync: return "device sync";
  }
  return "op";
}

std::string Builder::lane_label(const LaneKey& key) const {
  if (!key.host) return stream_label(key.id);
  std::string label = "host thread T" + std::to_string(key.id);
  auto it = thread_names_.find(static_cast<ThreadId>(key.id));
  if (it != thread_names_.end() && !names_.get(it->second).empty())
    label += " (" + std::string(names_.get(it->second)) + ")";
  return label;
}

Picture Builder::build(std::size_t number, int pid) {
  const Finding& f = f_;
  Picture pic;
  pic.number = number;
  const Addr a_lo = f.alloc.addr;
  const Addr a_hi = f.alloc.addr + (f.alloc.size == 0 ? 1 : f.alloc.size);

  // The finding's own ops.
  const Op* use = nullptr;
  const Op* free = nullptr;
  const Op* alloc = nullptr;
  const Op* realloc = nullptr;
  const Op* racing = nullptr;
  const Op* late = nullptr;
  const Op* earlier = nullptr;
  auto match_use = [&](const UseInfo& u) { return [this, &u](const Op& op) { return is_use(op, u); }; };
  auto match_free = [&](const Op& op) { return is_free(op, f.free); };
  auto match_alloc = [&](const AllocInfo& a) { return [this, &a](const Op& op) { return is_alloc(op, a); }; };
  auto overlapping_alloc = [&](const Op& op) { return op.kind == OpKind::kAlloc && op_touches(op, a_lo, a_hi); };
  switch (f.kind) {
    case FindingKind::kUnorderedFree:
      free = last_before(anchor_, match_free);
      use = last_before(free ? free->seq : anchor_, match_use(f.use));
      alloc = last_before(use ? use->seq : free ? free->seq : anchor_, match_alloc(f.alloc));
      break;
    case FindingKind::kUseAfterFree:
      use = last_before(anchor_, match_use(f.use));
      free = last_before(use ? use->seq : anchor_, match_free);
      alloc = last_before(free ? free->seq : anchor_, match_alloc(f.alloc));
      break;
    case FindingKind::kWriteAfterRead:
    case FindingKind::kUseBeforeReady:
      use = last_before(anchor_, match_use(f.use));
      alloc = last_before(use ? use->seq : anchor_, match_alloc(f.alloc));
      // The earlier use on the same bytes that the use is not ordered
      // after: a write the use may read before it lands, or a read the
      // write may overwrite.
      if (f.has_earlier) earlier = last_before(use ? use->seq - 1 : anchor_, match_use(f.earlier));
      break;
    case FindingKind::kReuseRace:
      racing = last_before(anchor_, match_use(f.reuse.use));
      use = last_before(racing ? racing->seq : anchor_, match_use(f.use));
      free = last_before(racing ? racing->seq : anchor_, match_free);
      alloc = last_before(use ? use->seq : anchor_, match_alloc(f.alloc));
      if (f.reuse.has_alloc) realloc = last_before(racing ? racing->seq : anchor_, match_alloc(f.reuse.alloc));
      break;
  }
  if (f.kind == FindingKind::kUnorderedFree || f.kind == FindingKind::kUseAfterFree) {
    const std::uint64_t after = free ? free->seq : use ? use->seq : 0;
    if (f.has_reuse && f.reuse.has_alloc) realloc = first_after(after, match_alloc(f.reuse.alloc));
    if (!realloc && free) realloc = first_after(free->seq, overlapping_alloc);
    if (f.has_reuse) racing = first_after(realloc ? realloc->seq : after, match_use(f.reuse.use));
  }
  Addr b_lo = 0, b_hi = 0;
  std::uint64_t b_end = kNoSeq;  // the reallocation's own free, if seen
  if (realloc) {
    b_lo = realloc->addr;
    b_hi = realloc->addr + (realloc->size == 0 ? 1 : realloc->size);
    if (const Op* b_free = first_after(realloc->seq, [&](const Op& op) {
          return op.kind == OpKind::kFree && op.addr == realloc->addr;
        }))
      b_end = b_free->seq;
  }
  // Without the checker's word on the reuse, the first use of the new
  // occupant is drawn as racing only when the clock proves it unordered
  // after the use (a column at or left of the use's).
  bool racing_proven = racing != nullptr;
  if (!racing && realloc && use && f.kind == FindingKind::kUnorderedFree) {
    const Op* first = first_after(realloc->seq, [&](const Op& op) {
      return op.kind == OpKind::kUse && op_touches(op, std::max(a_lo, b_lo), std::min(a_hi, b_hi));
    });
    // (A host action and what its thread enqueues next may share a column,
    // so a use on a host lane proves nothing.)
    if (first && !use->lane.host && first->col <= use->col) {
      racing = first;
      racing_proven = true;
    }
  }
  if (f.has_late_wait) {
    late = first_after(free ? free->seq : 0, [&](const Op& op) {
      return op.kind == OpKind::kWait && op.stream == f.late_wait.stream && op.event == f.late_wait.event &&
             op.stack == f.late_wait.stack;
    });
  }

  // Lanes: host threads that acted on the block, then the streams involved.
  std::vector<const Op*> keys;
  for (const Op* op : {alloc, use, free, realloc, racing, late, earlier})
    if (op) keys.push_back(op);
  std::vector<LaneKey> top;
  auto add_lane = [&](LaneKey key) {
    if (std::find(top.begin(), top.end(), key) == top.end()) top.push_back(key);
  };
  for (const Op* op : keys)
    if (op->lane.host) add_lane(op->lane);
  // The use's stream next to the host threads (the frees of a caching
  // allocator), so the hazard's arrow crosses as few lanes as it can.
  const bool has_free = f.kind != FindingKind::kUseBeforeReady && f.kind != FindingKind::kWriteAfterRead;
  if (f.has_earlier && f.earlier.what != UseWhat::kHostAccess) add_lane(LaneKey{false, f.earlier.stream});
  for (StreamId s : {f.use.stream, f.free.stream, f.alloc.stream})
    if (!(s == f.use.stream && f.use.what == UseWhat::kHostAccess) && !(s == f.free.stream && !has_free))
      add_lane(LaneKey{false, s});
  if (f.has_late_wait) add_lane(LaneKey{false, f.late_wait.stream});
  for (const Op* op : keys)
    if (!op->lane.host) add_lane(op->lane);
  std::stable_sort(top.begin(), top.end(), [](const LaneKey& a, const LaneKey& b) { return a.host > b.host; });
  // Keep only lanes with something to draw.
  std::vector<LaneKey> shown;
  for (const LaneKey& key : top)
    if (std::any_of(ops_.begin(), ops_.end(), [&](const Op& op) { return op.lane == key; })) shown.push_back(key);
  auto lane_index = [&](const LaneKey& key) -> std::size_t {
    return static_cast<std::size_t>(std::find(shown.begin(), shown.end(), key) - shown.begin());
  };

  // The window: the allocation to the reuse (or the last of the finding's
  // ops), and a few ops either side on each lane.
  std::uint64_t begin = std::numeric_limits<std::uint64_t>::max(), end = 0;
  for (const Op* op : keys) {
    begin = std::min(begin, op->col);
    end = std::max(end, op->col);
  }
  if (keys.empty()) begin = 0;
  auto relevant = [&](const Op& op) {
    switch (op.kind) {
      case OpKind::kAlloc:
      case OpKind::kFree:
      case OpKind::kFreeDone:
        return op_touches(op, a_lo, a_hi) || (realloc && op_touches(op, b_lo, b_hi));
      case OpKind::kUse:
        return !op.lane.host || op_touches(op, a_lo, a_hi) || (realloc && op_touches(op, b_lo, b_hi));
      default:
        return true;
    }
  };
  std::vector<const Op*> candidates;
  for (const LaneKey& key : shown) {
    std::vector<const Op*> lane_ops;
    for (const Op& op : ops_)
      if (op.lane == key && relevant(op)) lane_ops.push_back(&op);
    std::size_t before = 0, after = 0;
    for (auto it = lane_ops.rbegin(); it != lane_ops.rend(); ++it)
      if ((*it)->col < begin && before++ < kOpsBefore) candidates.push_back(*it);
    for (const Op* op : lane_ops) {
      if (op->col >= begin && op->col <= end) candidates.push_back(op);
      else if (op->col > end && after++ < kOpsAfter) candidates.push_back(op);
    }
  }
  for (const Op* op : keys)
    if (std::find(candidates.begin(), candidates.end(), op) == candidates.end()) candidates.push_back(op);
  // Bounded: the ops nearest the finding's own, in logical time, are kept.
  if (candidates.size() > kTimelineMaxOps) {
    auto distance = [&](const Op* op) {
      std::uint64_t d = std::numeric_limits<std::uint64_t>::max();
      for (const Op* k : keys) d = std::min(d, op->col > k->col ? op->col - k->col : k->col - op->col);
      if (std::find(keys.begin(), keys.end(), op) != keys.end()) d = 0;
      return d;
    };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Op* a, const Op* b) { return distance(a) < distance(b); });
    candidates.resize(kTimelineMaxOps);
  }
  std::sort(candidates.begin(), candidates.end(), [](const Op* a, const Op* b) { return a->seq < b->seq; });
  pic.ops_drawn = candidates.size();

  // Items of the top lanes.
  for (const LaneKey& key : shown) {
    PLane lane;
    lane.label = lane_label(key);
    lane.host = key.host;
    pic.lanes.push_back(lane);
  }
  pic.first_block_lane = pic.lanes.size();
  const std::size_t lane_a = pic.lanes.size();
  {
    PLane lane;
    lane.block = true;
    lane.label = "block " + hex(f.alloc.addr);
    lane.detail = mib_text(f.alloc.size) + (has_free ? ", freed" : ", allocated");
    pic.lanes.push_back(lane);
    pic.block_names.push_back("block " + hex(f.alloc.addr) + " (" + mib_text(f.alloc.size) + ")");
  }
  std::size_t lane_b = 0;
  if (realloc) {
    lane_b = pic.lanes.size();
    PLane lane;
    lane.block = true;
    lane.label = "block " + hex(realloc->addr);
    lane.detail = mib_text(realloc->size) + ", reallocation";
    pic.lanes.push_back(lane);
    pic.block_names.push_back("reallocation " + hex(realloc->addr) + " (" + mib_text(realloc->size) + ")");
  }

  std::map<std::uint64_t, std::size_t> item_of_seq;  // top-lane item of each drawn op
  auto block_of = [&](const Op& op) -> int {
    if (realloc && op.seq >= realloc->seq && op.seq <= b_end && op_touches(op, b_lo, b_hi)) return 1;
    if (realloc && op.seq > b_end) return -1;
    if (op_touches(op, a_lo, a_hi) && (!alloc || op.seq >= alloc->seq)) return 0;
    return -1;
  };
  for (const Op* op : candidates) {
    PItem item;
    item.lane = lane_index(op->lane);
    item.col = op->col;
    item.seq = op->seq;
    item.label = op_name(*op);
    item.detail = op_name(*op, true);
    if (!op->lane.host) item.detail += " on " + stream_label(op->stream);
    item.detail += " by T" + std::to_string(op->thread) + " at " + site(op->stack) +
                   " (logical time " + std::to_string(op->col) + ")";
    switch (op->kind) {
      case OpKind::kUse:
      case OpKind::kHostFunc:
      case OpKind::kGraphLaunch:
        item.shape = Shape::kSlice;
        item.block = block_of(*op);
        if (item.block >= 0) {
          Access access = item.block == 1 ? op_access(*op, b_lo, b_hi) : op_access(*op, a_lo, a_hi);
          if (!access_word(access).empty())
            item.detail += "; " + std::string(access_word(access)) + "s " + pic.block_names[item.block];
        }
        break;
      case OpKind::kRecord:
        item.shape = Shape::kMarker;
        item.mark = Mark::kRecord;
        item.label = "record " + event_label(op->event);
        break;
      case OpKind::kWait:
        item.shape = Shape::kMarker;
        item.mark = Mark::kWait;
        item.label = "wait " + event_label(op->event);
        break;
      case OpKind::kAlloc:
        item.shape = Shape::kMarker;
        item.mark = op == realloc ? Mark::kRealloc : Mark::kAlloc;
        item.label = op == realloc ? "realloc" : "alloc";
        item.block = op == realloc ? 1 : block_of(*op);
        item.detail = std::string(alloc_kind_word(op->alloc_kind)) + " of " + mib_text(op->size) + " at " +
                      hex(op->addr) + " for " + stream_label(op->stream) + " at " + site(op->stack);
        break;
      case OpKind::kFree:
        item.shape = Shape::kMarker;
        item.mark = Mark::kFree;
        item.label = "free";
        item.block = block_of(*op);
        item.detail = std::string(free_kind_word(op->free_kind)) + " of " + hex(op->addr) + " on " +
                      stream_label(op->stream) + " at " + site(op->stack);
        break;
      case OpKind::kFreeDone:
        item.shape = Shape::kMarker;
        item.mark = Mark::kFreeDone;
        item.label = "done";
        item.detail = "deferred free of " + hex(op->addr) + " done: the block is reusable";
        break;
      case OpKind::kStreamSync:
      case OpKind::kEventSync:
      case OpKind::kDeviceSync:
        item.shape = Shape::kMarker;
        item.mark = Mark::kSync;
        item.label = "sync";
        if (op->kind == OpKind::kEventSync) item.label += " " + event_label(op->event);
        break;
    }
    if (op == use || op == earlier || (op == racing && racing_proven) ||
        (op == free && f.kind != FindingKind::kReuseRace))
      item.hazard = true;
    if (op == late) {
      item.late = true;
      item.label = "late wait " + event_label(op->event);
    }
    item_of_seq[op->seq] = pic.items.size();
    pic.items.push_back(std::move(item));
  }

  // Elided runs on stream lanes: the ops between two drawn ones.
  for (const LaneKey& key : shown) {
    if (key.host) continue;
    const Op* prev = nullptr;
    for (const Op* op : candidates) {
      if (!(op->lane == key)) continue;
      if (prev && op->ord > prev->ord + 1) {
        std::uint64_t missing = op->ord - prev->ord - 1;
        PItem item;
        item.lane = lane_index(key);
        item.shape = Shape::kElision;
        item.col = op->col;
        for (const Op& o : ops_)
          if (o.lane == key && o.ord == prev->ord + 1) item.col = o.col;
        item.elision_slot = true;
        item.label = "..." + std::to_string(missing) + (missing == 1 ? " op..." : " ops...");
        item.detail = std::to_string(missing) + " ops on " + stream_label(key.id) + " not drawn";
        pic.ops_elided += missing;
        pic.items.push_back(std::move(item));
      }
      prev = op;
    }
  }

  // Items of the block lanes: allocation, uses, free, reallocation.
  for (const Op* op : candidates) {
    int block = block_of(*op);
    bool is_alloc_op = op->kind == OpKind::kAlloc && (op == alloc || op == realloc);
    if (block < 0 && !is_alloc_op) continue;
    if (op->kind == OpKind::kAlloc && !is_alloc_op) continue;
    if (op->kind == OpKind::kRecord || op->kind == OpKind::kWait) continue;
    PItem item = pic.items[item_of_seq[op->seq]];
    item.lane = op == realloc || block == 1 ? lane_b : lane_a;
    item.hazard = false;
    item.late = false;
    if (op->kind == OpKind::kUse) {
      Access access = block == 1 ? op_access(*op, b_lo, b_hi) : op_access(*op, a_lo, a_hi);
      std::string_view word = access_word(access);
      item.label = (word.empty() ? std::string("use") : std::string(word)) + ": " + op_name(*op);
      if (block == 0 && free && op->seq > free->seq && (!realloc || op->seq < realloc->seq))
        item.label = "after free: " + op_name(*op);
      item.hazard = op == use || op == earlier || (op == racing && racing_proven);
    }
    pic.items.push_back(std::move(item));
  }

  // Flows: every record -> wait drawn, the hazard, the race, the late wait.
  for (const Op* op : candidates) {
    if ((op->kind != OpKind::kWait && op->kind != OpKind::kEventSync) || op->source_seq == 0) continue;
    auto from = item_of_seq.find(op->source_seq);
    if (from == item_of_seq.end()) continue;
    PFlow flow;
    flow.from = from->second;
    flow.to = item_of_seq[op->seq];
    flow.kind = op == late ? FlowKind::kLateWait : FlowKind::kHb;
    flow.label = "";  // the late wait's marker says it
    flow.detail = op == late ? "late wait: enqueued after the free; move it before the free" : "record -> wait";
    pic.flows.push_back(flow);
  }
  auto add_flow = [&](const Op* from, const Op* to, FlowKind kind, const std::string& label,
                      const std::string& detail) {
    if (!from || !to || !item_of_seq.count(from->seq) || !item_of_seq.count(to->seq)) return;
    pic.flows.push_back(PFlow{item_of_seq[from->seq], item_of_seq[to->seq], kind, label, detail});
  };
  switch (f.kind) {
    case FindingKind::kUnorderedFree:
      add_flow(use, free, FlowKind::kHazard, "missing edge",
               "hazard: missing edge, the free is not ordered after this use");
      if (racing_proven) add_flow(use, racing, FlowKind::kRace, "race", "the reuse races with this use");
      break;
    case FindingKind::kUseAfterFree:
      add_flow(free, use, FlowKind::kHazard, "use after free", "hazard: the use comes after the free");
      break;
    case FindingKind::kWriteAfterRead:
    case FindingKind::kUseBeforeReady:
      if (earlier)
        add_flow(earlier, use, FlowKind::kHazard, "missing edge",
                 f.kind == FindingKind::kWriteAfterRead
                     ? "hazard: missing edge, the write is not ordered after this use of the same bytes"
                     : "hazard: missing edge, the use is not ordered after this write of the same bytes");
      else
        add_flow(alloc, use, FlowKind::kHazard, "missing edge",
                 "hazard: missing edge, the use is not ordered after the allocation");
      break;
    case FindingKind::kReuseRace:
      add_flow(use, racing, FlowKind::kHazard, "missing edge",
               "hazard: missing edge, the reuse is not ordered after this use");
      break;
  }

  // Layout: one slot per distinct logical time drawn (elisions first).
  std::vector<std::pair<std::uint64_t, int>> slot_keys;
  for (const PItem& item : pic.items) slot_keys.emplace_back(item.col, item.elision_slot ? 0 : 1);
  std::sort(slot_keys.begin(), slot_keys.end());
  slot_keys.erase(std::unique(slot_keys.begin(), slot_keys.end()), slot_keys.end());
  for (const auto& k : slot_keys) pic.slot_cols.push_back(k.first);
  std::map<std::pair<std::size_t, std::size_t>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < pic.items.size(); ++i) {
    PItem& item = pic.items[i];
    item.slot = static_cast<std::size_t>(
        std::lower_bound(slot_keys.begin(), slot_keys.end(), std::make_pair(item.col, item.elision_slot ? 0 : 1)) -
        slot_keys.begin());
    groups[{item.lane, item.slot}].push_back(i);
  }
  // Within a slot of a lane: markers that came before the slice on its
  // left, those after on its right (host-call order); markers alone are
  // spaced out with their labels.
  for (auto& [where, members] : groups) {
    std::stable_sort(members.begin(), members.end(),
                     [&](std::size_t a, std::size_t b) { return pic.items[a].seq < pic.items[b].seq; });
    std::vector<std::size_t> slices, before, after;
    for (std::size_t i : members) {
      if (pic.items[i].shape != Shape::kMarker) slices.push_back(i);
      else if (slices.empty()) before.push_back(i);
      else after.push_back(i);
    }
    if (slices.empty()) {
      // Several markers share the slot: closer labels, shorter.
      const double spacing = before.size() > 1 ? kSlotW / static_cast<double>(before.size()) - 2 : kMarkSpacing;
      for (std::size_t k = 0; k < before.size(); ++k) {
        pic.items[before[k]].dx = 9 + static_cast<double>(k) * spacing;
        // Crowded markers shrink rather than overlap (a trace viewer
        // drops slices that overlap without nesting).
        pic.items[before[k]].w = std::max(2.0, std::min(kMarkW, spacing - 2));
        pic.items[before[k]].label_chars = before.size() > 1 ? static_cast<std::size_t>(spacing / 5.6) : 14;
      }
      continue;
    }
    double left = 4 + static_cast<double>(before.size()) * (kMarkW + kMarkGap);
    double right = kSlotW - 4 - static_cast<double>(after.size()) * (kMarkW + kMarkGap);
    for (std::size_t k = 0; k < before.size(); ++k) {
      pic.items[before[k]].dx = 4 + static_cast<double>(k) * (kMarkW + kMarkGap);
      pic.items[before[k]].w = kMarkW;
      pic.items[before[k]].labelled = false;
    }
    for (std::size_t k = 0; k < after.size(); ++k) {
      pic.items[after[k]].dx = right + kMarkGap + static_cast<double>(k) * (kMarkW + kMarkGap);
      pic.items[after[k]].w = kMarkW;
      pic.items[after[k]].labelled = false;
    }
    // Crowded slots (many markers) still draw each slice, if thin.
    double each = std::max(6.0, (right - left) / static_cast<double>(slices.size()));
    for (std::size_t k = 0; k < slices.size(); ++k) {
      pic.items[slices[k]].dx = left + static_cast<double>(k) * each;
      pic.items[slices[k]].w = each - (k + 1 < slices.size() ? 2 : 0);
    }
  }

  // Words.
  auto use_words = [&](const UseInfo& u) {
    std::string text(what_word(u.what));
    if (!names_.get(u.name).empty()) text += " \"" + fit(short_name(names_.get(u.name)), 40) + "\"";
    return text + " on " + stream_label(u.stream);
  };
  const std::string use_text = use_words(f.use);
  std::string what = std::string(headline(f.kind)) + " of " + hex(f.alloc.addr) + " (" + mib_text(f.alloc.size) + ")";
  if (f.latent) what += ", latent";
  pic.title = "xstream-check finding " + std::to_string(number) + ": " + what + " (pid=" + std::to_string(pid) + ")";
  switch (f.kind) {
    case FindingKind::kUnorderedFree:
      pic.subtitle = "free on " + stream_label(f.free.stream) + " at " + site(f.free.stack) +
                     " is not ordered after " + use_text;
      break;
    case FindingKind::kUseAfterFree:
      pic.subtitle = use_text + " at " + site(f.use.stack) + " after the free on " + stream_label(f.free.stream);
      break;
    case FindingKind::kWriteAfterRead:
    case FindingKind::kUseBeforeReady:
      if (f.has_earlier)
        pic.subtitle = use_text + " at " + site(f.use.stack) + " is not ordered after " + use_words(f.earlier) +
                       " at " + site(f.earlier.stack);
      else
        pic.subtitle = use_text + " at " + site(f.use.stack) + " is not ordered after the allocation on " +
                       stream_label(f.alloc.stream);
      break;
    case FindingKind::kReuseRace:
      pic.subtitle = use_words(f.reuse.use) +
                     " reuses the memory while " + use_text + " may still run";
      break;
  }
  std::vector<std::string> notes;
  if (f.latent) notes.push_back("latent: this run did not reuse the memory while the use could still run");
  if (f.has_late_wait && !late) notes.push_back("the late wait was not in the ops kept");
  if (!use && f.kind != FindingKind::kReuseRace) notes.push_back("the use was not in the ops kept");
  if (!free && has_free) notes.push_back("the free was not in the ops kept");
  if (f.has_earlier && !earlier) notes.push_back("the earlier use was not in the ops kept");
  if (!alloc) notes.push_back("the allocation was not in the ops kept");
  if (pic.ops_elided > 0) notes.push_back(std::to_string(pic.ops_elided) + " ops elided");
  for (const std::string& n : notes) pic.note += (pic.note.empty() ? "" : "; ") + n;
  return pic;
}

}  // namespace

Picture build_picture(const Finding& f, std::vector<Op> ops, std::uint64_t anchor,
                      const NameTable& names, const StackDepot& stacks,
                      const std::unordered_map<ThreadId, NameId>& thread_names,
                      std::size_t number, int pid) {
  Builder builder(f, std::move(ops), anchor, names, stacks, thread_names);
  return builder.build(number, pid);
}

}  // namespace xsc::timeline
