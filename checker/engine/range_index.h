// An ordered index of disjoint address ranges, for the live allocations.
//
// Sorted blocks of at most kBlock entries, plus each block's first start in
// one dense array: a lookup binary-searches that array and then one block,
// touching a handful of adjacent cache lines where a red-black tree walks a
// dozen scattered nodes (with a hard-to-predict branch at each), and an
// insertion or removal moves at most one block's entries. Allocations
// usually come from fresh address space, so an entry above all others goes
// to the end of the last block without a search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "checker/engine/event.h"

namespace xsc {

// End of [addr, addr + size), saturated instead of wrapping on bad input.
inline Addr range_end(Addr addr, std::uint64_t size) {
  return size > std::numeric_limits<Addr>::max() - addr ? std::numeric_limits<Addr>::max()
                                                        : addr + size;
}

class RangeIndex {
 public:
  struct Entry {
    Addr start;
    Addr end;  // exclusive; ranges never overlap
    std::uint32_t slot;
  };

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // The entry with the highest start, or null.
  const Entry* last() const { return blocks_.empty() ? nullptr : &blocks_.back().back(); }
  // The entry containing `addr`, or null.
  const Entry* containing(Addr addr) const;
  // Calls f(const Entry&) for each entry overlapping [begin, end), in
  // address order; f must not change the index. Returns how many.
  template <typename F>
  std::size_t for_each_overlapping(Addr begin, Addr end, F&& f) const;
  // Adds a range that overlaps no entry.
  void insert(const Entry& entry);
  // Adds `entry` and returns true when it overlaps no entry; otherwise
  // changes nothing and returns false. One search where checking for
  // overlaps and then inserting would take two.
  bool insert_if_free(const Entry& entry);
  // Adds `entry`, first handing each entry it overlaps (a stale range: a
  // free never seen) to `displaced(const Entry&)`, which must erase it
  // from this index.
  template <typename F>
  void insert_displacing(const Entry& entry, F&& displaced);
  // Removes the entry starting at `start`, which must be there.
  void erase(Addr start);

 private:
  static constexpr std::size_t kBlock = 64;
  // The block whose first start is the greatest one <= addr; blocks_.size()
  // when every block starts above addr.
  std::size_t block_at_or_before(Addr addr) const;
  // In `block`, the index of the last entry starting at or before addr, or
  // -1 when all start above it.
  static std::ptrdiff_t entry_at_or_before(const std::vector<Entry>& block, Addr addr);
  // Puts `entry` at index `at` of block `b`, splitting a block grown full.
  void place(std::size_t b, std::size_t at, const Entry& entry);

  std::vector<std::vector<Entry>> blocks_;  // none empty
  std::vector<Addr> firsts_;                // blocks_[i].front().start
  std::size_t size_ = 0;
};

template <typename F>
std::size_t RangeIndex::for_each_overlapping(Addr begin, Addr end, F&& f) const {
  if (begin >= end || blocks_.empty()) return 0;
  // Start at the last entry starting at or before `begin` (it overlaps when
  // it reaches past `begin`), else at the very first entry.
  std::size_t b = block_at_or_before(begin);
  std::size_t i = 0;
  if (b == blocks_.size()) {
    b = 0;
  } else {
    const std::ptrdiff_t at = entry_at_or_before(blocks_[b], begin);
    i = static_cast<std::size_t>(at);
    if (blocks_[b][i].end <= begin) ++i;
  }
  std::size_t n = 0;
  for (; b < blocks_.size(); ++b, i = 0) {
    const std::vector<Entry>& block = blocks_[b];
    for (; i < block.size(); ++i) {
      if (block[i].start >= end) return n;
      f(block[i]);
      ++n;
    }
  }
  return n;
}

template <typename F>
void RangeIndex::insert_displacing(const Entry& entry, F&& displaced) {
  if (insert_if_free(entry)) return;
  std::vector<Entry> stale;
  for_each_overlapping(entry.start, entry.end, [&](const Entry& e) { stale.push_back(e); });
  for (const Entry& e : stale) displaced(e);
  insert(entry);
}

}  // namespace xsc
