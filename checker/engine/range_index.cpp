#include "checker/engine/range_index.h"

#include <algorithm>
#include <iterator>

namespace xsc {

std::size_t RangeIndex::block_at_or_before(Addr addr) const {
  auto it = std::upper_bound(firsts_.begin(), firsts_.end(), addr);
  if (it == firsts_.begin()) return blocks_.size();
  return static_cast<std::size_t>(std::prev(it) - firsts_.begin());
}

std::ptrdiff_t RangeIndex::entry_at_or_before(const std::vector<Entry>& block, Addr addr) {
  auto it = std::upper_bound(block.begin(), block.end(), addr,
                             [](Addr a, const Entry& e) { return a < e.start; });
  return (it - block.begin()) - 1;
}

const RangeIndex::Entry* RangeIndex::containing(Addr addr) const {
  const std::size_t b = block_at_or_before(addr);
  if (b == blocks_.size()) return nullptr;
  const std::vector<Entry>& block = blocks_[b];
  const Entry& e = block[static_cast<std::size_t>(entry_at_or_before(block, addr))];
  return addr < e.end ? &e : nullptr;
}

void RangeIndex::insert(const Entry& entry) {
  if (blocks_.empty()) {
    ++size_;
    blocks_.emplace_back().reserve(kBlock + 1);
    blocks_.back().push_back(entry);
    firsts_.push_back(entry.start);
    return;
  }
  // Above every entry (fresh address space, the common case): at the end
  // of the last block, found without a search.
  std::size_t b = blocks_.size() - 1;
  // Otherwise into the block that starts at or before it (the first block
  // when it goes before everything).
  if (entry.start < blocks_.back().back().start) b = block_at_or_before(entry.start);
  if (b == blocks_.size()) b = 0;
  const std::vector<Entry>& block = blocks_[b];
  const std::size_t at =
      entry.start > block.back().start
          ? block.size()  // fresh address space ends up here
          : static_cast<std::size_t>(entry_at_or_before(block, entry.start) + 1);
  place(b, at, entry);
}

bool RangeIndex::insert_if_free(const Entry& entry) {
  if (blocks_.empty() || entry.start >= blocks_.back().back().end) {
    insert(entry);
    return true;
  }
  std::size_t b = block_at_or_before(entry.start);
  std::size_t at = 0;
  if (b == blocks_.size()) {
    // Before every entry.
    b = 0;
  } else {
    const std::vector<Entry>& block = blocks_[b];
    at = static_cast<std::size_t>(entry_at_or_before(block, entry.start));
    if (block[at].end > entry.start) return false;
    ++at;
  }
  // The entry after it, in this block or the next.
  const Entry* next = at < blocks_[b].size()      ? &blocks_[b][at]
                      : b + 1 < blocks_.size() ? &blocks_[b + 1].front()
                                               : nullptr;
  if (next != nullptr && next->start < entry.end) return false;
  place(b, at, entry);
  return true;
}

void RangeIndex::place(std::size_t b, std::size_t at, const Entry& entry) {
  ++size_;
  std::vector<Entry>& block = blocks_[b];
  block.insert(block.begin() + static_cast<std::ptrdiff_t>(at), entry);
  firsts_[b] = block.front().start;
  if (block.size() <= kBlock) return;
  // Full: the upper half becomes a block of its own.
  std::vector<Entry> upper;
  upper.reserve(kBlock + 1);
  upper.assign(block.begin() + kBlock / 2, block.end());
  block.resize(kBlock / 2);
  const Addr upper_first = upper.front().start;
  blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(b) + 1, std::move(upper));
  firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(b) + 1, upper_first);
}

void RangeIndex::erase(Addr start) {
  const std::size_t b = block_at_or_before(start);
  if (b == blocks_.size()) return;
  std::vector<Entry>& block = blocks_[b];
  const std::ptrdiff_t at = entry_at_or_before(block, start);
  if (at < 0 || block[static_cast<std::size_t>(at)].start != start) return;
  block.erase(block.begin() + at);
  --size_;
  if (block.empty()) {
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(b));
    firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(b));
    return;
  }
  firsts_[b] = block.front().start;
  // A small block joins its successor when both fit in one, so that blocks
  // stay reasonably full under removals.
  if (b + 1 < blocks_.size() && block.size() + blocks_[b + 1].size() <= kBlock / 2) {
    std::vector<Entry>& next = blocks_[b + 1];
    block.insert(block.end(), next.begin(), next.end());
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(b) + 1);
    firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(b) + 1);
  }
}

}  // namespace xsc
