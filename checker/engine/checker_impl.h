// The checker's state, shared by the event dispatch (checker.cpp) and the
// checks, one file each:
//   check_unordered_free.cpp  a free not ordered after a use: a finding when
//                             the memory is used again while that use may
//                             still run (strict: always), else latent; late
//                             waits
//   check_reuse_race.cpp      a use of memory not ordered after an earlier
//                             occupant's use on another agent
//   check_use_after_free.cpp  a use of freed memory (a stale pointer)
//   check_use_before_ready.cpp a use of a stream-ordered allocation before
//                             its allocation point
// Internal to checker/.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "checker/engine/alloc_map.h"
#include "checker/engine/checker.h"
#include "checker/engine/hb_state.h"
#include "checker/engine/vector_clock.h"

namespace xsc {

struct FindingKey {
  FindingKind kind;
  StackId site;  // free stack; the allocation stack for use-before-ready;
                 // the racing use's stack for a reuse race
  StackId use_stack;  // the use's; for a reuse race, the earlier free's
  NameId use_name;    // key_name(): the use's name only where it has no stack
  NameId test;   // Finding::test
  bool operator==(const FindingKey&) const = default;
};

// The use's name in a finding's key: it tells uses apart only where no
// stack does. A library call and the kernels it launches are fed at one
// line (a cuBLAS GEMM's operator use, with its direction, and its kernel's,
// without one), as are the kernels of one line's expression: one race to
// the user, who fixes the line.
inline NameId key_name(StackId stack, NameId name) { return stack == kNoStack ? name : kNoName; }

// Of the uses one finding stands for, the one it names: the first, unless a
// later one on the same stream says what it did where the first could not
// (the GEMM's operator use after its kernel's).
inline void prefer_directed(UseInfo* named, const UseInfo& later) {
  if (named->access == Access::kUnknown && later.access != Access::kUnknown &&
      later.stream == named->stream)
    *named = later;
}

struct FindingKeyHash {
  std::size_t operator()(const FindingKey& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.kind);
    h = h * 0x9e3779b97f4a7c15ULL + k.site;
    h = h * 0x9e3779b97f4a7c15ULL + k.use_stack;
    h = h * 0x9e3779b97f4a7c15ULL + k.use_name;
    h = h * 0x9e3779b97f4a7c15ULL + k.test;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// Unordered (free, use) pairs of one (free site, use site): how many there
// were, how many of them saw the memory used again while the use could
// still run, and the finding once there is one.
struct UnorderedFreeSite {
  Finding first;                 // alloc, free and use of the first pair
  std::uint64_t frees = 0;       // unordered (free, use) pairs
  std::uint64_t raced = 0;       // of those, followed by a racing use
  std::int64_t finding = -1;     // index into findings
  bool has_late_wait = false;
  LateWait late_wait;
};

// Unordered (free, use) pairs waiting for a late wait on the free's stream.
struct PendingLateWait {
  Epoch use_epoch;
  std::uint32_t site;
};

// The records of one (free stream, use stream) pair. A wait whose snapshot
// does not reach `min_epoch` covers none of them: one comparison skips all.
struct LateWaitBucket {
  AgentId use_agent = kNoAgent;
  Epoch min_epoch = 0;
  std::vector<PendingLateWait> records;
};

// A caching-allocator block whose reuse the allocator deferred.
struct DeferredBlock {
  AllocMap::Slot slot = AllocMap::kNoSlot;
  FreeInfo free;
  bool parked = false;
};

inline UseInfo use_info(const Event& e) {
  UseInfo u;
  u.addr = e.addr;
  u.size = e.size;
  u.stream = e.stream;
  u.what = e.what;
  u.access = e.access;
  u.name = e.name;
  u.graph = e.graph;
  u.thread = e.thread;
  u.stack = e.stack;
  u.synchronous = e.synchronous;
  u.pageable = e.pageable;
  return u;
}

inline FreeInfo free_info(const Event& e, NameId test) {
  FreeInfo f;
  f.test = test;
  f.addr = e.addr;
  f.stream = e.stream;
  f.kind = e.free_kind;
  f.deferred = e.deferred;
  f.thread = e.thread;
  f.stack = e.stack;
  return f;
}


struct Checker::Impl {
  explicit Impl(CheckerConfig c) : config(c), quarantine(c.quarantine_entries) {}

  CheckerConfig config;
  HbState hb;
  AllocMap live;
  Quarantine quarantine;
  std::vector<Finding> findings;
  std::unordered_map<FindingKey, std::uint32_t, FindingKeyHash> finding_index;
  std::vector<Finding> latent;
  std::uint64_t events = 0;
  bool finished = false;
  // The test current in the process (kTest); frees and findings judged at
  // a use without a free are attributed to it.
  NameId current_test = kNoName;
  // What the producer said it does not model (kUnchecked), each once, in
  // the order first said.
  std::vector<NameId> unchecked;
  VectorClock point;  // scratch ordering point, storage reused
  std::vector<PastUse> carried;  // scratch: uses a freed range carries
  Quarantine::Carried forgotten;  // scratch: what an allocation takes over

  // ---- check_unordered_free.cpp ------------------------------------------
  std::vector<UnorderedFreeSite> sites;
  std::unordered_map<FindingKey, std::uint32_t, FindingKeyHash> site_index;
  // Indexed by the free's stream agent.
  std::vector<std::vector<LateWaitBucket>> pending;
  std::size_t pending_records = 0;

