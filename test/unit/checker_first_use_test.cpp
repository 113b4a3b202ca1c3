// A new caching block's first use, by a kernel of unknown direction on its
// allocation stream, stands for the write that fills it: a use on another
// stream that surely touches those bytes must be ordered after it
// (checker/checks/check_use_before_ready.cpp).
#include <gtest/gtest.h>

#include <memory>

#include "checker_fixture.h"

namespace xsc::test {
namespace {

constexpr Addr kBlock = 0x7f0000000000;
constexpr std::uint64_t kSize = 1 << 20;
constexpr StreamId kSide = 0xa00;     // the block's allocation stream
constexpr StreamId kDefault = 0xb00;  // the consumer
constexpr StreamId kThird = 0xc00;
constexpr EventId kFilled = 0xe1;

class FirstUseTest : public ::testing::Test {
 protected:
  void start(AllocKind kind = AllocKind::kCachingAllocator, CheckerConfig config = {}) {
    checker = std::make_unique<Checker>(config);
    feed(CreateStream(kSide, StreamFlags::kNonBlocking));
    feed(CreateStream(kDefault, StreamFlags::kNonBlocking));
    feed(CreateStream(kThird, StreamFlags::kNonBlocking));
    feed(Alloc(kBlock, kSize, kSide, kind).stack(1));
  }
  void feed(const Event& e) { checker->on_event(e); }
  static E Kernel(StreamId s, Access access, StackId stack) {
    return Use(kBlock, 0, s).what(UseWhat::kKernel).access(access).stack(stack);
  }
  // What surely touches its bytes: a GEMM's operand, a copy's source.
  static E Read(UseWhat what, StreamId s, StackId stack) {
    return Use(kBlock, kSize, s).what(what).access(Access::kRead).stack(stack);
  }
  const std::vector<Finding>& findings() {
    checker->finish();
    return checker->findings();
  }
  std::unique_ptr<Checker> checker;
};

TEST_F(FirstUseTest, AReadOfTheBlockBeforeItsFillIsReported) {
  start();
  feed(Kernel(kSide, Access::kUnknown, 2));  // y = x * 2 under the side stream
  feed(Read(UseWhat::kOperator, kDefault, 3));  // y @ w with no wait
  const std::vector<Finding>& f = findings();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, FindingKind::kUseBeforeReady);
  EXPECT_TRUE(f[0].has_earlier);
  EXPECT_TRUE(f[0].earlier_first_use);
  EXPECT_EQ(f[0].earlier.stream, kSide);
  EXPECT_EQ(f[0].earlier.stack, 2u);
  EXPECT_EQ(f[0].use.stack, 3u);
}

TEST_F(FirstUseTest, CopiesAndConstParametersSurelyReadToo) {
  start();
  feed(Kernel(kSide, Access::kUnknown, 2));
  feed(Read(UseWhat::kMemcpy, kDefault, 3));
  feed(Kernel(kThird, Access::kRead, 4));
  EXPECT_EQ(findings().size(), 2u);
}

TEST_F(FirstUseTest, AReadAfterAWaitIsClean) {
  start();
  feed(Kernel(kSide, Access::kUnknown, 2));
  feed(Record(kFilled, kSide));
  feed(Wait(kDefault, kFilled));
  feed(Read(UseWhat::kOperator, kDefault, 3));
  EXPECT_EQ(findings().size(), 0u);
}

TEST_F(FirstUseTest, KernelArgumentsOfUnknownDirectionAreNotJudged) {
  // Such a word may be a stale entry of a table the kernel never reads.
  start();
  feed(Kernel(kSide, Access::kUnknown, 2));
  feed(Kernel(kDefault, Access::kUnknown, 3));
  EXPECT_EQ(findings().size(), 0u);
}

TEST_F(FirstUseTest, OnlyTheFirstUseOnTheAllocationStreamFills) {
  // Filled on another stream first: the allocation stream's later kernel
  // is no fill, and a read ordered after neither is not reported.
  start();
  feed(Kernel(kThird, Access::kUnknown, 2));
  feed(Kernel(kSide, Access::kUnknown, 3));
  feed(Read(UseWhat::kOperator, kDefault, 4));
  EXPECT_EQ(findings().size(), 0u);
}

TEST_F(FirstUseTest, AFirstUseThatOnlyReadsFillsNothing) {
  start();
  feed(Kernel(kSide, Access::kRead, 2));
  feed(Read(UseWhat::kOperator, kDefault, 3));
  EXPECT_EQ(findings().size(), 0u);
}

TEST_F(FirstUseTest, OnlyCachingBlocks) {
  // A cudaMalloc'd buffer lives long and is shared: its first kernel says
  // nothing of who fills it.
  start(AllocKind::kSynchronous);
  feed(Kernel(kSide, Access::kUnknown, 2));
  feed(Read(UseWhat::kOperator, kDefault, 3));
  EXPECT_EQ(findings().size(), 0u);
}

TEST_F(FirstUseTest, TheOptionTurnsItOff) {
  CheckerConfig config;
  config.first_use_writes = false;
  start(AllocKind::kCachingAllocator, config);
  feed(Kernel(kSide, Access::kUnknown, 2));
  feed(Read(UseWhat::kOperator, kDefault, 3));
  EXPECT_EQ(findings().size(), 0u);
}

TEST_F(FirstUseTest, OnlyTheBytesAtThePointer) {
  // A read of other bytes of the block: the fill is taken to write those
  // at its pointer only (a chunk of a buffer other streams fill apart).
  start();
  feed(Kernel(kSide, Access::kUnknown, 2));
  feed(Use(kBlock + 4096, 4096, kDefault).what(UseWhat::kMemcpy).access(Access::kRead).stack(3));
  EXPECT_EQ(findings().size(), 0u);
}

}  // namespace
}  // namespace xsc::test
