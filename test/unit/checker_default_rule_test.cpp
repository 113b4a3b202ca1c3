// The default rule: memory carries the uses of its earlier occupants until
// they are ordered, and an unordered free is a finding only when this run
// uses the memory again while the use may still run. Otherwise it is a
// latent free-before-wait (strict reports it). Also the orderings that make
// a free safe: synchronous frees, host functions, thread starts.
#include <gtest/gtest.h>

#include "checker_fixture.h"

namespace xsc {
namespace {

using namespace xsc::test;

constexpr StreamId kCompute = 0x100;    // allocation stream of the blocks
constexpr StreamId kReduce = 0x200;     // consumer stream
constexpr StreamId kThird = 0x300;
constexpr Addr kBlock = 0x7f0000000000;
constexpr std::uint64_t kSize = 1 << 20;

// FSDP2's shape: a gradient allocated on the reduce-scatter stream is read
// on the compute stream and freed (zero_grad) before the reduce-scatter
// stream waits for compute, which it does only in the next backward.
void fsdp2_free(DefaultRuleTest& t, Checker& c) {
  (void)t;
  c.on_event(Alloc(kBlock, kSize, kReduce).stack(1));
  c.on_event(Use(kBlock, 0, kReduce).stack(2));    // reduce-scatter writes it
  c.on_event(Record(10, kReduce));
  c.on_event(Wait(kCompute, 10));
  c.on_event(Use(kBlock, 0, kCompute).stack(3));   // the optimizer reads it
  c.on_event(Free(kBlock, kReduce).stack(4));      // zero_grad
}

TEST_F(DefaultRuleTest, FreeReusedOnlyAfterTheLateWaitIsLatent) {
  fsdp2_free(*this, checker);
  feed(Record(11, kCompute));
  feed(Wait(kReduce, 11).stack(5));                 // the late wait
  feed(Alloc(kBlock, kSize, kReduce).stack(6));     // reused after it
  feed(Use(kBlock, 0, kReduce).stack(7));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  ASSERT_EQ(checker.latent().size(), 1u);
  const Finding& l = checker.latent()[0];
  EXPECT_TRUE(l.latent);
  EXPECT_EQ(l.free.stack, 4u);
  EXPECT_EQ(l.use.stack, 3u);
  EXPECT_TRUE(l.has_late_wait);
  EXPECT_EQ(l.late_wait.stack, 5u);
  EXPECT_FALSE(l.has_reuse);
}

TEST_F(DefaultRuleTest, StrictReportsTheLatentFree) {
  Checker strict(strict_config());
  fsdp2_free(*this, strict);
  strict.on_event(Record(11, kCompute));
  strict.on_event(Wait(kReduce, 11).stack(5));
  strict.on_event(Alloc(kBlock, kSize, kReduce).stack(6));
  strict.on_event(Use(kBlock, 0, kReduce).stack(7));
  strict.finish();
  ASSERT_EQ(strict.findings().size(), 1u);
  EXPECT_EQ(strict.findings()[0].kind, FindingKind::kUnorderedFree);
  EXPECT_TRUE(strict.findings()[0].latent);
  EXPECT_TRUE(strict.findings()[0].has_late_wait);
  EXPECT_TRUE(strict.latent().empty());
}

TEST_F(DefaultRuleTest, ReuseBeforeTheLateWaitIsAFindingWithTheReallocation) {
  fsdp2_free(*this, checker);
  feed(Alloc(kBlock, kSize, kReduce).stack(6));
  feed(Use(kBlock, 0, kReduce).stack(7).name(9));   // before the wait
  feed(Record(11, kCompute));
  feed(Wait(kReduce, 11).stack(5));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kUnorderedFree);
  EXPECT_FALSE(f.latent);
  EXPECT_EQ(f.free.stack, 4u);
  EXPECT_EQ(f.use.stack, 3u);
  ASSERT_TRUE(f.has_reuse);
  ASSERT_TRUE(f.reuse.has_alloc);
  EXPECT_EQ(f.reuse.alloc.stack, 6u);
  EXPECT_EQ(f.reuse.use.stack, 7u);
  EXPECT_EQ(f.reuse.use.name, 9u);
  EXPECT_TRUE(f.has_late_wait);  // and the wait that came too late
  EXPECT_EQ(f.late_wait.stack, 5u);
  EXPECT_TRUE(checker.latent().empty());
}

// Judged at the use: allocated before the wait, first used after it.
TEST_F(DefaultRuleTest, AllocationBeforeTheWaitWithItsFirstUseAfterIsSafe) {
  fsdp2_free(*this, checker);
  feed(Alloc(kBlock, kSize, kReduce).stack(6));
  feed(Record(11, kCompute));
  feed(Wait(kReduce, 11).stack(5));
  feed(Use(kBlock, 0, kReduce).stack(7));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  EXPECT_EQ(checker.latent().size(), 1u);
}

// The racing line's kernel (no direction) and then its library call's write:
// one race. The first racing use takes the earlier occupant's use, so the
// report names it.
TEST_F(DefaultRuleTest, OneLinesRacingKernelAndCallAreOneReuseRace) {
  feed(Alloc(kBlock, kSize, kCompute).stack(1));
  feed(Use(kBlock, 0, kCompute).stack(2).name(3));
  feed(Free(kBlock, kCompute).stack(4));
  feed(Alloc(kBlock, kSize, kCompute).stack(5));
  feed(Use(kBlock, 0, kThird).stack(6).name(7));
  feed(Use(kBlock, kSize, kThird).stack(6).name(8).access(Access::kWrite).what(UseWhat::kOperator));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kReuseRace);
  EXPECT_EQ(f.reuse.use.name, 7u);
  EXPECT_EQ(f.reuse.use.stack, 6u);
}

