// Live allocations and recently freed ranges.
//
// Live allocations sit in an ordered interval index keyed by start address
// (ranges never overlap: an allocation that overlaps a stale entry replaces
// it), so interior pointers resolve with one upper_bound. In front of it, a
// flat open-addressing hash of exact starts answers frees (which always name
// the start) and the many uses that start at their allocation with one or
// two cache lines instead of a walk down the tree. Each allocation keeps
// only the LAST use per stream, so memory grows with live allocations x
// streams and never with the length of the program; the first few streams'
// last uses sit inline in the allocation, so recording a use touches no
// other heap block.
//
// Freed ranges go to a bounded FIFO quarantine, remembered for
// use-after-free until they are pushed out or reallocated. Memory carries
// the uses of its earlier occupants (PastUse) until they are ordered: a
// freed range holds them, and an allocation that reuses the range inherits
// them, so a later use can be checked against them.
#pragma once


#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "checker/engine/event.h"
#include "checker/engine/finding.h"
#include "checker/engine/range_index.h"
#include "checker/engine/start_table.h"
#include "checker/engine/vector_clock.h"

namespace xsc {

// The last use of an allocation by one agent. The clock part is kept apart
// from the report part so that the checks scan a few dense cache lines.
struct UseEpoch {
  AgentId agent = kNoAgent;  // the stream (or host thread) that used it
  Epoch epoch = 0;           // that agent's epoch at the use
};

inline constexpr std::uint32_t kNoSite = ~std::uint32_t{0};

// A use made by an earlier occupant of some memory, which later uses of the
// memory on other agents must be ordered after. It keeps the occupant's
// allocation and free for the reports.
// The fields are ordered so that the checks' part (the first 24 bytes) is
// dense and the whole is 144 bytes: past uses are copied at every free and
// handed on at every reallocation.
struct PastUse {
  AgentId agent = kNoAgent;  // who used it...
  // When the occupant's free was not ordered after this use: the
  // unordered-free site (checker) it counts towards; else kNoSite.
  std::uint32_t site = kNoSite;
  Epoch epoch = 0;           // ...at this epoch of theirs
  AgentId raced_by = kNoAgent;  // the agent last reported racing with it
  bool raced = false;        // a later use was found racing with it
  UseInfo use;
  AllocInfo alloc;
  FreeInfo free;
};
static_assert(sizeof(PastUse) <= 144,
              "PastUse grew past 144 bytes: keep its and UseInfo's fields ordered by size");

// An allocation's last use per agent, agents and epochs kept apart (struct
// of arrays) so that the first three entries, the readiness fields of the
// allocation and the entry count share one cache line; further entries
// spill to the heap. Most allocations are used by one to three streams.
class LastUseEpochs {
 public:
  static constexpr std::uint32_t kInline = 3;
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  UseEpoch operator[](std::size_t i) const {
    return i < kInline ? UseEpoch{agents_[i], epochs_[i]} : spill_[i - kInline];
  }
  // The index of `agent`'s entry, or size() when it has none.
  std::size_t find(AgentId agent) const {
    const std::size_t inline_n = size_ < kInline ? size_ : kInline;
    for (std::size_t i = 0; i < inline_n; ++i)
      if (agents_[i] == agent) return i;
    for (std::size_t i = 0; i < spill_.size(); ++i)
      if (spill_[i].agent == agent) return kInline + i;
    return size_;
  }
  void set_epoch(std::size_t i, Epoch epoch) {
    if (i < kInline)
      epochs_[i] = epoch;
    else
      spill_[i - kInline].epoch = epoch;
  }
  void push_back(UseEpoch u) {
    if (size_ < kInline) {
      agents_[size_] = u.agent;
      epochs_[size_] = u.epoch;
    } else {
      spill_.push_back(u);
    }
    ++size_;
  }
  // Keeps the spill capacity: a recycled slot allocates nothing.
  void clear() {
    size_ = 0;
    spill_.clear();
  }

 private:
  std::uint32_t size_ = 0;
  AgentId agents_[kInline];
  Epoch epochs_[kInline];
  std::vector<UseEpoch> spill_;
};

// A sequence whose first N elements live inline, each on its own cache line
// so that overwriting one writes one line; the rest spill to the heap.
template <typename T, std::uint32_t N>
class InlineVector {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return i < N ? inline_[i].value : spill_[i - N]; }
  const T& operator[](std::size_t i) const {
    return i < N ? inline_[i].value : spill_[i - N];
  }
  void push_back(const T& v) {
    if (size_ < N)
      inline_[size_].value = v;
    else
      spill_.push_back(v);
    ++size_;
  }
  // Keeps the spill capacity: a recycled slot allocates nothing.
  void clear() {
    size_ = 0;
    spill_.clear();
  }

 private:
  struct alignas(64) Cell {
    T value;
  };
  std::uint32_t size_ = 0;
  std::vector<T> spill_;
  Cell inline_[N];
};

