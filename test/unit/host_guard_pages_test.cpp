// host_guard=1's bookkeeping (runtime/host/host_guard_pages.h): the pages a
// copy's host bytes cover, the protection each page takes among the pending
// copies, and what lifting a guard gives back.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/host/host_guard_pages.h"

namespace xsc::rt::guard {
namespace {

constexpr std::uint64_t kPage = 4096;

TEST(HostGuardPages, WholePagesOfTheBytes) {
  // Aligned and whole.
  PageRange r = pages_of(0x10000, 2 * kPage, kPage);
  EXPECT_EQ(r.begin, 0x10000u);
  EXPECT_EQ(r.end, 0x12000u);
  // One byte: its page.
  r = pages_of(0x10fff, 1, kPage);
  EXPECT_EQ(r.begin, 0x10000u);
  EXPECT_EQ(r.end, 0x11000u);
  // Unaligned on both ends: every page that holds a byte.
  r = pages_of(0x10ff0, 0x20, kPage);
  EXPECT_EQ(r.begin, 0x10000u);
  EXPECT_EQ(r.end, 0x12000u);
  // Ends exactly at a page boundary: that page is not taken.
  r = pages_of(0x10800, 0x800, kPage);
  EXPECT_EQ(r.begin, 0x10000u);
  EXPECT_EQ(r.end, 0x11000u);
  // No bytes: no pages.
  EXPECT_TRUE(pages_of(0x10000, 0, kPage).empty());
  // Other page sizes (64 KiB pages on some arm64 kernels).
  r = pages_of(0x12345, 0x10000, 0x10000);
  EXPECT_EQ(r.begin, 0x10000u);
  EXPECT_EQ(r.end, 0x30000u);
  // Near the top of the address space the last page is left out, not wrapped.
  r = pages_of(~std::uint64_t{0} - 10, 100, kPage);
  EXPECT_LE(r.begin, r.end);
}

Guard make(std::uint64_t id, std::uint64_t addr, std::uint64_t bytes, bool host_written) {
  Guard g;
  g.id = id;
  g.pages = pages_of(addr, bytes, kPage);
  g.bytes_begin = addr;
  g.bytes_end = addr + bytes;
  g.host_written = host_written;
  g.protect = host_written ? Protect::kNone : Protect::kRead;
  return g;
}

using Segments = std::vector<std::pair<PageRange, Protect>>;

Segments segments(GuardSet& set, PageRange range) {
  Segments out;
  set.for_each_segment(range, [&](PageRange r, Protect p) { out.push_back({r, p}); });
  return out;
}

TEST(HostGuardPages, DownloadNoAccessUploadReadOnly) {
  GuardSet set(8);
  ASSERT_TRUE(set.add(make(1, 0x10000, 3 * kPage, /*host_written=*/true)));
  ASSERT_TRUE(set.add(make(2, 0x20000, kPage, /*host_written=*/false)));
  EXPECT_EQ(set.protection_of(0x10000), Protect::kNone);
  EXPECT_EQ(set.protection_of(0x12000), Protect::kNone);
  EXPECT_EQ(set.protection_of(0x13000), Protect::kReadWrite);
  EXPECT_EQ(set.protection_of(0x20000), Protect::kRead);
  EXPECT_TRUE(set.covers(0x11000));
  EXPECT_FALSE(set.covers(0x30000));
}

TEST(HostGuardPages, OverlappingGuardsTakeTheStrictest) {
  GuardSet set(8);
  // An upload reads pages 0-3; a download writes pages 2-5 of the same buffer.
  ASSERT_TRUE(set.add(make(1, 0x10000, 4 * kPage, false)));
  ASSERT_TRUE(set.add(make(2, 0x12000, 4 * kPage, true)));
  const Segments all = segments(set, {0x10000, 0x16000});
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].first.begin, 0x10000u);
  EXPECT_EQ(all[0].first.end, 0x12000u);
  EXPECT_EQ(all[0].second, Protect::kRead);
  EXPECT_EQ(all[1].first.begin, 0x12000u);
  EXPECT_EQ(all[1].first.end, 0x16000u);
  EXPECT_EQ(all[1].second, Protect::kNone);

