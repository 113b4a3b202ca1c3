#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "checker/engine/alloc_map.h"

namespace xsc {
namespace {

AllocInfo range(Addr addr, std::uint64_t size) {
  AllocInfo info;
  info.addr = addr;
  info.size = size;
  return info;
}

TEST(AllocMap, FindsContainingAllocation) {
  AllocMap map;
  map.insert(range(100, 50));
  map.insert(range(200, 10));
  EXPECT_EQ(map.find_containing(99), nullptr);
  ASSERT_NE(map.find_containing(100), nullptr);
  EXPECT_EQ(map.find_containing(149)->info.addr, 100u);
  EXPECT_EQ(map.find_containing(150), nullptr);
  EXPECT_EQ(map.find_containing(205)->info.addr, 200u);
  EXPECT_EQ(map.insert(range(300, 0)), nullptr);  // empty ranges hold nothing
}

TEST(AllocMap, OverlappingRangesInAddressOrder) {
  AllocMap map;
  map.insert(range(100, 50));
  map.insert(range(150, 50));
  map.insert(range(300, 50));
  std::vector<Addr> seen;
  EXPECT_EQ(map.for_each_overlapping(120, 301, [&](Allocation& a) {
    seen.push_back(a.info.addr);
  }), 3u);
  EXPECT_EQ(seen, (std::vector<Addr>{100, 150, 300}));
  EXPECT_EQ(map.for_each_overlapping(200, 300, [](Allocation&) {}), 0u);
}

TEST(AllocMap, InsertDropsStaleOverlaps) {
  AllocMap map;
  map.insert(range(100, 50));
  map.insert(range(160, 50));
  map.insert(range(140, 30));
  EXPECT_EQ(map.size(), 1u);
  EXPECT_EQ(map.find_containing(100), nullptr);
  EXPECT_EQ(map.find_containing(145)->info.addr, 140u);
}

TEST(AllocMap, ReleasedSlotsComeBackClean) {
  AllocMap map;
  Allocation* a = map.insert(range(100, 50));
  a->record_use(1, 3, UseInfo{});
  a->record_use(1, 4, UseInfo{});
  a->record_use(2, 1, UseInfo{});
  ASSERT_EQ(a->last_use.size(), 2u);  // one entry per agent: the last use
  EXPECT_EQ(a->last_use[0].epoch, 4u);
  EXPECT_EQ(a->last_use_info.size(), 2u);
  AllocMap::Slot slot = map.extract(100);
  ASSERT_NE(slot, AllocMap::kNoSlot);
  EXPECT_EQ(map.at(slot).info.addr, 100u);  // valid until released
  EXPECT_EQ(map.find_containing(120), nullptr);
  map.release(slot);
  EXPECT_EQ(map.extract(100), AllocMap::kNoSlot);
  Allocation* b = map.insert(range(500, 8));
  EXPECT_TRUE(b->last_use.empty());
  EXPECT_EQ(b->info.addr, 500u);
  EXPECT_EQ(map.find_containing(504), b);
}

TEST(AllocMap, RememberedInteriorAddressesFollowTheLiveAllocation) {
  AllocMap map;
  map.insert(range(100, 50));
  auto starts_at = [&](Addr begin, Addr end) {
    std::vector<Addr> seen;
    map.for_each_overlapping(begin, end, [&](Allocation& a) { seen.push_back(a.info.addr); });
    return seen;
  };
  // The first interior lookup walks the index, the second is remembered.
  EXPECT_EQ(starts_at(120, 130), (std::vector<Addr>{100}));
  EXPECT_EQ(starts_at(120, 130), (std::vector<Addr>{100}));
  EXPECT_EQ(map.find_containing(120)->info.addr, 100u);
  // A range past the remembered allocation's end reaches the next one.
  map.insert(range(150, 50));
  EXPECT_EQ(starts_at(120, 160), (std::vector<Addr>{100, 150}));
  // Once the allocation is gone, the remembered address means nothing...
  map.release(map.extract(100));
  EXPECT_TRUE(starts_at(120, 130).empty());
  EXPECT_EQ(map.find_containing(120), nullptr);
  // ...even when its slot comes back for another range.
  map.insert(range(110, 30));
  EXPECT_EQ(starts_at(120, 130), (std::vector<Addr>{110}));
  EXPECT_EQ(map.find_containing(125)->info.addr, 110u);
  map.release(map.extract(110));
  map.insert(range(500, 8));
  EXPECT_TRUE(starts_at(120, 130).empty());
  EXPECT_EQ(map.find_containing(125), nullptr);
  // A stale allocation replaced by an overlapping one is forgotten too.
  map.insert(range(600, 100));
  EXPECT_EQ(starts_at(650, 660), (std::vector<Addr>{600}));
  map.insert(range(640, 20));
  EXPECT_EQ(starts_at(650, 660), (std::vector<Addr>{640}));
}

TEST(Quarantine, FifoBoundAndForget) {
  Quarantine q(2);
  FreeInfo free;
  q.push(range(100, 10), free);
  q.push(range(200, 10), free);
  q.push(range(300, 10), free);  // pushes out 100
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.find_overlapping(100, 110), nullptr);
  ASSERT_NE(q.find_overlapping(205, 206), nullptr);
  EXPECT_EQ(q.find_overlapping(195, 201)->alloc.addr, 200u);
  q.forget(305, 306);
  EXPECT_EQ(q.find_overlapping(300, 310), nullptr);
  EXPECT_EQ(q.size(), 1u);
  Quarantine none(0);
  none.push(range(100, 10), free);
  EXPECT_EQ(none.find_overlapping(100, 101), nullptr);
}

// A reallocation forgets remembered ranges whether they are still among
// the few latest pushes (looked at in place) or already indexed (a lookup
// indexed them, or too many pushes came since), and only those it overlaps.
TEST(Quarantine, ForgetLatestAndIndexedPushes) {
  Quarantine q(64);
  FreeInfo free;
  q.push(range(100, 10), free);
  q.push(range(200, 10), free);
  q.push(range(300, 10), free);
  q.forget(200, 210);  // latest pushes, none indexed yet
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.find_overlapping(200, 210), nullptr);
  ASSERT_NE(q.find_overlapping(100, 101), nullptr);  // indexes what is left
  q.push(range(200, 10), free);  // freed again: one pending, two indexed
  q.forget(105, 305);            // an allocation over all three
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.find_overlapping(0, 1000), nullptr);
  // More pushes than are looked at in place: the index path.
  for (Addr a = 1000; a < 1000 + 40 * 16; a += 16) q.push(range(a, 16), free);
  EXPECT_EQ(q.size(), 40u);
  q.forget(1000 + 16 * 10, 1000 + 16 * 12);
  EXPECT_EQ(q.size(), 38u);
  EXPECT_EQ(q.find_overlapping(1000 + 16 * 10, 1000 + 16 * 12), nullptr);
  EXPECT_NE(q.find_overlapping(1000 + 16 * 12, 1000 + 16 * 13), nullptr);
  // Two pushes at one start: the later replaces the earlier, and one
  // reallocation forgets both.
  q.push(range(5000, 8), free);
  q.push(range(5000, 8), free);
  q.forget(5000, 5008);
  EXPECT_EQ(q.find_overlapping(5000, 5008), nullptr);
  EXPECT_EQ(q.size(), 38u);
}

