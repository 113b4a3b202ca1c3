// StartTable against a std::unordered_map model: random adds and removes,
// with starts chosen so that many share a home cell and probe runs wrap
// around the end of the table, through several growths.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>
#include <vector>

#include "checker/engine/start_table.h"

namespace xsc {
namespace {

struct Cell {
  Addr start = 0;
  Addr end = 0;
  std::uint32_t slot = StartTable<Cell>::kEmptySlot;
};

TEST(StartTable, EmptyTableFindsNothingAndRemovesNothing) {
  StartTable<Cell> table;
  EXPECT_EQ(table.find(0x1000), nullptr);
  table.remove(0x1000);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.capacity(), 0u);
}

TEST(StartTable, AddReportsGrowthAndKeepsEveryCell) {
  StartTable<Cell> table;
  EXPECT_TRUE(table.add(Cell{0x1000, 0x1100, 0}));  // the first table
  EXPECT_EQ(table.capacity(), 64u);
  int growths = 0;
  for (std::uint32_t i = 1; i < 200; ++i)
    growths += table.add(Cell{0x1000 + 0x100 * Addr{i}, 0x1100 + 0x100 * Addr{i}, i});
  EXPECT_EQ(growths, 3);  // 64 -> 128 -> 256 -> 512 cells, at most 5/8 full
  EXPECT_EQ(table.capacity(), 512u);
  for (std::uint32_t i = 0; i < 200; ++i) {
    const Cell* c = table.find(0x1000 + 0x100 * Addr{i});
    ASSERT_NE(c, nullptr) << i;
    EXPECT_EQ(c->slot, i);
    EXPECT_EQ(c->end, 0x1100 + 0x100 * Addr{i});
  }
}

TEST(StartTable, MatchesAModelUnderCollisionsAndRemovals) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    StartTable<Cell> table;
    std::unordered_map<Addr, std::uint32_t> model;
    // Starts from a small pool: the same ones come back after removal, and
    // with few distinct homes long probe runs form and wrap.
    std::vector<Addr> pool;
    for (int i = 0; i < 300; ++i) pool.push_back(0x7f0000000000 + 0x200 * Addr(rng() % 4096));
    std::uint32_t next_slot = 0;
    for (int step = 0; step < 5000; ++step) {
      const Addr start = pool[rng() % pool.size()];
      if (model.count(start) == 0 && rng() % 3 != 0) {
        table.add(Cell{start, start + 0x200, next_slot});
        model[start] = next_slot++;
      } else {
        table.remove(start);
        model.erase(start);
      }
      ASSERT_EQ(table.size(), model.size()) << "seed " << seed << " step " << step;
      if (step % 50 == 0 || step == 4999) {
        for (const Addr a : pool) {
          const Cell* c = table.find(a);
          const auto it = model.find(a);
          ASSERT_EQ(c != nullptr, it != model.end()) << "seed " << seed << " step " << step;
          if (c) {
            EXPECT_EQ(c->slot, it->second);
            EXPECT_EQ(c->end, a + 0x200);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace xsc