// Two known writes of one line (a copy and the operator around it) over a
// read another stream has pending: one write after read, named by the first.
TEST_F(DefaultRuleTest, OneLinesTwoWritesOverAPendingReadAreOneFinding) {
  feed(Alloc(kBlock, kSize, kCompute, AllocKind::kSynchronous).stack(1));
  feed(DeviceSync());
  feed(Use(kBlock, 0, kCompute).stack(2).name(3).access(Access::kRead));
  feed(Use(kBlock, kSize, kThird).stack(6).name(7).access(Access::kWrite).what(UseWhat::kMemcpy));
  feed(Use(kBlock, kSize, kThird).stack(6).name(8).access(Access::kWrite).what(UseWhat::kOperator));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kWriteAfterRead);
  EXPECT_EQ(f.use.name, 7u);
  EXPECT_EQ(f.count, 2u);
}

// A block freed on its own stream, allocated again there and first written
// on another stream that never waited: the write lands under the read.
TEST_F(DefaultRuleTest, SameStreamFreeThenWriteOnAnotherStreamIsAReuseRace) {
  feed(Alloc(kBlock, kSize, kCompute).stack(1));
  feed(Use(kBlock, 0, kCompute).stack(2).name(3));  // the last read of `act`
  feed(Free(kBlock, kCompute).stack(4));            // legal by itself
  feed(Alloc(kBlock, kSize, kCompute).stack(5));    // the staging buffer
  feed(Use(kBlock, kSize, kThird).stack(6).access(Access::kWrite).what(UseWhat::kMemcpy));
  feed(Use(kBlock, kSize, kThird).stack(6).access(Access::kWrite).what(UseWhat::kMemcpy));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kReuseRace);
  EXPECT_EQ(f.count, 1u);  // the same stream's next uses race for the same reason
  EXPECT_EQ(f.use.stack, 2u);   // the earlier use
  EXPECT_EQ(f.free.stack, 4u);
  EXPECT_EQ(f.alloc.stack, 1u);
  ASSERT_TRUE(f.has_reuse);
  EXPECT_EQ(f.reuse.alloc.stack, 5u);
  EXPECT_EQ(f.reuse.use.stack, 6u);
  EXPECT_EQ(f.reuse.use.stream, kThird);
  EXPECT_TRUE(checker.latent().empty());
}

