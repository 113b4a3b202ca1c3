// Terse construction of checker events for tests:
//   feed(Use(kBuf, 0, kCompute).stack(3).thread(1));
#pragma once

#include "checker/engine/event.h"

namespace xsc::test {

class E {
 public:
  explicit E(EventKind kind) { e_.kind = kind; }
  E& thread(ThreadId t) { e_.thread = t; return *this; }
  E& stack(StackId s) { e_.stack = s; return *this; }
  E& name(NameId n) { e_.name = n; return *this; }
  E& graph(std::uint64_t g) { e_.graph = g; return *this; }
  E& what(UseWhat w) { e_.what = w; return *this; }
  E& access(Access a) { e_.access = a; return *this; }
  operator const Event&() const { return e_; }
  Event& raw() { return e_; }

  Event e_;  // public: the factories below fill it in
};

inline E CreateStream(StreamId s, StreamFlags flags = StreamFlags::kBlocking) {
  E e(EventKind::kStreamCreate);
  e.e_.stream = s;
  e.e_.stream_flags = flags;
  return e;
}
inline E DestroyStream(StreamId s) {
  E e(EventKind::kStreamDestroy);
  e.e_.stream = s;
  return e;
}
inline E Alloc(Addr addr, std::uint64_t size, StreamId s,
               AllocKind kind = AllocKind::kCachingAllocator) {
  E e(EventKind::kAlloc);
  e.e_.addr = addr;
  e.e_.size = size;
  e.e_.stream = s;
  e.e_.alloc_kind = kind;
  return e;
}
inline E Free(Addr addr, StreamId s, FreeKind kind = FreeKind::kCachingAllocator,
              bool deferred = false) {
  E e(EventKind::kFree);
  e.e_.addr = addr;
  e.e_.stream = s;
  e.e_.free_kind = kind;
  e.e_.deferred = deferred;
  return e;
}
inline E FreeCompleted(Addr addr) {
  E e(EventKind::kFreeCompleted);
  e.e_.addr = addr;
  return e;
}
inline E Use(Addr addr, std::uint64_t size, StreamId s) {
  E e(EventKind::kUse);
  e.e_.addr = addr;
  e.e_.size = size;
  e.e_.stream = s;
  return e;
}
inline E Record(EventId ev, StreamId s) {
  E e(EventKind::kEventRecord);
  e.e_.event = ev;
  e.e_.stream = s;
  return e;
}
inline E Wait(StreamId s, EventId ev) {
  E e(EventKind::kStreamWaitEvent);
  e.e_.event = ev;
  e.e_.stream = s;
  return e;
}
inline E StreamSync(StreamId s) {
  E e(EventKind::kStreamSync);
  e.e_.stream = s;
  return e;
}
inline E EventSync(EventId ev) {
  E e(EventKind::kEventSync);
  e.e_.event = ev;
  return e;
}
inline E DeviceSync() { return E(EventKind::kDeviceSync); }
inline E HostFunc(StreamId s) {
  E e(EventKind::kHostFunc);
  e.e_.stream = s;
  return e;
}
// A host synchronization object released or acquired (a semaphore posted,
// a wait that took it).
inline E SyncRelease(EventId object) {
  E e(EventKind::kSyncRelease);
  e.e_.event = object;
  return e;
}
inline E SyncAcquire(EventId object) {
  E e(EventKind::kSyncAcquire);
  e.e_.event = object;
  return e;
}

}  // namespace xsc::test
