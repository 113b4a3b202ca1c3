// Address resolution and the individual checks: interior pointers, ranges
// spanning allocations, use after free, use before ready, the quarantine and
// deduplication.
#include <gtest/gtest.h>

#include "checker_fixture.h"

namespace xsc {
namespace {

using namespace xsc::test;

constexpr StreamId kProducer = 0x100;
constexpr StreamId kConsumer = 0x200;
constexpr Addr kA = 0x10000;
constexpr Addr kB = 0x20000;
constexpr std::uint64_t kSize = 0x10000;

class ChecksTest : public CheckerTest {};

TEST_F(ChecksTest, InteriorPointerUseResolvesToItsAllocation) {
  feed(Alloc(kA, kSize, kProducer).stack(1));
  AllocInfo info;
  ASSERT_TRUE(checker.lookup_allocation(kA + 0x1234, &info));
  EXPECT_EQ(info.addr, kA);
  EXPECT_EQ(info.size, kSize);
  EXPECT_EQ(info.stack, 1u);
  EXPECT_FALSE(checker.lookup_allocation(kA + kSize, &info));
  EXPECT_FALSE(checker.lookup_allocation(kA - 1, &info));
  feed(Use(kA + 0x8000, 16, kConsumer).stack(2));
  feed(Free(kA, kProducer).stack(3));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].use.addr, kA + 0x8000);
  EXPECT_EQ(checker.findings()[0].alloc.addr, kA);
}

// A producer skips the host stack of a caching free that can never be
// reported: one whose block nothing but its allocation stream used.
TEST_F(ChecksTest, UsedOffAllocationStreamSeesOtherStreamsAndHostAccesses) {
  EXPECT_TRUE(checker.used_off_allocation_stream(kA));  // nothing live there
  feed(Alloc(kA, kSize, kProducer));
  EXPECT_FALSE(checker.used_off_allocation_stream(kA));
  feed(Use(kA + 0x10, 16, kProducer));
  EXPECT_FALSE(checker.used_off_allocation_stream(kA));
  EXPECT_TRUE(checker.used_off_allocation_stream(kA + 0x10));  // not its start
  feed(Use(kA, 0, kConsumer));
  EXPECT_TRUE(checker.used_off_allocation_stream(kA));
  feed(Free(kA, kProducer));
  EXPECT_TRUE(checker.used_off_allocation_stream(kA));  // no longer live

  feed(Alloc(kB, kSize, kProducer));
  feed(Use(kB, 16, kProducer).what(UseWhat::kHostAccess));
  EXPECT_TRUE(checker.used_off_allocation_stream(kB));

  // A use by an earlier stream whose handle the allocation stream reuses
  // is another stream's.
  constexpr Addr kC = 0x40000;
  feed(Alloc(kC, kSize, kProducer));
  feed(Use(kC, 16, kProducer));
  feed(DestroyStream(kProducer));
  feed(CreateStream(kProducer));
  EXPECT_TRUE(checker.used_off_allocation_stream(kC));
}

TEST_F(ChecksTest, ZeroSizeUseMeansTheWholeContainingAllocation) {
  feed(Alloc(kA, kSize, kProducer));
  feed(Use(kA + kSize - 1, 0, kConsumer).stack(2));
  feed(Use(kB + 5, 0, kConsumer).stack(9));  // nothing there: ignored
  feed(Free(kA, kProducer).stack(3));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].use.stack, 2u);
}

TEST_F(ChecksTest, UseSpanningTwoAllocationsUsesEach) {
  feed(Alloc(kA, kSize, kProducer));
  feed(Alloc(kA + kSize, kSize, kProducer));  // adjacent
  feed(Use(kA + kSize - 8, 16, kConsumer).stack(2));
  feed(Free(kA, kProducer).stack(3));
  feed(Free(kA + kSize, kProducer).stack(4));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 2u);
  EXPECT_EQ(checker.findings()[0].free.stack, 3u);
  EXPECT_EQ(checker.findings()[1].free.stack, 4u);
  EXPECT_EQ(checker.findings()[1].alloc.addr, kA + kSize);
}

TEST_F(ChecksTest, OnlyTheLastUsePerStreamIsKept) {
  feed(Alloc(kA, kSize, kProducer));
  feed(Use(kA, 0, kConsumer).stack(2));
  feed(Record(1, kConsumer));
  feed(Use(kA, 0, kConsumer).stack(5));  // after the event
  feed(Wait(kProducer, 1));
  feed(Free(kA, kProducer).stack(3));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].use.stack, 5u);
}

TEST_F(ChecksTest, UseAfterFree) {
  feed(Alloc(kA, kSize, kProducer).stack(1));
  feed(Use(kA, 0, kProducer).stack(2));
  feed(Free(kA, kProducer).stack(3));  // ordered: same stream
  feed(Use(kA + 64, 0, kConsumer).stack(4).name(5));
  feed(Use(kA + 64, 0, kConsumer).stack(4).name(5));
  // The same line's library call, with its direction: the same finding.
  feed(Use(kA + 64, 0, kConsumer).stack(4).name(6).access(Access::kRead));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUseAfterFree);
  EXPECT_EQ(f.free.stack, 3u);
  EXPECT_EQ(f.alloc.stack, 1u);
  EXPECT_EQ(f.use.stack, 4u);
  EXPECT_EQ(f.use.name, 6u);
  EXPECT_EQ(f.use.access, Access::kRead);
  EXPECT_EQ(f.count, 3u);
}

