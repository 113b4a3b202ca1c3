// Ordering rules of the happens-before engine: stream-ordered frees, the
// legacy default stream, stream lifetimes, and what a free's ordering point
// is for each free kind.
#include <gtest/gtest.h>

#include "checker_fixture.h"

namespace xsc {
namespace {

using namespace xsc::test;

constexpr StreamId kProducer = 0x100;
constexpr StreamId kConsumer = 0x200;
constexpr Addr kBuf = 0x7f0000000000;
constexpr std::uint64_t kSize = 4096;

class OrderingTest : public CheckerTest {
 protected:
  // cudaMallocAsync on the producer, made ready for the consumer by an event.
  void alloc_ready_for_consumer(Addr addr = kBuf) {
    feed(Alloc(addr, kSize, kProducer, AllocKind::kStreamOrdered).stack(1));
    feed(Record(900, kProducer));
    feed(Wait(kConsumer, 900));
  }
};

TEST_F(OrderingTest, StreamOrderedFreeOnTheConsumerStreamIsClean) {
  alloc_ready_for_consumer();
  feed(Use(kBuf, kSize, kConsumer).stack(2));
  feed(Free(kBuf, kConsumer, FreeKind::kStreamOrdered).stack(3));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(OrderingTest, StreamOrderedFreeOnTheProducerIsUnordered) {
  alloc_ready_for_consumer();
  feed(Use(kBuf, kSize, kConsumer).stack(2).name(9));
  feed(Free(kBuf, kProducer, FreeKind::kStreamOrdered).stack(3));
  feed(Record(901, kConsumer));
  feed(Wait(kProducer, 901).stack(4));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUnorderedFree);
  EXPECT_EQ(f.free.stream, kProducer);
  EXPECT_EQ(f.free.kind, FreeKind::kStreamOrdered);
  EXPECT_EQ(f.use.stream, kConsumer);
  EXPECT_EQ(f.use.name, 9u);
  EXPECT_EQ(f.alloc.kind, AllocKind::kStreamOrdered);
  EXPECT_TRUE(f.has_late_wait);
  EXPECT_EQ(f.late_wait.stack, 4u);
}

TEST_F(OrderingTest, LateWaitAttachesOnlyToTheUsesItCovers) {
  constexpr Addr kOther = kBuf + 2 * kSize;
  feed(Alloc(kBuf, kSize, kProducer));
  feed(Alloc(kOther, kSize, kProducer));
  feed(Use(kBuf, kSize, kConsumer).stack(2));
  feed(Free(kBuf, kProducer).stack(3));
  feed(Record(1, kConsumer));  // covers the first use only
  feed(Use(kOther, kSize, kConsumer).stack(4));
  feed(Free(kOther, kProducer).stack(5));
  feed(Wait(kProducer, 1).stack(6));
  ASSERT_EQ(checker.findings().size(), 2u);
  EXPECT_TRUE(checker.findings()[0].has_late_wait);
  EXPECT_EQ(checker.findings()[0].late_wait.event, 1u);
  EXPECT_FALSE(checker.findings()[1].has_late_wait);
  feed(Record(2, kConsumer));
  feed(Wait(kProducer, 2).stack(7));
  checker.finish();
  ASSERT_TRUE(checker.findings()[1].has_late_wait);
  EXPECT_EQ(checker.findings()[1].late_wait.event, 2u);
  EXPECT_EQ(checker.findings()[1].late_wait.stack, 7u);
  EXPECT_EQ(checker.findings()[0].late_wait.stack, 6u);  // the first wait stays
}

TEST_F(OrderingTest, StreamOrderedFreeAfterHostSyncIsClean) {
  // cudaFreeAsync's stream joins what the freeing thread synchronized with.
  alloc_ready_for_consumer();
  feed(Use(kBuf, kSize, kConsumer));
  feed(StreamSync(kConsumer));
  feed(Free(kBuf, kProducer, FreeKind::kStreamOrdered));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

// cudaFree synchronizes the device before it frees: every stream's earlier
// work is ordered before it (CUDA Programming Guide, "Implicit
// Synchronization"), so a cross-stream use is never unordered with it.
TEST_F(OrderingTest, CudaFreeSynchronizesTheDevice) {
  feed(Alloc(kBuf, kSize, kProducer, AllocKind::kSynchronous));
  feed(Use(kBuf, kSize, kConsumer).stack(2));
  feed(Free(kBuf, kProducer, FreeKind::kSynchronous).stack(3));
  // ...and so is the next allocation's use on any stream.
  feed(Alloc(kBuf, kSize, kProducer, AllocKind::kSynchronous));
  feed(Use(kBuf, kSize, kProducer).stack(4));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

// What the synchronization does not order: another host thread's own
// access, which no stream holds.
TEST_F(OrderingTest, CudaFreeIsNotOrderedAfterAnotherThreadsHostAccess) {
  feed(Alloc(kBuf, kSize, kProducer, AllocKind::kSynchronous));
  feed(Use(kBuf, kSize, kConsumer).stack(2).what(UseWhat::kHostAccess).thread(1));
  feed(Free(kBuf, kProducer, FreeKind::kSynchronous).stack(3));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].free.kind, FreeKind::kSynchronous);
  EXPECT_FALSE(checker.findings()[0].has_late_wait);
}

TEST_F(OrderingTest, LegacyDefaultStreamSynchronizesBlockingStreams) {
  // Both streams blocking (cudaStreamCreate default): a kernel on the legacy
  // stream waits for them, and they wait for it.
  feed(CreateStream(kProducer));
  feed(CreateStream(kConsumer));
  feed(Alloc(kBuf, kSize, kProducer, AllocKind::kStreamOrdered));
  feed(HostFunc(kLegacyStream));  // joins the producer
  feed(Use(kBuf, kSize, kConsumer).stack(2));  // joins the legacy stream
  feed(Use(kBuf, kSize, kLegacyStream).stack(5));  // joins the consumer
  feed(Free(kBuf, kProducer, FreeKind::kStreamOrdered));  // joins legacy
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(OrderingTest, NonBlockingStreamsAreExemptFromTheLegacyStream) {
  feed(CreateStream(kProducer, StreamFlags::kNonBlocking));
  feed(CreateStream(kConsumer, StreamFlags::kNonBlocking));
  feed(Alloc(kBuf, kSize, kProducer, AllocKind::kStreamOrdered));
  feed(HostFunc(kLegacyStream));
  feed(Use(kBuf, kSize, kConsumer).stack(2));
  feed(Use(kBuf, kSize, kLegacyStream).stack(5));
  feed(Free(kBuf, kProducer, FreeKind::kStreamOrdered));
  checker.finish();
  // Neither the consumer nor the legacy stream is ordered after the
  // allocation, nor the free after their uses.
  EXPECT_EQ(count(FindingKind::kUseBeforeReady), 2u);
  EXPECT_EQ(count(FindingKind::kUnorderedFree), 2u);
}

TEST_F(OrderingTest, PerThreadDefaultStreamIsBlocking) {
  // A per-thread default stream: a producer-chosen id, never created.
  constexpr StreamId kPerThread = 0xfeed0001;
  feed(Alloc(kBuf, kSize, kPerThread, AllocKind::kStreamOrdered).thread(1));
  feed(Use(kBuf, kSize, kLegacyStream).stack(2));
  feed(Free(kBuf, kPerThread, FreeKind::kStreamOrdered).thread(1));
  // The same with a non-blocking stream is a bug.
  constexpr StreamId kSide = 0xfeed0002;
  feed(CreateStream(kSide, StreamFlags::kNonBlocking));
  feed(Alloc(kBuf, kSize, kSide, AllocKind::kStreamOrdered).stack(7).thread(1));
  feed(Use(kBuf, kSize, kLegacyStream).stack(2));
  feed(Free(kBuf, kSide, FreeKind::kStreamOrdered).stack(8).thread(1));
  checker.finish();
  EXPECT_EQ(count(FindingKind::kUseBeforeReady), 1u);
  ASSERT_EQ(count(FindingKind::kUnorderedFree), 1u);
  for (const Finding& f : checker.findings()) {
    if (f.kind == FindingKind::kUnorderedFree) {
      EXPECT_EQ(f.free.stack, 8u);
    }
  }
}

TEST_F(OrderingTest, DestroyedStreamHandleIsANewStream) {
  // The consumer's use reached stream 0x300 through a wait; 0x300 is then
  // destroyed and its handle reused. The new stream knows nothing.
  constexpr StreamId kReused = 0x300;
  feed(Alloc(kBuf, kSize, kProducer));
  feed(Use(kBuf, kSize, kConsumer).stack(2));
  feed(Record(1, kConsumer));
  feed(Wait(kReused, 1));
  EXPECT_EQ(checker.stats().streams, 3u);
  feed(DestroyStream(kReused));
  EXPECT_EQ(checker.stats().streams, 2u);
  feed(CreateStream(kReused, StreamFlags::kNonBlocking));
  feed(Record(2, kReused));
  feed(Wait(kProducer, 2));
  feed(Free(kBuf, kProducer).stack(3));
  // A plain reference after a destroy is a new (blocking) stream too.
  feed(DestroyStream(kReused));
  feed(Alloc(kBuf, kSize, kProducer));
  feed(Use(kBuf, kSize, kConsumer).stack(2));
  feed(Record(3, kConsumer));
  feed(Wait(kReused, 3));
  feed(Record(4, kReused));
  feed(Wait(kProducer, 4));
  feed(Free(kBuf, kProducer).stack(4));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].free.stack, 3u);
}

TEST_F(OrderingTest, RecreatingALiveStreamHandleStartsAFreshStream) {
  feed(Alloc(kBuf, kSize, kProducer));
  feed(Use(kBuf, kSize, kConsumer).stack(2));
  feed(Record(1, kConsumer));
  feed(Wait(kProducer, 1));
  EXPECT_EQ(checker.stats().streams, 2u);
  feed(CreateStream(kProducer));  // destroy missed: a new agent
  EXPECT_EQ(checker.stats().streams, 2u);
  feed(Free(kBuf, kProducer).stack(3));
  checker.finish();
  EXPECT_EQ(checker.findings().size(), 1u);
}

TEST_F(OrderingTest, HostFunctionAndGraphLaunchAreOpsOnTheirStream) {
  feed(Alloc(kBuf, kSize, kProducer));
  feed(Use(kBuf, kSize, kConsumer).stack(2).graph(77));
  E launch(EventKind::kGraphLaunch);
  launch.e_.stream = kConsumer;
  feed(launch);
  feed(HostFunc(kConsumer));
  feed(Record(1, kConsumer));
  feed(Wait(kProducer, 1));
  feed(Free(kBuf, kProducer));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(OrderingTest, HostAccessIsTheThreadsOwnAction) {
  feed(Alloc(kBuf, kSize, kProducer));
  feed(Use(kBuf, kSize, kConsumer).what(UseWhat::kHostAccess).stack(2));
  feed(Free(kBuf, kProducer));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(OrderingTest, UnknownIdsAreIgnored) {
  feed(Free(0xdead, kProducer, FreeKind::kStreamOrdered));
  feed(Free(0xdead, kProducer, FreeKind::kCachingAllocator, true));
  feed(Free(0xdead, kProducer, FreeKind::kSynchronous));
  feed(FreeCompleted(0xbeef));
  feed(Wait(kConsumer, 12345));
  feed(EventSync(12345));
  feed(DestroyStream(0x999));
  feed(DestroyStream(kLegacyStream));
  feed(Use(0x1234, 0, kConsumer));
  feed(Use(~Addr{0} - 2, ~std::uint64_t{0}, kConsumer));
  feed(Alloc(~Addr{0} - 2, ~std::uint64_t{0}, kConsumer));
  feed(StreamSync(0x888).thread(~ThreadId{0}));
  feed(E(EventKind::kThreadName).thread(3));
  Event bogus;
  bogus.kind = static_cast<EventKind>(200);
  feed(bogus);
  checker.finish();
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  EXPECT_EQ(checker.stats().events, 14u);
  EXPECT_EQ(checker.parked_blocks().deferred_frees, 0u);
}

}  // namespace
}  // namespace xsc