// Laid out so that the ordering check and the use record read and write the
// first two cache lines (readiness, the first three last-use epochs, whether
// earlier occupants' uses or known writes are there) plus the one UseInfo
// line they replace, and a lookup the first three (the third: the info).
struct alignas(64) Allocation {
  // The latest known write (copy destination, memset, collective receive,
  // annotated write) per agent, with the bytes it wrote.
  struct KnownWrite {
    AgentId agent = kNoAgent;
    Epoch epoch = 0;
    Addr begin = 0, end = 0;
    UseInfo use;
    // Not a known write but a caching block's first use, by a kernel on its
    // allocation stream, taken as the write that fills the new block
    // (check_use_before_ready.cpp): judged only as the write a later use
    // must be ordered after.
    bool first_use = false;
  };

  // The first two cache lines hold what every use and every lookup read.
  // Stream-ordered allocations are ready at `ready_epoch` of `ready_agent`;
  // other kinds are ready at once (ready_epoch 0).
  Epoch ready_epoch = 0;
  AgentId ready_agent = kNoAgent;
  LastUseEpochs last_use;                  // one entry per agent...
  // Uses of earlier occupants of this memory not known to be ordered for
  // every agent yet; empty for memory used for the first time.
  std::vector<PastUse> inherited;
  std::vector<KnownWrite> known_writes;
  // The third line: the allocation as a lookup reports it.
  AllocInfo info;
  InlineVector<UseInfo, 3> last_use_info;  // ...and what that use was

  Addr end() const { return info.addr + info.size; }
  void record_use(AgentId agent, Epoch epoch, const UseInfo& use);
  // True when every recorded use was by `agent` (or there was none).
  bool used_only_by(AgentId agent) const {
    for (std::size_t i = 0; i < last_use.size(); ++i)
      if (last_use[i].agent != agent) return false;
    return true;
  }
};
static_assert(offsetof(Allocation, info) == 128,
              "a use's and a lookup's fields fill the first two cache lines, the info the third");

class AllocMap {
 public:
  // Allocations live in a slab; a slot stays valid until release().
  using Slot = std::uint32_t;
  static constexpr Slot kNoSlot = ~Slot{0};

  // Inserts a new live allocation; overlapping live entries are dropped
  // (their slots released). Returns the new allocation, or null for an
  // empty range. The pointer is valid until the next insert().
  Allocation* insert(const AllocInfo& info);
  // The live allocation containing `addr`, or null.
  Allocation* find_containing(Addr addr);
  const Allocation* find_containing(Addr addr) const;
  // Calls f(Allocation&) for each live allocation overlapping [begin, end),
  // in address order. Returns how many there were.
  template <typename F>
  std::size_t for_each_overlapping(Addr begin, Addr end, F&& f);
  // Takes the live allocation starting exactly at `addr` out of the map;
  // kNoSlot if there is none. Its slot stays valid until release().
  Slot extract(Addr addr);
  Allocation& at(Slot slot) { return slab_[slot]; }
  const Allocation& at(Slot slot) const { return slab_[slot]; }
  void release(Slot slot);
  std::size_t size() const { return index_.size(); }

 private:
  // Takes the live allocation starting at `start` in `slot` out of the
  // index and the start hash.
  void erase_entry(Addr start, Slot slot);

  // One live allocation by its exact start. The end is copied here so a
  // range check needs nothing else.
  struct StartCell {
    Addr start = 0;
    Addr end = 0;
    Slot slot = kNoSlot;
  };
  const StartCell* find_start(Addr start) const { return starts_.find(start); }
  void add_start(Addr start, Addr end, Slot slot);

  RangeIndex index_;  // the end is kept there, so a lookup reads only the index
  InteriorCache interior_;  // interior addresses seen in uses
  // It grows with the most allocations live at once and never allocates
  // per insert.
  StartTable<StartCell> starts_;
  std::vector<Allocation> slab_;
  std::vector<Slot> free_slots_;  // released slots, use vectors' capacity kept
};

// A freed range, as remembered for use-after-free reports.
struct FreedRange {
  AllocInfo alloc;
  FreeInfo free;
  // The memory remembered: the allocation's range, or what is left of it
  // after an allocation took part of it.
  Addr begin = 0;
  Addr end = 0;
  // What is left of a freed range after an allocation took part of it. A
  // use of it is not called a use after free (the allocator may have handed
  // it out in a way this checker did not see), but the memory still carries
  // its past uses.
  bool leftover = false;
  std::vector<PastUse> past;  // the uses the memory carries (see PastUse)
};