TEST_F(DefaultRuleTest, WriterThatWaitedFirstIsNoReuseRace) {
  feed(Alloc(kBlock, kSize, kCompute));
  feed(Use(kBlock, 0, kCompute));
  feed(Free(kBlock, kCompute));
  feed(Alloc(kBlock, kSize, kCompute));
  feed(Record(1, kCompute));
  feed(Wait(kThird, 1));
  feed(Use(kBlock, kSize, kThird).access(Access::kWrite));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

// The writer waited for the earlier use, but before the free: still safe.
TEST_F(DefaultRuleTest, WaitAfterTheEarlierUseButBeforeTheFreeOrdersTheReuse) {
  feed(Alloc(kBlock, kSize, kCompute));
  feed(Use(kBlock, 0, kCompute));
  feed(Record(1, kCompute));
  feed(Wait(kThird, 1));
  feed(HostFunc(kCompute));  // more work on compute, not touching the block
  feed(Free(kBlock, kCompute));
  feed(Alloc(kBlock, kSize, kCompute));
  feed(Use(kBlock, kSize, kThird).access(Access::kWrite));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

TEST_F(DefaultRuleTest, ReuseRaceCanBeDisabled) {
  CheckerConfig config;
  config.check_reuse_race = false;
  Checker quiet(config);
  quiet.on_event(Alloc(kBlock, kSize, kCompute));
  quiet.on_event(Use(kBlock, 0, kCompute));
  quiet.on_event(Free(kBlock, kCompute));
  quiet.on_event(Alloc(kBlock, kSize, kCompute));
  quiet.on_event(Use(kBlock, kSize, kThird));
  quiet.finish();
  EXPECT_TRUE(quiet.findings().empty());
}

// cudaFreeAsync(p, P) after an unordered use on C; a pool hands the memory
// to an allocation on a third stream, whose use may overlap C's.
TEST_F(DefaultRuleTest, PoolReuseOnAThirdStreamIsAFinding) {
  feed(Alloc(kBlock, kSize, kCompute, AllocKind::kStreamOrdered).stack(1));
  feed(Record(1, kCompute));
  feed(Wait(kReduce, 1));
  feed(Use(kBlock, 0, kReduce).stack(2));
  feed(Free(kBlock, kCompute, FreeKind::kStreamOrdered).stack(3));
  feed(Record(2, kCompute));
  feed(Wait(kThird, 2));  // the pool's own dependency on the free
  feed(Alloc(kBlock, kSize, kThird, AllocKind::kStreamOrdered).stack(4));
  feed(Use(kBlock, 0, kThird).stack(5));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kUnorderedFree);
  EXPECT_EQ(checker.findings()[0].free.stack, 3u);
  EXPECT_EQ(checker.findings()[0].reuse.use.stack, 5u);
}

// Many host threads, each with its own streams, each free ordered after the
// cross-stream read: a pool handing the memory to another thread's stream
// orders that stream after the free (event dependency, opportunistic reuse
// or a dependency it inserts), so the new occupant's use is safe even with
// no event the checker sees.
TEST_F(DefaultRuleTest, PoolReuseAfterAnOrderedFreeIsSafeOnAnyStream) {
  feed(Alloc(kBlock, kSize, kCompute, AllocKind::kStreamOrdered).stack(1));
  feed(Record(1, kCompute));
  feed(Wait(kReduce, 1));
  feed(Use(kBlock, 0, kReduce).stack(2));
  feed(Record(2, kReduce));
  feed(Wait(kCompute, 2));  // the owner waits for the read, then frees
  feed(Free(kBlock, kCompute, FreeKind::kStreamOrdered).stack(3));
  feed(Alloc(kBlock, kSize, kThird, AllocKind::kStreamOrdered).stack(4));
  feed(Use(kBlock, 0, kThird).stack(5));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
  EXPECT_TRUE(checker.latent().empty());
}

// A pool gives memory back to the system once its frees have completed,
// and cudaMalloc may hand it out again: the ordered free's uses are done.
TEST_F(DefaultRuleTest, SynchronousAllocationOfPoolMemoryAfterAnOrderedFreeIsSafe) {
  feed(Alloc(kBlock, kSize, kCompute, AllocKind::kStreamOrdered).stack(1));
  feed(Record(1, kCompute));
  feed(Wait(kReduce, 1));
  feed(Use(kBlock, 0, kReduce).stack(2));
  feed(Record(2, kReduce));
  feed(Wait(kCompute, 2));
  feed(Free(kBlock, kCompute, FreeKind::kStreamOrdered).stack(3));
  feed(Alloc(kBlock, kSize, kThird, AllocKind::kSynchronous).stack(4));
  feed(Use(kBlock, 0, kThird).stack(5));
  checker.finish();
  EXPECT_TRUE(checker.findings().empty());
}

// The same hand-off without the owner's wait: the pool orders the third
// stream after the free, not after the read the free did not wait for.
TEST_F(DefaultRuleTest, PoolReuseAfterAnUnorderedFreeOnAnyStreamIsAFinding) {
  feed(Alloc(kBlock, kSize, kCompute, AllocKind::kStreamOrdered).stack(1));
  feed(Record(1, kCompute));
  feed(Wait(kReduce, 1));
  feed(Use(kBlock, 0, kReduce).stack(2));
  feed(Free(kBlock, kCompute, FreeKind::kStreamOrdered).stack(3));
  feed(Alloc(kBlock, kSize, kThird, AllocKind::kStreamOrdered).stack(4));
  feed(Use(kBlock, 0, kThird).stack(5));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kUnorderedFree);
  EXPECT_EQ(checker.findings()[0].reuse.use.stack, 5u);
}

