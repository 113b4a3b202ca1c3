// Allocations, frees, copies and memsets.
#include "runtime/ops.h"
#include "runtime/rtl.h"

namespace xsc::rt {

void on_alloc(Addr addr, std::uint64_t size, StreamId stream, AllocKind kind) {
  if (addr == 0 || !enabled()) return;
  Event event;
  event.kind = EventKind::kAlloc;
  event.addr = addr;
  event.size = size;
  event.stream = stream;
  event.alloc_kind = kind;
  event.stack = capture_stack();
  Locked locked;
  if (locked) locked.emit(event);
}

void on_free(Addr addr, StreamId stream, FreeKind kind) {
  if (addr == 0 || !enabled()) return;
  Event event;
  event.kind = EventKind::kFree;
  event.addr = addr;
  event.stream = stream;
  event.free_kind = kind;
  event.stack = capture_stack();
  Locked locked;
  if (locked) locked.emit(event);
}

namespace {

Event use_event(Addr addr, std::uint64_t bytes, StreamId stream, UseWhat what, Access access,
                StackId stack) {
  Event event;
  event.kind = EventKind::kUse;
  event.addr = addr;
  event.size = bytes;
  event.stream = stream;
  event.what = what;
  event.access = access;
  event.stack = stack;
  return event;
}

bool is_device(Locked& locked, Addr addr) {
  AllocInfo info;
  return addr != 0 && locked.session().checker().lookup_allocation(addr, &info);
}

}  // namespace

void on_copy(Addr dst, Addr src, std::uint64_t bytes, CopyKind kind, StreamId stream,
             bool synchronous) {
  if (!enabled()) return;
  // A copy is an op like a kernel (tensor.copy_, .to(), non_blocking
  // uploads): its report names the Python line that issued it.
  const StackId stack = capture_launch_stack();
  Locked locked;
  if (!locked) return;
  bool dst_device = kind == CopyKind::kHostToDevice || kind == CopyKind::kDeviceToDevice;
  bool src_device = kind == CopyKind::kDeviceToHost || kind == CopyKind::kDeviceToDevice;
  if (kind == CopyKind::kDefault) {
    // Unified addressing: the direction is in the pointers; only tracked
    // allocations are device memory the checker cares about.
    dst_device = is_device(locked, dst);
    src_device = is_device(locked, src);
  }
  const bool uses_src = src_device && src != 0;
  const bool uses_dst = dst_device && dst != 0;
  if (uses_src)
    locked.emit(use_event(src, bytes, stream, UseWhat::kMemcpy, Access::kRead, stack));
  if (uses_dst)
    locked.emit(use_event(dst, bytes, stream, UseWhat::kMemcpy, Access::kWrite, stack));
  // Host-to-host and untracked copies are ops on their stream all the same.
  if (!uses_src && !uses_dst) locked.emit(bare_use(stream, UseWhat::kMemcpy));
  // A synchronous copy to the host returns only once the copy (and so all
  // earlier work on its stream) is done. Host-to-device and device-to-device
  // synchronous copies may return earlier: no host synchronization.
  if (synchronous && src_device && !dst_device) {
    Event sync;
    sync.kind = EventKind::kStreamSync;
    sync.stream = stream;
    sync.stack = stack;
    locked.emit(sync);
  }
}

void on_memset(Addr dst, std::uint64_t bytes, StreamId stream) {
  if (!enabled()) return;  // dst 0 (invalid) still names an op on the stream
  const StackId stack = capture_launch_stack();
  Locked locked;
  if (locked) locked.emit(use_event(dst, bytes, stream, UseWhat::kMemset, Access::kWrite, stack));
}

}  // namespace xsc::rt
