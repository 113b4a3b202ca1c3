// What an NCCL call does to memory, as uses for the checker.
//
// NCCL kernels get their buffers through work structures in device memory,
// not through kernel parameters, so the runtime's kernel-argument scan never
// sees them. The interposers describe each enqueued call here instead: which
// ranges it reads and writes, on which stream, under which name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xsc::nccl {

// XSC_ACCESS_* values. kUnknown: a buffer NCCL may or may not write on this
// rank (a rooted call on a rank NCCL could not name): a write the checker
// must not count as certain.
enum class Access : int { kRead = 0, kWrite = 1, kUnknown = 2 };

struct BufferUse {
  std::uint64_t addr = 0;
  std::uint64_t bytes = 0;  // 0: size unknown, "the whole allocation"
  Access access = Access::kRead;
};

// One enqueued NCCL operation. `name` is a string literal ("ncclAllGather").
struct CollectiveCall {
  const char* name = nullptr;
  std::uint64_t stream = 0;  // raw cudaStream_t
  std::vector<BufferUse> uses;
};

// Bytes per element of an ncclDataType_t value; 0 for a value this build
// does not know (the use then covers the whole allocation).
std::size_t datatype_bytes(int datatype);

// Element count times element size, 0 when either is unknown or the product
// overflows.
std::uint64_t span_bytes(std::size_t count, int datatype, std::uint64_t multiplier = 1);

// Adds a use of [addr, addr+bytes) unless addr is null. A read that lies
// inside a write of the same call is dropped: in-place operations
// (sendbuff == recvbuff, or the all-gather input inside its output) are one
// write use.
void add_use(CollectiveCall* call, const void* addr, std::uint64_t bytes, Access access);

// Reports the call's uses through the runtime's host API; nothing when the
// runtime is disabled. Inside an NCCL group (ncclGroupStart on this thread
// not yet matched) the call is held until the outermost ncclGroupEnd, which
// is when NCCL actually enqueues it.
void submit(CollectiveCall call);

// Group bookkeeping, per host thread, mirroring NCCL's own per-thread depth.
void group_started();
// `enqueued`: the real ncclGroupEnd succeeded (or is in progress on a
// non-blocking communicator). At depth 0 the held calls are reported when
// enqueued, dropped otherwise.
void group_ended(bool enqueued);
int group_depth();

}  // namespace xsc::nccl
