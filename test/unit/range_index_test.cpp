// RangeIndex against a std::map of the same disjoint ranges: random
// insertions (checked for overlaps or not) and removals, with enough entries to split and merge blocks.
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "checker/engine/range_index.h"

namespace xsc {
namespace {

struct Model {
  std::map<Addr, RangeIndex::Entry> ranges;

  bool free_at(Addr start, Addr end) const {
    auto it = ranges.lower_bound(start);
    if (it != ranges.end() && it->first < end) return false;
    return it == ranges.begin() || std::prev(it)->second.end <= start;
  }
  std::vector<Addr> overlapping(Addr begin, Addr end) const {
    std::vector<Addr> out;
    for (const auto& [start, e] : ranges)
      if (start < end && begin < e.end) out.push_back(start);
    return out;
  }
  const RangeIndex::Entry* containing(Addr addr) const {
    auto it = ranges.upper_bound(addr);
    if (it == ranges.begin()) return nullptr;
    --it;
    return addr < it->second.end ? &it->second : nullptr;
  }
};

std::vector<Addr> overlapping(const RangeIndex& index, Addr begin, Addr end) {
  std::vector<Addr> out;
  index.for_each_overlapping(begin, end, [&](const RangeIndex::Entry& e) { out.push_back(e.start); });
  return out;
}

TEST(RangeIndex, AgreesWithAnOrderedMap) {
  std::mt19937_64 rng(7);
  RangeIndex index;
  Model model;
  std::uint32_t next_slot = 0;
  for (int step = 0; step < 60000; ++step) {
    // Phases that grow, shrink and churn the index, so blocks split and merge.
    const int phase = (step / 5000) % 3;
    const unsigned roll = static_cast<unsigned>(rng() % 100);
    const bool add = phase == 0 ? roll < 80 : phase == 1 ? roll < 20 : roll < 50;
    if (add) {
      const Addr start = (rng() % 20000) * 16;
      const Addr end = start + 1 + rng() % 64;
      const bool free = model.free_at(start, end);
      const RangeIndex::Entry e{start, end, next_slot++};
      // Every other step asks insert_if_free, which must refuse exactly
      // the ranges that overlap.
      if (step % 2 == 0) {
        ASSERT_EQ(index.insert_if_free(e), free) << step;
        if (!free) continue;
      } else {
        if (!free) continue;
        index.insert(e);
      }
      model.ranges.emplace(start, e);
    } else if (!model.ranges.empty()) {
      auto it = model.ranges.begin();
      std::advance(it, static_cast<long>(rng() % model.ranges.size()));
      index.erase(it->first);
      model.ranges.erase(it);
    }
    ASSERT_EQ(index.size(), model.ranges.size());
    const Addr probe = rng() % (20000 * 16 + 100);
    const Addr probe_end = probe + 1 + rng() % 300;
    ASSERT_EQ(overlapping(index, probe, probe_end), model.overlapping(probe, probe_end)) << step;
    const RangeIndex::Entry* got = index.containing(probe);
    const RangeIndex::Entry* want = model.containing(probe);
    ASSERT_EQ(got == nullptr, want == nullptr) << step;
    if (got) {
      EXPECT_EQ(got->start, want->start);
      EXPECT_EQ(got->end, want->end);
      EXPECT_EQ(got->slot, want->slot);
    }
    if (model.ranges.empty()) {
      EXPECT_EQ(index.last(), nullptr);
    } else {
      ASSERT_NE(index.last(), nullptr);
      EXPECT_EQ(index.last()->start, model.ranges.rbegin()->first);
    }
  }
}

TEST(RangeIndex, EmptyAndEdgeRanges) {
  RangeIndex index;
  EXPECT_TRUE(index.empty());
  EXPECT_EQ(index.containing(5), nullptr);
  EXPECT_TRUE(overlapping(index, 0, 100).empty());
  index.insert({100, 200, 1});
  index.insert({0, 10, 2});
  index.insert({~Addr{0} - 10, ~Addr{0}, 3});
  EXPECT_EQ(overlapping(index, 10, 100), std::vector<Addr>{});
  EXPECT_EQ(overlapping(index, 9, 101), (std::vector<Addr>{0, 100}));
  EXPECT_EQ(overlapping(index, 150, 150), std::vector<Addr>{});  // empty range
  EXPECT_EQ(index.containing(~Addr{0} - 1)->slot, 3u);
  EXPECT_EQ(index.containing(~Addr{0}), nullptr);
  index.erase(100);
  index.erase(100);  // not there: nothing happens
  EXPECT_EQ(index.size(), 2u);
  EXPECT_EQ(index.containing(150), nullptr);
}

}  // namespace
}  // namespace xsc
