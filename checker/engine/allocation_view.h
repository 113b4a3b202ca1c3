// The allocations as a producer sees them, ahead of the checker.
//
// With checker_thread=1 the runtime feeds the checker from a thread of its
// own, so the checker's allocation map lags behind the program. The questions the program's
// threads ask on their fast paths (is this kernel argument word a pointer
// into a tracked allocation; can a use of this block ever appear in a
// report, so that it needs a stack) are answered here instead, from the
// same events in the same order, at the moment they are fed:
//
// - the live set is exactly the checker's: an allocation event inserts its
//   range (dropping the live ranges it overlaps, a free that was missed),
//   a free removes the allocation starting at its address;
// - whether another agent than the allocation stream takes part in the
//   memory's uses is a conservative answer: true whenever the checker's
//   (Checker::lookup_allocation's `carries_past_uses`) can be true. A use on
//   another stream or by the host marks the allocation; freed memory that
//   such an allocation held, or that one stream used, is remembered as a
//   residue, and a later allocation on another stream overlapping it is
//   marked too (the checker's inherited past uses). A residue stays under
//   the allocation that reuses the memory, and that allocation's free
//   rewrites it only when the uses differ from what it inherited. The
//   residue is never dropped for being ordered, so the answer can be true
//   where the checker's is false: the producer then takes a stack it did
//   not need, never the other way round;
// - which pages hold, among their live blocks, only one stream's caching
//   blocks, untouched by any other agent (stream_pages.h). A kernel's use
//   on that stream of a word on such a page may go to the checker without
//   being noted here: it cannot change what this view answers, since a
//   caching block is taken at its free (and at its stream's destruction)
//   as used by its own stream whether a use was noted or not.
//
// Single-threaded: the producer calls it under its own lock.
#pragma once

#include <cstdint>
#include <vector>

#include "checker/engine/event.h"
#include "checker/engine/finding.h"
#include "checker/engine/range_index.h"
#include "checker/engine/start_table.h"
#include "checker/engine/stream_pages.h"

namespace xsc {

class AllocationView {
 public:
  // `page_shift`: the size of the pages stream_pages() answers for (2 MiB,
  // the caching allocator's smallest segment, by default).
  explicit AllocationView(unsigned page_shift = 21) : pages_(page_shift) {}

  // Follows one event, in the order the checker is fed.
  void note(const Event& event);

  // The live allocation containing `addr` (interior pointers included).
  // *carries_past_uses, when given: false only when every use of the
  // allocation and of the memory's earlier occupants was by the
  // allocation stream.
  bool lookup(Addr addr, AllocInfo* out, bool* carries_past_uses = nullptr) const;
  // Whether the live allocation starting at `addr` was used by anything
  // but its allocation stream (its own uses only, as
  // Checker::used_off_allocation_stream). True when none starts there.
  bool used_off_allocation_stream(Addr addr) const;

  // Which pages hold only one stream's caching blocks, which nothing else
  // took part in (see above), among their live blocks.
  const StreamPages& stream_pages() const { return pages_; }

  std::size_t live() const { return index_.size(); }
  std::size_t residues() const { return residues_.size(); }

  // Why launches are not handed over, for measurement (O(live + residues)):
  // the live allocations, those whose pages count them as another agent's,
  // of those the caching blocks their own stream alone used that count so
  // only for what they inherited from their memory's earlier occupants, and
  // the bytes of freed memory remembered as used by more than one agent
  // (every later occupant inherits that, on any stream).
  struct Census {
    std::uint64_t live = 0;
    std::uint64_t other = 0;
    std::uint64_t other_by_inheritance = 0;
    std::uint64_t mixed_residue_bytes = 0;
  };
  Census census() const;

 private:
  // Uses of some memory summed up: none, all by one stream (`user`), or
  // by more than one agent (`mixed`).
  struct Users {
    bool any = false;
    bool mixed = false;
    StreamId user = kLegacyStream;
    void add(const Users& other);
    // Whether an allocation on `stream` carrying these uses has another
    // agent than `stream` taking part.
    bool other_than(StreamId stream) const { return any && (mixed || user != stream); }
  };
  struct Entry {
    AllocInfo info;
    Users own;        // its own uses
    Users inherited;  // its memory's earlier occupants' uses
    StreamPages::Role page_role = StreamPages::Role::kOther;  // how pages_ counts it
  };
  void on_alloc(const Event& event);
  void on_free(const Event& event);
  void on_use(const Event& event);
  void on_stream_destroy(StreamId stream);
  // Notes a use of the entry; once another agent took part, its pages no
  // longer count it as its stream's own.
  void mark_use(Entry& entry, const Event& use);
  // A use by `stream` alone.
  static Users own_stream_use(StreamId stream);
  // The uses the residues overlapping [begin, end) hold, together.
  Users residue_users(Addr begin, Addr end) const;
  // Whether one residue covers [begin, end) and holds exactly `users`.
  bool residue_is(Addr begin, Addr end, const Users& users) const;
  // Removes [begin, end) from the residues (the parts outside it stay).
  void clear_residue(Addr begin, Addr end);
  // Remembers `users` for [begin, end), which holds no residue.
  void add_residue(Addr begin, Addr end, const Users& users);
  // A slot in residue_users_ holding `users`.
  std::uint32_t new_residue_slot(const Users& users);

  // The entries the last kRecent lookups found: a launch looks its words up
  // and then feeds uses of the same allocations, each at the word it looked
  // up. Cleared by every insert and erase (forget_recent).
  const RangeIndex::Entry* find(Addr addr) const;
  void forget_recent();
  static constexpr unsigned kRecent = 8;
  mutable RangeIndex::Entry recent_[kRecent] = {};
  mutable unsigned recent_next_ = 0;
  mutable unsigned recent_count_ = 0;  // recent_[0, recent_count_) hold entries

  // Interior addresses looked up (start_table.h): a launch passes a
  // bucket's gradient views or a pool's slots again and again.
  mutable InteriorCache interior_;

  RangeIndex index_;
  // The live ranges by exact start, in front of index_: frees, and most
  // uses and lookups, name an allocation's start.
  struct StartCell {
    Addr start = 0;
    Addr end = 0;
    std::uint32_t slot = StartTable<StartCell>::kEmptySlot;
  };
  StartTable<StartCell> starts_;
  void erase_live(Addr start, std::uint32_t slot);
  std::vector<Entry> slab_;
  std::vector<std::uint32_t> free_slots_;
  // Freed memory, by range, and the uses a later occupant carries (each
  // range's slot in residue_users_). An allocation asks for the residues
  // under it and a free for the one under its block: sorted blocks answer
  // those in a few adjacent cache lines, and a residue rewritten costs no
  // heap allocation.
  RangeIndex residues_;
  std::vector<Users> residue_users_;
  std::vector<std::uint32_t> free_residue_slots_;
  std::vector<RangeIndex::Entry> overlapping_;  // clear_residue's, kept for its capacity
  StreamPages pages_;
};

}  // namespace xsc