// A block handed out again at its old start: no larger than it was, only
// its own range is forgotten, found by its start however long ago it was
// pushed; larger, the ranges it grew over go too; a start inside a range
// (a split block) takes that range.
TEST(Quarantine, ForgetByExactStart) {
  Quarantine q(1024);
  FreeInfo free;
  for (Addr a = 0x10000; a < 0x10000 + 300 * 0x100; a += 0x100) q.push(range(a, 0x100), free);
  EXPECT_EQ(q.size(), 300u);
  q.forget(0x10000 + 7 * 0x100, 0x10000 + 7 * 0x100 + 0x80);  // pushed 293 frees ago, smaller
  EXPECT_EQ(q.size(), 299u);
  EXPECT_EQ(q.find_overlapping(0x10000 + 7 * 0x100, 0x10000 + 8 * 0x100), nullptr);
  ASSERT_NE(q.find_overlapping(0x10000 + 6 * 0x100, 0x10000 + 6 * 0x100 + 1), nullptr);
  ASSERT_NE(q.find_overlapping(0x10000 + 8 * 0x100, 0x10000 + 8 * 0x100 + 1), nullptr);
  q.forget(0x10000 + 20 * 0x100, 0x10000 + 23 * 0x100);  // larger: three ranges
  EXPECT_EQ(q.size(), 296u);
  EXPECT_EQ(q.find_overlapping(0x10000 + 20 * 0x100, 0x10000 + 23 * 0x100), nullptr);
  ASSERT_NE(q.find_overlapping(0x10000 + 23 * 0x100, 0x10000 + 23 * 0x100 + 1), nullptr);
  q.forget(0x10000 + 30 * 0x100 + 0x40, 0x10000 + 30 * 0x100 + 0x80);  // inside one
  EXPECT_EQ(q.size(), 295u);
  EXPECT_EQ(q.find_overlapping(0x10000 + 30 * 0x100, 0x10000 + 31 * 0x100), nullptr);
  // Pushed again at a forgotten start: remembered, and found by it.
  q.push(range(0x10000 + 7 * 0x100, 0x40), free);
  EXPECT_EQ(q.size(), 296u);
  q.forget(0x10000 + 7 * 0x100, 0x10000 + 7 * 0x100 + 0x40);
  EXPECT_EQ(q.size(), 295u);
}

