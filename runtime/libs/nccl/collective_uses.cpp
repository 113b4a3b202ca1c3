#include "runtime/libs/nccl/collective_uses.h"

#include <limits>
#include <utility>

#include "xstream_check/host_api.h"

namespace xsc::nccl {
namespace {

// Calls made inside an NCCL group on this thread, waiting for the outermost
// ncclGroupEnd.
struct GroupState {
  int depth = 0;
  std::vector<CollectiveCall> held;
};

GroupState& group_state() {
  thread_local GroupState state;
  return state;
}

void report(const xsc_host_api& api, const CollectiveCall& call) {
  for (const BufferUse& use : call.uses) {
    // Stack 0: the runtime captures the calling thread's stack now, which is
    // the NCCL call itself (or the ncclGroupEnd that enqueued it).
    if (api.collective != nullptr) {
      api.collective(use.addr, use.bytes, call.stream, static_cast<int>(use.access), call.name,
                     /*stack=*/0);
    } else if (api.use != nullptr) {
      api.use(use.addr, use.bytes, call.stream, static_cast<int>(use.access), call.name,
              /*stack=*/0);
    }
  }
}

bool contains(const BufferUse& outer, std::uint64_t addr, std::uint64_t bytes) {
  if (outer.bytes == 0) return addr == outer.addr;  // unknown extent: same start only
  if (addr < outer.addr) return false;
  std::uint64_t offset = addr - outer.addr;
  return offset <= outer.bytes && bytes <= outer.bytes - offset;
}

}  // namespace

std::size_t datatype_bytes(int datatype) {
  // ncclDataType_t values of nccl.h (2.19 .. 2.28).
  switch (datatype) {
    case 0:   // ncclInt8 / ncclChar
    case 1:   // ncclUint8
    case 10:  // ncclFloat8e4m3
    case 11:  // ncclFloat8e5m2
      return 1;
    case 6:  // ncclFloat16
    case 9:  // ncclBfloat16
      return 2;
    case 2:  // ncclInt32
    case 3:  // ncclUint32
    case 7:  // ncclFloat32
      return 4;
    case 4:  // ncclInt64
    case 5:  // ncclUint64
    case 8:  // ncclFloat64
      return 8;
    default:
      return 0;
  }
}

std::uint64_t span_bytes(std::size_t count, int datatype, std::uint64_t multiplier) {
  std::uint64_t elem = datatype_bytes(datatype);
  if (elem == 0 || multiplier == 0) return 0;
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t n = count;
  if (n > kMax / multiplier) return 0;
  n *= multiplier;
  if (n > kMax / elem) return 0;
  return n * elem;
}

void add_use(CollectiveCall* call, const void* addr, std::uint64_t bytes, Access access) {
  if (addr == nullptr) return;
  auto a = reinterpret_cast<std::uint64_t>(addr);
  if (access == Access::kWrite) {
    // A write covering earlier reads replaces them (send buffer inside the
    // receive buffer).
    std::vector<BufferUse> kept;
    kept.reserve(call->uses.size() + 1);
    BufferUse write{a, bytes, Access::kWrite};
    for (const BufferUse& u : call->uses) {
      if (u.access == Access::kRead && contains(write, u.addr, u.bytes)) continue;
      kept.push_back(u);
    }
    kept.push_back(write);
    call->uses = std::move(kept);
    return;
  }
  for (const BufferUse& u : call->uses) {
    if (u.access == Access::kWrite && contains(u, a, bytes)) return;
  }
  call->uses.push_back(BufferUse{a, bytes, access});
}

void submit(CollectiveCall call) {
  if (call.uses.empty()) return;
  GroupState& group = group_state();
  if (group.depth > 0) {
    group.held.push_back(std::move(call));
    return;
  }
  if (const xsc_host_api* api = xsc_runtime_host_api()) report(*api, call);
}

void group_started() { ++group_state().depth; }

void group_ended(bool enqueued) {
  GroupState& group = group_state();
  if (group.depth == 0) return;  // unmatched ncclGroupEnd: NCCL rejects it too
  if (--group.depth > 0) return;
  std::vector<CollectiveCall> held = std::move(group.held);
  group.held.clear();
  if (!enqueued) return;
  if (const xsc_host_api* api = xsc_runtime_host_api()) {
    for (const CollectiveCall& call : held) report(*api, call);
  }
}

int group_depth() { return group_state().depth; }

}  // namespace xsc::nccl