TEST_F(ChecksTest, UseOfAParkedBlockIsUseAfterFree) {
  feed(Alloc(kA, kSize, kProducer));
  feed(Free(kA, kProducer, FreeKind::kCachingAllocator, true).stack(3));
  feed(Use(kA, 16, kConsumer).stack(4).name(5));
  feed(Use(kA, 16, kConsumer).stack(4).name(6));  // the same line's next kernel
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kUseAfterFree);
  EXPECT_TRUE(checker.findings()[0].free.deferred);
}

TEST_F(ChecksTest, FreeCompletedAtOnceIsReportedAsImmediate) {
  // A caching-allocator free whose completion is the very next event never
  // waited for record_stream: its report must not say it was deferred.
  feed(Alloc(kA, kSize, kProducer));
  feed(Use(kA, 16, kConsumer).stack(4));
  feed(Free(kA, kProducer, FreeKind::kCachingAllocator, true).stack(3));
  feed(FreeCompleted(kA));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kUnorderedFree);
  EXPECT_FALSE(checker.findings()[0].free.deferred);
  EXPECT_EQ(checker.parked_blocks().max_parked, 0u);
}

TEST_F(ChecksTest, ReallocatingAParkedBlockUnparksIt) {
  // The completion was missed: handing the range out again proves the block
  // was reusable.
  feed(Alloc(kA, kSize, kProducer));
  feed(Free(kA, kProducer, FreeKind::kCachingAllocator, true).stack(3));
  feed(Alloc(kA, kSize, kProducer));
  feed(Use(kA, 16, kConsumer).stack(4));  // the new allocation, not a UAF
  feed(Free(kA, kProducer, FreeKind::kCachingAllocator, true).stack(3));
  feed(DeviceSync());
  feed(FreeCompleted(kA));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  EXPECT_EQ(checker.parked_blocks().deferred_frees, 2u);
  EXPECT_EQ(checker.parked_blocks().max_parked, 1u);
  EXPECT_EQ(checker.parked_blocks().top_site_count, 2u);
}

TEST_F(ChecksTest, ReallocationForgetsTheFreedRange) {
  feed(Alloc(kA, kSize, kProducer));
  feed(Free(kA, kProducer).stack(3));
  feed(Alloc(kA + 0x100, 0x100, kProducer));  // overlaps the freed range
  feed(Use(kA, 16, kConsumer).stack(4));      // the rest of it: forgotten
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(ChecksTest, UseAfterFreeCanBeDisabled) {
  CheckerConfig config;
  config.check_use_after_free = false;
  Checker quiet(config);
  quiet.on_event(Alloc(kA, kSize, kProducer));
  quiet.on_event(Free(kA, kProducer));
  quiet.on_event(Use(kA, 0, kConsumer));
  quiet.finish();
  EXPECT_TRUE(quiet.findings().empty());
}

TEST_F(ChecksTest, QuarantineIsABoundedFifo) {
  CheckerConfig config;
  config.quarantine_entries = 2;
  Checker bounded(config);
  for (int i = 0; i < 3; ++i) {
    bounded.on_event(Alloc(kA + i * kSize, kSize, kProducer));
    bounded.on_event(Free(kA + i * kSize, kProducer).stack(10 + i));
  }
  for (int i = 0; i < 3; ++i)
    bounded.on_event(Use(kA + i * kSize, 0, kConsumer).stack(20 + i));
  bounded.finish();
  // The oldest free was pushed out: its range is unknown now.
  ASSERT_EQ(bounded.findings().size(), 2u);
  EXPECT_EQ(bounded.findings()[0].free.stack, 11u);
  EXPECT_EQ(bounded.findings()[1].free.stack, 12u);
}

TEST_F(ChecksTest, UseBeforeReady) {
  feed(Alloc(kA, kSize, kProducer, AllocKind::kStreamOrdered).stack(1));
  feed(Use(kA, 0, kProducer).stack(2));  // same stream: ready
  feed(Use(kA, 0, kConsumer).stack(3).name(7));
  feed(Record(1, kProducer));
  feed(Wait(kConsumer, 1));
  feed(Use(kA, 0, kConsumer).stack(4));  // after the wait: ready
  // Caching allocations are ready on the host at once.
  feed(Alloc(kB, kSize, kProducer, AllocKind::kCachingAllocator));
  feed(Use(kB, 0, kConsumer).stack(5));
  checker.finish();
  ASSERT_EQ(count(FindingKind::kUseBeforeReady), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUseBeforeReady);
  EXPECT_EQ(f.alloc.stack, 1u);
  EXPECT_EQ(f.use.stack, 3u);
  EXPECT_EQ(f.use.name, 7u);
}

TEST_F(ChecksTest, UseBeforeReadyCanBeDisabled) {
  CheckerConfig config;
  config.check_use_before_ready = false;
  Checker quiet(config);
  quiet.on_event(Alloc(kA, kSize, kProducer, AllocKind::kStreamOrdered));
  quiet.on_event(Use(kA, 0, kConsumer));
  quiet.finish();
  EXPECT_TRUE(quiet.findings().empty());
}

TEST_F(ChecksTest, DeduplicationKeepsFirstOccurrenceOrder) {
  for (int round = 0; round < 3; ++round) {
    for (StackId use_stack : {7u, 6u}) {
      feed(Alloc(kA, kSize, kProducer));
      feed(Use(kA, 0, kConsumer).stack(use_stack));
      feed(Free(kA, kProducer).stack(3));
    }
    // Uses without a stack: their kernels' names tell them apart.
    for (NameId kernel : {1u, 2u}) {
      feed(Alloc(kA, kSize, kProducer));
      feed(Use(kA, 0, kConsumer).name(kernel));
      feed(Free(kA, kProducer).stack(3));
    }
  }
  checker.finish();
  const auto& findings = checker.findings();
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[0].use.stack, 7u);
  EXPECT_EQ(findings[1].use.stack, 6u);
  EXPECT_EQ(findings[2].use.name, 1u);
  EXPECT_EQ(findings[3].use.name, 2u);
  for (const Finding& f : findings) EXPECT_EQ(f.count, 3u);
}

