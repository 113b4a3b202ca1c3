// The timeline's record of ops (timeline.cpp keeps it, timeline_picture.cpp
// draws a finding's window of it): what one op on a stream or host lane is,
// and which bytes it touched.
#pragma once

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "checker/engine/event.h"

namespace xsc::timeline {

constexpr std::uint64_t kNoSeq = std::numeric_limits<std::uint64_t>::max();
// Ops drawn beyond the window's ends on each lane.
constexpr std::size_t kOpsBefore = 2;
constexpr std::size_t kOpsAfter = 4;

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

inline bool overlaps(Addr a, std::uint64_t n, Addr lo, Addr hi) {
  if (n == 0) return a >= lo && a < hi;
  return a < hi && lo < a + n;
}

inline bool op_touches(const Op& op, Addr lo, Addr hi) {
  if (op.kind == OpKind::kUse) {
    for (const Touch& t : op.touches)
      if (overlaps(t.addr, t.size, lo, hi)) return true;
    return false;
  }
  if (op.kind == OpKind::kAlloc) return overlaps(op.addr, op.size == 0 ? 1 : op.size, lo, hi);
  if (op.kind == OpKind::kFree || op.kind == OpKind::kFreeDone) return op.addr >= lo && op.addr < hi;
  return false;
}

inline Access op_access(const Op& op, Addr lo, Addr hi) {
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

}  // namespace xsc::timeline
