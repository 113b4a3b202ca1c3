// Which memory pages hold, among their live blocks, only one stream's
// caching blocks that nothing but that stream took part in.
//
// A kernel launched on stream S whose every pointer argument lies on such
// a page of S's uses caching blocks on their own stream that no other agent
// took part in, or lies in no live allocation: no report can name the
// launch's uses as they stand, so they need no stack, and the producer may
// hand the words to the checker to look up, instead of looking them up
// itself (runtime/cuda/launch.cpp). Part of the AllocationView, which
// counts each live allocation on its pages as the events come.
//
// Each page maps to one slot, which counts the live blocks on its pages
// by role: a stream's own (a caching block of that stream, carrying no
// other agent's uses, on pages where no other stream's own blocks live)
// and the others (anything else: memory of another kind, such as the
// segment a caching allocator takes with cudaMalloc before it hands out
// blocks of it; a block another agent used or whose memory carried another
// agent's uses; a block where another stream's own blocks live). A slot
// answers "only this stream" while it counts no other and its own blocks,
// if any, are that stream's. Pages sharing a slot share its counts, which
// can only turn an answer to "no" (a lookup follows). A count that reaches
// its ceiling stays there, which also only ever answers "no" more often.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "checker/engine/event.h"

namespace xsc {

class StreamPages {
 public:
  // A stream's mark in the slots; 0: the stream has none (it never had an
  // own block).
  using Mark = std::uint8_t;
  static constexpr Mark kNoMark = 0;
  // How a live block is counted on its pages.
  enum class Role : std::uint8_t { kOwn, kOther };

  explicit StreamPages(unsigned page_shift) : page_shift_(page_shift), slots_(kSlots) {}

  Mark mark_of(StreamId stream) const {
    for (const auto& [s, mark] : marks_)
      if (s == stream) return mark;
    return kNoMark;
  }
  // True when every live block on the page of `addr` is an own block of the
  // stream with this mark.
  bool only(Addr addr, Mark mark) const {
    const Slot& slot = slots_[slot_of(addr)];
    return mark != kNoMark && slot.other == 0 && (slot.own == 0 || slot.mark == mark);
  }

  // Counts a new live block [begin, end) of `stream`, begin < end; when
  // `own_stream_only` (a caching block carrying no other agent's uses) it is
  // the stream's own unless another stream's own blocks live on its pages.
  // Returns the role to pass to demote() and remove().
  Role add(Addr begin, Addr end, StreamId stream, bool own_stream_only) {
    Mark mark = own_stream_only ? mark_for(stream) : kNoMark;
    if (mark != kNoMark)
      for_each_slot(begin, end, [&](Slot& slot) {
        if (slot.own != 0 && slot.mark != mark) mark = kNoMark;
      });
    if (mark == kNoMark) {
      for_each_slot(begin, end, [](Slot& slot) { raise(slot.other); });
      return Role::kOther;
    }
    for_each_slot(begin, end, [mark](Slot& slot) {
      if (slot.own == 0) slot.mark = mark;
      raise(slot.own);
    });
    return Role::kOwn;
  }
  // An own block [begin, end) that another agent took part in.
  void demote(Addr begin, Addr end) {
    for_each_slot(begin, end, [](Slot& slot) {
      lower(slot.own);
      raise(slot.other);
    });
  }
  // The block [begin, end), counted with `role`, is no longer live.
  void remove(Addr begin, Addr end, Role role) {
    for_each_slot(begin, end,
                  [role](Slot& slot) { lower(role == Role::kOwn ? slot.own : slot.other); });
  }
  // The stream is destroyed: its handle may come back as another stream,
  // which the events cannot tell apart from it. Its mark is retired (its
  // live own blocks keep it, which no stream has any more), and the handle
  // gets a new mark when it has an own block again. Marks are not reused:
  // past the last one, a stream's blocks count as others.
  void forget_stream(StreamId stream) {
    for (auto it = marks_.begin(); it != marks_.end(); ++it) {
      if (it->first == stream) {
        marks_.erase(it);
        return;
      }
    }
  }

 private:
  struct Slot {
    std::uint16_t own = 0;    // live own blocks, all of stream `mark`
    std::uint16_t other = 0;  // live blocks of any other role
    Mark mark = kNoMark;
  };
  static constexpr std::size_t kSlotBits = 14;
  static constexpr std::size_t kSlots = std::size_t{1} << kSlotBits;  // 96 KiB
  static constexpr std::uint16_t kCeiling = 0xffff;
  static constexpr Mark kLastMark = 0xff;

  static void raise(std::uint16_t& count) {
    if (count != kCeiling) ++count;
  }
  static void lower(std::uint16_t& count) {
    if (count != kCeiling && count != 0) --count;
  }
  // The page number's low bits: a block's pages take neighbouring slots,
  // so a block of many pages touches a few cache lines of slots, not one
  // line per page; and pages share a slot only 2^kSlotBits pages apart
  // (32 GiB with 2 MiB pages), farther than most processes' device memory
  // spans.
  std::size_t slot_of(Addr addr) const {
    return static_cast<std::size_t>((addr >> page_shift_) & (kSlots - 1));
  }
  // The stream's mark, made at its first own block; kNoMark past the last.
  Mark mark_for(StreamId stream) {
    const Mark mark = mark_of(stream);
    if (mark != kNoMark || next_mark_ > kLastMark) return mark;
    marks_.emplace_back(stream, static_cast<Mark>(next_mark_));
    return static_cast<Mark>(next_mark_++);
  }
  // Calls f on the slot of each page of [begin, end), the same slots in
  // the same order for the same range.
  template <typename F>
  void for_each_slot(Addr begin, Addr end, F&& f) {
    const Addr first = begin >> page_shift_, last = (end - 1) >> page_shift_;
    if (last - first >= kSlots) {  // every slot holds one of its pages
      for (Slot& slot : slots_) f(slot);
      return;
    }
    for (Addr page = first; page <= last; ++page) f(slots_[slot_of(page << page_shift_)]);
  }

  unsigned page_shift_;
  std::vector<Slot> slots_;
  std::vector<std::pair<StreamId, Mark>> marks_;
  unsigned next_mark_ = 1;
};

}  // namespace xsc
