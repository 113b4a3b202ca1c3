// The bookkeeping of host_guard=1 (runtime/host/host_guard.cpp), kept free of
// system calls so that it can be tested alone: which pages a pending copy's
// host range covers, and which protection each page must have while some
// copies are pending.
//
// A guard is one pending copy: the whole pages of its host bytes, the
// protection they need while it runs (none for the destination of a
// device-to-host copy, which the host must neither read nor write; read-only
// for the source of a host-to-device copy, which the host may still read),
// and the point on its stream the host must be ordered after. Pages of
// several guards take the strictest protection among them.
//
// Fixed capacity, chosen at construction: nothing here allocates once the
// set is made, so the fault handler may remove guards while the faulting
// thread holds the allocator's lock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace xsc::rt::guard {

// [begin, end), page-aligned.
struct PageRange {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool empty() const { return begin >= end; }
  bool contains(std::uint64_t addr) const { return addr >= begin && addr < end; }
  bool overlaps(PageRange other) const { return begin < other.end && other.begin < end; }
};

// The whole pages of `page_size` (a power of two) that hold any byte of
// [addr, addr + bytes); empty for no bytes. (The address space's top page is
// never one.)
inline PageRange pages_of(std::uint64_t addr, std::uint64_t bytes, std::uint64_t page_size) {
  if (bytes == 0 || page_size == 0) return {};
  const std::uint64_t mask = ~(page_size - 1);
  const std::uint64_t last = bytes - 1 > ~std::uint64_t{0} - addr ? ~std::uint64_t{0}
                                                                     : addr + (bytes - 1);
  const std::uint64_t begin = addr & mask;
  const std::uint64_t last_page = last & mask;
  if (last_page > ~std::uint64_t{0} - page_size) return {begin, last_page};  // top page left out
  return {begin, last_page + page_size};
}

// Strictest first: a page takes the lowest protection among its guards.
enum class Protect : std::uint8_t { kNone = 0, kRead = 1, kReadWrite = 2 };

struct Guard {
  std::uint64_t id = 0;  // unique per guard
  PageRange pages;
  std::uint64_t bytes_begin = 0, bytes_end = 0;  // the copy's host bytes
  Protect protect = Protect::kReadWrite;
  bool host_written = false;  // a device-to-host copy's destination
  // The copy's point on its stream (Checker::StreamPoint).
  std::uint32_t agent = 0;
  std::uint64_t epoch = 0;
  std::uint64_t allocation = 0;  // base of the pinned allocation holding it
};

class GuardSet {
 public:
  explicit GuardSet(std::size_t capacity) : capacity_(capacity) {
    guards_.reserve(capacity);
    bounds_.reserve(2 * capacity + 2);
  }

  std::size_t size() const { return guards_.size(); }
  bool empty() const { return guards_.empty(); }
  const Guard& at(std::size_t i) const { return guards_[i]; }

  // False when the set is full (the copy goes unguarded).
  bool add(const Guard& guard) {
    if (guards_.size() >= capacity_ || guard.pages.empty()) return false;
    guards_.push_back(guard);
    return true;
  }

  // The protection `page` has now (kReadWrite when no guard covers it).
  Protect protection_of(std::uint64_t page) const {
    Protect p = Protect::kReadWrite;
    for (const Guard& g : guards_)
      if (g.pages.contains(page)) p = std::min(p, g.protect);
    return p;
  }

  // Whether some guard covers `page`.
  bool covers(std::uint64_t page) const {
    for (const Guard& g : guards_)
      if (g.pages.contains(page)) return true;
    return false;
  }

  // The first guard whose copy bytes hold `addr`, or null.
  const Guard* holding(std::uint64_t addr) const {
    for (const Guard& g : guards_)
      if (addr >= g.bytes_begin && addr < g.bytes_end) return &g;
    return nullptr;
  }

  // Removes every guard `drop` says yes to; returns the smallest page range
  // holding all of their pages (empty when none went). The pages in it
  // need their protection recomputed (for_each_segment).
  template <typename Drop>
  PageRange remove_if(Drop&& drop) {
    PageRange changed;
    bool any = false;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < guards_.size(); ++i) {
      if (drop(guards_[i])) {
        const PageRange pages = guards_[i].pages;
        changed.begin = any ? std::min(changed.begin, pages.begin) : pages.begin;
        changed.end = any ? std::max(changed.end, pages.end) : pages.end;
        any = true;
        continue;
      }
      if (kept != i) guards_[kept] = guards_[i];
      ++kept;
    }
    guards_.resize(kept);  // shrinks: no allocation
    return changed;
  }

  // Calls fn(PageRange, Protect) for the runs of `range` with one
  // protection each, in address order, adjacent runs of the same protection
  // merged. Not thread-safe (scratch storage).
  template <typename Fn>
  void for_each_segment(PageRange range, Fn&& fn) {
    if (range.empty()) return;
    bounds_.clear();
    bounds_.push_back(range.begin);
    bounds_.push_back(range.end);
    for (const Guard& g : guards_) {
      if (!g.pages.overlaps(range)) continue;
      if (g.pages.begin > range.begin) bounds_.push_back(g.pages.begin);
      if (g.pages.end < range.end) bounds_.push_back(g.pages.end);
    }
    std::sort(bounds_.begin(), bounds_.end());
    bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
    PageRange run{};
    Protect run_protect = Protect::kReadWrite;
    for (std::size_t i = 0; i + 1 < bounds_.size(); ++i) {
      const PageRange piece{bounds_[i], bounds_[i + 1]};
      const Protect p = protection_of(piece.begin);
      if (!run.empty() && run.end == piece.begin && p == run_protect) {
        run.end = piece.end;
        continue;
      }
      if (!run.empty()) fn(run, run_protect);
      run = piece;
      run_protect = p;
    }
    if (!run.empty()) fn(run, run_protect);
  }

 private:
  std::size_t capacity_;
  std::vector<Guard> guards_;
  std::vector<std::uint64_t> bounds_;
};

}  // namespace xsc::rt::guard
