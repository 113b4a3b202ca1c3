// Live allocations and recently freed ranges.
//
// Live allocations sit in an ordered interval map keyed by start address
// (ranges never overlap: an allocation that overlaps a stale entry replaces
// it), so interior pointers resolve with one upper_bound. Each allocation
// keeps only the LAST use per stream, so memory grows with live allocations
// x streams and never with the length of the program. Map nodes of freed
// allocations are recycled, so the steady state allocates nothing.
//
// Freed ranges go to a bounded FIFO quarantine, remembered for
// use-after-free until they are pushed out or reallocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "checker/event.h"
#include "checker/finding.h"
#include "checker/vector_clock.h"

namespace xsc {

struct LastUse {
  AgentId agent = kNoAgent;  // the stream (or host thread) that used it
  Epoch epoch = 0;           // that agent's epoch at the use
  UseInfo info;
};

struct Allocation {
  AllocInfo info;
  // Stream-ordered allocations are ready at `ready_epoch` of `ready_agent`;
  // other kinds are ready at once (ready_epoch 0).
  AgentId ready_agent = kNoAgent;
  Epoch ready_epoch = 0;
  std::vector<LastUse> uses;  // one entry per agent

  Addr end() const { return info.addr + info.size; }
  void record_use(AgentId agent, Epoch epoch, const UseInfo& use);
};

class AllocMap {
 public:
  using Map = std::map<Addr, Allocation>;
  using Node = Map::node_type;

  // Inserts a new live allocation; overlapping live entries are dropped.
  // Returns the new allocation, or null for an empty range.
  Allocation* insert(const AllocInfo& info);
  // The live allocation containing `addr`, or null.
  Allocation* find_containing(Addr addr);
  const Allocation* find_containing(Addr addr) const;
  // Calls f(Allocation&) for each live allocation overlapping [begin, end),
  // in address order. Returns how many there were.
  template <typename F>
  std::size_t for_each_overlapping(Addr begin, Addr end, F&& f);
  // Removes the live allocation starting exactly at `addr`; an empty node if
  // there is none. Hand the node back with recycle() when done with it.
  Node extract(Addr addr);
  void recycle(Node node);
  std::size_t size() const { return live_.size(); }

 private:
  Map::iterator first_overlapping(Addr begin, Addr end);
  Map live_;
  std::vector<Node> spare_;  // recycled nodes, uses' capacity kept
};

// A freed range, as remembered for use-after-free reports.
struct FreedRange {
  AllocInfo alloc;
  FreeInfo free;
  Addr end() const { return alloc.addr + alloc.size; }
};

class Quarantine {
 public:
  explicit Quarantine(std::size_t capacity) : capacity_(capacity) {}
  // Remembers a freed range, pushing out the oldest beyond the capacity.
  void push(const AllocInfo& alloc, const FreeInfo& free);
  // Forgets every remembered range overlapping [begin, end) (reallocated).
  void forget(Addr begin, Addr end);
  // The first remembered range overlapping [begin, end), or null.
  const FreedRange* find_overlapping(Addr begin, Addr end) const;
  std::size_t size() const { return index_.size(); }

 private:
  void erase_slot(std::size_t slot);

  struct Slot {
    FreedRange range;
    bool valid = false;
  };
  std::size_t capacity_;
  std::vector<Slot> ring_;  // grows to capacity_, then wraps
  std::size_t next_ = 0;    // slot the next push overwrites once full
  std::map<Addr, std::size_t> index_;  // start -> slot; ranges are disjoint
  std::vector<std::map<Addr, std::size_t>::node_type> spare_;
};

template <typename F>
std::size_t AllocMap::for_each_overlapping(Addr begin, Addr end, F&& f) {
  std::size_t n = 0;
  for (auto it = first_overlapping(begin, end);
       it != live_.end() && it->first < end; ++it) {
    f(it->second);
    ++n;
  }
  return n;
}

}  // namespace xsc
