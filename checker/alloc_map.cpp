#include "checker/alloc_map.h"

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
  for (LastUse& last : uses) {
    if (last.agent == agent) {
      last.epoch = epoch;
      last.info = use;
      return;
    }
  }
  uses.push_back(LastUse{agent, epoch, use});
}

AllocMap::Map::iterator AllocMap::first_overlapping(Addr begin, Addr end) {
  if (begin >= end) return live_.end();
  auto it = live_.upper_bound(begin);
  if (it != live_.begin()) {
    auto prev = std::prev(it);
    if (prev->second.end() > begin) return prev;
  }
  return it;
}

Allocation* AllocMap::insert(const AllocInfo& info) {
  AllocInfo clamped = info;
  Addr end = range_end(info.addr, info.size);
  clamped.size = end - info.addr;
  if (clamped.size == 0) return nullptr;
  // Stale entries (a free we never saw) give way to the new allocation.
  for (auto it = first_overlapping(info.addr, end);
       it != live_.end() && it->first < end;) {
    auto next = std::next(it);
    recycle(live_.extract(it));
    it = next;
  }
  Node node;
  if (!spare_.empty()) {
    node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = info.addr;
  } else {
    auto tmp = Map();
    tmp.emplace(info.addr, Allocation{});
    node = tmp.extract(tmp.begin());
  }
  Allocation& a = node.mapped();
  a.info = clamped;
  a.ready_agent = kNoAgent;
  a.ready_epoch = 0;
  a.uses.clear();
  auto result = live_.insert(std::move(node));
  return &result.position->second;
}

Allocation* AllocMap::find_containing(Addr addr) {
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return nullptr;
  --it;
  return addr < it->second.end() ? &it->second : nullptr;
}

const Allocation* AllocMap::find_containing(Addr addr) const {
  auto it = live_.upper_bound(addr);
  if (it == live_.begin()) return nullptr;
  --it;
  return addr < it->second.end() ? &it->second : nullptr;
}

AllocMap::Node AllocMap::extract(Addr addr) { return live_.extract(addr); }

void AllocMap::recycle(Node node) {
  if (node.empty()) return;
  node.mapped().uses.clear();
  spare_.push_back(std::move(node));
}

void Quarantine::erase_slot(std::size_t slot) {
  Slot& s = ring_[slot];
  if (!s.valid) return;
  s.valid = false;
  auto node = index_.extract(s.range.alloc.addr);
  if (!node.empty()) spare_.push_back(std::move(node));
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
  if (!spare_.empty()) {
    auto node = std::move(spare_.back());
    spare_.pop_back();
    node.key() = alloc.addr;
    node.mapped() = slot;
    index_.insert(std::move(node));
  } else {
    index_.emplace(alloc.addr, slot);
  }
}

void Quarantine::forget(Addr begin, Addr end) {
  if (begin >= end || index_.empty()) return;
  auto it = index_.upper_bound(begin);
  if (it != index_.begin()) {
    auto prev = std::prev(it);
    if (ring_[prev->second].range.end() > begin) it = prev;
  }
  while (it != index_.end() && it->first < end) {
    std::size_t slot = (it++)->second;
    erase_slot(slot);
  }
}

const FreedRange* Quarantine::find_overlapping(Addr begin, Addr end) const {
  if (begin >= end || index_.empty()) return nullptr;
  auto it = index_.upper_bound(begin);
  if (it != index_.begin()) {
    auto prev = std::prev(it);
    if (ring_[prev->second].range.end() > begin) return &ring_[prev->second].range;
  }
  if (it != index_.end() && it->first < end) return &ring_[it->second].range;
  return nullptr;
}

}  // namespace xsc
