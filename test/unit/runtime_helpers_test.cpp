// The runtime's pure helpers: stream-handle resolution and the kernel
// argument scan. (The rest of the runtime needs a GPU; see test/runtime.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/cuda/param_scan.h"
#include "runtime/cuda/stream_id.h"
#include "runtime/cuda/wait_value.h"
#include "runtime/tracked_pages.h"

namespace xsc::rt {
namespace {

// CU_STREAM_WAIT_VALUE_GEQ, _EQ, _AND, _NOR, with the flush bit ignored.
TEST(WaitValue, Conditions) {
  EXPECT_TRUE(value_satisfies(5, 5, 0, false));
  EXPECT_TRUE(value_satisfies(6, 5, 0, false));
  EXPECT_FALSE(value_satisfies(4, 5, 0, false));
  // GEQ compares cyclically: a counter that wrapped is still ahead.
  EXPECT_TRUE(value_satisfies(2, 0xfffffffeu, 0, false));
  EXPECT_FALSE(value_satisfies(0xfffffffeu, 2, 0, false));
  EXPECT_TRUE(value_satisfies(0x100000001ull, 0x100000000ull, 0, true));
  EXPECT_FALSE(value_satisfies(0x0ffffffffull, 0x100000000ull, 0, true));
  // A 32-bit wait sees the low word only.
  EXPECT_TRUE(value_satisfies(0x700000005ull, 5, 1, false));
  EXPECT_FALSE(value_satisfies(0x700000005ull, 5, 1, true));
  EXPECT_TRUE(value_satisfies(0b0110, 0b0100, 2, false));
  EXPECT_FALSE(value_satisfies(0b0010, 0b0100, 2, false));
  EXPECT_TRUE(value_satisfies(0b0001, 0b0010, 3, false));   // ~(0b0011) has bits
  EXPECT_FALSE(value_satisfies(0xffffffffu, 0, 3, false));  // ~(all ones) is none
  EXPECT_TRUE(value_satisfies(5, 5, 1u | (1u << 30), false));
}

TEST(StreamId, LegacyHandles) {
  EXPECT_EQ(resolve_stream_handle(0, false, 7), kLegacyStream);
  EXPECT_EQ(resolve_stream_handle(kLegacyHandle, false, 7), kLegacyStream);
  // cudaStreamLegacy stays legacy even in per-thread-default code.
  EXPECT_EQ(resolve_stream_handle(kLegacyHandle, true, 7), kLegacyStream);
}

TEST(StreamId, PerThreadDefaultStreams) {
  const StreamId t3 = resolve_stream_handle(kPerThreadHandle, false, 3);
  const StreamId t4 = resolve_stream_handle(kPerThreadHandle, false, 4);
  EXPECT_NE(t3, t4);
  EXPECT_NE(t3, kLegacyStream);
  EXPECT_TRUE(is_per_thread_stream_id(t3));
  // Handle 0 in a _ptsz call is the calling thread's own stream.
  EXPECT_EQ(resolve_stream_handle(0, true, 3), t3);
}

TEST(StreamId, OnlyPlausibleObjectsAreQueried) {
  // Values applications pass to NCCL in tests, or null-ish handles: never
  // handed to the driver, which would dereference them.
  EXPECT_FALSE(may_query_stream(0x77));
  EXPECT_FALSE(may_query_stream(0xc0));
  EXPECT_FALSE(may_query_stream(0x5592b3a1d554));  // misaligned
  EXPECT_FALSE(may_query_stream(per_thread_stream_id(3)));
  EXPECT_TRUE(may_query_stream(0x5592b3a1d550));
}

TEST(StreamId, RealHandlesPassThrough) {
  const std::uint64_t handle = 0x55d0c0ffee00;
  EXPECT_EQ(resolve_stream_handle(handle, false, 1), handle);
  EXPECT_EQ(resolve_stream_handle(handle, true, 1), handle);
  EXPECT_FALSE(is_per_thread_stream_id(handle));
}

std::vector<std::uint64_t> scan(void* const* params, const std::vector<ParamSlot>& slots) {
  std::vector<std::uint64_t> words;
  scan_kernel_params(params, slots.data(), slots.size(),
                     [&](std::uint64_t w) { words.push_back(w); });
  return words;
}

TEST(ParamScan, PointerParametersAndScalars) {
  std::uint64_t a = 0x7f0000001000, b = 0x7f0000002000;
  int n = 1024;
  float alpha = 2.0f;
  void* params[] = {&a, &n, &b, &alpha};
  const std::vector<ParamSlot> slots = {{0, 8}, {8, 4}, {16, 8}, {24, 4}};
  EXPECT_EQ(scan(params, slots), (std::vector<std::uint64_t>{a, b}));
}

// Only words inside the tracked allocations' span are passed on, in both
// argument forms; the span is clipped to plausible addresses, and an empty
// one passes nothing.
TEST(ParamScan, WindowOfTrackedAddresses) {
  std::uint64_t words[] = {0x7f0000001000, 0x7f0000001fff, 0x7f0000002000, 0x7effffffffff, 5, 0};
  const ParamSlot slot{0, sizeof words};
  void* params[] = {words};
  std::vector<std::uint64_t> seen;
  auto sink = [&](std::uint64_t w) { seen.push_back(w); };
  scan_kernel_params(params, &slot, 1, AddressWindow(0x7f0000001000, 0x7f0000002000), sink);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0x7f0000001000, 0x7f0000001fff}));
  seen.clear();
  scan_packed_buffer(words, sizeof words, AddressWindow(0x7f0000001000, 0x7f0000002001), sink);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0x7f0000001000, 0x7f0000001fff, 0x7f0000002000}));
  seen.clear();
  scan_packed_buffer(words, sizeof words, AddressWindow(0, 0x7f0000001001), sink);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0x7f0000001000, 0x7effffffffff}));  // not 5, not 0
  seen.clear();
  scan_packed_buffer(words, sizeof words, AddressWindow(~0ull, 0), sink);  // nothing tracked
  EXPECT_TRUE(seen.empty());
  EXPECT_TRUE(AddressWindow(0x2000, 0x1000).empty());
}

