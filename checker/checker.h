// The happens-before engine and its checks.
//
// Feed every Event in host-call order through on_event(); call finish() at
// the end of the program. The Checker is single-threaded: a concurrent
// producer (the runtime) serializes calls itself.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "checker/event.h"
#include "checker/finding.h"

namespace xsc {

struct CheckerConfig {
  bool check_use_after_free = true;
  bool check_use_before_ready = true;
  // Freed ranges remembered for use-after-free, oldest dropped first.
  std::size_t quarantine_entries = 1 << 16;
};

struct CheckerStats {
  std::uint64_t events = 0;
  std::uint64_t live_allocations = 0;
  std::uint64_t streams = 0;
  std::uint64_t threads = 0;
};

class Checker {
 public:
  explicit Checker(CheckerConfig config = {});
  ~Checker();
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  void on_event(const Event& event);
  // The same as on_event() for each of events[0, count) in order. Trace
  // replay hands events over in batches: the reader's and the checker's
  // code and data then stay in cache for a whole batch at a time.
  void on_events(const Event* events, std::size_t count);
  // End of program. Idempotent.
  void finish();

  // Deduplicated findings, one per (kind, free site, use site) with counts,
  // in order of first occurrence. Late-wait notes are attached as the waits
  // arrive, so read this after finish() for the final picture.
  const std::vector<Finding>& findings() const;
  ParkedBlockStats parked_blocks() const;
  // The live allocation containing `addr` (interior pointers included).
  // Producers use it to tell pointer-valued kernel arguments from other words.
  bool lookup_allocation(Addr addr, AllocInfo* out) const;
  // Whether the live allocation starting at `addr` was used by anything but
  // its own allocation stream (another stream, a host access). True when no
  // live allocation starts there. A free on the allocation stream of one
  // that was not can never be reported as unordered, which lets a producer
  // skip the free's host stack.
  bool used_off_allocation_stream(Addr addr) const;
  CheckerStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xsc
