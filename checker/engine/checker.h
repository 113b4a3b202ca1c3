// The happens-before engine and its checks.
//
// Feed every Event in host-call order through on_event(); call finish() at
// the end of the program. The Checker is single-threaded: a concurrent
// producer (the runtime) serializes calls itself.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "checker/engine/event.h"
#include "checker/engine/finding.h"

namespace xsc {

struct CheckerConfig {
  bool check_use_after_free = true;
  bool check_use_before_ready = true;
  bool check_reuse_race = true;
  bool check_write_after_read = true;
  // A new caching block's first use by a kernel of unknown direction on its
  // allocation stream counts, for use before ready, as the write that
  // fills it (check_use_before_ready.cpp).
  bool first_use_writes = true;
  // The checklist rule: every free must be ordered after every use, whether
  // or not this run hands the memory out again while a use may still run.
  // Off: such a free is a finding only when it does (a reuse hazard), and
  // is otherwise counted as a latent free-before-wait.
  bool strict = false;
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
  // Latent free-before-wait, one per (free site, use site), after finish():
  // unordered frees whose memory this run never reused while the use could
  // still run. Empty under strict, where they are findings.
  const std::vector<Finding>& latent() const;
  // The names of the kUnchecked events seen, each once, in order: forms of
  // the program the producer did not model, said on the closing line.
  const std::vector<NameId>& unchecked() const;
  ParkedBlockStats parked_blocks() const;
  // The live allocation containing `addr` (interior pointers included).
  // Producers use it to tell pointer-valued kernel arguments from other words.
  // *carries_past_uses (when given) says whether another agent than the
  // allocation stream takes part in the memory's uses: an earlier
  // occupant's use it still carries, a use or a known write of the live
  // allocation. Then a use on the allocation stream too can appear in a
  // report (a race with that use, the pending read a copy lands on).
  bool lookup_allocation(Addr addr, AllocInfo* out, bool* carries_past_uses = nullptr) const;
  // Whether the live allocation starting at `addr` was used by anything but
  // its own allocation stream (another stream, a host access). True when no
  // live allocation starts there. A free on the allocation stream of one
  // that was not can never be reported as unordered, which lets a producer
  // skip the free's host stack.
  bool used_off_allocation_stream(Addr addr) const;
  CheckerStats stats() const;

  // Where the latest operation enqueued on `stream` stands: its agent and
  // epoch (epoch 0: none yet). thread_ordered_after() says whether host
  // thread `thread` is now ordered after that point (a stream or event
  // synchronization, a successful query, a device synchronization). The
  // runtime's host guard keeps a pending copy's pages protected until then.
  struct StreamPoint {
    std::uint32_t agent = ~std::uint32_t{0};
    std::uint64_t epoch = 0;
  };
  StreamPoint stream_point(StreamId stream) const;
  bool thread_ordered_after(ThreadId thread, StreamPoint point) const;

  // Whether a device operation (a copy, a kernel) used pinned host memory
  // and no host thread has synchronized with it since: a stream or event
  // synchronization, a successful query, a device synchronization or a
  // host function that ran after it, directly or through the streams'
  // waits. Once none is pending, every device use of pinned memory so far
  // is done, and a host access can be unordered only with a later one: the
  // PyTorch adapter follows host operators only while this is true or a
  // device use of pinned memory is yet to be fed (runtime/host/pinned_uses.cpp).
  bool pinned_device_uses_pending() const;
  // The same for the uses that may write pinned memory (writes, unknown
  // accesses): while only reads are pending, a host read races with none.
  bool pinned_device_writes_pending() const;
  // The events after which pinned_device_uses_pending() may turn false:
  // the host synchronizations and host functions that ran.
  static bool settles_pinned_uses(EventKind kind);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xsc
