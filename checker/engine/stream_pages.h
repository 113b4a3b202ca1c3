// Which memory pages only one stream's caching blocks ever lay on, with
// nothing but that stream taking part in their uses.
//
// A kernel launched on stream S whose every pointer argument lies on such
// a page of S's uses caching blocks on their own stream that no other agent
// took part in (or lies in no allocation at all): no report can name the
// launch's uses as they stand, so they need no stack, and the producer may
// hand the words to the checker to look up, instead of looking them up
// itself (runtime/cuda/launch.cpp). Part of the AllocationView, which keeps
// it in step with the same events.
//
// Each page hashes to one slot. A slot is empty, marked with one stream's
// mark, or spoiled, and it only ever moves that way: a page that held
// anything else (another stream's block, memory of another kind, a block
// another agent used or whose memory carried another agent's uses) spoils
// its slot for good, and so do pages of two streams sharing a slot. The
// answer "only this stream" is therefore never wrong; "spoiled" may be, and
// costs a lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "checker/engine/event.h"

namespace xsc {

class StreamPages {
 public:
  // A stream's mark in the slots; 0: the stream has none (no page is its).
  using Mark = std::uint8_t;
  static constexpr Mark kNoMark = 0;

  explicit StreamPages(unsigned page_shift) : page_shift_(page_shift), slots_(kSlots, kEmpty) {}

  Mark mark_of(StreamId stream) const {
    for (const auto& [s, mark] : marks_)
      if (s == stream) return mark;
    return kNoMark;
  }
  // True when every block that ever lay on the page of `addr` was a caching
  // block of the stream with this mark that only that stream took part in.
  bool only(Addr addr, Mark mark) const { return mark != kNoMark && slots_[slot_of(addr)] == mark; }

  // [begin, end) holds a caching block of `stream` that carries no other
  // agent's uses. begin < end.
  void claim(Addr begin, Addr end, StreamId stream) {
    const Mark mark = mark_for(stream);
    for_each_slot(begin, end, [mark](Mark& slot) {
      if (slot == kEmpty) slot = mark;
      else if (slot != mark) slot = kSpoiled;
    });
  }
  // [begin, end) holds memory that another agent than its stream took part
  // in, or memory of another kind. begin < end.
  void spoil(Addr begin, Addr end) {
    for_each_slot(begin, end, [](Mark& slot) { slot = kSpoiled; });
  }
  // The stream is destroyed: its handle may come back as another stream,
  // which the events cannot tell apart from it. Its pages are spoiled, and
  // the handle gets a new mark when it claims memory again.
  void forget_stream(StreamId stream) {
    const Mark mark = mark_of(stream);
    if (mark == kNoMark) return;
    for (Mark& slot : slots_)
      if (slot == mark) slot = kSpoiled;
    for (auto it = marks_.begin(); it != marks_.end(); ++it) {
      if (it->first == stream) {
        marks_.erase(it);
        break;
      }
    }
  }

 private:
  static constexpr std::size_t kSlotBits = 15;
  static constexpr std::size_t kSlots = std::size_t{1} << kSlotBits;  // 32 KiB
  static constexpr Mark kEmpty = 0;
  static constexpr Mark kSpoiled = 0xff;

  // Fibonacci hashing of the page number: neighbouring pages scatter.
  std::size_t slot_of(Addr addr) const {
    return static_cast<std::size_t>(((addr >> page_shift_) * 0x9E3779B97F4A7C15ull) >>
                                    (64 - kSlotBits));
  }
  // The stream's mark, made on its first claim; marks are never reused, and
  // past the last one a stream's claims spoil.
  Mark mark_for(StreamId stream) {
    const Mark mark = mark_of(stream);
    if (mark != kNoMark || next_mark_ == kSpoiled) return mark != kNoMark ? mark : kSpoiled;
    marks_.emplace_back(stream, next_mark_);
    return next_mark_++;
  }
  template <typename F>
  void for_each_slot(Addr begin, Addr end, F&& f) {
    const Addr first = begin >> page_shift_, last = (end - 1) >> page_shift_;
    if (last - first >= kSlots) {  // every slot holds one of its pages
      for (Mark& slot : slots_) f(slot);
      return;
    }
    for (Addr page = first; page <= last; ++page) f(slots_[slot_of(page << page_shift_)]);
  }

  unsigned page_shift_;
  std::vector<Mark> slots_;
  std::vector<std::pair<StreamId, Mark>> marks_;
  Mark next_mark_ = 1;
};

}  // namespace xsc
