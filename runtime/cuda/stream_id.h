// How an application's stream handle becomes a StreamId. Pure functions,
// shared by the CUPTI callbacks, the host API and the unit tests.
#pragma once

#include <cstdint>

#include "checker/engine/event.h"

namespace xsc::rt {

// The handle values CUDA reserves (cudaStreamLegacy, cudaStreamPerThread and
// their driver twins CU_STREAM_LEGACY, CU_STREAM_PER_THREAD).
inline constexpr std::uint64_t kLegacyHandle = 0x1;
inline constexpr std::uint64_t kPerThreadHandle = 0x2;

// Per-thread default streams get ids no real handle (a pointer) can take.
inline constexpr StreamId kPerThreadStreamBit = 1ull << 63;

inline constexpr StreamId per_thread_stream_id(ThreadId thread) {
  return kPerThreadStreamBit | thread;
}

inline constexpr bool is_per_thread_stream_id(StreamId id) {
  return (id & kPerThreadStreamBit) != 0;
}

// `per_thread_default`: the call was a _ptsz/_ptds entry point (code built
// with --default-stream per-thread), where handle 0 names the calling
// thread's default stream instead of the legacy one.
inline constexpr StreamId resolve_stream_handle(std::uint64_t handle, bool per_thread_default,
                                                ThreadId thread) {
  if (handle == 0) return per_thread_default ? per_thread_stream_id(thread) : kLegacyStream;
  if (handle == kLegacyHandle) return kLegacyStream;
  if (handle == kPerThreadHandle) return per_thread_stream_id(thread);
  return handle;
}

// True when `stream` may name a stream object the driver can be asked about.
// Handles that reach the runtime through the host API (NCCL interposers,
// adapters) are whatever the application passed, and the driver reads a
// handle's object without validating it: asking about a small integer or a
// misaligned value crashes inside libcuda. Real stream handles are heap
// pointers, above the unmapped first pages and 8-byte aligned; a graph
// branch's stand-in (event.h) is none.
inline constexpr bool may_query_stream(StreamId stream) {
  constexpr std::uint64_t kLowestObjectAddress = 0x10000;
  return !is_per_thread_stream_id(stream) && (stream & kGraphBranchStreamBit) == 0 &&
         stream >= kLowestObjectAddress && (stream & 0x7) == 0;
}

}  // namespace xsc::rt
