#include "checker/engine/alloc_map.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

namespace xsc {

void Allocation::record_use(AgentId agent, Epoch epoch, const UseInfo& use) {
  const std::size_t i = last_use.find(agent);
  if (i != last_use.size()) {
    last_use.set_epoch(i, epoch);
    last_use_info[i] = use;
    return;
  }
  last_use.push_back(UseEpoch{agent, epoch});
  last_use_info.push_back(use);
}

static_assert(AllocMap::kNoSlot == InteriorCache::kNone);

void AllocMap::add_start(Addr start, Addr end, Slot slot) {
  // The interior cache is indexed by the table's hash: it starts over at
  // each growth.
  if (starts_.add(StartCell{start, end, slot})) interior_.resize(starts_.capacity());
}

void AllocMap::erase_entry(Addr start, Slot slot) {
  starts_.remove(start);
  interior_.forget_slot(slot);
  index_.erase(start);
}

Allocation* AllocMap::insert(const AllocInfo& info) {
  AllocInfo clamped = info;
  Addr end = range_end(info.addr, info.size);
  clamped.size = end - info.addr;
  if (clamped.size == 0) return nullptr;
  Slot slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<Slot>(slab_.size());
    slab_.emplace_back();
    interior_.add_slot(slot);
  }
  const RangeIndex::Entry placed{info.addr, end, slot};
  // Stale entries (a free we never saw) give way to the new allocation.
  index_.insert_displacing(placed, [&](const RangeIndex::Entry& e) {
    release(e.slot);
    erase_entry(e.start, e.slot);
  });
  Allocation& a = slab_[slot];
  a.info = clamped;
  a.ready_agent = kNoAgent;
  a.ready_epoch = 0;
  a.last_use.clear();
  a.last_use_info.clear();
  a.inherited.clear();
  a.known_writes.clear();
  add_start(info.addr, end, slot);
  return &a;
}

Allocation* AllocMap::find_containing(Addr addr) {
  if (const StartCell* c = find_start(addr)) return &slab_[c->slot];
  if (addr == std::numeric_limits<Addr>::max()) {
    const RangeIndex::Entry* e = index_.containing(addr);
    return e ? &slab_[e->slot] : nullptr;
  }
  if (const Slot slot = interior_.find(starts_, addr, addr + 1); slot != kNoSlot)
    return &slab_[slot];
  const RangeIndex::Entry* e = index_.containing(addr);
  if (!e) return nullptr;
  interior_.remember(starts_, addr, e->end, e->slot);
  return &slab_[e->slot];
}

const Allocation* AllocMap::find_containing(Addr addr) const {
  if (const StartCell* c = find_start(addr)) return &slab_[c->slot];
  const RangeIndex::Entry* e = index_.containing(addr);
  return e ? &slab_[e->slot] : nullptr;
}

AllocMap::Slot AllocMap::extract(Addr addr) {
  const StartCell* c = find_start(addr);
  if (!c) return kNoSlot;
  const Slot slot = c->slot;
  erase_entry(addr, slot);
  return slot;
}

void AllocMap::release(Slot slot) {
  if (slot == kNoSlot) return;
  slab_[slot].last_use.clear();
  slab_[slot].last_use_info.clear();
  slab_[slot].inherited.clear();
  slab_[slot].known_writes.clear();
  free_slots_.push_back(slot);
}

void Quarantine::hash_pending() const {
  // The pending pushes are the latest `pending_` ring slots, oldest first.
  const std::size_t n = ring_.size();
  for (std::size_t k = pending_; k > 0; --k) {
    const std::size_t slot = (last_ + n - (k - 1)) % n;
    Slot& s = ring_[slot];
    if (!s.valid || s.hashed) continue;
    // Same start as a remembered range: the later free replaces it.
    if (const std::uint32_t same = find_start(s.range.begin); same != kNoRingSlot)
      erase_slot(same);
    starts_.add(StartCell{s.range.begin, static_cast<std::uint32_t>(slot)});
    s.hashed = true;
    if (!s.listed) {
      s.listed = true;
      unindexed_starts_.push_back(static_cast<std::uint32_t>(slot));
    }
  }
  pending_ = 0;
}

void Quarantine::index_pending() const {
  hash_pending();
  for (const std::uint32_t slot : unindexed_starts_) {
    Slot& s = ring_[slot];
    s.listed = false;
    if (!s.valid || s.indexed) continue;
    // Starts are unique among hashed ranges, and valid ranges disjoint, so
    // the range overlaps no indexed one.
    index_.insert(RangeIndex::Entry{s.range.begin, s.range.end, slot});
    s.indexed = true;
  }
  unindexed_starts_.clear();
}

