// Timeline pictures of findings (timeline.h): the bounded op record, and the
// files of each finding's picture (timeline_picture.cpp builds it,
// timeline_chrome.cpp and timeline_svg.cpp render it).
#include "checker/report/timeline.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "checker/report/timeline_ops.h"
#include "checker/report/timeline_picture.h"

namespace xsc {

using namespace timeline;

namespace {

// Pinned findings follow their lanes for this many further ops, so the
// reuse and a late wait that come after the detection are in the picture.
constexpr std::size_t kFollowOps = 256;
// Alloc ops of freed allocations kept to find a finding's allocation.
constexpr std::size_t kFreedAllocsKept = 4096;

// An allocation's own ops, kept while it lives and for a while after its
// free, however far they scroll out of the lanes' rings: a finding names
// the allocation and the last use on some stream.
struct Block {
  Op alloc;
  std::vector<Op> last_uses;  // the last op on each lane that touched it
  bool freed = false;
  Op free;
};
// Occupants of one address whose ops a pin copies: a finding may be
// reported only when the memory is used again, after later occupants.
constexpr std::size_t kOccupantsPinned = 3;
// Lanes whose last use of one block is remembered.
constexpr std::size_t kLastUsesPerBlock = 16;

struct Pin {
  std::uint64_t anchor = 0;  // the event during which the finding appeared
  std::vector<Op> ops;
  std::set<LaneKey> lanes;
  Addr lo = 0, hi = 0;       // the block
  std::size_t follow_left = kFollowOps;  // further ops of its lanes
  std::size_t touch_left = 16;           // further ops on the block, however late
};
// Pins following at once; the oldest stops following first.
constexpr std::size_t kPinsFollowing = 64;

struct LaneState {
  std::deque<Op> ring;
  std::uint64_t count = 0;
  std::uint64_t last_col = 0;
};


}  // namespace


struct TimelineRecorder::Impl {
  explicit Impl(std::size_t per_lane) : per_lane(per_lane == 0 ? 1 : per_lane) {}

  std::size_t per_lane;
  std::uint64_t seq = 0;
  std::map<LaneKey, LaneState> lanes;
  std::unordered_map<StreamId, bool> non_blocking;
  struct RecordRef {
    std::uint64_t seq = 0, col = 0;
  };
  std::unordered_map<EventId, RecordRef> records;
  std::unordered_map<ThreadId, std::uint64_t> floor;  // earliest column a thread's next op may take
  // Earliest column of any thread's next op: a host function that ran
  // orders every later host action after its stream's earlier work.
  std::uint64_t host_floor = 0;
  std::unordered_map<EventId, std::uint64_t> host_funcs;      // token -> column of the op
  std::unordered_map<EventId, std::uint64_t> thread_creates;  // token -> creator's floor
  std::unordered_map<EventId, std::uint64_t> sync_objects;    // object -> releasers' floor
  std::unordered_map<ThreadId, NameId> thread_names;
  std::map<Addr, Block> live;       // live allocations, by start address
  std::deque<Block> freed;          // recently freed ones, oldest first
  // The last event was a use merged into (or starting) this lane's last op.
  bool last_was_use = false;
  LaneKey last_use_lane;
  std::vector<Pin> pins;
  std::unordered_map<std::size_t, std::size_t> pin_of;  // finding index -> pins index
  std::vector<std::size_t> following;                   // pins still following
  std::size_t noted = 0;

