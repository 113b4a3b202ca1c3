// host_guard=1: plain host loads and stores of pinned memory that a copy
// still reads or writes, caught by page protection (host_guard.cpp).
#pragma once

#include <atomic>
#include <cstdint>

#include "checker/engine/event.h"
#include "runtime/rtl.h"

namespace xsc::rt {

// The number of guards up; read without any lock.
extern std::atomic<std::size_t> host_guards_up_count;
inline bool host_guards_up() { return host_guards_up_count.load(std::memory_order_relaxed) != 0; }

// Under the lock, after the host-side use of an asynchronous copy was fed:
// protects the pages of [host, host + bytes) (the copy's pinned host bytes)
// until a host thread is ordered after the copy: no access at all when the
// copy writes them (`host_written`, device to host), reads only when it
// reads them. Nothing unless host_guard=1.
void host_guard_copy(Locked& locked, Addr host, std::uint64_t bytes, bool host_written,
                     StreamId stream);
// Under the lock, after `event` was fed: lifts the guards of the copies
// the event's thread is now ordered after (synchronizations, successful
// queries, host functions).
void host_guard_after_event(Locked& locked, const Event& event);
// Under the lock, before the free of the pinned allocation holding `addr`
// (cudaFreeHost, cudaHostUnregister and their driver twins) is fed: lifts
// its guards.
void host_guard_before_free(Locked& locked, Addr addr);
// At exit, once the report is made: lifts every guard.
void host_guard_lift_all();

}  // namespace xsc::rt
