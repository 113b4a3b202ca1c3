// The timeline recorder's memory stays bounded however long the run: rings
// per lane, a bounded copy per finding, and allocations' own ops.
#include <gtest/gtest.h>

#include <vector>

#include "checker/engine/finding.h"
#include "checker/report/timeline.h"
#include "event_builder.h"

namespace xsc {
namespace {

using namespace xsc::test;

constexpr StreamId kStreams[] = {0x1000, 0x2000, 0x3000, 0x4000};
constexpr Addr kBlock = 0x7f0000000000;

TEST(TimelineRecorder, RingsBoundTheOpsKept) {
  TimelineRecorder recorder(/*ops_per_lane=*/64);
  recorder.on_event(Alloc(kBlock, 1 << 20, kStreams[0]));
  // Alternating names, so no two consecutive uses merge into one op.
  for (int i = 0; i < 100000; ++i)
    recorder.on_event(Use(kBlock, 1 << 20, kStreams[i % 4]).name(static_cast<NameId>(1 + i % 2)));
  // 4 rings of 64, the host thread's (the allocation), the allocation
  // and its last use on each of 4 lanes.
  EXPECT_LE(recorder.ops_held(), 4u * 64 + 1 + 1 + 4);
  EXPECT_GE(recorder.ops_held(), 4u * 64);
}

TEST(TimelineRecorder, PinnedFindingsAreBounded) {
  TimelineRecorder recorder(/*ops_per_lane=*/64);
  recorder.on_event(Alloc(kBlock, 1 << 20, kStreams[0]));
  std::vector<Finding> findings;
  for (int i = 0; i < 1000; ++i) {
    recorder.on_event(Use(kBlock, 1 << 20, kStreams[i % 2]).name(static_cast<NameId>(1 + i % 2)));
    if (i % 100 == 99) {
      Finding f;
      f.alloc.addr = kBlock;
      f.alloc.size = 1 << 20;
      f.alloc.stream = kStreams[0];
      f.use.stream = kStreams[1];
      f.free.stream = kStreams[0];
      findings.push_back(f);
      recorder.note_findings(findings);
    }
  }
  for (int i = 0; i < 100000; ++i)
    recorder.on_event(Use(kBlock, 1 << 20, kStreams[i % 2]).name(static_cast<NameId>(1 + i % 2)));
  // Each pin: the rings of its lanes when it was taken, the allocation's
  // ops, and what it followed afterwards (kTimelineOpsPerLane / 2 of its
  // lanes, 16 more on the block).
  const std::size_t per_pin = 2 * 64 + 1 + 2 + 256 + 16;
  EXPECT_LE(recorder.ops_held(), 2u * 64 + 1 + 1 + 2 + findings.size() * per_pin);
}

}  // namespace
}  // namespace xsc
