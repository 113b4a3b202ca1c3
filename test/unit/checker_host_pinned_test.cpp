// The host as an agent on pinned host memory: a host access is its
// thread's own action, ordered after a copy only by what that thread did
// (a synchronization, a successful query) or learned (a thread start).
#include <gtest/gtest.h>

#include "checker_fixture.h"

namespace xsc::test {
namespace {

constexpr Addr kPinned = 0x7f5000000000;
constexpr Addr kDevice = 0x7f0000000000;
constexpr std::uint64_t kSize = 4096;
constexpr StreamId kCopy = 0xc0;

class HostPinnedTest : public DefaultRuleTest {
 protected:
  void SetUp() override {
    feed(CreateStream(kCopy, StreamFlags::kNonBlocking));
    feed(Alloc(kPinned, kSize, kLegacyStream, AllocKind::kPinnedHost).stack(1));
    feed(Alloc(kDevice, kSize, kLegacyStream, AllocKind::kSynchronous).stack(1));
    feed(DeviceSync());
  }
  // gpu.to("cpu", non_blocking=True) of `bytes` bytes at `offset`.
  void download(std::uint64_t offset, std::uint64_t bytes) {
    feed(Use(kDevice, bytes, kCopy).what(UseWhat::kMemcpy).access(Access::kRead).stack(2));
    feed(Use(kPinned + offset, bytes, kCopy).what(UseWhat::kMemcpy).access(Access::kWrite).stack(2));
  }
  static E HostRead(std::uint64_t offset, std::uint64_t bytes, ThreadId t = 0) {
    return Use(kPinned + offset, bytes, kLegacyStream)
        .what(UseWhat::kHostAccess).access(Access::kRead).stack(3).thread(t);
  }
  std::size_t findings() {
    checker.finish();
    return checker.findings().size();
  }
};

TEST_F(HostPinnedTest, ReadBeforeTheDownloadLandsIsAUseBeforeReady) {
  download(0, kSize);
  feed(HostRead(0, kSize));
  ASSERT_EQ(findings(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUseBeforeReady);
  EXPECT_EQ(f.use.what, UseWhat::kHostAccess);
  EXPECT_EQ(f.use.stack, 3u);
  ASSERT_TRUE(f.has_earlier);
  EXPECT_EQ(f.earlier.stream, kCopy);
  EXPECT_EQ(f.alloc.kind, AllocKind::kPinnedHost);
}

TEST_F(HostPinnedTest, AnotherThreadsSynchronizationDoesNotOrderThisThread) {
  download(0, kSize);
  feed(StreamSync(kCopy).thread(1));
  feed(HostRead(0, kSize, /*t=*/0));
  EXPECT_EQ(findings(), 1u);
}

TEST_F(HostPinnedTest, AThreadStartedAfterTheSynchronizationIsOrdered) {
  download(0, kSize);
  feed(StreamSync(kCopy));
  E create(EventKind::kThreadCreate);
  create.raw().event = 9;
  feed(create);
  E start(EventKind::kThreadStart);
  start.raw().event = 9;
  start.raw().thread = 2;
  feed(start);
  feed(HostRead(0, kSize, /*t=*/2));
  EXPECT_EQ(findings(), 0u);
}

// A queue between threads (a semaphore posted after the synchronization,
// waited for before the read) orders the reader; a post before the
// synchronization, or another object's, does not.
TEST_F(HostPinnedTest, ASynchronizationHandedOverThroughASemaphoreOrdersTheReader) {
  download(0, kSize);
  feed(StreamSync(kCopy).thread(1));
  feed(SyncRelease(0x5e4).thread(1));
  feed(SyncAcquire(0x5e4).thread(0));
  feed(HostRead(0, kSize, /*t=*/0));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(HostPinnedTest, AReleaseBeforeTheSynchronizationOrAnotherObjectDoesNotOrder) {
  // 0x5e4 released before the synchronization, 0x5f0 never.
  for (EventId acquired : {EventId{0x5e4}, EventId{0x5f0}}) {
    Checker c(strict_config());
    c.on_event(CreateStream(kCopy, StreamFlags::kNonBlocking));
    c.on_event(Alloc(kPinned, kSize, kLegacyStream, AllocKind::kPinnedHost).stack(1));
    c.on_event(Use(kPinned, kSize, kCopy).what(UseWhat::kMemcpy).access(Access::kWrite).stack(2));
    c.on_event(SyncRelease(0x5e4).thread(1));
    c.on_event(StreamSync(kCopy).thread(1));
    c.on_event(SyncRelease(0x5e8).thread(1));
    c.on_event(SyncAcquire(acquired).thread(0));
    c.on_event(HostRead(0, kSize, /*t=*/0));
    c.finish();
    EXPECT_EQ(c.findings().size(), 1u) << acquired;
  }
}

TEST_F(HostPinnedTest, BytesTheCopyDoesNotWriteAreNoFinding) {
  download(0, kSize / 2);
  feed(HostRead(kSize / 2, kSize / 2));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(HostPinnedTest, ReallocatedPinnedMemoryDoesNotCarryTheOldCopy) {
  // An upload reads the buffer; it is freed (kind pinned) and handed out
  // again: the new occupant's host write is not a write after read.
  feed(Use(kPinned, kSize, kCopy).what(UseWhat::kMemcpy).access(Access::kRead).stack(2));
  feed(Free(kPinned, kLegacyStream, FreeKind::kPinnedHost).stack(4));
  feed(Alloc(kPinned, kSize, kLegacyStream, AllocKind::kPinnedHost).stack(5));
  feed(Use(kPinned, kSize, kLegacyStream).what(UseWhat::kHostAccess).access(Access::kWrite).stack(6));
  EXPECT_EQ(findings(), 0u);
  EXPECT_TRUE(checker.latent().empty());
}

TEST_F(HostPinnedTest, AnUploadAfterAnotherThreadsHostWriteIsNoFinding) {
  // The DataLoader's pinning thread fills the block, the main thread
  // uploads it: the queue between them orders the two, unseen here.
  feed(Use(kPinned, kSize, kLegacyStream).what(UseWhat::kHostAccess).access(Access::kWrite).stack(3)
           .thread(1));
  feed(Use(kPinned, kSize, kCopy).what(UseWhat::kMemcpy).access(Access::kRead).stack(2));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(HostPinnedTest, AnotherThreadsHostWriteAfterAnUploadIsNoFinding) {
  // The main thread uploads a pinned batch; the pinning thread later fills
  // that block again, handed to it by the pinned allocator after its event.
  feed(Use(kPinned, kSize, kCopy).what(UseWhat::kMemcpy).access(Access::kRead).stack(2));
  feed(Use(kPinned, kSize, kLegacyStream).what(UseWhat::kHostAccess).access(Access::kWrite).stack(3)
           .thread(1));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(HostPinnedTest, HostWriteWhileTheUploadMayReadIsAWriteAfterRead) {
  feed(Use(kPinned, kSize, kCopy).what(UseWhat::kMemcpy).access(Access::kRead).stack(2));
  feed(Use(kPinned, kSize, kLegacyStream).what(UseWhat::kHostAccess).access(Access::kWrite).stack(6));
  ASSERT_EQ(findings(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kWriteAfterRead);
  EXPECT_EQ(checker.findings()[0].use.stack, 6u);
}

// The points the runtime's host guard waits for (Checker::stream_point,
// thread_ordered_after): a copy's point on its stream, and which host
// thread is ordered after it by which synchronization.
TEST_F(HostPinnedTest, StreamPointIsOrderedBySynchronizationsOfTheThread) {
  download(0, kSize);
  const Checker::StreamPoint copy = checker.stream_point(kCopy);
  EXPECT_NE(copy.epoch, 0u);
  EXPECT_FALSE(checker.thread_ordered_after(0, copy));
  EXPECT_FALSE(checker.thread_ordered_after(1, copy));
  // Work enqueued after the copy does not order the host.
  feed(Use(kDevice, kSize, kCopy).what(UseWhat::kKernel).access(Access::kRead).stack(4));
  EXPECT_FALSE(checker.thread_ordered_after(0, copy));
  // Another thread's synchronization orders that thread only.
  feed(StreamSync(kCopy).thread(1));
  EXPECT_TRUE(checker.thread_ordered_after(1, copy));
  EXPECT_FALSE(checker.thread_ordered_after(0, copy));
  feed(StreamSync(kCopy));
  EXPECT_TRUE(checker.thread_ordered_after(0, copy));
}

TEST_F(HostPinnedTest, StreamPointOfAnEventRecordedBeforeOrAfterTheCopy) {
  feed(Record(5, kCopy));  // before the copy
  download(0, kSize);
  const Checker::StreamPoint copy = checker.stream_point(kCopy);
  feed(EventSync(5));
  EXPECT_FALSE(checker.thread_ordered_after(0, copy));
  feed(Record(6, kCopy));  // after it
  feed(EventSync(6));
  EXPECT_TRUE(checker.thread_ordered_after(0, copy));
  // A stream with no work yet: nothing to wait for.
  EXPECT_TRUE(checker.thread_ordered_after(0, checker.stream_point(0xd0)));
}

TEST_F(HostPinnedTest, StreamPointIsOrderedByADeviceSync) {
  download(0, kSize);
  const Checker::StreamPoint copy = checker.stream_point(kCopy);
  feed(DeviceSync().thread(3));
  EXPECT_TRUE(checker.thread_ordered_after(3, copy));
  EXPECT_FALSE(checker.thread_ordered_after(0, copy));
}

// Checker::pinned_device_uses_pending: what the PyTorch adapter's host
// operator hook follows (runtime/host/pinned_uses.cpp).
TEST_F(HostPinnedTest, PinnedUsesArePendingUntilAThreadSynchronizesWithThem) {
  EXPECT_FALSE(checker.pinned_device_uses_pending());
  // Host accesses and device uses of device memory are not device uses of
  // pinned memory.
  feed(HostRead(0, kSize));
  feed(Use(kDevice, kSize, kCopy).what(UseWhat::kKernel));
  EXPECT_FALSE(checker.pinned_device_uses_pending());
  download(0, kSize);
  EXPECT_TRUE(checker.pinned_device_uses_pending());
  // Another stream's synchronization says nothing of the copy stream.
  feed(StreamSync(kLegacyStream));
  EXPECT_TRUE(checker.pinned_device_uses_pending());
  feed(StreamSync(kCopy).thread(1));
  EXPECT_FALSE(checker.pinned_device_uses_pending());
}

TEST_F(HostPinnedTest, PinnedUsesSettleThroughEventsAndWaits) {
  constexpr StreamId kCompute = 0xc1;
  feed(CreateStream(kCompute, StreamFlags::kNonBlocking));
  download(0, 64);
  feed(Record(1, kCopy));
  download(64, 64);  // after the record: the event does not cover it
  feed(Wait(kCompute, 1));
  feed(StreamSync(kCompute));
  EXPECT_TRUE(checker.pinned_device_uses_pending());
  feed(Record(2, kCopy));
  feed(Wait(kCompute, 2));
  // A synchronization of the stream that waited orders the thread after
  // both copies.
  feed(StreamSync(kCompute));
  EXPECT_FALSE(checker.pinned_device_uses_pending());
  download(0, 64);
  feed(Record(3, kCopy));
  feed(EventSync(3));
  EXPECT_FALSE(checker.pinned_device_uses_pending());
  download(0, 64);
  feed(DeviceSync());
  EXPECT_FALSE(checker.pinned_device_uses_pending());
}

// Uploads read pinned memory: pending, but no device write of it is, and
// a host read races with none of them. A download (a write) or a kernel
// argument of unknown access is a write pending until it is settled.
TEST_F(HostPinnedTest, PendingPinnedWritesAreToldFromReads) {
  feed(Use(kPinned, 64, kCopy).what(UseWhat::kMemcpy).access(Access::kRead).stack(2));
  EXPECT_TRUE(checker.pinned_device_uses_pending());
  EXPECT_FALSE(checker.pinned_device_writes_pending());
  download(64, 64);
  EXPECT_TRUE(checker.pinned_device_writes_pending());
  feed(StreamSync(kCopy));
  EXPECT_FALSE(checker.pinned_device_uses_pending());
  EXPECT_FALSE(checker.pinned_device_writes_pending());
  feed(Use(kPinned, 64, kCopy).what(UseWhat::kKernel).access(Access::kUnknown).stack(2));
  EXPECT_TRUE(checker.pinned_device_writes_pending());
  feed(DeviceSync());
  EXPECT_FALSE(checker.pinned_device_writes_pending());
  // A host access is the thread's own: never a pending device use.
  feed(HostRead(0, 64));
  EXPECT_FALSE(checker.pinned_device_uses_pending());
}

}  // namespace
}  // namespace xsc::test