  // Places `op` on its lane at the earliest column the clock allows, at
  // least `after` (one past what it waits for).
  void place(Op& op, std::uint64_t after) {
    std::uint64_t col = std::max({floor[op.thread], host_floor, after});
    LaneState& lane = lanes[op.lane];
    if (!op.lane.host) {
      if (lane.count > 0) col = std::max(col, lane.last_col + 1);
      // The legacy default stream and blocking streams wait for each other.
      if (op.stream == kLegacyStream) {
        for (const auto& [key, other] : lanes)
          if (!key.host && key.id != kLegacyStream && other.count > 0 && !non_blocking[key.id])
            col = std::max(col, other.last_col + 1);
      } else if (!non_blocking[op.stream]) {
        auto legacy = lanes.find(LaneKey{false, kLegacyStream});
        if (legacy != lanes.end() && legacy->second.count > 0) col = std::max(col, legacy->second.last_col + 1);
      }
    }
    op.col = col;
    op.ord = ++lane.count;
    lane.last_col = std::max(lane.last_col, col);
    floor[op.thread] = std::max(floor[op.thread], col);
    lane.ring.push_back(op);
    if (lane.ring.size() > per_lane) lane.ring.pop_front();
    follow(op, false);
  }

  void follow(const Op& op, bool merged) {
    for (std::size_t k = 0; k < following.size();) {
      Pin& pin = pins[following[k]];
      const bool touches = op_touches(op, pin.lo, pin.hi);
      const bool on_lane = pin.follow_left > 0 && pin.lanes.count(op.lane);
      if (merged && !pin.ops.empty() && pin.ops.back().seq == op.seq) {
        pin.ops.back() = op;
      } else if (on_lane || (touches && pin.touch_left > 0)) {
        // The block's reuse may come long after the finding: ops on the
        // block are followed after the lanes' budget is spent.
        pin.ops.push_back(op);
        if (touches && pin.touch_left > 0) --pin.touch_left;
        else --pin.follow_left;
        if (touches && pin.follow_left > 0) pin.lanes.insert(op.lane);
      }
      if (pin.follow_left == 0 && pin.touch_left == 0) {
        following.erase(following.begin() + static_cast<std::ptrdiff_t>(k));
        continue;
      }
      ++k;
    }
  }

  Op base(const Event& e, OpKind kind, bool host) {
    Op op;
    op.seq = seq;
    op.kind = kind;
    op.lane = host ? LaneKey{true, e.thread} : LaneKey{false, e.stream};
    op.stream = e.stream;
    op.thread = e.thread;
    op.stack = e.stack;
    op.name = e.name;
    op.event = e.event;
    return op;
  }

  void on_use(const Event& e) {
    const bool host = e.what == UseWhat::kHostAccess;
    const LaneKey key = host ? LaneKey{true, e.thread} : LaneKey{false, e.stream};
    // One launch reports one use per buffer: consecutive uses of one
    // kernel from one call site are one op.
    if (last_was_use && key == last_use_lane) {
      LaneState& lane = lanes[key];
      Op& last = lane.ring.back();
      bool same = last.kind == OpKind::kUse && last.name == e.name && last.stack == e.stack &&
                  last.what == e.what && last.graph == e.graph && last.thread == e.thread;
      bool repeated = false;
      for (const Touch& t : last.touches) repeated |= t.addr == e.addr && t.size == e.size;
      if (same && !repeated) {
        if (last.touches.size() < kTouchesPerOp) {
          last.touches.push_back(Touch{e.addr, e.size, e.access});
          remember_use(last, last.touches.size() - 1);
        }
        follow(last, true);
        return;
      }
    }
    Op op = base(e, OpKind::kUse, host);
    op.what = e.what;
    op.graph = e.graph;
    op.touches.push_back(Touch{e.addr, e.size, e.access});
    place(op, 0);
    remember_use(op, 0);
    last_use_lane = key;
  }