// Every byte of a marked range may be held; a word on a page no range ever
// covered is dropped (a thread's stack among device segments), and marks
// stay after the allocation is gone.
TEST(TrackedPages, MarksEveryPageOfARange) {
  auto pages = std::make_unique<TrackedPages>();
  constexpr std::uint64_t kPage = std::uint64_t{1} << TrackedPages::kPageShift;
  const std::uint64_t segment = 0x7f2a00000000;  // 3 pages and a byte
  EXPECT_FALSE(pages->may_hold(segment));
  pages->add(segment + 16, segment + 3 * kPage + 1);
  for (std::uint64_t at = segment; at <= segment + 3 * kPage; at += kPage / 4)
    EXPECT_TRUE(pages->may_hold(at)) << std::hex << at;
  EXPECT_TRUE(pages->may_hold(segment + 3 * kPage + kPage - 1));
  // Pages around it, and a stack-like address far from it, were never marked
  // (their bits differ from the four marked ones: pages share a bit only
  // 512 GiB apart, as this one does).
  EXPECT_FALSE(pages->may_hold(segment - 1));
  EXPECT_FALSE(pages->may_hold(segment + 4 * kPage));
  EXPECT_FALSE(pages->may_hold(0x7ffd12345678));
  EXPECT_TRUE(pages->may_hold(segment + (TrackedPages::kBits << TrackedPages::kPageShift)));
  // Two hundred segments of 8 pages, 3 pages apart from each other: each
  // page between them still answers for itself.
  const std::uint64_t arena = 0x7f4000000000;
  for (std::uint64_t s = 0; s < 200; ++s)
    pages->add(arena + s * 11 * kPage, arena + (s * 11 + 8) * kPage);
  for (std::uint64_t s = 0; s < 200; ++s)
    for (std::uint64_t p = 8; p < 11; ++p)
      ASSERT_FALSE(pages->may_hold(arena + (s * 11 + p) * kPage)) << s << " " << p;
  // A one-byte range marks its page.
  pages->add(0x7f3000000123, 0x7f3000000124);
  EXPECT_TRUE(pages->may_hold(0x7f3000000000));
  EXPECT_TRUE(pages->may_hold(0x7f30001fffff));
}