// Against a plain model, in random order, as the checker drives it: an
// allocation forgets what it overlaps, a free remembers its range, a use of
// untracked memory looks a range up. The model keeps the last `capacity`
// pushes with a flag each (the ring evicts by pushes, not by live ranges).
TEST(Quarantine, MatchesAModelOfTheLastPushes) {
  std::mt19937 rng(7);
  for (std::size_t capacity : {1u, 2u, 5u, 17u, 40u, 200u}) {
    Quarantine q(capacity);
    struct Pushed {
      Addr begin, end;
      std::uint64_t id;
      bool valid;
    };
    std::deque<Pushed> model;
    FreeInfo free;
    for (std::uint64_t step = 0; step < 4000; ++step) {
      const Addr begin = 16 * (rng() % 64);
      const Addr end = begin + 16 * (1 + rng() % 4);
      const unsigned what = rng() % 10;
      if (what < 4) {  // allocation, then (usually) its free
        q.forget(begin, end);
        for (Pushed& p : model)
          if (p.begin < end && p.end > begin) p.valid = false;
        if (what < 3) {
          AllocInfo info = range(begin, end - begin);
          info.stack = static_cast<StackId>(step);  // tells the pushes apart
          q.push(info, free);
          model.push_back({begin, end, step, true});
          if (model.size() > capacity) model.pop_front();
        }
      } else {  // a lookup
        const Pushed* want = nullptr;
        for (const Pushed& p : model)
          if (p.valid && p.begin < end && p.end > begin && (!want || p.begin < want->begin))
            want = &p;
        const FreedRange* got = q.find_overlapping(begin, end);
        ASSERT_EQ(got == nullptr, want == nullptr) << "capacity " << capacity << " step " << step;
        if (got != nullptr) {
          EXPECT_EQ(got->alloc.addr, want->begin);
          EXPECT_EQ(got->alloc.stack, static_cast<StackId>(want->id));
        }
      }
      std::size_t valid = 0;
      for (const Pushed& p : model) valid += p.valid;
      ASSERT_EQ(q.size(), valid) << "capacity " << capacity << " step " << step;
    }
  }
}

}  // namespace
}  // namespace xsc