void Quarantine::erase_slot(std::size_t slot) const {
  Slot& s = ring_[slot];
  if (!s.valid) return;
  s.valid = false;
  --live_;
  if (s.hashed) starts_.remove(s.range.begin);
  s.hashed = false;
  if (s.indexed) index_.erase(s.range.begin);
  s.indexed = false;
}

void Quarantine::push(const AllocInfo& alloc, const FreeInfo& free, std::vector<PastUse>* past) {
  push_part(alloc, free, alloc.addr, range_end(alloc.addr, alloc.size), past, PastUses::kTake);
}

void Quarantine::push_part(const AllocInfo& alloc, const FreeInfo& free, Addr begin, Addr end,
                           std::vector<PastUse>* past, PastUses how) {
  std::vector<PastUse> copy;
  if (past && how == PastUses::kCopy) {
    copy = *past;
    past = &copy;
  }
  if (capacity_ == 0 || begin >= end) return;
  std::size_t slot;
  if (ring_.size() < capacity_) {
    slot = ring_.size();
    ring_.emplace_back();
  } else {
    slot = next_;
    next_ = (next_ + 1) % capacity_;
    erase_slot(slot);  // the oldest remembered free
  }
  Slot& s = ring_[slot];
  s.range.alloc = alloc;
  s.range.free = free;
  s.range.begin = begin;
  s.range.end = end;
  s.range.leftover = alloc.addr != begin || range_end(alloc.addr, alloc.size) != end;
  // Swapped: the caller gets the slot's old storage (cleared by its next
  // use), so storage circulates and a steady state allocates nothing.
  s.range.past.clear();
  if (past) s.range.past.swap(*past);
  s.valid = true;
  s.hashed = false;
  s.indexed = false;
  ++live_;
  last_ = slot;
  if (pending_ < ring_.size()) ++pending_;
  max_end_ = std::max(max_end_, end);
}

void Quarantine::forget(Addr begin, Addr end, Carried* carry) {
  if (begin >= end || begin >= max_end_ || live_ == 0) return;
  auto take = [&](std::size_t slot) {
    if (!carry) return;
    FreedRange& r = ring_[slot].range;
    if (r.begin < begin || end < r.end) {
      // What the allocation does not take stays remembered, with the same
      // past uses (a caching allocator splitting a freed block: common).
      // The range moves to `parts` whole; erase_slot reads only its start.
      carry->uses.insert(carry->uses.end(), r.past.begin(), r.past.end());
      carry->parts.push_back(std::move(r));
      return;
    }
    if (carry->uses.empty())
      carry->uses.swap(r.past);  // the range is forgotten: its storage is free
    else
      carry->uses.insert(carry->uses.end(), r.past.begin(), r.past.end());
  };
  // Remembered ranges are disjoint: one that starts at `begin` and covers
  // [begin, end) is the only one that range overlaps.
  auto covers = [&](const FreedRange& r) {
    return r.begin == begin && end <= r.end;
  };
  auto forget_same_start = [&] {
    const std::uint32_t same = find_start(begin);
    if (same == kNoRingSlot || !covers(ring_[same].range)) return false;
    take(same);
    erase_slot(same);
    return true;
  };
  if (forget_same_start()) return;  // a block freed a while ago
  if (pending_ <= kPendingScan) {
    // A caching allocator hands out again a block it freed moments ago:
    // that range is among the few latest pushes and is forgotten where it
    // lies.
    const std::size_t n = ring_.size();
    bool covered = false;
    for (std::size_t k = 0; k < pending_; ++k) {
      const std::size_t slot = (last_ + n - k) % n;
      const Slot& s = ring_[slot];
      if (s.valid && !s.hashed && s.range.begin < end &&
          s.range.end > begin) {
        covered = covered || covers(s.range);
        take(slot);
        erase_slot(slot);
      }
    }
    if (covered) return;
  } else {
    hash_pending();
    if (forget_same_start()) return;
  }
  index_pending();
  overlapping_.clear();
  index_.for_each_overlapping(begin, end, [&](const RangeIndex::Entry& e) {
    overlapping_.push_back(e.slot);
  });
  for (const std::uint32_t slot : overlapping_) {
    take(slot);
    erase_slot(slot);
  }
}

const FreedRange* Quarantine::find_overlapping(Addr begin, Addr end) const {
  if (begin >= end || begin >= max_end_ || live_ == 0) return nullptr;
  index_pending();
  const FreedRange* first = nullptr;
  index_.for_each_overlapping(begin, end, [&](const RangeIndex::Entry& e) {
    if (first == nullptr) first = &ring_[e.slot].range;
  });
  return first;
}

}  // namespace xsc
