// The bytes a kernel writes through an array descriptor it declares written
// whole (runtime/cuda/param_access/declared_params.h).
#include "runtime/cuda/param_access/declared_params.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace xsc::rt {
namespace {

DeclaredParam writes(std::uint32_t itemsize, std::uint32_t ndim) {
  DeclaredParam param;
  param.access = DeclaredAccess::kWritesArray;
  param.itemsize = itemsize;
  param.ndim = ndim;
  return param;
}

// {data, count, shape..., strides...}, as CuPy passes a CArray.
std::vector<unsigned char> descriptor(std::uint64_t data, const std::vector<std::int64_t>& shape,
                                      const std::vector<std::int64_t>& strides,
                                      std::int64_t count = -1) {
  if (count < 0) {
    count = 1;
    for (std::int64_t extent : shape) count *= extent;
  }
  std::vector<std::int64_t> words = {static_cast<std::int64_t>(data), count};
  words.insert(words.end(), shape.begin(), shape.end());
  words.insert(words.end(), strides.begin(), strides.end());
  std::vector<unsigned char> bytes(words.size() * 8);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

ArrayWrite extent_of(const std::vector<unsigned char>& bytes, const DeclaredParam& param,
                     bool* ok) {
  ArrayWrite out;
  *ok = array_write_extent(bytes.data(), bytes.size(), param, &out);
  return out;
}

TEST(DeclaredParams, ContiguousArrayWritesAllItsBytes) {
  bool ok = false;
  const ArrayWrite w = extent_of(descriptor(0x1000, {256}, {4}), writes(4, 1), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.addr, 0x1000u);
  EXPECT_EQ(w.size, 1024u);
}

TEST(DeclaredParams, DenseInAnyOrderOfDimensions) {
  bool ok = false;
  // Column-major 8 x 16 doubles; a transposed view.
  ArrayWrite w = extent_of(descriptor(0x2000, {8, 16}, {8, 64}), writes(8, 2), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.addr, 0x2000u);
  EXPECT_EQ(w.size, 8u * 16u * 8u);
  // Dimensions of one element move nothing, whatever their stride.
  w = extent_of(descriptor(0x2000, {1, 16, 1}, {999, 4, -7}), writes(4, 3), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.size, 64u);
}

TEST(DeclaredParams, NegativeStridesStartAtTheLowestElement) {
  bool ok = false;
  // a[::-1] of 10 floats: the data pointer is the last element's.
  const ArrayWrite w = extent_of(descriptor(0x3000 + 36, {10}, {-4}), writes(4, 1), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.addr, 0x3000u);
  EXPECT_EQ(w.size, 40u);
}

TEST(DeclaredParams, StridedArrayWritesOnlyItsFirstElement) {
  bool ok = false;
  // Every other float, and a broadcast (stride 0): other arrays may own
  // the bytes between the elements.
  ArrayWrite w = extent_of(descriptor(0x4000, {100}, {8}), writes(4, 1), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.addr, 0x4000u);
  EXPECT_EQ(w.size, 4u);
  w = extent_of(descriptor(0x4000, {4, 4}, {64, 4}), writes(4, 2), &ok);  // rows padded
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.size, 4u);
  w = extent_of(descriptor(0x4000, {2, 2, 2}, {4, 4, 20}), writes(4, 3), &ok);  // overlapping
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.size, 4u);
}

TEST(DeclaredParams, ZeroDimensionalArrayIsOneElement) {
  bool ok = false;
  const ArrayWrite w = extent_of(descriptor(0x5000, {}, {}, 1), writes(16, 0), &ok);
  ASSERT_TRUE(ok);
  EXPECT_EQ(w.addr, 0x5000u);
  EXPECT_EQ(w.size, 16u);
}

TEST(DeclaredParams, BytesThatAreNoSuchDescriptorWriteNothing) {
  ArrayWrite w;
  const std::vector<unsigned char> good = descriptor(0x6000, {16}, {4});
  EXPECT_FALSE(array_write_extent(good.data(), good.size() - 8, writes(4, 1), &w));  // length
  EXPECT_FALSE(array_write_extent(good.data(), good.size(), writes(4, 2), &w));      // ndim
  EXPECT_FALSE(array_write_extent(nullptr, good.size(), writes(4, 1), &w));
  DeclaredParam read = writes(4, 1);
  read.access = DeclaredAccess::kRead;
  EXPECT_FALSE(array_write_extent(good.data(), good.size(), read, &w));
  EXPECT_FALSE(array_write_extent(good.data(), good.size(), writes(0, 1), &w));
  const std::vector<unsigned char> null_data = descriptor(0, {16}, {4});
  EXPECT_FALSE(array_write_extent(null_data.data(), null_data.size(), writes(4, 1), &w));
  const std::vector<unsigned char> empty = descriptor(0x6000, {0}, {4});
  EXPECT_FALSE(array_write_extent(empty.data(), empty.size(), writes(4, 1), &w));
  const std::vector<unsigned char> wrong_count = descriptor(0x6000, {16}, {4}, 15);
  EXPECT_FALSE(array_write_extent(wrong_count.data(), wrong_count.size(), writes(4, 1), &w));
  const std::vector<unsigned char> huge = descriptor(0x6000, {std::int64_t{1} << 50}, {4});
  EXPECT_FALSE(array_write_extent(huge.data(), huge.size(), writes(4, 1), &w));
  // A negative stride reaching below address 0.
  const std::vector<unsigned char> below = descriptor(0x10, {100}, {-4});
  EXPECT_FALSE(array_write_extent(below.data(), below.size(), writes(4, 1), &w));
}

}  // namespace
}  // namespace xsc::rt
