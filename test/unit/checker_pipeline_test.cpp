// The producer/consumer pipelines of the cross-stream buffer bug, as event
// sequences a PyTorch program produces: the buggy loop, each correct form,
// and a wait that comes too late.
#include <gtest/gtest.h>

#include "checker_fixture.h"

namespace xsc {
namespace {

using namespace xsc::test;

constexpr StreamId kCompute = kLegacyStream;  // torch's default stream
constexpr StreamId kAllGather = 0x7001;       // a side stream from the pool
constexpr std::uint64_t kParamBytes = 1 << 20;
constexpr int kLayers = 4;

// Stacks of the program's call sites.
constexpr StackId kAllGatherAlloc = 1;
constexpr StackId kAllGatherFill = 2;
constexpr StackId kForward = 3;
constexpr StackId kLoopDel = 4;
constexpr StackId kFinalDel = 5;
constexpr StackId kLateWait = 6;
constexpr NameId kMatmul = 7;

class PipelineTest : public CheckerTest {
 protected:
  void SetUp() override {
    feed(CreateStream(kAllGather, StreamFlags::kNonBlocking));
  }

  // all_gather(ag_stream, layer): a block from the caching allocator on the
  // all-gather stream, filled there.
  void all_gather(Addr block) {
    feed(Alloc(block, kParamBytes, kAllGather).stack(kAllGatherAlloc));
    feed(Use(block, kParamBytes, kAllGather).stack(kAllGatherFill)
             .access(Access::kWrite));
  }
  // default.wait_stream(ag_stream); forward(params) on the compute stream.
  void forward(Addr params, EventId ag_done) {
    feed(Record(ag_done, kAllGather));
    feed(Wait(kCompute, ag_done));
    feed(Use(params, 0, kCompute).stack(kForward).name(kMatmul)
             .access(Access::kRead));
  }

};

TEST_F(PipelineTest, BuggyLoopReportsTwoDeduplicatedFindings) {
  constexpr Addr kBlock = 0x10000000;  // the allocator hands it back each time
  all_gather(kBlock);
  for (int layer = 2; layer <= kLayers; ++layer) {
    forward(kBlock, 100 + layer);
    feed(Free(kBlock, kAllGather).stack(kLoopDel));
    all_gather(kBlock);
  }
  forward(kBlock, 200);
  feed(Free(kBlock, kAllGather).stack(kFinalDel));
  checker.finish();

  const auto& findings = checker.findings();
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].kind, FindingKind::kUnorderedFree);
  EXPECT_EQ(findings[0].free.stack, kLoopDel);
  EXPECT_EQ(findings[0].use.stack, kForward);
  EXPECT_EQ(findings[0].use.name, kMatmul);
  EXPECT_EQ(findings[0].use.stream, kCompute);
  EXPECT_EQ(findings[0].alloc.stream, kAllGather);
  EXPECT_EQ(findings[0].alloc.stack, kAllGatherAlloc);
  EXPECT_EQ(findings[0].free.kind, FreeKind::kCachingAllocator);
  EXPECT_EQ(findings[0].count, 3u);
  EXPECT_FALSE(findings[0].has_late_wait);
  EXPECT_EQ(findings[1].free.stack, kFinalDel);
  EXPECT_EQ(findings[1].count, 1u);
  // The reallocation forgot the freed range: no use-after-free noise.
  for (const Finding& f : findings) EXPECT_EQ(f.kind, FindingKind::kUnorderedFree);
}