  void on_event(const Event& e) {
    // A test marker is no operation: the picture is as if it were not there.
    if (e.kind == EventKind::kTest || e.kind == EventKind::kUnchecked) return;
    ++seq;
    const bool was_use = last_was_use;
    last_was_use = false;
    switch (e.kind) {
      case EventKind::kStreamCreate:
        non_blocking[e.stream] = e.stream_flags == StreamFlags::kNonBlocking;
        return;
      case EventKind::kThreadName:
        thread_names[e.thread] = e.name;
        return;
      case EventKind::kUse:
        last_was_use = was_use;
        on_use(e);
        last_was_use = true;
        return;
      case EventKind::kEventRecord: {
        Op op = base(e, OpKind::kRecord, false);
        place(op, 0);
        records[e.event] = RecordRef{op.seq, op.col};
        return;
      }
      case EventKind::kStreamWaitEvent:
      case EventKind::kEventSync: {
        const bool wait = e.kind == EventKind::kStreamWaitEvent;
        Op op = base(e, wait ? OpKind::kWait : OpKind::kEventSync, !wait);
        std::uint64_t after = 0;
        auto it = records.find(e.event);
        if (it != records.end()) {
          op.source_seq = it->second.seq;
          after = it->second.col + 1;
        }
        place(op, after);
        return;
      }
      case EventKind::kHostFunc: {
        Op op = base(e, OpKind::kHostFunc, false);
        place(op, 0);
        if (e.event != 0) host_funcs[e.event] = op.col;
        return;
      }
      case EventKind::kHostFuncRun:
      case EventKind::kHostFuncDone: {
        auto it = host_funcs.find(e.event);
        if (it != host_funcs.end()) host_floor = std::max(host_floor, it->second + 1);
        if (e.kind == EventKind::kHostFuncDone && it != host_funcs.end()) host_funcs.erase(it);
        return;
      }
      case EventKind::kThreadCreate:
        thread_creates[e.event] = std::max(floor[e.thread], host_floor);
        return;
      case EventKind::kThreadStart: {
        auto it = thread_creates.find(e.event);
        if (it != thread_creates.end()) {
          floor[e.thread] = std::max(floor[e.thread], it->second);
          thread_creates.erase(it);
        }
        return;
      }
      case EventKind::kSyncRelease: {
        std::uint64_t& released = sync_objects[e.event];
        released = std::max({released, floor[e.thread], host_floor});
        return;
      }
      case EventKind::kSyncAcquire: {
        auto it = sync_objects.find(e.event);
        if (it != sync_objects.end()) floor[e.thread] = std::max(floor[e.thread], it->second);
        return;
      }
      case EventKind::kGraphLaunch: {
        Op op = base(e, OpKind::kGraphLaunch, false);
        op.graph = e.graph;
        place(op, 0);
        return;
      }
      case EventKind::kAlloc: {
        Op op = base(e, OpKind::kAlloc, e.alloc_kind != AllocKind::kStreamOrdered);
        op.addr = e.addr;
        op.size = e.size;
        op.alloc_kind = e.alloc_kind;
        place(op, 0);
        Block block;
        block.alloc = op;
        live[e.addr] = std::move(block);
        return;
      }
      case EventKind::kFree: {
        Op op = base(e, OpKind::kFree, e.free_kind != FreeKind::kStreamOrdered);
        op.addr = e.addr;
        op.free_kind = e.free_kind;
        auto it = live.find(e.addr);
        if (it != live.end()) op.size = it->second.alloc.size;
        // cudaFree synchronizes the device first.
        std::uint64_t after = 0;
        if (e.free_kind == FreeKind::kSynchronous)
          for (const auto& [key, lane] : lanes)
            if (!key.host && lane.count > 0) after = std::max(after, lane.last_col + 1);
        place(op, after);
        if (it != live.end()) {
          it->second.freed = true;
          it->second.free = op;
          freed.push_back(std::move(it->second));
          if (freed.size() > kFreedAllocsKept) freed.pop_front();
          live.erase(it);
        }
        return;
      }
      case EventKind::kFreeCompleted: {
        Op op = base(e, OpKind::kFreeDone, true);
        op.addr = e.addr;
        place(op, 0);
        return;
      }
      case EventKind::kStreamSync: {
        Op op = base(e, OpKind::kStreamSync, true);
        auto it = lanes.find(LaneKey{false, e.stream});
        place(op, it != lanes.end() && it->second.count > 0 ? it->second.last_col + 1 : 0);
        return;
      }
      case EventKind::kDeviceSync: {
        Op op = base(e, OpKind::kDeviceSync, true);
        std::uint64_t after = 0;
        for (const auto& [key, lane] : lanes)
          if (!key.host && lane.count > 0) after = std::max(after, lane.last_col + 1);
        place(op, after);
        return;
      }
      default:
        // Stream destruction, and kinds this renderer does not draw.
        return;
    }
  }

