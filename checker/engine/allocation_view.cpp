#include "checker/engine/allocation_view.h"

namespace xsc {
namespace {
constexpr std::uint32_t kNoResidueSlot = ~std::uint32_t{0};
}  // namespace

void AllocationView::Users::add(const Users& other) {
  if (!other.any) return;
  if (!any) {
    *this = other;
    return;
  }
  mixed = mixed || other.mixed || user != other.user;
}

void AllocationView::note(const Event& event) {
  switch (event.kind) {
    case EventKind::kAlloc: on_alloc(event); return;
    case EventKind::kFree: on_free(event); return;
    case EventKind::kUse: on_use(event); return;
    case EventKind::kStreamDestroy: on_stream_destroy(event.stream); return;
    default: return;
  }
}

const RangeIndex::Entry* AllocationView::find(Addr addr) const {
  for (unsigned i = 0; i < recent_count_; ++i)
    if (addr >= recent_[i].start && addr < recent_[i].end) return &recent_[i];
  RangeIndex::Entry found;
  if (const StartCell* c = starts_.find(addr)) {
    found = RangeIndex::Entry{c->start, c->end, c->slot};
  } else if (const std::uint32_t slot = interior_.find(starts_, addr, addr + 1);
             slot != InteriorCache::kNone) {
    const AllocInfo& info = slab_[slot].info;
    found = RangeIndex::Entry{info.addr, info.addr + info.size, slot};
  } else if (const RangeIndex::Entry* e = index_.containing(addr)) {
    found = *e;
    interior_.remember(starts_, addr, e->end, e->slot);
  } else {
    return nullptr;
  }
  RangeIndex::Entry& slot = recent_[recent_next_];
  recent_next_ = (recent_next_ + 1) % kRecent;
  if (recent_count_ < kRecent) ++recent_count_;
  slot = found;
  return &slot;
}

void AllocationView::forget_recent() {
  // Filled from the first entry again: nothing to clear.
  recent_count_ = 0;
  recent_next_ = 0;
}

void AllocationView::erase_live(Addr start, std::uint32_t slot) {
  const AllocInfo& info = slab_[slot].info;
  pages_.remove(info.addr, info.addr + info.size, slab_[slot].page_role);
  starts_.remove(start);
  index_.erase(start);
  interior_.forget_slot(slot);
  free_slots_.push_back(slot);
}

void AllocationView::on_alloc(const Event& event) {
  const Addr end = range_end(event.addr, event.size);
  if (end == event.addr) return;  // the checker keeps no empty range either
  forget_recent();
  std::uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<std::uint32_t>(slab_.size());
    slab_.emplace_back();
    interior_.add_slot(slot);
  }
  const RangeIndex::Entry placed{event.addr, end, slot};
  // Live ranges it overlaps give way: a free that was never seen. The
  // checker drops them without remembering their uses.
  index_.insert_displacing(placed,
                           [&](const RangeIndex::Entry& e) { erase_live(e.start, e.slot); });
  Entry& entry = slab_[slot];
  entry = Entry{};
  entry.info.addr = event.addr;
  entry.info.size = end - event.addr;
  entry.info.stream = event.stream;
  entry.info.kind = event.alloc_kind;
  entry.info.thread = event.thread;
  entry.info.stack = event.stack;
  // The residue stays where it is: what the memory carried until this
  // allocation is what it inherits, and its free puts back the same unless
  // another agent took part meanwhile (on_free).
  entry.inherited = residue_users(event.addr, end);
  entry.page_role =
      pages_.add(event.addr, end, event.stream,
                 event.alloc_kind == AllocKind::kCachingAllocator &&
                     !entry.inherited.other_than(event.stream));
  // The interior cache is indexed by the table's hash: it starts over at
  // each growth.
  if (starts_.add(StartCell{event.addr, end, slot})) interior_.resize(starts_.capacity());
}

void AllocationView::on_free(const Event& event) {
  const RangeIndex::Entry* e = find(event.addr);
  if (e == nullptr || e->start != event.addr) return;  // the checker frees starts only
  const Entry& entry = slab_[e->slot];
  const Addr begin = e->start, end = e->end;
  const std::uint32_t slot = e->slot;
  // What the memory's next occupant may carry: this allocation's uses and
  // those it inherited itself. The common case, a block its own stream
  // alone used in memory only that stream used before, finds the residue
  // it inherited already saying so, and changes nothing.
  Users users = entry.own;
  users.add(entry.inherited);
  // A caching block's own-stream kernel uses may have gone to the checker
  // unnoted (stream_pages()): it is taken as used by its stream.
  if (entry.info.kind == AllocKind::kCachingAllocator) users.add(own_stream_use(entry.info.stream));
  if (!(users.any && residue_is(begin, end, users))) {
    clear_residue(begin, end);
    if (users.any) add_residue(begin, end, users);
  }
  erase_live(begin, slot);
  forget_recent();
}

AllocationView::Users AllocationView::own_stream_use(StreamId stream) {
  Users users;
  users.any = true;
  users.user = stream;
  return users;
}

void AllocationView::mark_use(Entry& entry, const Event& use) {
  Users users = own_stream_use(use.stream);
  // A host access is a thread's, never the allocation stream's.
  users.mixed = use.what == UseWhat::kHostAccess;
  entry.own.add(users);
  if (entry.page_role == StreamPages::Role::kOwn && entry.own.other_than(entry.info.stream)) {
    entry.page_role = StreamPages::Role::kOther;
    pages_.demote(entry.info.addr, entry.info.addr + entry.info.size);
  }
}

