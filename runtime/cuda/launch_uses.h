// A kernel launch's uses: one per distinct allocation its argument words
// point into. Made where the words are looked up: on the launching thread
// (launch.cpp), or on the checker's thread for the words a launch handed
// over unlooked (checker_thread.cpp, Locked::emit_own_stream_launch).
#pragma once

#include <cstddef>
#include <cstdint>

#include "checker/engine/event.h"

namespace xsc::rt {

// The distinct allocations a launch's words point into, in the order first
// seen, at most kMaxUses. A few are compared one by one; a launch that
// passes many (a foreach optimizer kernel carries hundreds of pointers)
// switches to a hash table, so telling them apart stays linear.
class DistinctAllocations {
 public:
  // Distinct allocations reported per launch.
  static constexpr std::size_t kMaxUses = 256;

  // Notes that the launch passed `word`, a pointer into the allocation
  // starting at `addr`; `read` when it came through a parameter the kernel
  // only reads. False when `addr` was seen already or the list is full.
  // A use is fed at the first word seen for each allocation, so that checks
  // on bytes (two slots of one pool) see where the kernel points, not the
  // allocation's start; it is a read only when every word into the
  // allocation came through a read-only parameter.
  bool add(Addr addr, Addr word, bool read) {
    // A word into an allocation seen already still says how it is used,
    // even once the list is full.
    const std::size_t seen = find(addr);
    if (seen != kNotFound) {
      read_[seen] = read_[seen] && read;
      return false;
    }
    if (n_ == kMaxUses) return false;
    if (hashed_) {
      insert_hashed(addr, n_);
    } else if (n_ == kLinear) {
      hashed_ = true;
      for (std::uint32_t& slot : table_) slot = kEmpty;
      for (std::size_t i = 0; i < n_; ++i) insert_hashed(list_[i], i);
      insert_hashed(addr, n_);
    }
    words_[n_] = word;
    read_[n_] = read;
    list_[n_++] = addr;
    return true;
  }
  std::size_t size() const { return n_; }
  // The pointer the launch passed into the i-th allocation.
  Addr operator[](std::size_t i) const { return words_[i]; }
  Access access(std::size_t i) const { return read_[i] ? Access::kRead : Access::kUnknown; }

 private:
  static constexpr std::size_t kLinear = 16;
  static constexpr std::size_t kTable = 2 * kMaxUses;  // a power of two
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  static constexpr std::size_t kNotFound = ~std::size_t{0};
  // Fibonacci hashing of the address above its low (alignment) bits.
  static std::size_t home(Addr addr) {
    return static_cast<std::size_t>((addr >> 8) * 0x9E3779B97F4A7C15ull >> 40) & (kTable - 1);
  }
  // The index of `addr` in the list, or kNotFound.
  std::size_t find(Addr addr) const {
    if (!hashed_) {
      for (std::size_t i = 0; i < n_; ++i)
        if (list_[i] == addr) return i;
      return kNotFound;
    }
    for (std::size_t i = home(addr); table_[i] != kEmpty; i = (i + 1) & (kTable - 1))
      if (list_[table_[i]] == addr) return table_[i];
    return kNotFound;
  }
  // Enters `addr`, which the table does not hold, as the list's `index`-th.
  // The table holds at most kMaxUses entries, half its slots.
  void insert_hashed(Addr addr, std::size_t index) {
    std::size_t i = home(addr);
    while (table_[i] != kEmpty) i = (i + 1) & (kTable - 1);
    table_[i] = static_cast<std::uint32_t>(index);
  }
  Addr list_[kMaxUses];
  Addr words_[kMaxUses];
  bool read_[kMaxUses];
  std::size_t n_ = 0;
  bool hashed_ = false;
  std::uint32_t table_[kTable];
};

// One use per allocation, then a bare use when there was none (pointers,
// but none into a tracked allocation: still an op on the stream), each
// passed to emit(const Event&). `bare` is the launch's use with address 0.
// Each use is at the pointer the launch passed, with size 0: for a free the
// kernel may touch any part of the allocation, for the checks on bytes it
// touches the bytes at the pointer (checker/checks/check_write_after_read.cpp).
template <typename Emit>
void for_each_launch_use(const DistinctAllocations& found, Event bare, Emit&& emit) {
  for (std::size_t i = 0; i < found.size(); ++i) {
    bare.addr = found[i];
    bare.access = found.access(i);
    emit(bare);
  }
  if (found.size() == 0) emit(bare);
}

}  // namespace xsc::rt