  // The latest occupants of `addr`, newest first.
  std::vector<const Block*> occupants(Addr addr) const {
    std::vector<const Block*> found;
    auto it = live.find(addr);
    if (it != live.end()) found.push_back(&it->second);
    for (auto r = freed.rbegin(); r != freed.rend() && found.size() < kOccupantsPinned; ++r)
      if (r->alloc.addr == addr) found.push_back(&*r);
    return found;
  }

  static void add_block_ops(const Block& block, std::vector<Op>* ops) {
    ops->push_back(block.alloc);
    ops->insert(ops->end(), block.last_uses.begin(), block.last_uses.end());
    if (block.freed) ops->push_back(block.free);
  }

  // Remembers `op` as the last use on its lane of each live block that its
  // uses from index `from` on touch (the earlier ones were remembered).
  void remember_use(const Op& op, std::size_t from) {
    for (std::size_t i = from; i < op.touches.size(); ++i) {
      const Touch& t = op.touches[i];
      auto it = live.upper_bound(t.addr);
      if (it == live.begin()) continue;
      --it;
      Block& block = it->second;
      const Addr end = block.alloc.addr + (block.alloc.size == 0 ? 1 : block.alloc.size);
      if (t.addr >= end) continue;
      auto same = std::find_if(block.last_uses.begin(), block.last_uses.end(),
                               [&](const Op& u) { return u.lane == op.lane; });
      if (same != block.last_uses.end()) *same = op;
      else if (block.last_uses.size() < kLastUsesPerBlock) block.last_uses.push_back(op);
    }
  }

  void pin(std::size_t index, const Finding& f) {
    Pin pin;
    pin.anchor = seq;
    pin.lo = f.alloc.addr;
    pin.hi = f.alloc.addr + (f.alloc.size == 0 ? 1 : f.alloc.size);
    auto add_stream = [&](StreamId s) { pin.lanes.insert(LaneKey{false, s}); };
    auto add_thread = [&](ThreadId t) { pin.lanes.insert(LaneKey{true, t}); };
    add_stream(f.alloc.stream);
    add_thread(f.alloc.thread);
    if (f.use.what == UseWhat::kHostAccess) add_thread(f.use.thread);
    else add_stream(f.use.stream);
    if (f.kind != FindingKind::kUseBeforeReady && f.kind != FindingKind::kWriteAfterRead) {
      add_stream(f.free.stream);
      add_thread(f.free.thread);
    }
    if (f.has_earlier) {
      if (f.earlier.what == UseWhat::kHostAccess) add_thread(f.earlier.thread);
      else add_stream(f.earlier.stream);
    }
    if (f.has_late_wait) add_stream(f.late_wait.stream);
    if (f.has_reuse) {
      if (f.reuse.has_alloc) add_stream(f.reuse.alloc.stream);
      add_stream(f.reuse.use.stream);
    }
    for (const LaneKey& key : pin.lanes) {
      auto it = lanes.find(key);
      if (it != lanes.end()) pin.ops.insert(pin.ops.end(), it->second.ring.begin(), it->second.ring.end());
    }
    for (const Block* block : occupants(f.alloc.addr)) add_block_ops(*block, &pin.ops);
    pin.ops = by_seq(std::move(pin.ops));
    pin_of[index] = pins.size();
    if (following.size() >= kPinsFollowing) following.erase(following.begin());
    following.push_back(pins.size());
    pins.push_back(std::move(pin));
  }

