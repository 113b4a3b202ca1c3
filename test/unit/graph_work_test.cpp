// The runtime's graph model (runtime/cuda/graph_work.h): what a capture
// records, how captures into one graph add up, and the plan a launch
// replays, with conditional bodies in place. The last tests replay plans
// into a Checker as graph.cpp does and check what is reported.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "checker/engine/checker.h"
#include "event_builder.h"
#include "runtime/cuda/graph_work.h"

namespace xsc::rt::graphs {
namespace {

constexpr StreamId kOrigin = 0x5100, kSide = 0x5200, kThird = 0x5300;
constexpr EventId kFork = 0xe100, kJoin = 0xe200;

Event write(Addr addr) {
  Event e;
  e.kind = EventKind::kUse;
  e.addr = addr;
  e.size = 4096;
  e.what = UseWhat::kMemset;
  e.access = Access::kWrite;
  return e;
}

Event read(Addr addr) {
  Event e = write(addr);
  e.what = UseWhat::kKernel;
  e.access = Access::kRead;
  return e;
}

// "U0 R1:0 W2:0 ..." : a plan's steps in a compact spelling (U: use on a
// branch, R: record of event on branch, W: wait for event on branch).
std::string spell(const std::vector<Step>& steps) {
  std::string out;
  for (const Step& s : steps) {
    if (!out.empty()) out += ' ';
    switch (s.kind) {
      case StepKind::kUse: out += "U" + std::to_string(s.branch); break;
      case StepKind::kRecord: out += "R" + std::to_string(s.branch) + ":" + std::to_string(s.event); break;
      case StepKind::kWait: out += "W" + std::to_string(s.branch) + ":" + std::to_string(s.event); break;
      case StepKind::kJoinAll: out += "J" + std::to_string(s.branch); break;
      case StepKind::kConditional: out += "C" + std::to_string(s.branch); break;
    }
  }
  return out;
}

const GraphLookup kNoBodies = [](std::uint64_t) -> const GraphWork* { return nullptr; };

TEST(GraphWork, CaptureGivesEachStreamItsBranch) {
  CaptureRecorder capture(kOrigin);
  capture.use(kOrigin, write(0x1000));
  capture.record(kOrigin, kFork);
  EXPECT_TRUE(capture.wait(kSide, kFork));  // the side stream joins: branch 1
  capture.use(kSide, read(0x1000));
  capture.record(kSide, kJoin);
  EXPECT_TRUE(capture.wait(kOrigin, kJoin));
  // An event the capture never recorded orders nothing inside it.
  EXPECT_FALSE(capture.wait(kThird, 0xe999));
  EXPECT_FALSE(capture.has(kThird));
  const GraphWork& work = capture.work();
  EXPECT_EQ(work.branches, 2u);
  EXPECT_EQ(work.events, 2u);
  EXPECT_EQ(spell(work.steps), "U0 R0:0 W1:0 U1 R1:1 W0:1");
}

TEST(GraphWork, AWaitTakesTheLatestRecord) {
  CaptureRecorder capture(kOrigin);
  capture.record(kOrigin, kFork);
  capture.use(kOrigin, write(0x1000));
  capture.record(kOrigin, kFork);
  capture.wait(kSide, kFork);
  EXPECT_EQ(spell(capture.work().steps), "R0:0 U0 R0:1 W1:1");
}

TEST(GraphWork, OneBranchPlansAreTheUsesAlone) {
  // The common capture (one stream): a launch replays its uses on the
  // launch stream and nothing else, as before branches were modelled.
  CaptureRecorder capture(kOrigin);
  capture.use(kOrigin, write(0x1000));
  capture.use(kOrigin, read(0x1000));
  const Plan p = plan(capture.work(), kNoBodies);
  EXPECT_EQ(spell(p.steps), "U0 U0");
  EXPECT_EQ(p.branches, 1u);
  EXPECT_EQ(p.events, 0u);
}

TEST(GraphWork, BranchesForkFromTheLaunchAndJoinBack) {
  CaptureRecorder capture(kOrigin);
  capture.record(kOrigin, kFork);
  capture.wait(kSide, kFork);
  capture.use(kSide, write(0x1000));
  const Plan p = plan(capture.work(), kNoBodies);
  // Start fork (event 1), the capture's own record and wait (event 0), the
  // use, the end join (event 2).
  EXPECT_EQ(spell(p.steps), "R0:1 W1:1 R0:0 W1:0 U1 R1:2 W0:2");
  EXPECT_EQ(p.branches, 2u);
  EXPECT_EQ(p.events, 3u);
}

TEST(GraphWork, AppendedCapturesFollowOrStandBeside) {
  CaptureRecorder first(kOrigin);
  first.use(kOrigin, write(0x1000));
  first.record(kOrigin, kFork);
  CaptureRecorder second(kSide);
  second.record(kSide, kFork);
  second.use(kSide, read(0x1000));
  // With dependencies the runtime cannot name: after all of it.
  GraphWork after = append(first.work(), second.work(), Placement::kAfterAll);
  EXPECT_EQ(spell(after.steps), "U0 R0:0 J0 R0:1 U0");
  EXPECT_EQ(after.branches, 1u);
  // With none: a root of its own, beside it.
  GraphWork beside = append(first.work(), second.work(), Placement::kRoot);
  EXPECT_EQ(spell(beside.steps), "U0 R0:0 R1:1 U1");
  EXPECT_EQ(beside.branches, 2u);
  // Into an empty graph, either way: the capture itself.
  EXPECT_EQ(spell(append(GraphWork{}, second.work(), Placement::kAfterAll).steps), "R0:0 U0");
}

TEST(GraphWork, AJoinOfAllWaitsForEveryOtherBranch) {
  CaptureRecorder capture(kOrigin);
  capture.record(kOrigin, kFork);
  capture.wait(kSide, kFork);
  capture.wait(kThird, kFork);
  capture.join_all(kOrigin);
  const Plan p = plan(capture.work(), kNoBodies);
  EXPECT_EQ(spell(p.steps),
            "R0:1 W1:1 W2:1 R0:0 W1:0 W2:0 R1:2 W0:2 R2:3 W0:3 R1:4 W0:4 R2:5 W0:5");
}

TEST(GraphWork, ABodyRunsInPlaceOfItsNode) {
  // Parent: write, conditional node, read, all on branch 0.
  CaptureRecorder capture(kOrigin);
  capture.use(kOrigin, write(0x1000));
  GraphWork& work = capture.work();
  ConditionalNode node;
  node.type = ConditionalType::kWhile;
  node.bodies = {0x9200};
  const GraphEvent after = work.add_conditional(0, node);
  EXPECT_EQ(after, 0u);
  capture.use(kOrigin, read(0x1000));
  // The body: a use on its first stream, and a forked branch of its own.
  CaptureRecorder body(kSide);
  body.use(kSide, write(0x2000));
  body.record(kSide, kFork);
  body.wait(kThird, kFork);
  body.use(kThird, read(0x2000));
  body.record(kThird, kJoin);
  body.wait(kSide, kJoin);
  const GraphLookup lookup = [&](std::uint64_t g) -> const GraphWork* {
    return g == 0x9200 ? &body.work() : nullptr;
  };
  const Plan p = plan(work, lookup);
  // The parent's write, the body on branch 0 (its second branch is 1,
  // forked at the body's start with event 3 and joined at its end with
  // event 4), the record after the node, the parent's read.
  EXPECT_EQ(spell(p.steps), "U0 R0:3 W1:3 U0 R0:1 W1:1 U1 R1:2 W0:2 R1:4 W0:4 R0:0 U0");
  EXPECT_EQ(p.branches, 2u);
  EXPECT_FALSE(p.unknown_bodies);
}

TEST(GraphWork, BodiesOfOneNodeRunOneAfterAnother) {
  GraphWork parent;
  ConditionalNode node;
  node.type = ConditionalType::kSwitch;
  node.bodies = {0x9201, 0x9202, 0x9203};
  parent.add_conditional(0, node);
  CaptureRecorder one(kSide), two(kThird);
  one.use(kSide, write(0x1000));
  two.use(kThird, write(0x1000));
  const GraphLookup lookup = [&](std::uint64_t g) -> const GraphWork* {
    if (g == 0x9201) return &one.work();
    if (g == 0x9202) return &two.work();
    return nullptr;  // 0x9203: nothing captured into it
  };
  const Plan p = plan(parent, lookup);
  EXPECT_EQ(spell(p.steps), "U0 U0 R0:0");
  EXPECT_FALSE(p.unknown_bodies);
}

TEST(GraphWork, BodiesNestedTooDeepAreNotFollowed) {
  // A body whose node names the body itself stands for nesting deeper
  // than any graph can have.
  GraphWork looping;
  ConditionalNode node;
  node.bodies = {0x9300};
  looping.add_conditional(0, node);
  const GraphLookup lookup = [&](std::uint64_t) -> const GraphWork* { return &looping; };
  const Plan p = plan(looping, lookup);
  EXPECT_TRUE(p.unknown_bodies);
  EXPECT_EQ(p.events, static_cast<GraphEvent>(kMaxBodyDepth + 1));
}

// ---- plans replayed into the checker, as graph.cpp does ---------------------

constexpr StreamId kLaunch = 0x7100, kReader = 0x7200;
constexpr Addr kBuf = 0x7f0000100000;

class PlanReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    feed(test::CreateStream(kLaunch, StreamFlags::kNonBlocking));
    feed(test::CreateStream(kReader, StreamFlags::kNonBlocking));
    feed(test::Alloc(kBuf, 1 << 20, kLegacyStream, AllocKind::kSynchronous));
  }
  void feed(const Event& e) { checker.on_event(e); }
  void launch(const Plan& p) {
    for (Branch b = 1; b < p.branches; ++b)
      feed(test::CreateStream(kGraphBranchStreamBit | b, StreamFlags::kNonBlocking));
    auto stream = [&](Branch b) { return b == 0 ? kLaunch : (kGraphBranchStreamBit | b); };
    for (const Step& s : p.steps) {
      Event e = s.use;
      switch (s.kind) {
        case StepKind::kUse: e.stream = stream(s.branch); e.graph = 0x9900; break;
        case StepKind::kRecord: e = test::Record(kGraphBranchStreamBit | s.event, stream(s.branch)); break;
        case StepKind::kWait: e = test::Wait(stream(s.branch), kGraphBranchStreamBit | s.event); break;
        default: continue;
      }
      feed(e);
    }
  }
  std::size_t findings() const { return checker.findings().size(); }
  Checker checker;
};