void AllocationView::on_use(const Event& event) {
  if (event.size == 0) {
    if (const RangeIndex::Entry* e = find(event.addr)) mark_use(slab_[e->slot], event);
    return;
  }
  const Addr end = range_end(event.addr, event.size);
  // Ranges are disjoint: one that holds the use's first byte and covers
  // its end is the only one the use overlaps.
  if (const RangeIndex::Entry* e = find(event.addr); e && end <= e->end) {
    mark_use(slab_[e->slot], event);
    return;
  }
  index_.for_each_overlapping(event.addr, end,
                              [&](const RangeIndex::Entry& e) { mark_use(slab_[e.slot], event); });
}

void AllocationView::on_stream_destroy(StreamId stream) {
  // The handle may come back as another stream, which the checker tells
  // apart and a StreamId does not: what the old one did counts as another
  // agent's from now on.
  auto forget = [stream](Users& users) {
    if (users.any && users.user == stream) users.mixed = true;
  };
  for (Entry& entry : slab_) {
    // Its uses that went to the checker unnoted, as its free would take them.
    if (entry.info.kind == AllocKind::kCachingAllocator && entry.info.stream == stream)
      entry.own.add(own_stream_use(stream));
    forget(entry.own);
    forget(entry.inherited);
  }
  residues_.for_each_overlapping(
      0, ~Addr{0}, [&](const RangeIndex::Entry& r) { forget(residue_users_[r.slot]); });
  pages_.forget_stream(stream);
}

AllocationView::Users AllocationView::residue_users(Addr begin, Addr end) const {
  Users users;
  residues_.for_each_overlapping(
      begin, end, [&](const RangeIndex::Entry& r) { users.add(residue_users_[r.slot]); });
  return users;
}

bool AllocationView::residue_is(Addr begin, Addr end, const Users& users) const {
  const RangeIndex::Entry* r = residues_.containing(begin);
  if (r == nullptr || r->end < end) return false;
  const Users& held = residue_users_[r->slot];
  return held.any == users.any && held.mixed == users.mixed && held.user == users.user;
}

std::uint32_t AllocationView::new_residue_slot(const Users& users) {
  if (free_residue_slots_.empty()) {
    residue_users_.push_back(users);
    return static_cast<std::uint32_t>(residue_users_.size() - 1);
  }
  const std::uint32_t slot = free_residue_slots_.back();
  free_residue_slots_.pop_back();
  residue_users_[slot] = users;
  return slot;
}

void AllocationView::clear_residue(Addr begin, Addr end) {
  overlapping_.clear();
  residues_.for_each_overlapping(begin, end,
                                 [&](const RangeIndex::Entry& r) { overlapping_.push_back(r); });
  for (const RangeIndex::Entry& r : overlapping_) {
    residues_.erase(r.start);
    // The parts outside [begin, end) stay remembered; the first keeps the
    // slot.
    std::uint32_t slot = r.slot;
    if (r.start < begin) {
      residues_.insert(RangeIndex::Entry{r.start, begin, slot});
      slot = kNoResidueSlot;
    }
    if (end < r.end) {
      if (slot == kNoResidueSlot) slot = new_residue_slot(residue_users_[r.slot]);
      residues_.insert(RangeIndex::Entry{end, r.end, slot});
      slot = kNoResidueSlot;
    }
    if (slot != kNoResidueSlot) free_residue_slots_.push_back(slot);
  }
}

void AllocationView::add_residue(Addr begin, Addr end, const Users& users) {
  // The caller cleared the range, so it is free of others; a neighbour
  // that carries the same is merged with it.
  auto same = [&](std::uint32_t slot) {
    return residue_users_[slot].mixed == users.mixed && residue_users_[slot].user == users.user;
  };
  Addr merged_end = end;
  if (const RangeIndex::Entry* next = residues_.containing(end);
      next != nullptr && next->start == end && same(next->slot)) {
    merged_end = next->end;
    free_residue_slots_.push_back(next->slot);
    residues_.erase(end);
  }
  if (const RangeIndex::Entry* prev = begin > 0 ? residues_.containing(begin - 1) : nullptr;
      prev != nullptr && prev->end == begin && same(prev->slot)) {
    const RangeIndex::Entry grown{prev->start, merged_end, prev->slot};
    residues_.erase(grown.start);
    residues_.insert(grown);
    return;
  }
  residues_.insert(RangeIndex::Entry{begin, merged_end, new_residue_slot(users)});
}

bool AllocationView::lookup(Addr addr, AllocInfo* out, bool* carries_past_uses) const {
  const RangeIndex::Entry* e = find(addr);
  if (e == nullptr) return false;
  const Entry& entry = slab_[e->slot];
  if (out) *out = entry.info;
  if (carries_past_uses)
    *carries_past_uses =
        entry.own.other_than(entry.info.stream) || entry.inherited.other_than(entry.info.stream);
  return true;
}

AllocationView::Census AllocationView::census() const {
  Census census;
  index_.for_each_overlapping(0, ~Addr{0}, [&](const RangeIndex::Entry& e) {
    const Entry& entry = slab_[e.slot];
    ++census.live;
    if (entry.page_role != StreamPages::Role::kOther) return;
    ++census.other;
    // A caching block counts as another agent's for its own uses or for
    // those it inherited.
    if (entry.info.kind == AllocKind::kCachingAllocator && !entry.own.other_than(entry.info.stream))
      ++census.other_by_inheritance;
  });
  residues_.for_each_overlapping(0, ~Addr{0}, [&](const RangeIndex::Entry& r) {
    if (residue_users_[r.slot].mixed) census.mixed_residue_bytes += r.end - r.start;
  });
  return census;
}

bool AllocationView::used_off_allocation_stream(Addr addr) const {
  const RangeIndex::Entry* e = find(addr);
  if (e == nullptr || e->start != addr) return true;
  const Entry& entry = slab_[e->slot];
  return entry.own.other_than(entry.info.stream);
}

}  // namespace xsc
