// What the checker found: plain data consumed by the report writers.
#pragma once

#include <cstdint>
#include <string_view>

#include "checker/engine/event.h"

namespace xsc {

enum class FindingKind : std::uint8_t {
  kUnorderedFree,   // rule xstream-unordered-free
  kUseAfterFree,    // rule xstream-use-after-free
  kUseBeforeReady,  // rule xstream-use-before-ready
  kReuseRace,       // rule xstream-reuse-race: memory freed with every use
                    // ordered, then used again on a stream not ordered
                    // after an earlier occupant's use
  kWriteAfterRead,  // rule xstream-write-after-read: a known write (copy,
                    // memset, collective receive, annotated write) not
                    // ordered after another stream's use of the same bytes
};
std::string_view to_string(FindingKind kind);   // "unordered-free", ...
std::string_view rule_id(FindingKind kind);     // "xstream-unordered-free", ...

struct AllocInfo {
  Addr addr = 0;
  std::uint64_t size = 0;
  StreamId stream = kLegacyStream;  // allocation stream
  AllocKind kind = AllocKind::kStreamOrdered;
  ThreadId thread = 0;
  StackId stack = kNoStack;
};

struct FreeInfo {
  Addr addr = 0;
  StreamId stream = kLegacyStream;  // stream the free is ordered on
  FreeKind kind = FreeKind::kStreamOrdered;
  bool deferred = false;            // record_stream-style deferred free
  ThreadId thread = 0;
  StackId stack = kNoStack;
  NameId test = kNoName;            // the test current when it was freed
};

// Ordered by size, 48 bytes: the checker copies one into every use record
// and every past use the memory carries.
struct UseInfo {
  Addr addr = 0;
  std::uint64_t size = 0;
  StreamId stream = kLegacyStream;
  std::uint64_t graph = 0;
  NameId name = kNoName;
  ThreadId thread = 0;
  StackId stack = kNoStack;
  UseWhat what = UseWhat::kKernel;
  Access access = Access::kUnknown;
  bool synchronous = false;  // Event::synchronous (copies)
  bool pageable = false;     // Event::pageable (copies)
};

// The wait that would have ordered an unordered use, but was enqueued on the
// free's stream only after the free.
struct LateWait {
  StreamId stream = kLegacyStream;
  EventId event = 0;
  ThreadId thread = 0;
  StackId stack = kNoStack;
};

// The memory came back into use while an earlier occupant's use could
// still run: the reallocation (absent when a stale pointer made the use)
// and the first use that was not ordered after the earlier one.
struct Reuse {
  bool has_alloc = false;
  AllocInfo alloc;  // the new occupant
  UseInfo use;      // the use that races with the earlier occupant's use
};

struct Finding {
  FindingKind kind = FindingKind::kUnorderedFree;
  AllocInfo alloc;
  FreeInfo free;        // kUnorderedFree, kUseAfterFree, kReuseRace (the
                        // earlier occupant's free)
  UseInfo use;          // the unordered / stale / too-early use; for
                        // kReuseRace the earlier occupant's use
  bool has_late_wait = false;
  LateWait late_wait;   // kUnorderedFree only
  // kUnorderedFree: the memory was reused while the use could still run
  // (always set for kReuseRace, where reuse.use is the racing use).
  bool has_reuse = false;
  Reuse reuse;
  // The earlier use this use is not ordered after, on the same bytes:
  // for kUseBeforeReady the last known write to the memory (when it is that
  // and not the allocation that is not ready), for kWriteAfterRead the
  // pending use the write lands on.
  bool has_earlier = false;
  UseInfo earlier;
  // kUseBeforeReady: `earlier` is no known write but the new block's first
  // use on its allocation stream, by a kernel of unknown direction, taken as
  // the write that fills it (Allocation::KnownWrite::first_use).
  bool earlier_first_use = false;
  // kUnorderedFree only: a latent free-before-wait, that is an unordered
  // free whose memory this run never reused while the use could still run.
  // Reported as a finding only under strict=1; otherwise counted and
  // written as a note-level result.
  bool latent = false;
  // The test the finding is attributed to (kNoName: none was current): for
  // a finding with a free (unordered free, use after free, reuse race) the
  // test current when the memory was freed, even when the finding was
  // judged later, at a use; for one without (use before ready, write after
  // read) the test current at the use. Findings of different tests are
  // never merged.
  NameId test = kNoName;
  std::uint64_t count = 1;  // occurrences merged into this finding
};

// record_stream-style deferred frees: blocks parked until the allocator's own
// event query lets them be reused. Reported as an advisory, not a finding.
struct ParkedBlockStats {
  std::uint64_t deferred_frees = 0;  // frees that were deferred
  std::uint64_t max_parked = 0;      // most blocks parked at once
  std::uint64_t peak_parked_bytes = 0;
  StackId top_site = kNoStack;       // free site that parked the most blocks
  std::uint64_t top_site_count = 0;
};

}  // namespace xsc