// The earlier use on the block's own stream may be recorded stackless (the
// runtime leaves those out until another stream takes part); a later round
// with a stack is the same bug: one finding, with the stack.
TEST_F(DefaultRuleTest, ReuseRaceOfOneFreeSiteIsOneFindingWhateverTheEarlierUseStack) {
  for (StackId earlier : {StackId{0}, StackId{8}}) {
    feed(Alloc(kBlock, kSize, kCompute).stack(1));
    feed(Use(kBlock, 0, kCompute).stack(earlier).name(9));
    feed(Free(kBlock, kCompute).stack(3));
    feed(Alloc(kBlock, kSize, kCompute).stack(4));
    feed(Use(kBlock, 0, kReduce).stack(5));
    feed(Free(kBlock, kCompute).stack(6));
    feed(Record(7, kReduce));
    feed(Wait(kCompute, 7));
  }
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  const Finding& f = checker.findings()[0];
  EXPECT_EQ(f.kind, FindingKind::kReuseRace);
  EXPECT_EQ(f.count, 2u);
  EXPECT_EQ(f.use.stack, 8u);
}

// A block split in two by a caching allocator: each part carries the use.
TEST_F(DefaultRuleTest, SplitBlockCarriesTheUseIntoEachPart) {
  feed(Alloc(kBlock, kSize, kCompute).stack(1));
  feed(Use(kBlock, 0, kReduce).stack(2));
  feed(Free(kBlock, kCompute).stack(3));
  feed(Alloc(kBlock, kSize / 2, kCompute).stack(4));
  feed(Alloc(kBlock + kSize / 2, kSize / 2, kCompute).stack(5));
  feed(Use(kBlock + kSize / 2, 0, kCompute).stack(6));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].reuse.alloc.stack, 5u);
}

// An allocation taken from the middle of a freed block leaves two parts,
// and each of them still carries the use.
TEST_F(DefaultRuleTest, MiddleAllocationLeavesTheUseInBothParts) {
  for (const bool use_back : {false, true}) {
    Checker fresh;
    auto feed_fresh = [&](const Event& e) { fresh.on_event(e); };
    feed_fresh(Alloc(kBlock, kSize, kCompute).stack(1));
    feed_fresh(Use(kBlock, 0, kReduce).stack(2));
    feed_fresh(Free(kBlock, kCompute).stack(3));
    feed_fresh(Alloc(kBlock + kSize / 4, kSize / 2, kCompute).stack(4));
    feed_fresh(Alloc(kBlock, kSize / 4, kCompute).stack(5));
    feed_fresh(Alloc(kBlock + 3 * kSize / 4, kSize / 4, kCompute).stack(6));
    feed_fresh(Use(use_back ? kBlock + 3 * kSize / 4 : kBlock, 0, kCompute).stack(7));
    fresh.finish();
    ASSERT_EQ(fresh.findings().size(), 1u) << (use_back ? "back part" : "front part");
    EXPECT_EQ(fresh.findings()[0].reuse.alloc.stack, use_back ? 6u : 5u);
  }
}

// A stale pointer's use is a use after free; the free it races with is not
// latent as well.
TEST_F(DefaultRuleTest, StalePointerUseIsAUseAfterFreeNotALatentFree) {
  feed(Alloc(kBlock, kSize, kCompute));
  feed(Use(kBlock, 0, kReduce).stack(2));
  feed(Free(kBlock, kCompute).stack(3));
  feed(Use(kBlock, 0, kThird).stack(4));
  checker.finish();
  ASSERT_EQ(checker.findings().size(), 1u);
  EXPECT_EQ(checker.findings()[0].kind, FindingKind::kUseAfterFree);
  EXPECT_TRUE(checker.latent().empty());
}

