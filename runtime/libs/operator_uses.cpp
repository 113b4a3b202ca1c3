// Operator uses: what a library call (runtime/libs/cublas/, runtime/libs/cudnn/)
// or a PyTorch operator touched, fed to the checker as UseWhat::kOperator
// uses, all through feed_operator_uses.
//
// Writes of PyTorch operators come from the adapter's operator-access
// callback (runtime/torch/operator_access.cpp) and are fed as known writes.
// The adapter names, when an operator returns, the tensors its schema says
// it wrote, on the stream that was current for it. Such a write is fed only
// when the calling thread enqueued GPU work on that stream while the
// operator ran (since the mark the adapter took at its start): an operator
// that enqueued nothing there wrote nothing there. That leaves out the ones
// whose schema marks an argument written but that change only its metadata
// (record_stream, resize_, set_) and those whose work goes to another stream.
#include <cstdint>
#include <vector>

#include "runtime/rtl.h"
#include "runtime/timing.h"

namespace xsc::rt {
namespace {

// The streams this thread enqueued work on most recently, with the count of
// its enqueues at that time, and its latest copies' destinations. An
// operator's kernels go to one stream, so a few entries are plenty; a stream
// pushed out answers "nothing enqueued", which only ever drops a write.
struct EnqueueLog {
  static constexpr int kStreams = 4;
  std::uint64_t count = 0;
  StreamId streams[kStreams] = {};
  std::uint64_t at[kStreams] = {};  // 0: empty
  int next = 0;
  // A copy is a known write of its own: an operator whose copy already
  // wrote the bytes (copy_ as one cudaMemcpyAsync) adds nothing but a second
  // report of the same race.
  struct Copy {
    StreamId stream = 0;
    Addr addr = 0;
    std::uint64_t size = 0;
    std::uint64_t at = 0;  // 0: empty
  };
  Copy copies[kStreams];
  int next_copy = 0;
};

EnqueueLog& enqueue_log() { return *thread_cache<EnqueueLog>(&thread_state().enqueue_log); }

// Keeps the uses that lie in tracked allocations, each cut at its
// allocation's end, and drops the empty ones: an extent comes from a call's
// arguments or a tensor's shape, and memory the checker does not track
// (another allocator's) is not judged from an operator. True when a stack
// is wanted: always while a capture is underway, and for any use but one of
// a caching block on its own allocation stream that no other stream took
// part in, which is fed without one, like a kernel's use of it (launch.cpp).
// *pinned: a use in pinned host memory, if any (noted once the lock is let
// go, rtl.h); *pinned_may_write set when one such use is not a read.
bool keep_tracked(Locked& locked, StreamId stream, OperatorUse* uses, std::size_t* n,
                  Addr* pinned, bool* pinned_may_write) {
  bool stack = captures_underway(locked);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < *n; ++i) {
    AllocInfo alloc;
    bool carries_past_uses = false;
    if (!locked.lookup_allocation(uses[i].addr, &alloc, &carries_past_uses)) continue;
    if (alloc.kind == AllocKind::kPinnedHost) {
      *pinned = uses[i].addr;
      if (uses[i].access != Access::kRead) *pinned_may_write = true;
    }
    stack = stack || carries_past_uses || alloc.kind != AllocKind::kCachingAllocator ||
            alloc.stream != stream;
    const Addr end = alloc.size != 0 ? alloc.addr + alloc.size : ~Addr{0};
    if (uses[i].bytes == 0 || uses[i].addr >= end) continue;
    if (uses[i].bytes > end - uses[i].addr) uses[i].bytes = end - uses[i].addr;
    uses[kept++] = uses[i];
  }
  *n = kept;
  return stack;
}

void emit_uses(Locked& locked, NameId name, StreamId stream, const OperatorUse* uses,
               std::size_t n, StackId stack) {
  Event event;
  event.kind = EventKind::kUse;
  event.stream = stream;
  event.what = UseWhat::kOperator;
  event.stack = stack;
  event.name = name;
  for (std::size_t i = 0; i < n; ++i) {
    event.addr = uses[i].addr;
    event.size = uses[i].bytes;
    event.access = uses[i].access;
    locked.emit(event);
  }
}

NameId name_id(Locked& locked, const char* name) {
  return locked.names().intern(name != nullptr ? name : "");
}

}  // namespace