// A WHILE body on two streams: a memset on the forked branch and a read on
// the body's first stream, joined before the read or not.
Plan body_plan(bool joined_before_read) {
  CaptureRecorder body(kSide);
  body.record(kSide, kFork);
  body.wait(kThird, kFork);
  body.use(kThird, write(kBuf));
  if (joined_before_read) {
    body.record(kThird, kJoin);
    body.wait(kSide, kJoin);
  }
  body.use(kSide, read(kBuf));
  if (!joined_before_read) {
    body.record(kThird, kJoin);
    body.wait(kSide, kJoin);
  }
  GraphWork parent;
  ConditionalNode node;
  node.type = ConditionalType::kWhile;
  node.bodies = {0x9200};
  parent.add_conditional(0, node);
  // The plan copies what it takes: the body need not outlive it.
  const GraphLookup lookup = [&](std::uint64_t g) -> const GraphWork* {
    return g == 0x9200 ? &body.work() : nullptr;
  };
  return plan(parent, lookup);
}

TEST_F(PlanReplayTest, ARaceInsideABodyIsReported) {
  launch(body_plan(/*joined_before_read=*/false));
  ASSERT_EQ(findings(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kUseBeforeReady);
  EXPECT_EQ(checker.findings()[0].use.graph, 0x9900u);
}

TEST_F(PlanReplayTest, ABodyOrderedInsideIsClean) {
  launch(body_plan(/*joined_before_read=*/true));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(PlanReplayTest, ABodyIsOrderedAfterItsNodesDependencies) {
  // Parent: a memset of the buffer on branch 0, then the node; the body
  // reads it on a branch of its own: ordered through the node.
  CaptureRecorder parent(kOrigin);
  parent.use(kOrigin, write(kBuf));
  ConditionalNode node;
  node.bodies = {0x9200};
  parent.work().add_conditional(0, node);
  CaptureRecorder body(kSide);
  body.record(kSide, kFork);
  body.wait(kThird, kFork);
  body.use(kThird, read(kBuf));
  body.record(kThird, kJoin);
  body.wait(kSide, kJoin);
  const GraphLookup lookup = [&](std::uint64_t g) -> const GraphWork* {
    return g == 0x9200 ? &body.work() : nullptr;
  };
  launch(plan(parent.work(), lookup));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(PlanReplayTest, ABodysUseRacesWithAnotherStream) {
  // The reader reads the buffer, the graph's body writes it with no wait:
  // one run of the body is enough for the race.
  Event r = read(kBuf);
  r.stream = kReader;
  feed(r);
  launch(body_plan(/*joined_before_read=*/true));
  ASSERT_EQ(findings(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kWriteAfterRead);
}

}  // namespace
}  // namespace xsc::rt::graphs