// The producer asks whether a block's own-stream uses must be seen: only
// while the memory carries another stream's use.
TEST_F(DefaultRuleTest, LookupSaysWhenTheMemoryCarriesOtherStreamsUses) {
  feed(Alloc(kBlock, kSize, kCompute));
  bool carries = true;
  AllocInfo info;
  ASSERT_TRUE(checker.lookup_allocation(kBlock, &info, &carries));
  EXPECT_FALSE(carries);
  feed(Use(kBlock, 0, kReduce));
  feed(Free(kBlock, kCompute));
  feed(Alloc(kBlock, kSize, kCompute));
  ASSERT_TRUE(checker.lookup_allocation(kBlock + 16, &info, &carries));
  EXPECT_TRUE(carries);
  // Once every thread is ordered after the use, no later use can race.
  feed(DeviceSync());
  feed(Use(kBlock, 0, kCompute));
  feed(Free(kBlock, kCompute));
  feed(Alloc(kBlock, kSize, kCompute));
  ASSERT_TRUE(checker.lookup_allocation(kBlock, &info, &carries));
  EXPECT_FALSE(carries);
}

// cudaLaunchHostFunc on the consumer after its read; the host function
// runs after that read, and the free comes after it returned.
TEST_F(DefaultRuleTest, FreeAfterAHostFunctionReturnedIsOrdered) {
  Checker strict(strict_config());
  auto host_func = [](StreamId s, EventId token) {
    E e = HostFunc(s);
    e.raw().event = token;
    return e;
  };
  auto run = [](EventKind kind, EventId token, ThreadId thread) {
    E e(kind);
    e.raw().event = token;
    e.raw().thread = thread;
    return e;
  };
  for (bool with_host_func : {true, false}) {
    Checker c(strict_config());
    c.on_event(Alloc(kBlock, kSize, kCompute));
    c.on_event(Use(kBlock, 0, kReduce).stack(2));
    if (with_host_func) {
      c.on_event(host_func(kReduce, 77));
      c.on_event(run(EventKind::kHostFuncRun, 77, 5));   // the driver's thread
      c.on_event(run(EventKind::kHostFuncDone, 77, 5));  // sets the flag
    }
    c.on_event(Free(kBlock, kCompute, FreeKind::kStreamOrdered).stack(3));
    c.finish();
    EXPECT_EQ(c.findings().size(), with_host_func ? 0u : 1u) << with_host_func;
  }
}

// What a host function does itself is ordered after its stream's work: a
// thread it starts, and that thread's free.
TEST_F(DefaultRuleTest, ThreadStartedByAHostFunctionFreesAfterTheStreamsWork) {
  for (bool edges : {true, false}) {
    Checker c(strict_config());
    c.on_event(Alloc(kBlock, kSize, kCompute));
    c.on_event(Use(kBlock, 0, kReduce).stack(2));
    E host = HostFunc(kReduce);
    host.raw().event = 5;
    c.on_event(host);
    E run(EventKind::kHostFuncRun);
    run.raw().event = 5;
    run.raw().thread = 3;
    if (edges) c.on_event(run);
    E create(EventKind::kThreadCreate);
    create.raw().event = 900;
    create.raw().thread = 3;
    if (edges) c.on_event(create);
    E start(EventKind::kThreadStart);
    start.raw().event = 900;
    start.raw().thread = 4;
    if (edges) c.on_event(start);
    c.on_event(Free(kBlock, kCompute, FreeKind::kStreamOrdered).thread(4).stack(3));
    c.finish();
    EXPECT_EQ(c.findings().size(), edges ? 0u : 1u) << edges;
  }
}

// A thread that synchronized hands the buffer to another through a queue
// (a semaphore posted, then waited for): the other's free is ordered. The
// same free after a wait on a semaphore nobody posted since is not.
TEST_F(DefaultRuleTest, AFreeAfterAQueuesHandoverIsOrderedByTheSynchronizationBeforeIt) {
  for (bool posted : {true, false}) {
    Checker c(strict_config());
    c.on_event(Alloc(kBlock, kSize, kCompute));
    c.on_event(Use(kBlock, 0, kReduce).stack(2));
    c.on_event(StreamSync(kReduce).thread(1));
    if (posted) c.on_event(SyncRelease(0x7ffc0040).thread(1));
    c.on_event(SyncAcquire(0x7ffc0040).thread(2));
    c.on_event(Free(kBlock, kCompute).thread(2).stack(3));
    c.finish();
    EXPECT_EQ(c.findings().size(), posted ? 0u : 1u) << posted;
  }
}

}  // namespace
}  // namespace xsc