void feed_operator_uses_locked(Locked& locked, NameId name, StreamId stream, OperatorUse* uses,
                               std::size_t n, StackId stack) {
  Addr pinned = 0;  // a launch's words into pinned memory are noted by the launch
  bool pinned_may_write = false;
  keep_tracked(locked, stream, uses, &n, &pinned, &pinned_may_write);
  emit_uses(locked, name, stream, uses, n, stack);
}

void feed_operator_uses(const char* name, StreamId stream, OperatorUse* uses, std::size_t n) {
  if (n == 0) return;
  {
    Locked locked;
    if (!locked) return;
    Addr pinned = 0;  // a pinned use wants a stack: noted below
    bool pinned_may_write = false;
    const bool wants_stack = keep_tracked(locked, stream, uses, &n, &pinned, &pinned_may_write);
    if (n == 0) return;
    if (!wants_stack) {
      emit_uses(locked, name_id(locked, name), stream, uses, n, kNoStack);
      return;
    }
  }
  // Never under the session lock: a Python stack takes the GIL.
  const StackId stack = capture_launch_stack();
  Addr pinned = 0;
  bool pinned_may_write = false;
  {
    Locked locked;
    if (!locked) return;
    // The lock was let go meanwhile: only what still lies in a tracked
    // allocation is fed.
    keep_tracked(locked, stream, uses, &n, &pinned, &pinned_may_write);
    emit_uses(locked, name_id(locked, name), stream, uses, n, stack);
    if (pinned != 0) pinned_use_fed(locked, pinned_may_write);
  }
  if (pinned != 0)
    note_pinned_device_use(name != nullptr ? name : "a library call", pinned, pinned_may_write,
                           stack);
}

void note_enqueued(const Event& event) {
  const StreamId stream = event.stream;
  EnqueueLog& log = enqueue_log();
  ++log.count;
  if (event.what == UseWhat::kMemcpy && event.access == Access::kWrite && event.size != 0) {
    log.copies[log.next_copy] = {stream, event.addr, event.size, log.count};
    log.next_copy = (log.next_copy + 1) % EnqueueLog::kStreams;
  }
  for (int i = 0; i < EnqueueLog::kStreams; ++i) {
    if (log.at[i] != 0 && log.streams[i] == stream) {
      log.at[i] = log.count;
      return;
    }
  }
  log.streams[log.next] = stream;
  log.at[log.next] = log.count;
  log.next = (log.next + 1) % EnqueueLog::kStreams;
}

std::uint64_t enqueue_mark() { return enqueue_log().count; }

bool enqueued_since(StreamId stream, std::uint64_t mark) {
  const EnqueueLog& log = enqueue_log();
  for (int i = 0; i < EnqueueLog::kStreams; ++i)
    if (log.at[i] != 0 && log.streams[i] == stream) return log.at[i] > mark;
  return false;
}

void on_operator_writes(const char* name, StreamId stream, std::uint64_t mark,
                        const OperatorWrite* writes, std::size_t n) {
  const PartScope part(Part::kOperatorHook);
  if (n == 0 || !enabled() || !enqueued_since(stream, mark)) return;
  // Writes a copy of the operator's made already: left out.
  const EnqueueLog& log = enqueue_log();
  std::vector<OperatorUse> kept;
  kept.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    bool copied = false;
    for (const EnqueueLog::Copy& c : log.copies) {
      copied = copied || (c.at > mark && c.stream == stream && writes[i].addr >= c.addr &&
                          writes[i].addr - c.addr <= c.size &&
                          writes[i].size <= c.size - (writes[i].addr - c.addr));
    }
    if (!copied) kept.push_back({writes[i].addr, writes[i].size, Access::kWrite});
  }
  feed_operator_uses(name, stream, kept.data(), kept.size());
}

}  // namespace xsc::rt