TEST_F(PipelineTest, StallWithWaitEventBeforeFreeIsClean) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  for (int layer = 2; layer <= kLayers + 1; ++layer) {
    forward(kBlock, 100 + layer);
    feed(Record(300 + layer, kCompute));
    feed(Wait(kAllGather, 300 + layer));
    feed(Free(kBlock, kAllGather).stack(kLoopDel));
    if (layer <= kLayers) all_gather(kBlock);
  }
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(PipelineTest, KeepReferenceAndDeferredWaitIsClean) {
  constexpr Addr kBlocks[2] = {0x10000000, 0x20000000};
  int current = 0;
  all_gather(kBlocks[current]);
  bool have_keepalive = false;
  EventId keepalive_event = 0;
  for (int layer = 2; layer <= kLayers; ++layer) {
    if (have_keepalive) {
      feed(Wait(kAllGather, keepalive_event));
      feed(Free(kBlocks[1 - current], kAllGather).stack(kLoopDel));
    }
    forward(kBlocks[current], 100 + layer);
    keepalive_event = 300 + layer;
    feed(Record(keepalive_event, kCompute));
    have_keepalive = true;
    current = 1 - current;
    all_gather(kBlocks[current]);  // a different block: the other is held
  }
  feed(Wait(kAllGather, keepalive_event));
  feed(Free(kBlocks[1 - current], kAllGather).stack(kFinalDel));
  forward(kBlocks[current], 400);
  feed(Record(401, kCompute));
  feed(Wait(kAllGather, 401));
  feed(Free(kBlocks[current], kAllGather).stack(kFinalDel));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(PipelineTest, RecordStreamIsCleanAndParksOneBlockPerLayer) {
  // record_stream(default); del: the allocator records an event on the
  // consumer stream and parks the block until a later query succeeds. The
  // CPU runs ahead, so each all-gather gets a fresh block.
  Addr block = 0x10000000;
  all_gather(block);
  std::vector<Addr> parked;
  for (int layer = 2; layer <= kLayers + 1; ++layer) {
    forward(block, 100 + layer);
    feed(Record(500 + layer, kCompute));  // insert_events
    feed(Free(block, kAllGather, FreeKind::kCachingAllocator, /*deferred=*/true)
             .stack(layer <= kLayers ? kLoopDel : kFinalDel));
    parked.push_back(block);
    if (layer <= kLayers) {
      block += kParamBytes;
      all_gather(block);
    }
  }
  feed(HostFunc(kCompute));  // anything else: the last free parks too
  // process_events: each event query succeeds, then the block is reusable.
  for (std::size_t i = 0; i < parked.size(); ++i) {
    feed(EventSync(502 + i));
    feed(FreeCompleted(parked[i]));
  }
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  const ParkedBlockStats stats = checker.parked_blocks();
  EXPECT_EQ(stats.deferred_frees, 4u);
  EXPECT_EQ(stats.max_parked, 4u);
  EXPECT_EQ(stats.peak_parked_bytes, 4 * kParamBytes);
  EXPECT_EQ(stats.top_site, kLoopDel);
  EXPECT_EQ(stats.top_site_count, 3u);
}

TEST_F(PipelineTest, DeferredFreeCompletingAtOnceIsNeverParked) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  forward(kBlock, 101);
  feed(StreamSync(kCompute));
  feed(Free(kBlock, kAllGather, FreeKind::kCachingAllocator, true).stack(kLoopDel));
  feed(FreeCompleted(kBlock));  // the very next event: never parked
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  const ParkedBlockStats stats = checker.parked_blocks();
  EXPECT_EQ(stats.deferred_frees, 1u);
  EXPECT_EQ(stats.max_parked, 0u);
  EXPECT_EQ(stats.peak_parked_bytes, 0u);
  EXPECT_EQ(stats.top_site, kNoStack);
}

TEST_F(PipelineTest, ParkedBlockLeavesTheParkOnCompletion) {
  constexpr Addr kBlocks[2] = {0x10000000, 0x20000000};
  for (int i = 0; i < 2; ++i) {
    all_gather(kBlocks[i]);
    forward(kBlocks[i], 101 + i);
    feed(Record(201 + i, kCompute));
    feed(Free(kBlocks[i], kAllGather, FreeKind::kCachingAllocator, true)
             .stack(i == 0 ? kLoopDel : kFinalDel));
    feed(EventSync(201 + i));  // not the completion: the block parks
    feed(FreeCompleted(kBlocks[i]));
  }
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  const ParkedBlockStats stats = checker.parked_blocks();
  EXPECT_EQ(stats.deferred_frees, 2u);
  EXPECT_EQ(stats.max_parked, 1u);
  EXPECT_EQ(stats.peak_parked_bytes, kParamBytes);
  EXPECT_EQ(stats.top_site, kLoopDel);  // first to reach the top count
  EXPECT_EQ(stats.top_site_count, 1u);
}

TEST_F(PipelineTest, DeferredFreeWithoutConsumerEventIsChecked) {
  // record_stream on the wrong stream: the completing query synchronized
  // with nothing the consumer did.
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  forward(kBlock, 101);
  feed(Record(102, kAllGather));
  feed(Free(kBlock, kAllGather, FreeKind::kCachingAllocator, true).stack(kLoopDel));
  feed(EventSync(102));
  feed(FreeCompleted(kBlock));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_TRUE(checker.findings()[0].free.deferred);
  EXPECT_EQ(checker.findings()[0].use.stack, kForward);
}

TEST_F(PipelineTest, BlocksStillParkedAtTheEndAreCounted) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  forward(kBlock, 101);
  feed(Record(102, kCompute));
  feed(Free(kBlock, kAllGather, FreeKind::kCachingAllocator, true).stack(kLoopDel));
  checker.finish();
  checker.finish();  // idempotent
  const ParkedBlockStats stats = checker.parked_blocks();
  EXPECT_EQ(stats.deferred_frees, 1u);
  EXPECT_EQ(stats.max_parked, 1u);
  EXPECT_EQ(stats.peak_parked_bytes, kParamBytes);
  EXPECT_TRUE(checker.findings().empty());  // never reused, never checked
}