class Quarantine {
 public:
  explicit Quarantine(std::size_t capacity) : capacity_(capacity) {}
  // Remembers a freed range, pushing out the oldest beyond the capacity.
  // The range must not overlap a remembered one. The checker keeps that
  // true without a check: an allocation forgets every remembered range it
  // overlaps before it becomes live, live ranges are disjoint, and only a
  // live (or deferred, once live) range is ever freed and pushed. A range
  // with the same start as a remembered one replaces it.
  // `past` is taken (swapped with storage the ring slot no longer needs).
  void push(const AllocInfo& alloc, const FreeInfo& free, std::vector<PastUse>* past = nullptr);
  // What push_part does with the caller's past uses: takes them (the
  // caller is done with them), or copies them (the caller pushes another
  // part of the same freed range with them next).
  enum class PastUses { kTake, kCopy };
  // Remembers [begin, end), a part of the freed allocation `alloc`.
  void push_part(const AllocInfo& alloc, const FreeInfo& free, Addr begin, Addr end,
                 std::vector<PastUse>* past, PastUses how);
  // What forget() hands on: the uses the forgotten ranges carried, and
  // those of the ranges that reach beyond the forgotten range, each with
  // its own past uses (the allocation gets copies of them in `uses`).
  struct Carried {
    std::vector<PastUse> uses;
    std::vector<FreedRange> parts;
    void clear() {
      uses.clear();
      parts.clear();
    }
  };
  // Forgets every remembered range overlapping [begin, end) (reallocated),
  // appending what they carried to *carry when it is given.
  void forget(Addr begin, Addr end, Carried* carry = nullptr);
  // The first remembered range overlapping [begin, end), or null.
  const FreedRange* find_overlapping(Addr begin, Addr end) const;
  FreedRange* find_overlapping(Addr begin, Addr end) {
    return const_cast<FreedRange*>(std::as_const(*this).find_overlapping(begin, end));
  }
  std::size_t size() const { return live_; }

 private:
  // forget() looks at up to this many pending pushes in place.
  static constexpr std::size_t kPendingScan = 16;
  // Enters the pending pushes into the start table; a later push with the
  // start of a remembered range replaces it.
  void hash_pending() const;
  // hash_pending(), then enters every range of the start table that is
  // not in the ordered index yet into it.
  void index_pending() const;
  // Forgets a remembered range: its start, its index node.
  void erase_slot(std::size_t slot) const;

  // Remembered ranges by their exact start (valid ranges are disjoint, so
  // starts are unique): a caching allocator hands a freed block out again
  // at the same start, no larger than it was, and then that range is the
  // only one the new allocation overlaps. forget() finds it here, however
  // many frees ago it was pushed, without the ordered index, which is built
  // only for the lookups that need overlaps. Pushes reach the table only
  // when a forget() below max_end_ (reused address space) asks, so a
  // program that never reuses freed memory never fills it.
  static constexpr std::uint32_t kNoRingSlot = ~std::uint32_t{0};
  struct StartCell {
    Addr start = 0;
    std::uint32_t slot = kNoRingSlot;  // kNoRingSlot: empty
  };
  // The ring slot of the remembered range starting at `start`, or kNoRingSlot.
  std::uint32_t find_start(Addr start) const {
    const StartCell* c = starts_.find(start);
    return c ? c->slot : kNoRingSlot;
  }
  mutable StartTable<StartCell> starts_;
  // Ring slots whose range entered the start table since the ordered index
  // was last built (a slot is listed once; its range may have been
  // forgotten or replaced since).
  mutable std::vector<std::uint32_t> unindexed_starts_;
  std::vector<std::uint32_t> overlapping_;  // forget()'s scratch

  // A valid slot's range is pending (only in the ring, among the latest
  // `pending_` pushes), then hashed (in the start table), then also
  // indexed (in the ordered index).
  struct Slot {
    FreedRange range;
    bool valid = false;
    bool hashed = false;
    bool indexed = false;
    bool listed = false;    // this slot is in unindexed_starts_
  };
  std::size_t capacity_;
  // Mutable: the start table and the index are filled lazily, also by the
  // const lookup. A push only writes its ring slot; the start table sees it
  // at the next reallocation below max_end_, the ordered index at the next
  // lookup that needs overlaps, so a program that never reuses freed
  // address space and never touches freed memory keeps neither.
  mutable std::vector<Slot> ring_;  // grows to capacity_, then wraps
  std::size_t next_ = 0;    // slot the next push overwrites once full
  std::size_t last_ = 0;    // slot of the latest push
  mutable std::size_t pending_ = 0;  // the latest pushes still pending
  mutable std::size_t live_ = 0;       // valid slots
  // The remembered ranges in address order, with their ring slots; built
  // lazily (index_pending) for the lookups that need overlaps.
  mutable RangeIndex index_;
  // No remembered range ends above this (it only grows): a range starting
  // at or above it overlaps nothing, without a walk of the index. Fresh
  // address space is the common case for an allocation.
  Addr max_end_ = 0;
};

template <typename F>
std::size_t AllocMap::for_each_overlapping(Addr begin, Addr end, F&& f) {
  if (begin >= end) return 0;
  // Ranges are disjoint: one that starts at or before `begin` and covers
  // [begin, end) is the only one overlapping it.
  if (const StartCell* c = find_start(begin); c && end <= c->end) {
    f(slab_[c->slot]);
    return 1;
  }
  if (const Slot slot = interior_.find(starts_, begin, end); slot != kNoSlot) {
    f(slab_[slot]);
    return 1;
  }
  return index_.for_each_overlapping(begin, end, [&](const RangeIndex::Entry& e) {
    // One that starts before `begin` and covers the range is the only one.
    if (e.start < begin && end <= e.end) interior_.remember(starts_, begin, e.end, e.slot);
    f(slab_[e.slot]);
  });
}

}  // namespace xsc
