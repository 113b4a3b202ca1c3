// What the direction of a use changes in the checks on live memory
// (use before ready, write after read): only known writes conflict. Two
// unordered uses that are reads, or not known to write, are never a finding.
#include <gtest/gtest.h>

#include "checker_fixture.h"

namespace xsc::test {
namespace {

constexpr Addr kWeights = 0x7f0000000000;
constexpr std::uint64_t kSize = 1 << 20;
constexpr StreamId kA = 0xa00;
constexpr StreamId kB = 0xb00;
constexpr EventId kDone = 0xe1;

class AccessTest : public DefaultRuleTest {
 protected:
  void SetUp() override {
    feed(CreateStream(kA, StreamFlags::kNonBlocking));
    feed(CreateStream(kB, StreamFlags::kNonBlocking));
    feed(Alloc(kWeights, kSize, kLegacyStream, AllocKind::kSynchronous).stack(1));
    feed(DeviceSync());  // the allocation is ready everywhere
  }
  // A kernel's argument at the start of the weights (size 0: the bytes at
  // the pointer), with the direction its signature gives.
  static E Kernel(StreamId s, Access access, StackId stack) {
    return Use(kWeights, 0, s).what(UseWhat::kKernel).access(access).stack(stack);
  }
  static E Write(UseWhat what, StreamId s, StackId stack) {
    return Use(kWeights, kSize, s).what(what).access(Access::kWrite).stack(stack);
  }
  std::size_t findings() {
    checker.finish();
    return checker.findings().size();
  }
};

TEST_F(AccessTest, TwoReadsOnTwoStreamsAreNoFinding) {
  feed(Kernel(kA, Access::kRead, 2));
  feed(Kernel(kB, Access::kRead, 3));
  feed(Kernel(kA, Access::kRead, 2));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(AccessTest, KernelsOfUnknownDirectionAreNoFinding) {
  // A kernel writing through a plain pointer is not a known write: a read
  // on another stream, before or after it, is not reported.
  feed(Kernel(kA, Access::kUnknown, 2));
  feed(Kernel(kB, Access::kRead, 3));
  feed(Kernel(kA, Access::kUnknown, 2));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(AccessTest, AKernelIsNeverAKnownWrite) {
  // Even a kernel use labelled a write (a producer's guess) does not count.
  feed(Write(UseWhat::kKernel, kA, 2));
  feed(Kernel(kB, Access::kRead, 3));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(AccessTest, ReadThenUnorderedKnownWriteIsAWriteAfterRead) {
  feed(Kernel(kA, Access::kRead, 2));
  feed(Write(UseWhat::kMemcpy, kB, 3));
  ASSERT_EQ(findings(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kWriteAfterRead);
  EXPECT_EQ(f.use.stack, 3u);
  EXPECT_EQ(f.use.access, Access::kWrite);
  ASSERT_TRUE(f.has_earlier);
  EXPECT_EQ(f.earlier.stack, 2u);
  EXPECT_EQ(f.earlier.access, Access::kRead);
}

TEST_F(AccessTest, ReadThenOrderedKnownWriteIsNoFinding) {
  feed(Kernel(kA, Access::kRead, 2));
  feed(Record(kDone, kA));
  feed(Wait(kB, kDone));
  feed(Write(UseWhat::kMemcpy, kB, 3));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(AccessTest, OperatorWriteIsAKnownWrite) {
  // x.add_(1) on stream A, then the default stream reads x with no wait.
  feed(Write(UseWhat::kOperator, kA, 2));
  feed(Kernel(kLegacyStream, Access::kRead, 3));
  ASSERT_EQ(findings(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUseBeforeReady);
  EXPECT_EQ(f.use.stack, 3u);
  EXPECT_EQ(f.earlier.stack, 2u);
  EXPECT_EQ(f.earlier.what, UseWhat::kOperator);
}

TEST_F(AccessTest, OperatorWriteAfterAnUnorderedRead) {
  // The default stream reads x, then x.add_(1) runs on stream A, no wait.
  feed(Kernel(kLegacyStream, Access::kRead, 3));
  feed(Write(UseWhat::kOperator, kA, 2));
  ASSERT_EQ(findings(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kWriteAfterRead);
}

TEST_F(AccessTest, OperatorWriteOrderedByWaitIsNoFinding) {
  feed(Write(UseWhat::kOperator, kA, 2));
  feed(Record(kDone, kA));
  feed(Wait(kLegacyStream, kDone));
  feed(Kernel(kLegacyStream, Access::kRead, 3));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(AccessTest, MemsetIsAKnownWrite) {
  // A memset on stream A, read on stream B with no wait.
  feed(Write(UseWhat::kMemset, kA, 2));
  feed(Kernel(kB, Access::kRead, 3));
  ASSERT_EQ(findings(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kUseBeforeReady);
  EXPECT_EQ(checker.findings()[0].earlier.what, UseWhat::kMemset);
}

TEST_F(AccessTest, CollectiveReceiveIsAKnownWrite) {
  // The default stream reads the buffer, then a collective receives into
  // it on stream A with no wait: the write lands under the pending read.
  feed(Kernel(kLegacyStream, Access::kRead, 5));
  feed(Write(UseWhat::kCollective, kA, 4));
  ASSERT_EQ(findings(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kWriteAfterRead);
  EXPECT_EQ(checker.findings()[0].use.what, UseWhat::kCollective);
}

TEST_F(AccessTest, WritesOfUnknownExtentAreNotKnownWrites) {
  // Size 0 (a 2D copy or memset, a collective of an element type the
  // runtime could not size) stands for the whole allocation: more than
  // they may write.
  feed(Use(kWeights, 0, kA).what(UseWhat::kMemcpy).access(Access::kWrite).stack(6));
  feed(Kernel(kB, Access::kRead, 7));
  feed(Use(kWeights, 0, kA).what(UseWhat::kMemset).access(Access::kWrite).stack(2));
  feed(Kernel(kB, Access::kRead, 3));
  feed(Use(kWeights, 0, kA).what(UseWhat::kCollective).access(Access::kWrite).stack(4));
  feed(Kernel(kLegacyStream, Access::kRead, 5));
  EXPECT_EQ(findings(), 0u);
}

TEST_F(AccessTest, AGemmOnAWriteNotYetOrderedIsOneFinding) {
  // A copy refreshes the weights on stream A; the default stream's GEMM
  // reads them with no wait. Its kernel's use (no direction) and its cuBLAS
  // call's read are fed at the same line: one report, named by the read.
  constexpr NameId kGemmKernel = 11, kMatmul = 12;
  feed(Write(UseWhat::kMemcpy, kA, 2));
  feed(Kernel(kLegacyStream, Access::kUnknown, 3).name(kGemmKernel));
  feed(Use(kWeights, kSize, kLegacyStream).what(UseWhat::kOperator).access(Access::kRead)
           .stack(3).name(kMatmul));
  ASSERT_EQ(findings(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUseBeforeReady);
  EXPECT_EQ(f.use.name, kMatmul);
  EXPECT_EQ(f.use.access, Access::kRead);
  EXPECT_EQ(f.count, 2u);
}

TEST_F(AccessTest, KernelsWithoutStacksStayApart) {
  // Uses fed without a stack are told apart by their kernels' names.
  feed(Write(UseWhat::kMemcpy, kA, 2));
  feed(Kernel(kLegacyStream, Access::kRead, kNoStack).name(11));
  feed(Kernel(kLegacyStream, Access::kRead, kNoStack).name(12));
  EXPECT_EQ(findings(), 2u);
}

}  // namespace
}  // namespace xsc::test
