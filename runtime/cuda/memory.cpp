// Allocations, frees, copies and memsets.
#include <atomic>

#include "runtime/cuda/ops.h"
#include "runtime/host/host_guard.h"
#include "runtime/rtl.h"

namespace xsc::rt {

namespace {
std::atomic<bool> g_pinned_memory_seen{false};
}  // namespace

bool pinned_memory_seen() { return g_pinned_memory_seen.load(std::memory_order_relaxed); }
void note_pinned_memory() { g_pinned_memory_seen.store(true, std::memory_order_release); }

void on_alloc(Addr addr, std::uint64_t size, StreamId stream, AllocKind kind) {
  if (addr == 0 || !enabled()) return;
  if (kind == AllocKind::kPinnedHost) note_pinned_memory();
  Event event;
  event.kind = EventKind::kAlloc;
  event.addr = addr;
  event.size = size;
  event.stream = stream;
  event.alloc_kind = kind;
  // Pinned host memory is taken rarely (PyTorch's host allocator caches its
  // blocks) and named in reports of the host's accesses: the Python line
  // that asked for it, where there is one (torch.empty(..., pin_memory=True),
  // not the host allocator's C++ frames), as for a launch. The host
  // allocator calls cudaHostAlloc holding none of its mutexes, so the
  // Python stack may take the GIL here.
  event.stack = kind == AllocKind::kPinnedHost ? capture_launch_stack() : capture_stack();
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
  // Native even for pinned host memory: PyTorch's host allocator frees its
  // blocks (empty_cache) holding its own mutexes, where waiting for the GIL
  // could deadlock with a thread that holds it and waits for them.
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
  return addr != 0 && locked.lookup_allocation(addr, &info) &&
         info.kind != AllocKind::kPinnedHost;
}

// Host memory the checker knows as pinned (cudaHostAlloc, cudaHostRegister,
// PyTorch's pinned blocks, which come from those calls).
bool is_pinned(Locked& locked, Addr addr) {
  AllocInfo info;
  return addr != 0 && locked.lookup_allocation(addr, &info) &&
         info.kind == AllocKind::kPinnedHost;
}

}  // namespace

void on_copy(Addr dst, Addr src, std::uint64_t bytes, CopyKind kind, StreamId stream,
             bool synchronous) {
  if (!enabled()) return;
  // A copy is an op like a kernel (tensor.copy_, .to(), non_blocking
  // uploads): its report names the Python line that issued it.
  const StackId stack = capture_launch_stack();
  Addr pinned = 0;  // the pinned side, noted once the lock is released
  bool to_host = false;  // the copy writes it
  {
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
    // The host side of a copy to or from the device: pinned memory the
    // checker knows is touched by the copy on its stream, as the device side
    // is (a 2D copy's rows are not one run of bytes: left out); other host
    // memory is pageable.
    const bool src_pinned = !src_device && is_pinned(locked, src);
    const bool dst_pinned = !dst_device && is_pinned(locked, dst);
    const bool pageable = (dst_device && !src_device && !src_pinned) ||
                          (src_device && !dst_device && !dst_pinned);
    const bool uses_src = src_device && src != 0;
    const bool uses_dst = dst_device && dst != 0;
    const bool uses_host_src = src_pinned && bytes != 0 && (dst_device || uses_dst);
    const bool uses_host_dst = dst_pinned && bytes != 0 && (src_device || uses_src);
    auto copy_use = [&](Addr addr, Access access) {
      Event use = use_event(addr, bytes, stream, UseWhat::kMemcpy, access, stack);
      use.synchronous = synchronous;
      use.pageable = pageable;
      locked.emit(use);
    };
    if (uses_src) copy_use(src, Access::kRead);
    if (uses_host_src) copy_use(src, Access::kRead);
    if (uses_dst) copy_use(dst, Access::kWrite);
    if (uses_host_dst) copy_use(dst, Access::kWrite);
    // Host-to-host and untracked copies are ops on their stream all the same.
    if (!uses_src && !uses_dst && !uses_host_src && !uses_host_dst)
      locked.emit(bare_use(stream, UseWhat::kMemcpy));
    // host_guard=1: the pinned bytes of an asynchronous copy are protected
    // until the host is ordered after it (host_guard.cpp).
    if (!synchronous && (uses_host_src || uses_host_dst) && options().host_guard)
      host_guard_copy(locked, uses_host_dst ? dst : src, bytes, uses_host_dst, stream);
    // A synchronous copy to the host returns only once the copy (and so all
    // earlier work on its stream) is done; so does one from pinned host
    // memory to the device ("synchronous with respect to the host", the
    // Runtime API's API synchronization behavior). From pageable memory to
    // the device it may return before the DMA lands, and device to device
    // earlier still: no host synchronization.
    if (synchronous && ((src_device && !dst_device) || (src_pinned && dst_device))) {
      Event sync;
      sync.kind = EventKind::kStreamSync;
      sync.stream = stream;
      sync.stack = stack;
      locked.emit(sync);
    }
    if (uses_host_src || uses_host_dst) {
      pinned = uses_host_dst ? dst : src;
      to_host = uses_host_dst;
      pinned_use_fed(locked, to_host);
    }
  }
  if (pinned != 0)
    note_pinned_device_use(to_host ? "a copy to the host" : "a copy from the host", pinned,
                           to_host, stack);
}

void on_memset(Addr dst, std::uint64_t bytes, StreamId stream) {
  if (!enabled()) return;  // dst 0 (invalid) still names an op on the stream
  const StackId stack = capture_launch_stack();
  bool pinned = false;
  {
    Locked locked;
    if (!locked) return;
    pinned = is_pinned(locked, dst);
    locked.emit(use_event(dst, bytes, stream, UseWhat::kMemset, Access::kWrite, stack));
    if (pinned) pinned_use_fed(locked, /*may_write=*/true);
  }
  if (pinned) note_pinned_device_use("a memset", dst, /*may_write=*/true, stack);
}

}  // namespace xsc::rt
