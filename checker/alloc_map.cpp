#include "checker/alloc_map.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <utility>

namespace xsc {
namespace {

// End of [addr, addr + size), saturated instead of wrapping on bad input.
Addr range_end(Addr addr, std::uint64_t size) {
  return size > std::numeric_limits<Addr>::max() - addr
             ? std::numeric_limits<Addr>::max()
             : addr + size;
}

}  // namespace

void Allocation::record_use(AgentId agent, Epoch epoch, const UseInfo& use) {
  const std::size_t n = last_use.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (last_use[i].agent == agent) {
      last_use[i].epoch = epoch;
      last_use_info[i] = use;
      return;
    }
  }
  last_use.push_back(UseEpoch{agent, epoch});
  last_use_info.push_back(use);
}

AllocMap::Index::iterator AllocMap::first_overlapping(Addr begin, Addr end) {
  if (begin >= end) return index_.end();
  auto it = index_.upper_bound(begin);
  if (it != index_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end > begin) return prev;
  }
  return it;
}

AllocMap::Index::const_iterator AllocMap::containing(Addr addr) const {
  auto it = index_.upper_bound(addr);
  if (it == index_.begin()) return index_.end();
  --it;
  return addr < it->second.end ? it : index_.end();
}

Allocation* AllocMap::insert(const AllocInfo& info) {
  AllocInfo clamped = info;
  Addr end = range_end(info.addr, info.size);
  clamped.size = end - info.addr;
  if (clamped.size == 0) return nullptr;
  // Stale entries (a free we never saw) give way to the new allocation.
  for (auto it = first_overlapping(info.addr, end);
       it != index_.end() && it->first < end;) {
    release(it->second.slot);
    it = index_.erase(it);
  }
  Slot slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<Slot>(slab_.size());
    slab_.emplace_back();
  }
  Allocation& a = slab_[slot];
  a.info = clamped;
  a.ready_agent = kNoAgent;
  a.ready_epoch = 0;
  a.last_use.clear();
  a.last_use_info.clear();
  index_.emplace(info.addr, Entry{end, slot});
  return &a;
}

Allocation* AllocMap::find_containing(Addr addr) {
  auto it = containing(addr);
  return it == index_.end() ? nullptr : &slab_[it->second.slot];
}

const Allocation* AllocMap::find_containing(Addr addr) const {
  auto it = containing(addr);
  return it == index_.end() ? nullptr : &slab_[it->second.slot];
}

AllocMap::Slot AllocMap::extract(Addr addr) {
  auto it = index_.find(addr);
  if (it == index_.end()) return kNoSlot;
  Slot slot = it->second.slot;
  index_.erase(it);
  return slot;
}

void AllocMap::release(Slot slot) {
  if (slot == kNoSlot) return;
  slab_[slot].last_use.clear();
  slab_[slot].last_use_info.clear();
  free_slots_.push_back(slot);
}

void Quarantine::erase_slot(std::size_t slot) {
  Slot& s = ring_[slot];
  if (!s.valid) return;
  s.valid = false;
  index_.erase(s.range.alloc.addr);
}

void Quarantine::push(const AllocInfo& alloc, const FreeInfo& free) {
  if (capacity_ == 0 || alloc.size == 0) return;
  forget(alloc.addr, range_end(alloc.addr, alloc.size));
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
  s.valid = true;
  index_.emplace(alloc.addr, slot);
  max_end_ = std::max(max_end_, range_end(alloc.addr, alloc.size));
}

void Quarantine::forget(Addr begin, Addr end) {
  if (begin >= end || begin >= max_end_ || index_.empty()) return;
  auto it = index_.upper_bound(begin);
  if (it != index_.begin()) {
    auto prev = std::prev(it);
    if (ring_[prev->second].range.end() > begin) it = prev;
  }
  // B-tree erasure invalidates iterators: continue from what erase returns.
  while (it != index_.end() && it->first < end) {
    ring_[it->second].valid = false;
    it = index_.erase(it);
  }
}

const FreedRange* Quarantine::find_overlapping(Addr begin, Addr end) const {
  if (begin >= end || begin >= max_end_ || index_.empty()) return nullptr;
  auto it = index_.upper_bound(begin);
  if (it != index_.begin()) {
    auto prev = std::prev(it);
    if (ring_[prev->second].range.end() > begin) return &ring_[prev->second].range;
  }
  if (it != index_.end() && it->first < end) return &ring_[it->second].range;
  return nullptr;
}

}  // namespace xsc
