#include "runtime/cuda/param_access/declared_params.h"

#include <algorithm>
#include <cstring>

namespace xsc::rt {
namespace {

// Larger than any device allocation's size or stride (2^48 bytes), so that
// the sums below cannot overflow.
constexpr std::int64_t kLimit = std::int64_t{1} << 48;
// Larger than any element (CuPy's largest scalar is 16 bytes), so that a
// count times an element size stays below 2^60.
constexpr std::uint32_t kMaxItemsize = 1u << 12;
// CuPy's arrays have at most 64 dimensions.
constexpr std::uint32_t kMaxDims = 64;

std::int64_t word_at(const unsigned char* bytes, std::size_t index) {
  std::int64_t value = 0;
  std::memcpy(&value, bytes + 8 * index, sizeof value);
  return value;
}

}  // namespace

bool array_write_extent(const unsigned char* bytes, std::size_t size, const DeclaredParam& param,
                        ArrayWrite* out) {
  if (bytes == nullptr || param.access != DeclaredAccess::kWritesArray || param.itemsize == 0 ||
      param.itemsize >= kMaxItemsize || size != array_descriptor_size(param.ndim))
    return false;
  const auto data = static_cast<std::uint64_t>(word_at(bytes, 0));
  const std::int64_t count = word_at(bytes, 1);
  if (data == 0 || count <= 0 || count >= kLimit) return false;
  const std::int64_t itemsize = param.itemsize;
  // Offset of the lowest element from the data pointer; the dimensions of
  // more than one element, by their strides' magnitudes.
  std::int64_t low = 0, product = 1;
  struct Dim {
    std::int64_t stride;
    std::int64_t extent;
  };
  Dim dims[kMaxDims];
  std::size_t n = 0;
  if (param.ndim > kMaxDims) return false;
  for (std::uint32_t d = 0; d < param.ndim; ++d) {
    const std::int64_t extent = word_at(bytes, 2 + d);
    const std::int64_t stride = word_at(bytes, 2 + param.ndim + d);
    if (extent <= 0 || extent >= kLimit || stride <= -kLimit || stride >= kLimit) return false;
    product *= extent;
    if (product >= kLimit) return false;
    if (extent == 1) continue;  // its stride moves nothing
    if (stride < 0) low += (extent - 1) * stride;
    if (low <= -kLimit) return false;
    dims[n++] = {stride < 0 ? -stride : stride, extent};
  }
  if (product != count) return false;
  // Dense: ordered by stride, each dimension steps over exactly the
  // elements of the ones inside it.
  std::sort(dims, dims + n, [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  std::int64_t step = itemsize;
  bool dense = true;
  for (std::size_t i = 0; i < n && dense; ++i) {
    dense = dims[i].stride == step;
    step *= dims[i].extent;
  }
  if (dense) {
    if (static_cast<std::uint64_t>(-low) > data) return false;
    out->addr = data - static_cast<std::uint64_t>(-low);
    out->size = static_cast<std::uint64_t>(count * itemsize);
    return true;
  }
  out->addr = data;
  out->size = static_cast<std::uint64_t>(itemsize);
  return true;
}

}  // namespace xsc::rt
