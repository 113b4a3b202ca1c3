// The stream-ordering IR the dataflow runs on: each CFG block of a function
// becomes a list of operations on buffers, streams and events. Keys and sites
// are small integers; the op builder keeps what they stand for in the AST.
#pragma once

#include <cstdint>
#include <vector>

namespace xsc::lint {

using KeyId = std::uint32_t;   // a buffer, stream or event, by identity
using SiteId = std::uint32_t;  // the source construct an op came from
inline constexpr KeyId kNoKey = ~KeyId{0};

enum class OpKind : std::uint8_t {
  kAlloc,         // buffer allocated on `stream` (kNoKey: stream unknown)
  kUse,           // buffer read or written by work enqueued on `stream`
  kWrite,         // buffer written by work enqueued on `stream` (a copy's or memset's destination)
  kRecord,        // event recorded on `stream`
  kWait,          // `stream` waits for `event`
  kStreamSync,    // host waits for all work on `stream`
  kEventSync,     // host waits for `event`
  kDeviceSync,    // host waits for all work on every stream
  kFree,          // buffer freed on `stream` (kNoKey: its allocation stream)
  kCopy,          // `buffer` now names what `source` names
  kKill,          // `buffer` no longer names a tracked allocation
  kEventCopy,     // `event` now names what `source` names
  kRecordStream,  // the allocator defers the buffer's free until `stream` is done
  kHostMayWait,   // the host may have waited for all work so far; orders it for the host's
                  // accesses only
  kBindHandle,    // a library handle (`source`) enqueues its work on `stream` from now on
  kHandleUse,     // `buffer` used by a library call through handle `source`, on the stream
                  // the handle is bound to (nothing, where no binding is known on every path)
  kAssumeEmpty,   // a loop over `range` ran no round, so no loop over it did (loop_ranges.h):
                  // nothing bound to that range exists here
};

struct Op {
  OpKind kind = OpKind::kUse;
  KeyId buffer = kNoKey;
  KeyId stream = kNoKey;
  KeyId event = kNoKey;
  KeyId source = kNoKey;
  SiteId site = 0;
  // kUse, kWrite: through a pointer offset into the buffer (`p + i * n`),
  // so perhaps only a part of it, which another part's write may not touch.
  bool partial = false;
  // kUse, kWrite, kHandleUse: nonzero when enqueued between a stream
  // capture's begin and end (the begin call's identity): captured work runs
  // when its graph is launched, so it is ordered only with work of the same
  // capture here.
  std::uintptr_t capture = 0;
  // kUse, kWrite, kHandleUse: judged against the host's accesses of host-accessible
  // memory (pinned or managed): an async copy's or memset's accesses, and
  // a kernel's or library call's known writes. Not a kernel's reads, nor
  // its unknown uses: a kernel given pinned memory often talks with the
  // host through it on purpose (a flag it spins on). Not a write the kernel
  // makes through a volatile lvalue or a system-scope atomic, which shares
  // the memory with the host on purpose (ParamEffects::shared_with_host).
  // Not a prefetch, which moves pages without touching their contents.
  bool host_judged = false;
  // kUse, kWrite, kStreamSync, kEventSync, kDeviceSync: the variables of the
  // `if` conditions the op is made under (OpGraph::guard_sets; 0: none),
  // asked only for the host's accesses. A host synchronization made under
  // no condition but the copy's own (`if (async) copy; ... if (async)
  // sync;`) is taken to cover it on every path, since the analysis does
  // not correlate the two branches.
  std::uint32_t guard = 0;
  // kAssumeEmpty: the range (LoopRanges).
  std::uint64_t range = 0;
  // kHandleUse: the library call writes the buffer (an output or workspace
  // parameter, declared as a pointer to non-const data), so that the use it
  // becomes on the handle's stream is a kWrite.
  bool write = false;
};

struct OpBlock {
  std::vector<Op> ops;
  std::vector<unsigned> succs;  // indices into OpGraph::blocks
};

struct OpGraph {
  std::vector<OpBlock> blocks;
  unsigned entry = 0;
  // Keys of the legacy and per-thread default streams, sorted: CUDA orders
  // them with the blocking streams implicitly, which the graph does not show.
  std::vector<KeyId> implicitly_ordered;
  // The host's key: kUse and kWrite ops on it are the host's own reads and
  // writes of pinned memory, done before anything enqueued after them. The
  // default streams are not ordered with it: their copies into pinned
  // memory are asynchronous to the host.
  KeyId host = kNoKey;
  // The legacy default stream's key: its work comes after the earlier work
  // of every blocking stream.
  KeyId legacy = kNoKey;
  // Keys of the streams the function creates non-blocking
  // (cudaStreamNonBlocking), sorted: CUDA orders them with neither default
  // stream.
  std::vector<KeyId> non_blocking;
  // Op::guard's sets, each sorted; the first is empty.
  std::vector<std::vector<std::uintptr_t>> guard_sets{{}};
  // Per key, the loop ranges whose elements it names (`streams[i]` in a
  // loop over i, `w.stream` in a range-for over `workers`): it exists
  // only where those ranges are not empty. Keys past the end name none.
  std::vector<std::vector<std::uint64_t>> key_ranges;
  // Per key, its element class: keys naming elements of one container by
  // counters of nested loops over one range (`s[i]` and `s[j]`) share a
  // nonzero class, since the counters may be equal. Two streams of one
  // class may be one stream: what one does is not judged against the
  // other. Keys past the end have none.
  std::vector<std::uint32_t> element_class;
};

// A free that is not ordered after a use on another stream, on some path.
struct UnorderedFree {
  SiteId free_site = 0;
  KeyId buffer = kNoKey;
  KeyId free_stream = kNoKey;
  SiteId use_site = 0;
  KeyId use_stream = kNoKey;
  bool has_late_wait = false;  // a wait after the free would have ordered it
  SiteId late_wait_site = 0;
};

// An access of a buffer at `site` on `stream` that nothing orders after an
// earlier access at `earlier_site` on `earlier_stream`, on some path: a use
// after a known write (DataflowResult::not_ready), or a known write after a
// use (DataflowResult::overwritten).
struct UnorderedAccess {
  SiteId site = 0;
  KeyId buffer = kNoKey;
  KeyId stream = kNoKey;
  SiteId earlier_site = 0;
  KeyId earlier_stream = kNoKey;
};

struct DataflowResult {
  std::vector<UnorderedFree> unordered;  // sorted by (free_site, use_site)
  std::vector<UnorderedAccess> not_ready;    // uses after writes, by (site, earlier_site)
  std::vector<UnorderedAccess> overwritten;  // writes after uses, by (site, earlier_site)
  bool gave_up = false;                  // no fixpoint within the step budget
};

DataflowResult run_stream_order_dataflow(const OpGraph& graph);

}  // namespace xsc::lint
