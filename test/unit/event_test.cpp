// Spellings of the event model and finding kinds round-trip.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "checker/engine/event.h"
#include "checker/engine/finding.h"

namespace xsc {
namespace {

template <typename Enum>
void expect_round_trip(int count) {
  std::set<std::string> seen;
  for (int i = 0; i < count; ++i) {
    Enum value = static_cast<Enum>(i);
    std::string_view text = to_string(value);
    EXPECT_NE(text, "invalid");
    EXPECT_TRUE(seen.insert(std::string(text)).second) << text;
    Enum parsed = static_cast<Enum>(count - 1 - i);
    ASSERT_TRUE(parse(text, &parsed)) << text;
    EXPECT_EQ(parsed, value);
  }
  Enum untouched = static_cast<Enum>(0);
  EXPECT_FALSE(parse("no-such-thing", &untouched));
  EXPECT_FALSE(parse("", &untouched));
  EXPECT_EQ(to_string(static_cast<Enum>(count)), "invalid");
}

TEST(EventSpelling, RoundTrips) {
  expect_round_trip<EventKind>(kNumEventKinds);
  expect_round_trip<StreamFlags>(2);
  expect_round_trip<AllocKind>(4);
  expect_round_trip<FreeKind>(4);
  expect_round_trip<Access>(3);
  expect_round_trip<UseWhat>(7);
}

TEST(EventSpelling, KnownWords) {
  EXPECT_EQ(to_string(EventKind::kStreamWaitEvent), "stream-wait-event");
  EXPECT_EQ(to_string(EventKind::kFreeCompleted), "free-completed");
  EXPECT_EQ(to_string(StreamFlags::kNonBlocking), "non-blocking");
  EXPECT_EQ(to_string(AllocKind::kCachingAllocator), "caching");
  EXPECT_EQ(to_string(AllocKind::kPinnedHost), "pinned-host");
  EXPECT_EQ(to_string(FreeKind::kStreamOrdered), "stream-ordered");
  EXPECT_EQ(to_string(UseWhat::kHostAccess), "host-access");
  EXPECT_EQ(to_string(UseWhat::kOperator), "operator");
}

TEST(FindingSpelling, RuleIds) {
  EXPECT_EQ(to_string(FindingKind::kUnorderedFree), "unordered-free");
  EXPECT_EQ(to_string(FindingKind::kUseAfterFree), "use-after-free");
  EXPECT_EQ(to_string(FindingKind::kUseBeforeReady), "use-before-ready");
  EXPECT_EQ(rule_id(FindingKind::kUnorderedFree), "xstream-unordered-free");
  EXPECT_EQ(rule_id(FindingKind::kUseAfterFree), "xstream-use-after-free");
  EXPECT_EQ(rule_id(FindingKind::kUseBeforeReady), "xstream-use-before-ready");
}

}  // namespace
}  // namespace xsc