TEST_F(PipelineTest, WaitAfterTheFreeIsAFindingWithALateWait) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  forward(kBlock, 101);
  feed(Record(102, kCompute));
  feed(Free(kBlock, kAllGather).stack(kLoopDel));
  feed(Wait(kAllGather, 102).stack(kLateWait).thread(0));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUnorderedFree);
  ASSERT_TRUE(f.has_late_wait);
  EXPECT_EQ(f.late_wait.stream, kAllGather);
  EXPECT_EQ(f.late_wait.event, 102u);
  EXPECT_EQ(f.late_wait.stack, kLateWait);
}

TEST_F(PipelineTest, LateWaitMustCoverTheUse) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  feed(Record(101, kCompute));  // recorded BEFORE the use: covers nothing
  forward(kBlock, 102);
  feed(Free(kBlock, kAllGather).stack(kLoopDel));
  feed(Wait(kAllGather, 101).stack(kLateWait));
  feed(Wait(kCompute, 999));  // another stream waiting: not the free's
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_FALSE(checker.findings()[0].has_late_wait);
}

TEST_F(PipelineTest, HostSynchronizationBeforeFreeIsClean) {
  constexpr Addr kBlocks[3] = {0x10000000, 0x20000000, 0x30000000};
  for (int i = 0; i < 3; ++i) {
    all_gather(kBlocks[i]);
    forward(kBlocks[i], 100 + i);
    feed(Record(200 + i, kCompute));
  }
  feed(StreamSync(kCompute));  // torch.cuda.current_stream().synchronize()
  feed(Free(kBlocks[0], kAllGather));
  all_gather(kBlocks[0]);
  forward(kBlocks[0], 300);
  feed(Record(301, kCompute));
  feed(EventSync(301));  // event.synchronize()
  feed(Free(kBlocks[0], kAllGather));
  feed(Free(kBlocks[1], kAllGather));
  forward(kBlocks[2], 302);
  feed(DeviceSync());  // torch.cuda.synchronize()
  feed(Free(kBlocks[2], kAllGather));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(PipelineTest, SyncByAnotherThreadDoesNotOrderThisThreadsFree) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  forward(kBlock, 101);
  feed(StreamSync(kCompute).thread(1));  // a watchdog thread's query
  feed(Free(kBlock, kAllGather).thread(0).stack(kLoopDel));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.stats().threads, 2u);
}

TEST_F(PipelineTest, SyncAndFreeOnTheSameOtherThreadIsClean) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  forward(kBlock, 101);
  feed(StreamSync(kCompute).thread(1));
  feed(Free(kBlock, kAllGather).thread(1));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(PipelineTest, NeverRecordedEventOrdersNothing) {
  constexpr Addr kBlock = 0x10000000;
  all_gather(kBlock);
  forward(kBlock, 101);
  feed(Wait(kAllGather, 4242));  // never recorded
  feed(EventSync(4243));         // never recorded
  feed(Free(kBlock, kAllGather).stack(kLoopDel));
  checker.finish();
  EXPECT_EQ(checker.findings().size(), 1u);
}

TEST_F(PipelineTest, WaitJoinsOnlyTheLatestRecord) {
  constexpr StreamId kOther = 0x7002;
  constexpr Addr kA = 0x10000000, kB = 0x20000000;
  feed(CreateStream(kOther, StreamFlags::kNonBlocking));
  // Re-recorded after the use: the wait covers it.
  all_gather(kA);
  feed(Record(50, kOther));
  forward(kA, 101);
  feed(Record(50, kCompute));
  feed(Wait(kAllGather, 50));
  feed(Free(kA, kAllGather).stack(kLoopDel));
  // Recorded after the use, then re-recorded elsewhere: it no longer does.
  all_gather(kB);
  forward(kB, 102);
  feed(Record(51, kCompute));
  feed(Record(51, kOther));
  feed(Wait(kAllGather, 51));
  feed(Free(kB, kAllGather).stack(kFinalDel));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].free.stack, kFinalDel);
}

TEST_F(PipelineTest, MemoryDoesNotGrowWithHistory) {
  constexpr Addr kBlock = 0x10000000;
  constexpr Addr kActivations = 0x40000000;
  feed(Alloc(kActivations, 4096, kCompute));
  all_gather(kBlock);
  CheckerStats before = checker.stats();
  for (int i = 0; i < 20000; ++i) {
    forward(kBlock, 1000 + (i % 8));
    feed(Use(kActivations, 0, kCompute).stack(kForward));
    feed(Free(kBlock, kAllGather).stack(kLoopDel));
    all_gather(kBlock);
  }
  CheckerStats after = checker.stats();
  EXPECT_EQ(after.live_allocations, before.live_allocations);
  EXPECT_EQ(after.live_allocations, 2u);
  EXPECT_EQ(after.streams, before.streams);
  EXPECT_EQ(after.events, before.events + 20000u * 7);
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].count, 20000u);
}

}  // namespace
}  // namespace xsc