// A range wider than the bitmap marks every bit: every word may be held.
TEST(TrackedPages, HugeRangeMarksEverything) {
  auto pages = std::make_unique<TrackedPages>();
  constexpr std::uint64_t kPage = std::uint64_t{1} << TrackedPages::kPageShift;
  pages->add(0x100000000000, 0x100000000000 + (TrackedPages::kMaxPagesMarked + 1) * kPage);
  EXPECT_TRUE(pages->may_hold(0x10000));
  EXPECT_TRUE(pages->may_hold(0x7ffd12345678));
}

TEST(ParamScan, PointersInsideStructs) {
  struct View {
    std::uint64_t data;
    std::uint32_t rows, cols;
    std::uint64_t other;
  } view{0x7f0000003000, 4, 0, 0x7f0000004000};
  void* params[] = {&view};
  const std::vector<ParamSlot> slots = {{0, sizeof(View)}};
  EXPECT_EQ(scan(params, slots), (std::vector<std::uint64_t>{view.data, view.other}));
  // Two packed ints can look like an address; the checker's allocation
  // lookup, not the scan, rejects such words.
  view.cols = 4;
  EXPECT_EQ(scan(params, slots).size(), 3u);
}

TEST(ParamScan, MisalignedParameterStartsAtNextAlignedWord) {
  // A 12-byte parameter at offset 4: only its bytes at buffer offset 8..15
  // can hold an aligned pointer.
  unsigned char value[12] = {};
  const std::uint64_t ptr = 0x7f0000005000;
  std::memcpy(value + 4, &ptr, 8);
  void* params[] = {value};
  EXPECT_EQ(scan(params, {{4, 12}}), (std::vector<std::uint64_t>{ptr}));
}

TEST(ParamScan, SmallAndNonCanonicalWordsAreSkipped) {
  std::uint64_t small = 42, kernel_half = 0xffff800000000000ull, null_ptr = 0;
  void* params[] = {&small, &kernel_half, &null_ptr};
  EXPECT_TRUE(scan(params, {{0, 8}, {8, 8}, {16, 8}}).empty());
}

TEST(ParamScan, PackedBuffer) {
  struct {
    std::uint64_t x;
    std::int32_t n;
    std::int32_t pad;
    std::uint64_t y;
  } buffer{0x7f0000006000, 3, 0, 0x7f0000007000};
  std::size_t size = sizeof buffer;
  void* extra[] = {reinterpret_cast<void*>(kLaunchParamBufferPointer), &buffer,
                   reinterpret_cast<void*>(kLaunchParamBufferSize), &size,
                   reinterpret_cast<void*>(kLaunchParamEnd)};
  const void* found = nullptr;
  std::size_t found_size = 0;
  ASSERT_TRUE(packed_param_buffer(extra, &found, &found_size));
  EXPECT_EQ(found, &buffer);
  EXPECT_EQ(found_size, sizeof buffer);
  std::vector<std::uint64_t> words;
  scan_packed_buffer(found, found_size, [&](std::uint64_t w) { words.push_back(w); });
  EXPECT_EQ(words, (std::vector<std::uint64_t>{buffer.x, buffer.y}));
}

TEST(ParamScan, ExtraWithoutBuffer) {
  void* extra[] = {reinterpret_cast<void*>(kLaunchParamEnd)};
  const void* found = nullptr;
  std::size_t size = 0;
  EXPECT_FALSE(packed_param_buffer(extra, &found, &size));
  EXPECT_FALSE(packed_param_buffer(nullptr, &found, &size));
}

}  // namespace
}  // namespace xsc::rt