  // Lifting the download gives its pages back: those the upload still
  // reads become read-only, the rest writable again.
  const PageRange changed = set.remove_if([](const Guard& g) { return g.id == 2; });
  EXPECT_EQ(changed.begin, 0x12000u);
  EXPECT_EQ(changed.end, 0x16000u);
  const Segments after = segments(set, changed);
  ASSERT_EQ(after.size(), 2u);
  EXPECT_EQ(after[0].first.begin, 0x12000u);
  EXPECT_EQ(after[0].first.end, 0x14000u);
  EXPECT_EQ(after[0].second, Protect::kRead);
  EXPECT_EQ(after[1].first.begin, 0x14000u);
  EXPECT_EQ(after[1].first.end, 0x16000u);
  EXPECT_EQ(after[1].second, Protect::kReadWrite);
}

TEST(HostGuardPages, SegmentsMergeAndStayInTheirRange) {
  GuardSet set(8);
  // Two downloads into adjacent pages: one run of no access.
  ASSERT_TRUE(set.add(make(1, 0x10000, kPage, true)));
  ASSERT_TRUE(set.add(make(2, 0x11000, kPage, true)));
  Segments s = segments(set, {0x10000, 0x12000});
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].first.begin, 0x10000u);
  EXPECT_EQ(s[0].first.end, 0x12000u);
  // A range that only partly overlaps a guard is cut to itself.
  s = segments(set, {0x11000, 0x13000});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].first.begin, 0x11000u);
  EXPECT_EQ(s[0].first.end, 0x12000u);
  EXPECT_EQ(s[0].second, Protect::kNone);
  EXPECT_EQ(s[1].first.begin, 0x12000u);
  EXPECT_EQ(s[1].first.end, 0x13000u);
  EXPECT_EQ(s[1].second, Protect::kReadWrite);
  // An empty range: nothing.
  EXPECT_TRUE(segments(set, {}).empty());
}

TEST(HostGuardPages, HoldingFindsOnlyTheCopysBytes) {
  GuardSet set(8);
  // 256 bytes in the middle of a page: the page is guarded, the rest of it
  // is other data.
  ASSERT_TRUE(set.add(make(1, 0x10100, 0x100, true)));
  EXPECT_TRUE(set.covers(0x10000));
  ASSERT_NE(set.holding(0x10100), nullptr);
  EXPECT_EQ(set.holding(0x10100)->id, 1u);
  EXPECT_NE(set.holding(0x101ff), nullptr);
  EXPECT_EQ(set.holding(0x10200), nullptr);
  EXPECT_EQ(set.holding(0x100ff), nullptr);
}

TEST(HostGuardPages, FaultLiftsEveryGuardOfThePage) {
  GuardSet set(8);
  ASSERT_TRUE(set.add(make(1, 0x10000, 2 * kPage, true)));
  ASSERT_TRUE(set.add(make(2, 0x11000, 2 * kPage, false)));
  ASSERT_TRUE(set.add(make(3, 0x30000, kPage, true)));
  const std::uint64_t page = 0x11000;
  const PageRange changed = set.remove_if([&](const Guard& g) { return g.pages.contains(page); });
  EXPECT_EQ(changed.begin, 0x10000u);
  EXPECT_EQ(changed.end, 0x13000u);
  ASSERT_EQ(set.size(), 1u);
  EXPECT_EQ(set.at(0).id, 3u);
  const Segments s = segments(set, changed);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].second, Protect::kReadWrite);
  // Removing nothing changes nothing.
  EXPECT_TRUE(set.remove_if([](const Guard&) { return false; }).empty());
}

TEST(HostGuardPages, FullSetRefusesAndEmptyPagesAreNoGuard) {
  GuardSet set(2);
  EXPECT_TRUE(set.add(make(1, 0x10000, kPage, true)));
  EXPECT_TRUE(set.add(make(2, 0x20000, kPage, true)));
  EXPECT_FALSE(set.add(make(3, 0x30000, kPage, true)));
  EXPECT_EQ(set.size(), 2u);
  GuardSet other(2);
  EXPECT_FALSE(other.add(make(1, 0x10000, 0, true)));
  EXPECT_TRUE(other.empty());
}

}  // namespace
}  // namespace xsc::rt::guard
