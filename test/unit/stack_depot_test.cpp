#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "checker/engine/stack_depot.h"

namespace xsc {
namespace {

class FakeSymbolizer : public Symbolizer {
 public:
  Frame symbolize(std::uint64_t pc) override {
    ++calls;
    Frame f;
    f.function = "fn_" + std::to_string(pc);
    f.file = "f.cc";
    f.line = static_cast<std::uint32_t>(pc);
    return f;
  }
  std::atomic<int> calls{0};
};

TEST(StackDepot, HashConsesPcs) {
  StackDepot depot;
  std::uint64_t a[] = {1, 2, 3};
  std::uint64_t b[] = {1, 2, 4};
  StackId ia = depot.intern_pcs(a, 3);
  EXPECT_NE(ia, kNoStack);
  EXPECT_EQ(depot.intern_pcs(a, 3), ia);
  EXPECT_NE(depot.intern_pcs(b, 3), ia);
  EXPECT_NE(depot.intern_pcs(a, 2), ia);
  EXPECT_EQ(depot.intern_pcs(a, 0), kNoStack);
  EXPECT_EQ(depot.size(), 3u);
}

TEST(StackDepot, SymbolizesLazilyOnce) {
  StackDepot depot;
  auto sym = std::make_shared<FakeSymbolizer>();
  depot.set_symbolizer(sym);
  std::uint64_t pcs[] = {10, 20};
  StackId id = depot.intern_pcs(pcs, 2);
  EXPECT_EQ(sym->calls, 0);
  auto frames = depot.frames(id);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function, "fn_10");
  EXPECT_EQ(frames[1].pc, 20u);
  depot.frames(id);
  EXPECT_EQ(sym->calls, 2);
  EXPECT_TRUE(depot.frames(kNoStack).empty());
  EXPECT_TRUE(depot.frames(999).empty());
}

TEST(StackDepot, RawPcsWithoutSymbolizer) {
  StackDepot depot;
  std::uint64_t pcs[] = {0x1234};
  auto frames = depot.frames(depot.intern_pcs(pcs, 1));
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].pc, 0x1234u);
  EXPECT_TRUE(frames[0].function.empty());
}

TEST(StackDepot, HashConsesFrames) {
  StackDepot depot;
  Frame f;
  f.function = "train";
  f.file = "train.py";
  f.line = 42;
  StackId id = depot.intern_frames({f});
  EXPECT_EQ(depot.intern_frames({f}), id);
  f.line = 43;
  EXPECT_NE(depot.intern_frames({f}), id);
  EXPECT_EQ(depot.frames(id)[0].line, 42u);
  EXPECT_EQ(depot.intern_frames({}), kNoStack);
}

TEST(StackDepot, DeferredStacksResolveOnDemandOrAtSafePoint) {
  StackDepot depot;
  int runs = 0;
  auto make = [&](std::string name) {
    return [&runs, name] {
      ++runs;
      Frame f;
      f.function = name;
      return std::vector<Frame>{f};
    };
  };
  StackId a = depot.intern_deferred(make("a"));
  StackId b = depot.intern_deferred(make("b"));
  EXPECT_NE(a, b);
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(depot.frames(a)[0].function, "a");
  EXPECT_EQ(runs, 1);
  depot.resolve_pending();
  EXPECT_EQ(runs, 2);
  depot.resolve_pending();
  depot.frames(b);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(depot.frames(b)[0].function, "b");
}

TEST(StackDepot, ResolverMayInternStacks) {
  StackDepot depot;
  StackId id = depot.intern_deferred([&depot] {
    std::uint64_t pcs[] = {7};
    depot.intern_pcs(pcs, 1);  // would deadlock if run under the lock
    return std::vector<Frame>{Frame{}};
  });
  EXPECT_EQ(depot.frames(id).size(), 1u);
  EXPECT_EQ(depot.size(), 2u);
}

TEST(StackDepot, ReserveThenDefine) {
  StackDepot depot;
  StackId id = depot.reserve();
  EXPECT_NE(id, kNoStack);
  EXPECT_TRUE(depot.frames(id).empty());
  Frame f;
  f.function = "later";
  depot.define(id, {f});
  EXPECT_EQ(depot.frames(id)[0].function, "later");
  f.function = "again";
  depot.define(id, {f});
  EXPECT_EQ(depot.frames(id)[0].function, "again");
  depot.define(12345, {f});  // unknown: ignored
  EXPECT_EQ(depot.size(), 1u);
}

TEST(StackDepot, ConcurrentInterning) {
  StackDepot depot;
  std::vector<std::thread> threads;
  std::vector<StackId> ids(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (std::uint64_t i = 0; i < 1000; ++i) {
        std::uint64_t pcs[] = {i, i + 1};
        depot.intern_pcs(pcs, 2);
      }
      std::uint64_t mine[] = {99999, 1};
      ids[t] = depot.intern_pcs(mine, 2);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(depot.size(), 1001u);
  for (StackId id : ids) EXPECT_EQ(id, ids[0]);
}

TEST(NameTable, InternsAndLooksUp) {
  NameTable names;
  EXPECT_EQ(names.intern(""), kNoName);
  NameId a = names.intern("gemm_kernel");
  EXPECT_NE(a, kNoName);
  EXPECT_EQ(names.intern(std::string("gemm_") + "kernel"), a);
  NameId b = names.intern("ncclAllGather");
  EXPECT_NE(a, b);
  EXPECT_EQ(names.get(a), "gemm_kernel");
  EXPECT_EQ(names.get(b), "ncclAllGather");
  EXPECT_EQ(names.get(kNoName), "");
  EXPECT_EQ(names.get(999), "");
  std::string_view held = names.get(a);
  for (int i = 0; i < 1000; ++i) names.intern("k" + std::to_string(i));
  EXPECT_EQ(held, "gemm_kernel");  // stable across growth
  EXPECT_EQ(names.size(), 1002u);
}

}  // namespace
}  // namespace xsc