// A library call fed at the line its kernel was launched from: the kernel's
// use (no direction) and the call's operator use (a read) are one race,
// named by the use that says what it did.
TEST_F(ChecksTest, OneLinesKernelAndLibraryCallAreOneFinding) {
  constexpr NameId kKernel = 7, kCall = 8, kOtherKernel = 9;
  feed(Alloc(kA, kSize, kProducer, AllocKind::kStreamOrdered).stack(1));
  feed(Use(kA, 0, kConsumer).stack(3).name(kKernel));
  feed(Use(kA, 64, kConsumer).stack(3).name(kCall).what(UseWhat::kOperator).access(Access::kRead));
  feed(Use(kA, 0, kConsumer).stack(3).name(kOtherKernel));  // says no more
  feed(Use(kA, 0, kConsumer).stack(4).name(kKernel));       // another line
  checker.finish();
  ASSERT_EQ(count(FindingKind::kUseBeforeReady), 2u);
  const Finding& line = checker.findings()[0];
  EXPECT_EQ(line.count, 3u);
  EXPECT_EQ(line.use.name, kCall);
  EXPECT_EQ(line.use.access, Access::kRead);
  EXPECT_EQ(line.use.size, 64u);
  EXPECT_EQ(checker.findings()[1].use.stack, 4u);
}

TEST_F(ChecksTest, OneLinesUsesOnTwoStreamsKeepTheFirst) {
  constexpr StreamId kThird = 0x300;
  feed(Alloc(kA, kSize, kProducer, AllocKind::kStreamOrdered).stack(1));
  feed(Use(kA, 0, kConsumer).stack(3).name(7));
  feed(Use(kA, 0, kThird).stack(3).name(8).access(Access::kRead));
  checker.finish();
  ASSERT_EQ(count(FindingKind::kUseBeforeReady), 1u);
  EXPECT_EQ(checker.findings()[0].use.stream, kConsumer);
  EXPECT_EQ(checker.findings()[0].use.name, 7u);
}

// The unordered free's side: the call's use after its kernel's, both before
// the free, are one (free, use) pair named by the read.
TEST_F(ChecksTest, UnorderedFreeOfALibraryCallsOperandIsOneFinding) {
  feed(Alloc(kA, kSize, kProducer).stack(1));
  feed(Use(kA, 0, kConsumer).stack(3).name(7));
  feed(Free(kA, kProducer).stack(5));
  feed(Alloc(kA, kSize, kProducer).stack(1));
  feed(Use(kA, 0, kConsumer).stack(3).name(7));
  feed(Use(kA, 64, kConsumer).stack(3).name(8).what(UseWhat::kOperator).access(Access::kRead));
  feed(Free(kA, kProducer).stack(5));
  checker.finish();
  ASSERT_EQ(count(FindingKind::kUnorderedFree), 1u);
  EXPECT_EQ(checker.findings()[0].use.name, 8u);
  EXPECT_EQ(checker.findings()[0].use.access, Access::kRead);
}

TEST_F(ChecksTest, StaleOverlappingAllocationIsReplaced) {
  feed(Alloc(kA, kSize, kProducer));
  feed(Use(kA, 0, kConsumer).stack(2));
  // The free of kA was never seen; the range is handed out again.
  feed(Alloc(kA + 0x10, 0x20, kProducer));
  EXPECT_EQ(checker.stats().live_allocations, 1u);
  AllocInfo info;
  ASSERT_TRUE(checker.lookup_allocation(kA + 0x10, &info));
  EXPECT_EQ(info.addr, kA + 0x10);
  EXPECT_FALSE(checker.lookup_allocation(kA, &info));
  feed(Free(kA + 0x10, kProducer));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());  // the stale uses went with it
}

}  // namespace
}  // namespace xsc
