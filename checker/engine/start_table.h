// Ranges by their exact start address: an open-addressing hash in front of
// an ordered index. Frees name the start of what they free, and most uses
// and lookups start at an allocation's start, so one or two cache lines
// answer them where the ordered index would be searched.
//
// Linear probing in a power-of-two table kept at most 5/8 full; deletion by
// backward shift, so there are no tombstones and probes stay short. The
// hash is Fibonacci hashing of the address (its top bits), which callers
// may reuse to index caches of the same size (home()).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "checker/engine/event.h"

namespace xsc {

// `Cell` holds `Addr start` and `std::uint32_t slot`, where a slot of
// kEmptySlot marks an empty cell, and whatever else its user keeps with a
// start (the range's end, say).
template <class Cell>
class StartTable {
 public:
  static constexpr std::uint32_t kEmptySlot = ~std::uint32_t{0};

  // The cell of `start`, or null.
  const Cell* find(Addr start) const {
    if (used_ == 0) return nullptr;
    const std::size_t mask = cells_.size() - 1;
    for (std::size_t i = home(start);; i = (i + 1) & mask) {
      const Cell& c = cells_[i];
      if (c.slot == kEmptySlot) return nullptr;
      if (c.start == start) return &c;
    }
  }
  // Adds a cell whose start is not in the table. True when the table grew
  // first (its capacity and every home() changed).
  bool add(const Cell& cell) {
    bool grew = false;
    if ((used_ + 1) * 8 > cells_.size() * 5) {
      std::vector<Cell> old = std::move(cells_);
      const std::size_t size = old.empty() ? 64 : old.size() * 2;
      cells_.assign(size, Cell{});
      shift_ = 64 - static_cast<unsigned>(std::countr_zero(size));
      used_ = 0;
      for (const Cell& c : old)
        if (c.slot != kEmptySlot) place(c);
      grew = true;
    }
    place(cell);
    return grew;
  }
  // Removes the cell of `start` when there is one.
  void remove(Addr start) {
    if (used_ == 0) return;
    const std::size_t mask = cells_.size() - 1;
    std::size_t hole = home(start);
    for (;; hole = (hole + 1) & mask) {
      if (cells_[hole].slot == kEmptySlot) return;  // not there
      if (cells_[hole].start == start) break;
    }
    // Backward shift: pull later cells of the probe run into the hole
    // unless their home lies in (hole, next].
    for (std::size_t next = (hole + 1) & mask; cells_[next].slot != kEmptySlot;
         next = (next + 1) & mask) {
      const std::size_t h = home(cells_[next].start);
      const bool stays = hole <= next ? (hole < h && h <= next) : (hole < h || h <= next);
      if (stays) continue;
      cells_[hole] = cells_[next];
      hole = next;
    }
    cells_[hole] = Cell{};
    --used_;
  }
  std::size_t size() const { return used_; }
  // 0 until the first add().
  std::size_t capacity() const { return cells_.size(); }
  // Where `start` hashes to, below capacity().
  std::size_t home(Addr start) const {
    return static_cast<std::size_t>((start * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

 private:
  void place(const Cell& cell) {
    const std::size_t mask = cells_.size() - 1;
    std::size_t i = home(cell.start);
    while (cells_[i].slot != kEmptySlot) i = (i + 1) & mask;
    cells_[i] = cell;
    ++used_;
  }

  std::vector<Cell> cells_;
  unsigned shift_ = 64;
  std::size_t used_ = 0;
};

// Interior addresses looked up, each remembered with the live range that
// contains it: a program passes the same interior pointers (views, a
// bucket's gradient views, a pool's slots) again and again, and a hit
// spares the ordered index's search. Direct-mapped by a StartTable's
// home(), as large as that table (resize() at each of its growths), lossy.
// A cell is believed only while its range's slot is at the generation the
// cell holds; forget_slot() bumps it whenever that slot's range leaves the
// index, so a hit names a live range, and live ranges never change: it
// still contains the address and still ends where it did.
class InteriorCache {
 public:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  void resize(std::size_t capacity) { cells_.assign(capacity, Cell{}); }
  // A slot first used (slots are dense from 0).
  void add_slot(std::uint32_t slot) {
    if (slot >= generation_.size()) generation_.resize(slot + 1, 0);
  }
  void forget_slot(std::uint32_t slot) { ++generation_[slot]; }
  // The slot of the live range containing [begin, end) by the remembered
  // interior address `begin`, or kNone.
  template <class Table>
  std::uint32_t find(const Table& starts, Addr begin, Addr end) const {
    if (cells_.empty()) return kNone;
    const Cell& c = cells_[starts.home(begin)];
    if (c.addr != begin || c.slot == kNone || end > c.end || generation_[c.slot] != c.generation)
      return kNone;
    return c.slot;
  }
  // `begin` lies in the live range of `slot`, which ends at `end`.
  template <class Table>
  void remember(const Table& starts, Addr begin, Addr end, std::uint32_t slot) {
    if (!cells_.empty()) cells_[starts.home(begin)] = Cell{begin, end, slot, generation_[slot]};
  }

 private:
  struct Cell {
    Addr addr = 0;
    Addr end = 0;
    std::uint32_t slot = kNone;
    std::uint32_t generation = 0;
  };
  std::vector<Cell> cells_;
  std::vector<std::uint32_t> generation_;  // per slot
};

}  // namespace xsc
