#include <gtest/gtest.h>

#include "checker/engine/vector_clock.h"

namespace xsc {
namespace {

TEST(VectorClock, MissingEntriesReadAsZero) {
  VectorClock c;
  EXPECT_EQ(c.get(0), 0u);
  EXPECT_EQ(c.get(1000), 0u);
  c.set(5, 0);
  EXPECT_EQ(c.size(), 0u);  // setting zero does not grow
}

TEST(VectorClock, TickAdvancesOwnComponent) {
  VectorClock c;
  EXPECT_EQ(c.tick(2), 1u);
  EXPECT_EQ(c.tick(2), 2u);
  EXPECT_EQ(c.get(2), 2u);
  EXPECT_EQ(c.get(1), 0u);
}

TEST(VectorClock, JoinIsComponentWiseMax) {
  VectorClock a, b;
  a.set(0, 5);
  a.set(1, 1);
  b.set(1, 3);
  b.set(3, 7);
  a.join(b);
  EXPECT_EQ(a.get(0), 5u);
  EXPECT_EQ(a.get(1), 3u);
  EXPECT_EQ(a.get(2), 0u);
  EXPECT_EQ(a.get(3), 7u);
  EXPECT_TRUE(b.happens_before_or_equal(a));
  EXPECT_FALSE(a.happens_before_or_equal(b));
}

TEST(VectorClock, AssignReplaces) {
  VectorClock a, b;
  a.set(4, 9);
  b.set(0, 1);
  a.assign(b);
  EXPECT_EQ(a.get(4), 0u);
  EXPECT_EQ(a.get(0), 1u);
  a.release();
  EXPECT_EQ(a.get(0), 0u);
}

}  // namespace
}  // namespace xsc
