// Events, stream waits, host synchronizations and host functions.
#include "runtime/cuda/ops.h"
#include "runtime/rtl.h"

namespace xsc::rt {

Event sync_event(EventKind kind, StreamId stream, EventId event_id) {
  Event event;
  event.kind = kind;
  event.stream = stream;
  event.event = event_id;
  // The adapter's Python stack when it can be had safely, so that late-wait
  // notes and sync sites name the Python line, as launches do.
  event.stack = capture_sync_stack();
  return event;
}

namespace {

void emit_simple(EventKind kind, StreamId stream, EventId event_id) {
  if (!enabled()) return;
  const Event event = sync_event(kind, stream, event_id);
  Locked locked;
  if (locked) locked.emit(event);
}

}  // namespace

void on_event_record(EventId event, StreamId stream) {
  emit_simple(EventKind::kEventRecord, stream, event);
}

void on_stream_wait_event(StreamId stream, EventId event) {
  emit_simple(EventKind::kStreamWaitEvent, stream, event);
}

void on_stream_sync(StreamId stream) { emit_simple(EventKind::kStreamSync, stream, 0); }

void on_event_sync(EventId event) { emit_simple(EventKind::kEventSync, kLegacyStream, event); }

void on_device_sync() { emit_simple(EventKind::kDeviceSync, kLegacyStream, 0); }

void on_host_func(StreamId stream) {
  emit_simple(EventKind::kHostFunc, stream, take_host_func_token());
}

void on_event_destroy(EventId event) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_event_destroyed(locked, event);
}

void on_stream_create(StreamId stream, StreamFlags flags) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_stream_created(locked, stream, flags);
}

void on_stream_destroy(StreamId stream) {
  if (!enabled()) return;
  Locked locked;
  if (locked) on_stream_destroyed(locked, stream);
}

}  // namespace xsc::rt
