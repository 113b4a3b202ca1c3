// Timeline pictures of findings: the bounded op record, the window of one
// finding, and its two renderings (Chrome trace-event JSON and SVG).
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

#include <nlohmann/json.hpp>

#include "checker/report/report.h"

namespace xsc {
namespace {

constexpr std::uint64_t kNoSeq = std::numeric_limits<std::uint64_t>::max();
// Pinned findings follow their lanes for this many further ops, so the
// reuse and a late wait that come after the detection are in the picture.
constexpr std::size_t kFollowOps = 256;
// Alloc ops of freed allocations kept to find a finding's allocation.
constexpr std::size_t kFreedAllocsKept = 4096;
// Ops drawn beyond the window's ends on each lane.
constexpr std::size_t kOpsBefore = 2;
constexpr std::size_t kOpsAfter = 4;

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

enum class OpKind : std::uint8_t {
  kUse, kRecord, kWait, kHostFunc, kGraphLaunch, kAlloc, kFree, kFreeDone,
  kStreamSync, kEventSync, kDeviceSync,
};

struct Touch {
  Addr addr = 0;
  std::uint64_t size = 0;  // 0: the whole allocation containing addr
  Access access = Access::kUnknown;
};

// A lane of the top half: a stream, or a host thread (host actions).
struct LaneKey {
  bool host = false;
  std::uint64_t id = 0;
  bool operator<(const LaneKey& o) const { return host != o.host ? host : id < o.id; }
  bool operator==(const LaneKey& o) const { return host == o.host && id == o.id; }
};

// One op: a launch (its uses merged), a record, a wait, a stream-ordered
// alloc or free on a stream lane; a host action on a host lane.
struct Op {
  std::uint64_t seq = 0;  // host-call order of its first event, from 1
  std::uint64_t col = 0;  // logical clock
  std::uint64_t ord = 0;  // position on its lane, from 1
  OpKind kind = OpKind::kUse;
  LaneKey lane;
  StreamId stream = kLegacyStream;
  ThreadId thread = 0;
  StackId stack = kNoStack;
  NameId name = kNoName;
  UseWhat what = UseWhat::kKernel;
  std::uint64_t graph = 0;
  EventId event = 0;
  std::uint64_t source_seq = 0;  // kWait, kEventSync: the record waited for (0: none seen)
  Addr addr = 0;                 // kAlloc, kFree, kFreeDone
  std::uint64_t size = 0;
  AllocKind alloc_kind = AllocKind::kStreamOrdered;
  FreeKind free_kind = FreeKind::kStreamOrdered;
  std::vector<Touch> touches;    // kUse
};

// Uses kept per op: enough for any kernel's pointer arguments.
constexpr std::size_t kTouchesPerOp = 64;

bool overlaps(Addr a, std::uint64_t n, Addr lo, Addr hi) {
  if (n == 0) return a >= lo && a < hi;
  return a < hi && lo < a + n;
}

bool op_touches(const Op& op, Addr lo, Addr hi) {
  if (op.kind == OpKind::kUse) {
    for (const Touch& t : op.touches)
      if (overlaps(t.addr, t.size, lo, hi)) return true;
    return false;
  }
  if (op.kind == OpKind::kAlloc) return overlaps(op.addr, op.size == 0 ? 1 : op.size, lo, hi);
  if (op.kind == OpKind::kFree || op.kind == OpKind::kFreeDone) return op.addr >= lo && op.addr < hi;
  return false;
}

Access op_access(const Op& op, Addr lo, Addr hi) {
  Access result = Access::kUnknown;
  bool seen = false;
  for (const Touch& t : op.touches) {
    if (!overlaps(t.addr, t.size, lo, hi)) continue;
    if (!seen) result = t.access;
    else if (result != t.access) result = Access::kUnknown;
    seen = true;
  }
  return result;
}

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
// The picture of one finding, independent of its rendering.

namespace {

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

std::string fit(const std::string& text, std::size_t chars);

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

// ---------------------------------------------------------------------------
// Chrome trace-event JSON.

using nlohmann::json;

constexpr int kSlotUs = 100;   // one slot of logical time, in the format's microseconds

const char* chrome_colour(const PItem& item) {
  if (item.late) return "yellow";
  if (item.shape == Shape::kElision) return "grey";
  if (item.block == 0) return "rail_response";
  if (item.block == 1) return "good";
  if (item.mark == Mark::kFree) return "terrible";
  return "generic_work";
}

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

// ---------------------------------------------------------------------------
// SVG.

constexpr int kLabelW = 250;
constexpr int kLaneH = 40;
constexpr int kTopY = 78;

const char* const kBlockFill[] = {"#4e79a7", "#59a14f"};
const char* const kOtherFill = "#c9c4bf";
const char* const kHazard = "#d62728";
const char* const kLate = "#e8871e";
const char* const kEdge = "#4d4d4d";

std::string xml(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

// Fits `text` in about `chars` characters, keeping its start.
std::string fit(const std::string& text, std::size_t chars) {
  if (text.size() <= chars) return text;
  if (chars <= 3) return text.substr(0, chars);
  // Do not cut a UTF-8 sequence in two.
  std::size_t n = chars - 3;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n) + "...";
}

struct Box {
  double x, y, w, h;
};

// `slot_w`: the drawn width of a slot; wide pictures get narrower slots
// (markers keep their size).
Box item_box(const PItem& item, double slot_w) {
  const double scale = slot_w / kSlotW;
  double lane_y = kTopY + static_cast<double>(item.lane) * kLaneH;
  double x = kLabelW + static_cast<double>(item.slot) * slot_w;
  if (item.shape == Shape::kMarker) return Box{x + item.dx * scale, lane_y + 10, item.w, kMarkW};
  return Box{x + item.dx * scale, lane_y + 6, item.w * scale, kLaneH - 12.0};
}

void svg_marker(std::ostream& out, const PItem& item, const Box& b) {
  double cx = b.x + b.w / 2, cy = b.y + b.h / 2;
  std::string fill = item.block >= 0 ? kBlockFill[item.block] : "#ffffff";
  std::string stroke = item.late ? kLate : kEdge;
  char buf[512];
  switch (item.mark) {
    case Mark::kAlloc:
      std::snprintf(buf, sizeof buf, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"%s\"/>",
                    cx, b.y, b.x + b.w, b.y + b.h, b.x, b.y + b.h, fill.c_str(), kEdge);
      break;
    case Mark::kRealloc:
      std::snprintf(buf, sizeof buf,
                    "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\" stroke=\"%s\"/>", cx,
                    b.y - 1, b.x + b.w + 1, cy, cx, b.y + b.h + 1, b.x - 1, cy, fill.c_str(), kEdge);
      break;
    case Mark::kFree:
      std::snprintf(buf, sizeof buf,
                    "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"3\"/>", b.x,
                    b.y, b.x + b.w, b.y + b.h, b.x + b.w, b.y, b.x, b.y + b.h, item.hazard ? kHazard : kEdge);
      break;
    case Mark::kRecord:
      std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5.5\" fill=\"#ffffff\" stroke=\"%s\" stroke-width=\"2\"/>",
                    cx, cy, kEdge);
      break;
    case Mark::kWait:
      std::snprintf(buf, sizeof buf,
                    "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"%s\" stroke-width=\"2\"/>",
                    b.x + 1, b.y + 1, b.w - 2, b.h - 2, item.late ? kLate : kEdge, stroke.c_str());
      break;
    case Mark::kSync:
      std::snprintf(buf, sizeof buf, "<path d=\"M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f\" stroke=\"%s\" stroke-width=\"3\"/>",
                    cx, b.y - 2, cx, b.y + b.h + 2, b.x, b.y + b.h + 2, b.x + b.w, b.y + b.h + 2, kEdge);
      break;
    case Mark::kFreeDone:
    case Mark::kNone:
      std::snprintf(buf, sizeof buf, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#ffffff\" stroke=\"%s\"/>",
                    b.x, b.y, b.x + b.w, b.y, cx, b.y + b.h, kEdge);
      break;
  }
  out << buf;
}

std::string render_svg(const Picture& pic) {
  const std::size_t slots = std::max<std::size_t>(pic.slot_cols.size(), 1);
  const int lanes_h = static_cast<int>(pic.lanes.size()) * kLaneH + 12;
  // Past 100 slots, narrower ones keep a bounded picture within what
  // image converters take (rsvg-convert stops at 32767 pixels).
  const double slot_w = slots > 100 ? 60.0 : kSlotW;
  // Wide enough for the lanes and for the subtitle's line.
  const int width = std::max({kLabelW + static_cast<int>(static_cast<double>(slots) * slot_w) + 20, 980,
                              20 + static_cast<int>(static_cast<double>(pic.subtitle.size()) * 6.8)});
  const int legend_y = kTopY + lanes_h + 16;
  const int height = legend_y + 128;
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << ' ' << height << "\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n";
  out << "<title>" << xml(pic.title) << "</title>\n";
  out << "<defs>\n";
  auto arrow_def = [&](const char* id, const char* colour) {
    out << "<marker id=\"" << id << "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" "
        << "markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0 0L10 5L0 10z\" fill=\"" << colour
        << "\"/></marker>\n";
  };
  arrow_def("arrow-hb", kEdge);
  arrow_def("arrow-hazard", kHazard);
  arrow_def("arrow-late", kLate);
  out << "</defs>\n";
  out << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"#ffffff\"/>\n";
  out << "<text x=\"10\" y=\"22\" font-size=\"15\" font-weight=\"bold\">" << xml(pic.title) << "</text>\n";
  out << "<text x=\"10\" y=\"42\" font-size=\"12\">" << xml(pic.subtitle) << "</text>\n";
  if (!pic.note.empty())
    out << "<text x=\"10\" y=\"58\" font-size=\"11\" fill=\"#666666\">" << xml(pic.note) << "</text>\n";

  // Lanes, their labels, the logical time of each slot.
  for (std::size_t i = 0; i < pic.lanes.size(); ++i) {
    const PLane& lane = pic.lanes[i];
    int y = kTopY + static_cast<int>(i) * kLaneH;
    const char* bg = lane.block ? (i % 2 ? "#f4f1ea" : "#ece8df") : (i % 2 ? "#f5f6f8" : "#eceef2");
    out << "<rect x=\"0\" y=\"" << y << "\" width=\"" << width << "\" height=\"" << kLaneH << "\" fill=\"" << bg
        << "\"/>\n";
    out << "<text x=\"10\" y=\"" << y + (lane.detail.empty() ? 23 : 16) << "\" font-size=\"12\""
        << (lane.host ? " font-style=\"italic\"" : "") << ">" << xml(lane.label) << "</text>\n";
    if (!lane.detail.empty())
      out << "<text x=\"10\" y=\"" << y + 30 << "\" font-size=\"10\" fill=\"#555555\">" << xml(lane.detail)
          << "</text>\n";
  }
  int sep_y = kTopY + static_cast<int>(pic.first_block_lane) * kLaneH;
  out << "<line x1=\"0\" y1=\"" << sep_y << "\" x2=\"" << width << "\" y2=\"" << sep_y
      << "\" stroke=\"#888888\" stroke-width=\"1.5\"/>\n";
  out << "<text x=\"" << kLabelW - 8 << "\" y=\"" << kTopY - 8
      << "\" font-size=\"10\" fill=\"#666666\" text-anchor=\"end\">logical time &#8594;</text>\n";
  for (std::size_t s = 0; s < pic.slot_cols.size(); ++s) {
    double x = kLabelW + static_cast<double>(s) * slot_w;
    out << "<line x1=\"" << x << "\" y1=\"" << kTopY << "\" x2=\"" << x << "\" y2=\"" << kTopY + lanes_h - 12
        << "\" stroke=\"#d0d0d0\" stroke-dasharray=\"2,3\"/>\n";
    out << "<text x=\"" << x + slot_w / 2 << "\" y=\"" << kTopY - 8
        << "\" font-size=\"9\" fill=\"#999999\" text-anchor=\"middle\">t" << pic.slot_cols[s] << "</text>\n";
  }

  // Items.
  for (const PItem& item : pic.items) {
    Box b = item_box(item, slot_w);
    out << "<g>";
    out << "<title>" << xml(item.detail.empty() ? item.label : item.detail) << "</title>";
    if (item.shape == Shape::kMarker) {
      svg_marker(out, item, b);
      if (item.labelled)
        out << "<text x=\"" << b.x - 2 << "\" y=\"" << b.y + b.h + 11 << "\" font-size=\"9\" fill=\""
          << (item.late ? kLate : "#333333") << "\"" << (item.late ? " font-weight=\"bold\"" : "") << ">"
          << xml(fit(item.label, item.late ? 22 : item.label_chars)) << "</text>";
    } else {
      const char* fill = item.shape == Shape::kElision ? "#ffffff"
                         : item.block >= 0             ? kBlockFill[item.block]
                                                       : kOtherFill;
      const char* stroke = item.late ? kLate : item.hazard ? kHazard : "#7a7a7a";
      out << "<rect x=\"" << b.x << "\" y=\"" << b.y << "\" width=\"" << b.w << "\" height=\"" << b.h
          << "\" rx=\"3\" fill=\"" << fill << "\" stroke=\"" << stroke << "\" stroke-width=\""
          << (item.hazard || item.late ? 2.5 : 1) << "\""
          << (item.shape == Shape::kElision ? " stroke-dasharray=\"3,2\"" : "") << "/>";
      const bool dark = item.block >= 0 && item.shape == Shape::kSlice;
      const std::size_t chars = static_cast<std::size_t>(std::max(0.0, (b.w - 6) / 6.2));
      std::string label = fit(item.label, chars);
      // An elision keeps its count when its slot is narrow.
      if (item.shape == Shape::kElision && label.size() < item.label.size())
        label = fit(item.label.substr(3, item.label.find(' ') - 3) + " ops", chars);
      out << "<text x=\"" << b.x + 4 << "\" y=\"" << b.y + b.h / 2 + 4 << "\" font-size=\"10\" fill=\""
          << (dark ? "#ffffff" : "#222222") << "\">" << xml(label) << "</text>";
    }
    out << "</g>\n";
  }

  // Flows, drawn over the items.
  for (const PFlow& flow : pic.flows) {
    const PItem& from = pic.items[flow.from];
    const PItem& to = pic.items[flow.to];
    Box a = item_box(from, slot_w), b = item_box(to, slot_w);
    double x1, y1, x2, y2;
    if (b.x > a.x + a.w) {
      x1 = a.x + a.w;
      y1 = a.y + a.h / 2;
      x2 = b.x;
      y2 = b.y + b.h / 2;
    } else {
      // Same column (or leftwards): leave from the bottom or top edge.
      // A straight line over a marker's centre, else over the middle of
      // the narrower slice.
      bool down = b.y > a.y;
      double x = to.shape == Shape::kMarker     ? b.x + b.w / 2
                 : from.shape == Shape::kMarker ? a.x + a.w / 2
                 : a.w < b.w                    ? a.x + a.w / 2
                                                : b.x + b.w / 2;
      x1 = x2 = x;
      y1 = down ? a.y + a.h : a.y;
      // Up into a marker: end under its label, which stays readable.
      y2 = down ? b.y : b.y + b.h + (to.shape == Shape::kMarker && to.labelled ? 13 : 0);
    }
    const char* colour = flow.kind == FlowKind::kHb ? kEdge : flow.kind == FlowKind::kLateWait ? kLate : kHazard;
    const char* head = flow.kind == FlowKind::kHb ? "arrow-hb" : flow.kind == FlowKind::kLateWait ? "arrow-late" : "arrow-hazard";
    char path[256];
    double mx = (x1 + x2) / 2, my = (y1 + y2) / 2;
    if (b.x > a.x + a.w)
      std::snprintf(path, sizeof path, "M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f", x1, y1, mx, y1, mx, y2, x2, y2);
    else
      std::snprintf(path, sizeof path, "M%.1f %.1f C%.1f %.1f %.1f %.1f %.1f %.1f", x1, y1, x1, my, x2, my, x2, y2);
    out << "<g class=\"flow-" << flow_category(flow.kind) << "\"><title>"
        << xml(flow.detail.empty() ? flow_name(flow.kind) : flow.detail) << "</title><path d=\"" << path
        << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"" << (flow.kind == FlowKind::kHb ? 1.5 : 2.5)
        << "\"" << (flow.kind == FlowKind::kHazard || flow.kind == FlowKind::kRace ? " stroke-dasharray=\"6,4\"" : "")
        << " marker-end=\"url(#" << head << ")\"/>";
    // A vertical arrow is labelled on its right; a curve to the right on
    // the left of its middle, clear of the ops at its end.
    // Along one lane it is labelled under its middle.
    const bool vertical = x1 == x2, level = y1 == y2;
    if (!flow.label.empty())
      out << "<text x=\"" << (vertical ? mx + 5 : level ? mx : mx - 6) << "\" y=\""
          << (vertical ? (y2 < y1 ? y1 - 1 : y1 + 10) : level ? my + 17 : my + 4) << "\" font-size=\"10\" font-weight=\"bold\" text-anchor=\""
          << (vertical ? "start" : level ? "middle" : "end")
          << "\" fill=\"" << colour << "\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">" << xml(flow.label)
          << "</text>";
    out << "</g>\n";
  }

  // Legend.
  int y = legend_y;
  int x = 10;
  out << "<g font-size=\"11\">\n";
  for (std::size_t i = 0; i < pic.block_names.size() && i < 2; ++i) {
    out << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"22\" height=\"12\" rx=\"2\" fill=\""
        << kBlockFill[i] << "\"/><text x=\"" << x + 28 << "\" y=\"" << y << "\">ops on "
        << xml(pic.block_names[i]) << "</text>\n";
    x += 40 + static_cast<int>(pic.block_names[i].size() + 7) * 7;
  }
  out << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"22\" height=\"12\" rx=\"2\" fill=\"" << kOtherFill
      << "\"/><text x=\"" << x + 28 << "\" y=\"" << y << "\">other ops</text>\n";
  y += 22;
  x = 10;
  auto legend_mark = [&](Mark mark, int block, const char* text) {
    PItem item;
    item.shape = Shape::kMarker;
    item.mark = mark;
    item.block = block;
    svg_marker(out, item, Box{static_cast<double>(x), static_cast<double>(y - 10), 12, 12});
    out << "<text x=\"" << x + 18 << "\" y=\"" << y << "\">" << text << "</text>\n";
    x += 24 + static_cast<int>(std::string_view(text).size()) * 7;
  };
  legend_mark(Mark::kAlloc, 0, "allocation");
  legend_mark(Mark::kFree, -1, "free");
  legend_mark(Mark::kRealloc, 1, "reallocation");
  legend_mark(Mark::kRecord, -1, "event record");
  legend_mark(Mark::kWait, -1, "stream wait");
  legend_mark(Mark::kSync, -1, "host sync");
  y += 22;
  x = 10;
  auto legend_arrow = [&](const char* colour, const char* head, bool dashed, const char* text) {
    out << "<path d=\"M" << x << ' ' << y - 4 << "L" << x + 34 << ' ' << y - 4 << "\" stroke=\"" << colour
        << "\" stroke-width=\"2.5\"" << (dashed ? " stroke-dasharray=\"6,4\"" : "") << " marker-end=\"url(#" << head
        << ")\"/><text x=\"" << x + 42 << "\" y=\"" << y << "\">" << text << "</text>\n";
    x += 60 + static_cast<int>(std::string_view(text).size()) * 6;
  };
  legend_arrow(kEdge, "arrow-hb", false, "record -> wait (happens-before)");
  legend_arrow(kHazard, "arrow-hazard", true, "hazard: the missing edge");
  legend_arrow(kLate, "arrow-late", false, "late wait (after the free)");
  out << "<rect x=\"" << x << "\" y=\"" << y - 10 << "\" width=\"30\" height=\"12\" fill=\"#ffffff\" stroke=\"#7a7a7a\" "
      << "stroke-dasharray=\"3,2\"/><text x=\"" << x + 36 << "\" y=\"" << y << "\">...N ops...: not drawn</text>\n";
  y += 24;
  std::string_view clock = kClockText;
  std::size_t cut = clock.find("; ");
  out << "<text x=\"10\" y=\"" << y << "\" fill=\"#444444\">" << xml(clock.substr(0, cut + 1)) << "</text>\n";
  out << "<text x=\"10\" y=\"" << y + 15 << "\" fill=\"#444444\">" << xml(clock.substr(cut + 2)) << "</text>\n";
  out << "</g>\n</svg>\n";
  return out.str();
}

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
    Builder builder(*input.finding, std::move(ops), anchor, names, stacks, s.thread_names);
    return builder.build(input.number, pid);
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
