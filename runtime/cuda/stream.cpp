// Streams the checker has been told about. Streams are announced when they
// are created; one first seen in another call (created before the runtime
// attached, or by a path without callbacks) is announced then, with its
// flags asked from the driver, and whether it is capturing.
#include <unordered_set>

#include "runtime/rtl.h"
#include "runtime/cuda/stream_id.h"

namespace xsc::rt {
namespace {

// Guarded by the session mutex.
std::unordered_set<StreamId>& known_streams() {
  static auto* streams = new std::unordered_set<StreamId>;
  return *streams;
}

// Guarded by the session mutex: handles of streams destroyed and not
// created again since. A caching allocator's bookkeeping may still name
// one (CuPy's pool keeps a destroyed stream's blocks under its handle and
// reports their frees there), and the driver must not be asked about a
// handle that is gone: cuStreamGetFlags reads the stream object.
std::unordered_set<StreamId>& destroyed_streams() {
  static auto* streams = new std::unordered_set<StreamId>;
  return *streams;
}

// The stream the last event named, known: most events name the stream
// the one before did, and this spares them the set's hash and buckets.
StreamId last_known = kLegacyStream;

void announce(Locked& locked, StreamId stream, StreamFlags flags) {
  Event event;
  event.kind = EventKind::kStreamCreate;
  event.stream = stream;
  event.stream_flags = flags;
  locked.emit(event);
}

StreamFlags query_flags(StreamId stream) {
  // Per-thread default streams synchronize with the legacy stream. A value
  // that cannot be a stream object is not passed to the driver (which would
  // read it); such a stream is taken as blocking.
  if (is_per_thread_stream_id(stream) || !may_query_stream(stream)) return StreamFlags::kBlocking;
  const DriverApi& api = driver();
  if (api.cuStreamGetFlags == nullptr) return StreamFlags::kBlocking;
  unsigned flags = 0;
  ReentrancyGuard guard;
  if (api.cuStreamGetFlags(reinterpret_cast<void*>(stream), &flags) != 0)
    return StreamFlags::kBlocking;
  return (flags & 0x1) != 0 ? StreamFlags::kNonBlocking : StreamFlags::kBlocking;
}

// Whether the stream `event` names was just passed to a CUDA call. A caching
// allocator's blocks and annotated uses are the program's bookkeeping, which
// may name a stream destroyed since.
bool named_in_cuda_call(const Event& event) {
  switch (event.kind) {
    case EventKind::kAlloc: return event.alloc_kind != AllocKind::kCachingAllocator;
    case EventKind::kFree: return event.free_kind != FreeKind::kCachingAllocator;
    case EventKind::kUse: return event.what != UseWhat::kAnnotated;
    default: return true;
  }
}

}  // namespace

void note_stream(Locked& locked, const Event& event) {
  const StreamId stream = event.stream;
  if (stream == kLegacyStream || stream == last_known) return;
  auto& known = known_streams();
  const bool met = known.find(stream) != known.end();  // the common case: no insert
  if (!met) known.insert(stream);
  last_known = stream;
  if (met) return;
  // Not a CUDA call's: the handle may be that of a stream destroyed since.
  // Nothing can run on it any more, so its flags do not matter; it is
  // announced as blocking, like any stream whose flags are not known.
  if (!named_in_cuda_call(event) && destroyed_streams().count(stream) != 0) {
    announce(locked, stream, StreamFlags::kBlocking);
    return;
  }
  announce(locked, stream, query_flags(stream));
  // Only here, once per stream: a capture the runtime did not see begin.
  note_capture_state(locked, stream);
}

void on_stream_created(Locked& locked, StreamId stream, StreamFlags flags) {
  known_streams().insert(stream);
  destroyed_streams().erase(stream);
  announce(locked, stream, flags);
}

void on_stream_destroyed(Locked& locked, StreamId stream) {
  if (last_known == stream) last_known = kLegacyStream;
  if (known_streams().erase(stream) == 0) return;
  destroyed_streams().insert(stream);
  Event event;
  event.kind = EventKind::kStreamDestroy;
  event.stream = stream;
  locked.emit(event);
}

}  // namespace xsc::rt
