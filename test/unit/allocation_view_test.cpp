// AllocationView against the Checker it stands in for: after every event of
// random programs (allocations that overlap and split freed memory, uses on
// several streams and by the host, frees of every kind, deferred frees,
// streams destroyed and their handles reused, orderings), the view's live
// set must be the checker's, and wherever the checker says a use of an
// allocation can appear in a report the view must say so too.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "checker/engine/allocation_view.h"
#include "checker/engine/checker.h"
#include "event_builder.h"

namespace xsc {
namespace {

using test::Alloc;
using test::DestroyStream;
using test::Free;
using test::FreeCompleted;
using test::Record;
using test::StreamSync;
using test::Use;
using test::Wait;

constexpr Addr kBase = 0x100000;
constexpr StreamId kStreams[] = {0x51, 0x52, 0x53};

// Pages of 0x100 bytes, the allocations' granule, so that the arena spans many.
constexpr unsigned kPageShift = 8;

struct Both {
  explicit Both(unsigned page_shift) : view(page_shift) {}
  Checker checker;
  AllocationView view;
  std::size_t unnoted = 0;
  // As the runtime feeds them: a kernel's use of a word on a page of its
  // stream's (stream_pages()) goes to the checker alone.
  void feed(const Event& e) {
    const StreamPages& pages = view.stream_pages();
    if (e.kind == EventKind::kUse && e.what == UseWhat::kKernel && e.size == 0 &&
        pages.only(e.addr, pages.mark_of(e.stream))) {
      ++unnoted;
    } else {
      view.note(e);
    }
    checker.on_event(e);
  }
};

// Every address in the arena, at a step that hits starts, interiors and ends.
void expect_agree(const Both& b, std::uint64_t arena, int step) {
  for (Addr addr = kBase; addr < kBase + arena; addr += 0x40) {
    AllocInfo from_checker, from_view;
    bool checker_carries = false, view_carries = false;
    const bool in_checker = b.checker.lookup_allocation(addr, &from_checker, &checker_carries);
    const bool in_view = b.view.lookup(addr, &from_view, &view_carries);
    ASSERT_EQ(in_checker, in_view) << "step " << step << " addr " << std::hex << addr;
    if (!in_checker) continue;
    ASSERT_EQ(from_checker.addr, from_view.addr) << "step " << step;
    ASSERT_EQ(from_checker.size, from_view.size) << "step " << step;
    ASSERT_EQ(from_checker.stream, from_view.stream) << "step " << step;
    ASSERT_EQ(from_checker.kind, from_view.kind) << "step " << step;
    // Conservative: never "nothing else took part" where the checker knows better.
    if (checker_carries) {
      ASSERT_TRUE(view_carries) << "step " << step << " addr " << std::hex << addr;
    }
    if (b.checker.used_off_allocation_stream(from_checker.addr)) {
      ASSERT_TRUE(b.view.used_off_allocation_stream(from_checker.addr)) << "step " << step;
    }
    // A page of one stream's: what lies there is that stream's caching
    // block, which nothing else took part in.
    const StreamPages& pages = b.view.stream_pages();
    for (const StreamId stream : kStreams) {
      if (!pages.only(addr, pages.mark_of(stream))) continue;
      ASSERT_EQ(from_checker.kind, AllocKind::kCachingAllocator) << "step " << step;
      ASSERT_EQ(from_checker.stream, stream) << "step " << step;
      ASSERT_FALSE(checker_carries) << "step " << step << " addr " << std::hex << addr;
    }
  }
}

TEST(AllocationView, AgreesWithTheCheckerOnRandomPrograms) {
  constexpr std::uint64_t kArena = 0x8000;
  // Pages of one granule, and pages of four, which blocks of several
  // streams and kinds share.
  std::size_t unnoted[2] = {0, 0};
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    Both b(seed % 2 == 0 ? kPageShift : kPageShift + 2);
    std::vector<Addr> live;
    EventId next_event = 1;
    for (int step = 0; step < 400; ++step) {
      const StreamId stream = kStreams[pick(3)];
      const int what = pick(12);
      if (what < 3 || live.empty()) {
        const Addr addr = kBase + 0x100 * static_cast<Addr>(pick(kArena / 0x100));
        const std::uint64_t size = 0x100 * static_cast<std::uint64_t>(1 + pick(4));
        const AllocKind kind = pick(4) == 0 ? AllocKind::kStreamOrdered : AllocKind::kCachingAllocator;
        b.feed(Alloc(addr, size, stream, kind));
        live.push_back(addr);
      } else if (what < 7) {
        const Addr at = live[static_cast<std::size_t>(pick(static_cast<int>(live.size())))];
        test::E use = Use(at + 0x40 * static_cast<Addr>(pick(3)), pick(2) ? 0 : 0x80, stream);
        if (pick(8) == 0) use.what(UseWhat::kHostAccess);
        if (pick(3) == 0) use.access(Access::kWrite);
        b.feed(use);
      } else if (what < 9) {
        const std::size_t i = static_cast<std::size_t>(pick(static_cast<int>(live.size())));
        const bool deferred = pick(3) == 0;
        const FreeKind kind = pick(4) == 0 ? FreeKind::kStreamOrdered : FreeKind::kCachingAllocator;
        b.feed(Free(live[i], stream, kind, deferred && kind == FreeKind::kCachingAllocator));
        if (deferred && pick(2) == 0) b.feed(FreeCompleted(live[i]));
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else if (what < 11) {
        const EventId ev = next_event++;
        b.feed(Record(ev, stream));
        b.feed(Wait(kStreams[pick(3)], ev));
      } else if (pick(4) == 0) {
        b.feed(DestroyStream(stream));
      } else {
        b.feed(StreamSync(stream));
      }
      expect_agree(b, kArena, step);
      if (HasFatalFailure()) return;
    }
    unnoted[seed % 2] += b.unnoted;
  }
  // The pages of one stream's were met.
  EXPECT_GT(unnoted[0], 100u);
  EXPECT_GT(unnoted[1], 100u);
  std::printf("unnoted uses: %zu with pages of one granule, %zu with pages of four\n",
              unnoted[0], unnoted[1]);
}

TEST(AllocationView, OwnStreamBlockCarriesNothingUntilAnotherStreamUsesIt) {
  AllocationView view;
  view.note(Alloc(kBase, 0x1000, 0x51));
  view.note(Use(kBase, 0, 0x51));
  AllocInfo info;
  bool carries = true;
  ASSERT_TRUE(view.lookup(kBase + 0x10, &info, &carries));
  EXPECT_FALSE(carries);
  EXPECT_FALSE(view.used_off_allocation_stream(kBase));
  view.note(Use(kBase + 0x20, 0x10, 0x52));
  ASSERT_TRUE(view.lookup(kBase, &info, &carries));
  EXPECT_TRUE(carries);
  EXPECT_TRUE(view.used_off_allocation_stream(kBase));
}

TEST(AllocationView, ReusedMemoryCarriesItsEarlierOccupantsUses) {
  AllocationView view;
  view.note(Alloc(kBase, 0x1000, 0x51));
  view.note(Use(kBase, 0, 0x52));
  view.note(Free(kBase, 0x51));
  // The same stream's allocation of part of the block inherits the other
  // stream's use; the part it leaves is still remembered.
  view.note(Alloc(kBase, 0x400, 0x51));
  bool carries = false;
  ASSERT_TRUE(view.lookup(kBase, nullptr, &carries));
  EXPECT_TRUE(carries);
  EXPECT_FALSE(view.used_off_allocation_stream(kBase));  // its own uses: none
  view.note(Alloc(kBase + 0x800, 0x100, 0x51));
  ASSERT_TRUE(view.lookup(kBase + 0x800, nullptr, &carries));
  EXPECT_TRUE(carries);
  // Memory only its own stream used carries nothing to that stream...
  view.note(Alloc(kBase + 0x4000, 0x100, 0x51));
  view.note(Use(kBase + 0x4000, 0, 0x51));
  view.note(Free(kBase + 0x4000, 0x51));
  view.note(Alloc(kBase + 0x4000, 0x100, 0x51));
  ASSERT_TRUE(view.lookup(kBase + 0x4000, nullptr, &carries));
  EXPECT_FALSE(carries);
  // ...and that stream's use to another stream, through an occupant that
  // never used it.
  view.note(Free(kBase + 0x4000, 0x51));
  EXPECT_EQ(view.residues(), 2u);  // the first block's, whole under its parts, and this one
  view.note(Alloc(kBase + 0x4000, 0x100, 0x52));
  ASSERT_TRUE(view.lookup(kBase + 0x4000, nullptr, &carries));
  EXPECT_TRUE(carries);
}

// The census says why launches are looked up: a block another stream used
// counts as another agent's; freed, its memory is a mixed residue, and an
// own-stream block reusing it counts so only by inheritance.
TEST(AllocationView, CensusTellsInheritedFromOwnOtherUses) {
  AllocationView view;
  view.note(Alloc(kBase, 0x1000, 0x51));
  view.note(Alloc(kBase + 0x200000, 0x1000, 0x51));
  AllocationView::Census census = view.census();
  EXPECT_EQ(census.live, 2u);
  EXPECT_EQ(census.other, 0u);
  view.note(Use(kBase, 0, 0x52));  // a gradient bucket, used by NCCL's stream
  census = view.census();
  EXPECT_EQ(census.other, 1u);
  EXPECT_EQ(census.other_by_inheritance, 0u);
  EXPECT_EQ(census.mixed_residue_bytes, 0u);
  view.note(Free(kBase, 0x51));
  census = view.census();
  EXPECT_EQ(census.live, 1u);
  EXPECT_EQ(census.other, 0u);
  EXPECT_EQ(census.mixed_residue_bytes, 0x1000u);
  view.note(Alloc(kBase + 0x400, 0x400, 0x51));  // an activation in that memory
  view.note(Use(kBase + 0x400, 0, 0x51));
  census = view.census();
  EXPECT_EQ(census.live, 2u);
  EXPECT_EQ(census.other, 1u);
  EXPECT_EQ(census.other_by_inheritance, 1u);
}

// A caching block its own stream alone uses, freed and allocated again
// and again: its residue stays in place under each occupant, and each free
// finds it already saying what the occupant leaves (no residue is split
// and put back per block).
TEST(AllocationView, OwnStreamReuseLeavesItsResidueInPlace) {
  AllocationView view;
  view.note(Alloc(kBase, 0x1000, 0x51));
  view.note(Use(kBase, 0, 0x51));
  view.note(Free(kBase, 0x51));
  ASSERT_EQ(view.residues(), 1u);
  for (int round = 0; round < 3; ++round) {
    view.note(Alloc(kBase + 0x400, 0x400, 0x51));
    EXPECT_EQ(view.residues(), 1u) << "round " << round;  // not split around the block
    bool carries = true;
    ASSERT_TRUE(view.lookup(kBase + 0x400, nullptr, &carries));
    EXPECT_FALSE(carries);
    view.note(Use(kBase + 0x400, 0, 0x51));
    view.note(Free(kBase + 0x400, 0x51));
    EXPECT_EQ(view.residues(), 1u) << "round " << round;
  }
  // Another stream's use changes what the block leaves: that part is
  // rewritten, the rest keeps the own stream's residue.
  view.note(Alloc(kBase + 0x400, 0x400, 0x51));
  view.note(Use(kBase + 0x400, 0, 0x52));
  view.note(Free(kBase + 0x400, 0x51));
  EXPECT_EQ(view.residues(), 3u);
  bool carries = false;
  view.note(Alloc(kBase, 0x400, 0x51));
  ASSERT_TRUE(view.lookup(kBase, nullptr, &carries));
  EXPECT_FALSE(carries);
  view.note(Alloc(kBase + 0x400, 0x400, 0x51));
  ASSERT_TRUE(view.lookup(kBase + 0x400, nullptr, &carries));
  EXPECT_TRUE(carries);
}

// Neighbouring freed blocks that leave the same uses become one residue,
// whichever is freed first, so that a segment's many blocks come to one
// range; a neighbour that leaves other uses stays apart.
TEST(AllocationView, NeighbouringResiduesWithTheSameUsesMerge) {
  AllocationView view;
  for (Addr at : {kBase, kBase + 0x400, kBase + 0x800, kBase + 0xc00})
    view.note(Alloc(at, 0x400, 0x51));
  view.note(Use(kBase + 0xc00, 0, 0x52));  // the last block's memory is mixed
  view.note(Free(kBase + 0x400, 0x51));
  view.note(Free(kBase + 0x800, 0x51));  // after its lower neighbour
  EXPECT_EQ(view.residues(), 1u);
  view.note(Free(kBase, 0x51));  // before its upper neighbour
  EXPECT_EQ(view.residues(), 1u);
  view.note(Free(kBase + 0xc00, 0x51));
  EXPECT_EQ(view.residues(), 2u);
  EXPECT_EQ(view.census().mixed_residue_bytes, 0x400u);
  // A block over both keeps what each part left.
  view.note(Alloc(kBase + 0x800, 0x800, 0x51));
  bool carries = false;
  ASSERT_TRUE(view.lookup(kBase + 0x800, nullptr, &carries));
  EXPECT_TRUE(carries);
}

TEST(AllocationView, StaleRangesGiveWayLikeTheChecker) {
  AllocationView view;
  view.note(Alloc(kBase, 0x1000, 0x51));
  view.note(Alloc(kBase + 0x800, 0x1000, 0x51));  // the first one's free was missed
  EXPECT_EQ(view.live(), 1u);
  EXPECT_FALSE(view.lookup(kBase, nullptr));
  EXPECT_TRUE(view.lookup(kBase + 0x17ff, nullptr));
  view.note(Free(kBase + 0x900, 0x51));  // not a start: nothing freed
  EXPECT_EQ(view.live(), 1u);
}

TEST(AllocationView, RememberedInteriorAddressesFollowTheLiveAllocation) {
  AllocationView view;
  auto start_of = [&](Addr addr) {
    AllocInfo info;
    return view.lookup(addr, &info) ? info.addr : Addr{0};
  };
  view.note(Alloc(kBase, 0x1000, 0x51));
  view.note(Alloc(kBase + 0x2000, 0x1000, 0x51));
  // Looked up twice (the second from the remembered address), between
  // lookups of another allocation so the last entry found is not it.
  EXPECT_EQ(start_of(kBase + 0x400), kBase);
  EXPECT_EQ(start_of(kBase + 0x2400), kBase + 0x2000);
  EXPECT_EQ(start_of(kBase + 0x400), kBase);
  // Once the allocation is gone the remembered address means nothing...
  view.note(Free(kBase, 0x51));
  EXPECT_EQ(start_of(kBase + 0x2400), kBase + 0x2000);
  EXPECT_EQ(start_of(kBase + 0x400), Addr{0});
  // ...even when its slot comes back for another range over the address.
  view.note(Alloc(kBase + 0x200, 0x400, 0x52));
  EXPECT_EQ(start_of(kBase + 0x2400), kBase + 0x2000);
  EXPECT_EQ(start_of(kBase + 0x400), kBase + 0x200);
  // A sized use from a remembered interior address marks that allocation
  // alone, as the checker's walk would.
  view.note(Use(kBase + 0x400, 0x100, 0x53));
  bool carries = false;
  EXPECT_TRUE(view.lookup(kBase + 0x200, nullptr, &carries));
  EXPECT_TRUE(carries);
  EXPECT_TRUE(view.lookup(kBase + 0x2000, nullptr, &carries));
  EXPECT_FALSE(carries);
}

TEST(StreamPages, APageIsAStreamsWhileItsLiveBlocksAreThatStreamsUntouchedCachingBlocks) {
  AllocationView view{kPageShift};
  const StreamPages& pages = view.stream_pages();
  view.note(Alloc(kBase, 0x100, 0x51));
  view.note(Alloc(kBase + 0x100, 0x200, 0x52));
  view.note(Alloc(kBase + 0x300, 0x100, 0x51, AllocKind::kStreamOrdered));
  const StreamPages::Mark a = pages.mark_of(0x51), b = pages.mark_of(0x52);
  ASSERT_NE(a, StreamPages::kNoMark);
  ASSERT_NE(b, StreamPages::kNoMark);
  EXPECT_EQ(pages.mark_of(0x53), StreamPages::kNoMark);
  EXPECT_TRUE(pages.only(kBase + 0x80, a));
  EXPECT_FALSE(pages.only(kBase + 0x80, b));
  EXPECT_TRUE(pages.only(kBase + 0x2ff, b));
  EXPECT_FALSE(pages.only(kBase + 0x300, a));  // memory of another kind
  EXPECT_TRUE(pages.only(kBase + 0x400, a));   // nothing lives there
  // Freed and taken by the other stream, which its first occupant's use
  // carries over to: the page is no stream's while it lives.
  view.note(Use(kBase, 0, 0x51));
  view.note(Free(kBase, 0x51));
  view.note(Alloc(kBase, 0x100, 0x52));
  EXPECT_FALSE(pages.only(kBase, a));
  EXPECT_FALSE(pages.only(kBase, b));
  view.note(Free(kBase, 0x51));
  EXPECT_TRUE(pages.only(kBase, b));
  // Another stream's use: every page of the block is no stream's.
  view.note(Use(kBase + 0x100, 0, 0x53));
  EXPECT_FALSE(pages.only(kBase + 0x100, b));
  EXPECT_FALSE(pages.only(kBase + 0x2ff, b));
  // A segment taken with cudaMalloc, then handed out as caching blocks of
  // one stream (the first block drops the segment's range, as the checker
  // does): its pages are that stream's.
  view.note(Alloc(kBase + 0x1000, 0x400, kLegacyStream, AllocKind::kSynchronous));
  EXPECT_FALSE(pages.only(kBase + 0x1200, a));
  view.note(Alloc(kBase + 0x1000, 0x100, 0x51));
  view.note(Alloc(kBase + 0x1100, 0x100, 0x51));
  for (Addr at = kBase + 0x1000; at < kBase + 0x1400; at += 0x80)
    EXPECT_TRUE(pages.only(at, a)) << std::hex << at;
  // A destroyed stream's blocks are no live stream's; its handle gets a new
  // mark, whose pages are its new blocks'.
  view.note(DestroyStream(0x51));
  EXPECT_EQ(pages.mark_of(0x51), StreamPages::kNoMark);
  view.note(Alloc(kBase + 0x2000, 0x100, 0x51));
  const StreamPages::Mark again = pages.mark_of(0x51);
  EXPECT_NE(again, a);
  EXPECT_TRUE(pages.only(kBase + 0x2000, again));
  EXPECT_FALSE(pages.only(kBase + 0x1000, again));
}

TEST(StreamPages, StreamsPastTheLastMarkAndLongRangesCountAsOthers) {
  StreamPages pages(kPageShift);
  auto page = [](StreamId s) { return kBase + (s << kPageShift); };
  for (StreamId s = 1; s <= 300; ++s) pages.add(page(s), page(s + 1), s, true);
  EXPECT_TRUE(pages.only(page(1), pages.mark_of(1)));
  EXPECT_TRUE(pages.only(page(255), pages.mark_of(255)));
  EXPECT_EQ(pages.mark_of(256), StreamPages::kNoMark);
  for (const StreamId s : {256, 300})
    for (StreamId other = 1; other <= 255; ++other)
      ASSERT_FALSE(pages.only(page(s), pages.mark_of(other)));
  // A range longer than the slots are many is on every slot, and off them
  // again once removed.
  const StreamPages::Role role = pages.add(kBase, kBase + (std::uint64_t{1} << 40), 0x999, false);
  EXPECT_FALSE(pages.only(page(1), pages.mark_of(1)));
  pages.remove(kBase, kBase + (std::uint64_t{1} << 40), role);
  EXPECT_TRUE(pages.only(page(1), pages.mark_of(1)));
}

// Pages share a slot only 2^14 pages apart: the pages of one process's
// device memory, which lies closer together than that, each answer for
// themselves (a block on its own pages never makes its neighbours'
// answers "no"), and the page that far away answers "no" for both.
TEST(StreamPages, PagesShareASlotOnlyFarApart) {
  StreamPages pages(kPageShift);
  constexpr std::uint64_t kPage = std::uint64_t{1} << kPageShift;
  constexpr std::uint64_t kFar = kPage << 14;
  for (StreamId s = 1; s <= 200; ++s)
    pages.add(kBase + s * 3 * kPage, kBase + (s * 3 + 2) * kPage, s, true);
  for (StreamId s = 1; s <= 200; ++s) {
    ASSERT_TRUE(pages.only(kBase + s * 3 * kPage, pages.mark_of(s))) << s;
    ASSERT_TRUE(pages.only(kBase + (s * 3 + 1) * kPage, pages.mark_of(s))) << s;
  }
  pages.add(kBase + 3 * kPage + kFar, kBase + 4 * kPage + kFar, 2, true);
  EXPECT_FALSE(pages.only(kBase + 3 * kPage, pages.mark_of(1)));
  EXPECT_FALSE(pages.only(kBase + 3 * kPage + kFar, pages.mark_of(2)));
  EXPECT_TRUE(pages.only(kBase + 4 * kPage, pages.mark_of(1)));
}

}  // namespace
}  // namespace xsc
