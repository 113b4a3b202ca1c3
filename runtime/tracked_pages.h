// The 2 MiB pages that ever held a tracked allocation, as a bitmap that a
// launch reads without the session lock.
//
// A kernel's arguments carry words that only look like addresses: stale
// stack words in a struct's padding or its unfilled part, pointers to host
// memory the program never pinned. The span of the tracked allocations
// (rtl.h, AddressSpan) lets most of them go, but device memory, the heap's
// mmap arenas, thread stacks and shared libraries all lie in the same part
// of the address space (0x7f... on x86-64 Linux), so a word pointing to a
// thread's stack passes the span and costs a search of the allocation map
// under the session lock, only to find nothing. Device allocations come in
// segments of at least 2 MiB (the caching allocator's smallest), so the
// pages they cover are few, and a word whose page never held any tracked
// allocation cannot point into one.
//
// Pages are only ever added, never taken out: a freed segment's pages stay,
// which costs nothing but a lookup that finds nothing, as before. A page
// number maps to one bit of kBits; two pages sharing a bit make the
// filter let a word through, never drop one that lies in a tracked
// allocation. Written by one thread at a time (under the session mutex),
// read by any: an allocation's bits are set before the event that feeds it,
// and a launch that uses its memory learned the address after that (through
// the program's own ordering), so it sees them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace xsc::rt {

class TrackedPages {
 public:
  static constexpr unsigned kPageShift = 21;  // 2 MiB
  static constexpr std::size_t kBits = std::size_t{1} << 18;  // 32 KiB of bits
  // An allocation spanning more pages than the bitmap has bits sets them all.
  static constexpr std::uint64_t kMaxPagesMarked = kBits;

  // Marks the pages of [begin, end); begin < end. Callers serialize.
  void add(std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t first = begin >> kPageShift;
    const std::uint64_t last = (end - 1) >> kPageShift;
    if (last - first >= kMaxPagesMarked) {
      for (std::atomic<std::uint64_t>& w : words_)
        w.store(~std::uint64_t{0}, std::memory_order_relaxed);
      return;
    }
    for (std::uint64_t page = first; page <= last; ++page) {
      std::atomic<std::uint64_t>& w = words_[bit_of(page) / 64];
      const std::uint64_t mask = std::uint64_t{1} << (bit_of(page) % 64);
      const std::uint64_t old = w.load(std::memory_order_relaxed);
      if ((old & mask) == 0) w.store(old | mask, std::memory_order_relaxed);
    }
  }

  // False when no tracked allocation ever covered the page of `word`.
  bool may_hold(std::uint64_t word) const {
    const std::size_t bit = bit_of(word >> kPageShift);
    return (words_[bit / 64].load(std::memory_order_relaxed) >> (bit % 64)) & 1;
  }

 private:
  // The page number's low bits: a segment's pages are neighbouring bits,
  // so marking a large one writes a few words, not one cache line per
  // page; pages share a bit only 2^18 pages (512 GiB) apart, farther than
  // a process's device memory spans.
  static std::size_t bit_of(std::uint64_t page) {
    return static_cast<std::size_t>(page & (kBits - 1));
  }

  std::atomic<std::uint64_t> words_[kBits / 64] = {};
};

}  // namespace xsc::rt