  // The ops a picture of finding `index` is drawn from, by seq, and the
  // anchor (the event it appeared with; kNoSeq when it was not pinned).
  std::vector<Op> ops_for(std::size_t index, std::uint64_t* anchor) const {
    std::vector<Op> ops;
    auto it = pin_of.find(index);
    if (it != pin_of.end()) {
      const Pin& pin = pins[it->second];
      *anchor = pin.anchor;
      ops = pin.ops;
    } else {
      *anchor = kNoSeq;
      for (const auto& [key, lane] : lanes) ops.insert(ops.end(), lane.ring.begin(), lane.ring.end());
      for (const auto& [addr, block] : live) add_block_ops(block, &ops);
      for (const Block& block : freed) add_block_ops(block, &ops);
    }
    return by_seq(std::move(ops));
  }

  // `ops` in host-call order, each once. One op may be held twice (a ring,
  // an allocation's record); the copy with the most uses is kept, since
  // the other was taken before the launch's last uses were merged in.
  static std::vector<Op> by_seq(std::vector<Op> ops) {
    std::stable_sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.seq < b.seq; });
    std::vector<Op> unique;
    for (Op& op : ops) {
      if (unique.empty() || unique.back().seq != op.seq) unique.push_back(std::move(op));
      else if (op.touches.size() > unique.back().touches.size()) unique.back() = std::move(op);
    }
    return unique;
  }
};

TimelineRecorder::TimelineRecorder(std::size_t ops_per_lane) : impl_(std::make_unique<Impl>(ops_per_lane)) {}
TimelineRecorder::~TimelineRecorder() = default;

void TimelineRecorder::on_event(const Event& event) { impl_->on_event(event); }

void TimelineRecorder::note_findings(const std::vector<Finding>& findings) {
  Impl& s = *impl_;
  for (; s.noted < findings.size(); ++s.noted) s.pin(s.noted, findings[s.noted]);
}

std::size_t TimelineRecorder::ops_held() const {
  const Impl& s = *impl_;
  std::size_t n = 0;
  for (const auto& [addr, block] : s.live) n += 1 + block.last_uses.size();
  for (const Block& block : s.freed) n += 2 + block.last_uses.size();
  for (const auto& [key, lane] : s.lanes) n += lane.ring.size();
  for (const Pin& pin : s.pins) n += pin.ops.size();
  return n;
}


// ---------------------------------------------------------------------------
// The files.

namespace {

bool write_file(const std::string& path, const std::string& text, std::string* error) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  file << text;
  file.close();
  if (!file) {
    *error = "error while writing '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace

struct TimelineWriter {
  static Picture picture(const TimelineRecorder& recorder, const TimelineInput& input, const NameTable& names,
                         const StackDepot& stacks, int pid) {
    const TimelineRecorder::Impl& s = *recorder.impl_;
    std::uint64_t anchor = kNoSeq;
    std::vector<Op> ops = s.ops_for(input.checker_index, &anchor);
    return build_picture(*input.finding, std::move(ops), anchor, names, stacks, s.thread_names,
                         input.number, pid);
  }
};

bool write_timelines(const TimelineRecorder& recorder, const std::vector<TimelineInput>& inputs,
                     const NameTable& names, const StackDepot& stacks, int pid, const std::string& dir,
                     std::vector<std::string>* paths, std::string* warning) {
  paths->assign(inputs.size(), std::string());
  if (inputs.empty()) return true;
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec && !fs::is_directory(dir)) {
    *warning = "cannot write timeline pictures to '" + dir + "': " + ec.message();
    return false;
  }
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    Picture pic = TimelineWriter::picture(recorder, inputs[i], names, stacks, pid);
    std::string base = (fs::path(dir) / ("finding-" + std::to_string(inputs[i].number))).string();
    std::string error;
    if (!write_file(base + ".json", render_json(pic), &error) || !write_file(base + ".svg", render_svg(pic), &error)) {
      *warning = "cannot write timeline pictures to '" + dir + "': " + error;
      return false;
    }
    (*paths)[i] = base;
  }
  return true;
}

}  // namespace xsc