  // Takes the allocation in `slot` out of use at a free. The uses it and
  // its memory's earlier occupants made go with the freed range; each of
  // its own uses that `point` (the free's ordering point) does not hold is
  // an unordered (free, use) pair. `all_ordered` says that `point` holds
  // all of them without building it. `late_wait_agent`: the stream a late
  // wait would have to be enqueued on (kNoAgent: none can help).
  void retire(AllocMap::Slot slot, const FreeInfo& free, AgentId late_wait_agent,
              bool all_ordered);
  std::uint32_t unordered_pair(const Allocation& a, const FreeInfo& free, const UseInfo& use);
  // Counts one more occurrence of the site's finding, made from its first
  // pair (and late wait) when it is new.
  void report_site(UnorderedFreeSite& site);
  // An unordered (free, use) pair was followed by a use that races with it;
  // `report`: that use is not reported as a use after free.
  void unordered_pair_raced(PastUse& past, const Allocation* reuse_alloc, bool report,
                            const UseInfo& racing);
  void remember_late_wait(AgentId free_agent, AgentId use_agent, Epoch epoch, std::uint32_t site);
  void match_late_waits(AgentId stream, const Event& wait);
  void finish_unordered_frees();

  // ---- check_reuse_race.cpp ------------------------------------------------
  // Gives a new allocation the uses its memory still carries.
  void inherit(Allocation& a, std::vector<PastUse>& past);
  // Drops the past uses every later action is ordered after, and those
  // another one of the same agent stands for.
  void prune(std::vector<PastUse>& past);
  // A use by `agent` (whose clock is `clock`) of memory carrying `past`:
  // each past use of another agent it is not ordered after races with it.
  // `reuse_alloc`: the live allocation used (null for freed memory).
  // `report`: false for a stale pointer's use, which is a use after free.
  void check_past_uses(std::vector<PastUse>& past, const Allocation* reuse_alloc, bool report,
                       AgentId agent, const VectorClock& clock, const UseInfo& use);

  // ---- check_write_after_read.cpp and check_use_before_ready.cpp ----------
  // A use by `agent` of the live allocation `a`: not ordered after a known
  // write of another agent to the same bytes (use before ready), or a known
  // write not ordered after another agent's use of them (write after read).
  // Then a known write is remembered.
  void check_known_writes(Allocation& a, AgentId agent, Epoch epoch, const VectorClock& clock,
                          const UseInfo& use);
  // Whether this use of `a`, not yet recorded, is the first use of a new
  // caching block by a kernel of unknown direction on its allocation
  // stream `agent`: then it is remembered as the write that fills it
  // (note_first_use_write).
  bool fills_new_block(const Allocation& a, AgentId agent, const UseInfo& use) const;
  void note_first_use_write(Allocation& a, AgentId agent, Epoch epoch, const UseInfo& use);

  // ---- check_use_after_free.cpp --------------------------------------------
  void use_after_free(const Event& e, FreedRange& freed, AgentId agent, const VectorClock& clock);
  void use_of_parked_block(const Event& e, const DeferredBlock& block);

  // ---- check_use_before_ready.cpp ------------------------------------------
  void check_ready(const Allocation& a, AgentId agent, const VectorClock& clock, const Event& e) {
    if (config.check_use_before_ready && a.ready_epoch != 0 && a.ready_agent != agent &&
        clock.get(a.ready_agent) < a.ready_epoch)
      use_before_ready(a, e);
  }
  void use_before_ready(const Allocation& a, const Event& e);

  // ---- checker.cpp: events and the deferred frees --------------------------
  Finding& report(const FindingKey& key, bool* fresh);
  void on_event(const Event& e);
  void on_alloc(const Event& e, AgentId thread);
  void on_free(const Event& e, AgentId thread);
  void on_free_completed(const Event& e, AgentId thread);
  void on_use(const Event& e, AgentId thread);
  void release_caching_block(AllocMap::Slot slot, const FreeInfo& free, AgentId thread,
                             bool completed);

  // Deferred caching-allocator frees by address; their ranges are disjoint.
  std::map<Addr, DeferredBlock> deferred;
  // The latest deferred free, held apart until the next event: a caching
  // allocator completes most frees at once (no record_stream), and a
  // completion that is the very next event then costs no map node. Any
  // other event parks it into `deferred` first, so every other reader of
  // the deferred frees finds it there.
  bool has_requested = false;
  Addr requested = 0;
  DeferredBlock requested_block;
  std::uint64_t parked_now = 0;
  std::uint64_t parked_bytes_now = 0;
  std::unordered_map<StackId, std::uint64_t> parked_by_site;
  ParkedBlockStats parked_stats;
  void park_requested();
  std::map<Addr, DeferredBlock>::iterator first_deferred_overlapping(Addr begin, Addr end);
  void unpark(DeferredBlock& block);

  // Device uses of pinned host memory no host thread is known to be
  // ordered after yet (Checker::pinned_device_uses_pending): per stream
  // agent, its latest such use's epoch, which covers the earlier ones.
  std::vector<std::pair<AgentId, Epoch>> pinned_pending;
  // The same for the uses that may write it (writes and unknown accesses):
  // only those race with a host read.
  std::vector<std::pair<AgentId, Epoch>> pinned_pending_writes;
  void note_pinned_device_use(AgentId stream, Epoch epoch, bool may_write);
  // After a host synchronization of `thread`: drops the uses it is now
  // ordered after.
  void settle_pinned_uses(AgentId thread);
};

}  // namespace xsc
