// The condition of a stream's wait for a value in memory
// (cuStreamWaitValue32/64, CUstreamWaitValue_flags), as the driver
// evaluates it: whether `have`, the word's value, satisfies a wait for
// `want`. Pure: also used by the unit tests.
#pragma once

#include <cstdint>

namespace xsc::rt {

// The bits a 32-bit (or, `wide`, 64-bit) operation reads or writes.
inline std::uint64_t value_mask(bool wide) { return wide ? ~std::uint64_t{0} : 0xffffffffull; }

inline bool value_satisfies(std::uint64_t have, std::uint64_t want, unsigned flags, bool wide) {
  const std::uint64_t mask = value_mask(wide);
  have &= mask;
  want &= mask;
  switch (flags & 0x3u) {
    case 0:  // CU_STREAM_WAIT_VALUE_GEQ: (int)(*addr - value) >= 0, cyclically
      return wide ? static_cast<std::int64_t>(have - want) >= 0
                  : static_cast<std::int32_t>(static_cast<std::uint32_t>(have - want)) >= 0;
    case 1:  // CU_STREAM_WAIT_VALUE_EQ
      return have == want;
    case 2:  // CU_STREAM_WAIT_VALUE_AND
      return (have & want) != 0;
    default:  // CU_STREAM_WAIT_VALUE_NOR
      return (~(have | want) & mask) != 0;
  }
}

}  // namespace xsc::rt
