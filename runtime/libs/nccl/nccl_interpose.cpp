// Interposers for the communication calls of libnccl.
//
// Each one forwards to the real function and returns its result untouched.
// After a successful enqueue it reports the buffers the operation touches as
// uses on the call's stream, named after the call ("ncclAllGather"). NCCL is
// never linked: with no libnccl in the process nobody calls these, and the
// real functions are looked up only when one is.
//
// Including nccl.h makes the compiler check every signature against the
// header the runtime is built with. Without nccl.h this file compiles to
// nothing and NCCL calls are simply not seen.
#if __has_include(<nccl.h>)
#include <nccl.h>

#include <atomic>
#include <cstdint>
#include <utility>

#include "runtime/libs/nccl/collective_uses.h"
#include "runtime/libs/real_symbol.h"
#include "xstream_check/host_api.h"

#define XSC_NCCL_EXPORT extern "C" __attribute__((visibility("default")))

// NCCL fails a call it cannot make with ncclSystemError; so does an
// interposer whose real function is missing (libs::call_real).
namespace xsc::libs {
template <>
struct MissingStatus<ncclResult_t> {
  static constexpr ncclResult_t kValue = ncclSystemError;
  static constexpr const char* kName = "ncclSystemError";
};
}  // namespace xsc::libs

namespace xsc::nccl {
namespace {

using libs::call_real;
using libs::note_loaded_release;
using libs::RealSymbol;

// NCCL_VERSION changed its encoding at 2.9; compare codes with it.
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define XSC_NCCL_HAS_ALLTOALL 1
#endif

RealSymbol real_AllReduce{"ncclAllReduce"};
RealSymbol real_AllGather{"ncclAllGather"};
RealSymbol real_ReduceScatter{"ncclReduceScatter"};
RealSymbol real_Broadcast{"ncclBroadcast"};
RealSymbol real_Bcast{"ncclBcast"};
RealSymbol real_Reduce{"ncclReduce"};
RealSymbol real_Send{"ncclSend"};
RealSymbol real_Recv{"ncclRecv"};
#ifdef XSC_NCCL_HAS_ALLTOALL
RealSymbol real_AlltoAll{"ncclAlltoAll"};
RealSymbol real_Gather{"ncclGather"};
RealSymbol real_Scatter{"ncclScatter"};
#endif
RealSymbol real_GroupStart{"ncclGroupStart"};
RealSymbol real_GroupEnd{"ncclGroupEnd"};
RealSymbol real_CommCount{"ncclCommCount"};
RealSymbol real_CommUserRank{"ncclCommUserRank"};
RealSymbol real_GetVersion{"ncclGetVersion"};

// On the first call, compares the NCCL loaded with the headers the runtime
// was built with and says once when they are older: then, with headers
// before 2.28, ncclAlltoAll, ncclGather and ncclScatter are not interposed.
void check_release() {
  static std::atomic<bool> checked{false};
  if (checked.exchange(true, std::memory_order_relaxed)) return;
  using Fn = ncclResult_t (*)(int*);
  Fn fn = real_GetVersion.get<Fn>();
  int code = 0;
  // Codes from 2.9 on: major * 10000 + minor * 100 + patch.
  if (fn == nullptr || fn(&code) != ncclSuccess || code < 20900) return;
  note_loaded_release("NCCL", "XSC_NCCL_ROOT", {NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH},
                      {code / 10000, code / 100 % 100, code % 100});
}

// Non-blocking communicators answer ncclInProgress for work that is queued
// and will be launched: the enqueue happened as far as ordering goes.
bool enqueued(ncclResult_t result) { return result == ncclSuccess || result == ncclInProgress; }

bool checking() { return xsc_runtime_host_api() != nullptr; }

// Ranks in `comm`, 0 when NCCL cannot say (sizes then cover whole allocations).
std::uint64_t comm_ranks(ncclComm_t comm) {
  int count = 0;
  using Fn = ncclResult_t (*)(const ncclComm_t, int*);
  Fn fn = real_CommCount.get<Fn>();
  if (fn == nullptr || fn(comm, &count) != ncclSuccess || count <= 0) return 0;
  return static_cast<std::uint64_t>(count);
}

// This process's rank in `comm`, -1 when NCCL cannot say.
int comm_rank(ncclComm_t comm) {
  int rank = -1;
  using Fn = ncclResult_t (*)(const ncclComm_t, int*);
  Fn fn = real_CommUserRank.get<Fn>();
  if (fn == nullptr || fn(comm, &rank) != ncclSuccess) return -1;
  return rank;
}

std::uint64_t raw_stream(cudaStream_t stream) { return reinterpret_cast<std::uint64_t>(stream); }

CollectiveCall make_call(const char* name, cudaStream_t stream) {
  check_release();
  CollectiveCall call;
  call.name = name;
  call.stream = raw_stream(stream);
  return call;
}

}  // namespace
}  // namespace xsc::nccl

using namespace xsc::nccl;

XSC_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, ncclRedOp_t op,
                                           ncclComm_t comm, cudaStream_t stream) {
  using Fn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                              cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_AllReduce, sendbuff, recvbuff, count, datatype, op, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclAllReduce", stream);
  std::uint64_t bytes = span_bytes(count, datatype);
  add_use(&call, sendbuff, bytes, Access::kRead);
  add_use(&call, recvbuff, bytes, Access::kWrite);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                           ncclDataType_t datatype, ncclComm_t comm,
                                           cudaStream_t stream) {
  using Fn =
      ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_AllGather, sendbuff, recvbuff, sendcount, datatype, comm, stream);
  if (!enqueued(result) || sendcount == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclAllGather", stream);
  add_use(&call, sendbuff, span_bytes(sendcount, datatype), Access::kRead);
  add_use(&call, recvbuff, span_bytes(sendcount, datatype, comm_ranks(comm)), Access::kWrite);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
                                               size_t recvcount, ncclDataType_t datatype,
                                               ncclRedOp_t op, ncclComm_t comm,
                                               cudaStream_t stream) {
  using Fn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                              cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
  if (!enqueued(result) || recvcount == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclReduceScatter", stream);
  add_use(&call, sendbuff, span_bytes(recvcount, datatype, comm_ranks(comm)), Access::kRead);
  add_use(&call, recvbuff, span_bytes(recvcount, datatype), Access::kWrite);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                           ncclDataType_t datatype, int root, ncclComm_t comm,
                                           cudaStream_t stream) {
  using Fn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                              cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_Broadcast, sendbuff, recvbuff, count, datatype, root, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclBroadcast", stream);
  std::uint64_t bytes = span_bytes(count, datatype);
  // Only the root reads sendbuff; when the rank is unknown assume it might.
  // The root's recvbuff is written only when it is another buffer: in place
  // (sendbuff == recvbuff) the root just sends.
  int rank = comm_rank(comm);
  if (rank < 0 || rank == root) add_use(&call, sendbuff, bytes, Access::kRead);
  if (recvbuff != sendbuff || (rank >= 0 && rank != root))
    add_use(&call, recvbuff, bytes, Access::kWrite);
  else if (rank < 0)
    add_use(&call, recvbuff, bytes, Access::kUnknown);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  using Fn = ncclResult_t (*)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t result = call_real<Fn>(real_Bcast, buff, count, datatype, root, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  // In place by definition: the root sends its buffer (a read), every
  // other rank receives into it (a write); on a rank NCCL cannot tell, it
  // may be either. (Labelled a write on the root too, the initial
  // broadcast of a single-rank DDP run looked like a write of the
  // parameters the default stream then read unordered.)
  CollectiveCall call = make_call("ncclBcast", stream);
  const int rank = comm_rank(comm);
  const Access access =
      rank < 0 ? Access::kUnknown : rank == root ? Access::kRead : Access::kWrite;
  add_use(&call, buff, span_bytes(count, datatype), access);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, ncclRedOp_t op, int root,
                                        ncclComm_t comm, cudaStream_t stream) {
  using Fn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int,
                              ncclComm_t, cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_Reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclReduce", stream);
  std::uint64_t bytes = span_bytes(count, datatype);
  add_use(&call, sendbuff, bytes, Access::kRead);
  // recvbuff is written on the root only (and may be NULL elsewhere).
  int rank = comm_rank(comm);
  if (rank == root) add_use(&call, recvbuff, bytes, Access::kWrite);
  else if (rank < 0) add_use(&call, recvbuff, bytes, Access::kUnknown);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                      int peer, ncclComm_t comm, cudaStream_t stream) {
  using Fn = ncclResult_t (*)(const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t result = call_real<Fn>(real_Send, sendbuff, count, datatype, peer, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclSend", stream);
  add_use(&call, sendbuff, span_bytes(count, datatype), Access::kRead);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype,
                                      int peer, ncclComm_t comm, cudaStream_t stream) {
  using Fn = ncclResult_t (*)(void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t result = call_real<Fn>(real_Recv, recvbuff, count, datatype, peer, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclRecv", stream);
  add_use(&call, recvbuff, span_bytes(count, datatype), Access::kWrite);
  submit(std::move(call));
  return result;
}

#ifdef XSC_NCCL_HAS_ALLTOALL
XSC_NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, ncclComm_t comm,
                                          cudaStream_t stream) {
  using Fn =
      ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_AlltoAll, sendbuff, recvbuff, count, datatype, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  // count elements to and from every rank: both buffers hold count*nranks.
  CollectiveCall call = make_call("ncclAlltoAll", stream);
  std::uint64_t bytes = span_bytes(count, datatype, comm_ranks(comm));
  add_use(&call, sendbuff, bytes, Access::kRead);
  add_use(&call, recvbuff, bytes, Access::kWrite);
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, int root, ncclComm_t comm,
                                        cudaStream_t stream) {
  using Fn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                              cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_Gather, sendbuff, recvbuff, count, datatype, root, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclGather", stream);
  add_use(&call, sendbuff, span_bytes(count, datatype), Access::kRead);
  int rank = comm_rank(comm);
  if (rank == root || rank < 0) {
    add_use(&call, recvbuff, span_bytes(count, datatype, comm_ranks(comm)),
            rank < 0 ? Access::kUnknown : Access::kWrite);
  }
  submit(std::move(call));
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, int root, ncclComm_t comm,
                                         cudaStream_t stream) {
  using Fn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                              cudaStream_t);
  ncclResult_t result =
      call_real<Fn>(real_Scatter, sendbuff, recvbuff, count, datatype, root, comm, stream);
  if (!enqueued(result) || count == 0 || !checking()) return result;
  CollectiveCall call = make_call("ncclScatter", stream);
  int rank = comm_rank(comm);
  if (rank < 0 || rank == root) {
    add_use(&call, sendbuff, span_bytes(count, datatype, comm_ranks(comm)), Access::kRead);
  }
  add_use(&call, recvbuff, span_bytes(count, datatype), Access::kWrite);
  submit(std::move(call));
  return result;
}
#endif  // XSC_NCCL_HAS_ALLTOALL

// Group calls are tracked whether or not checking is on: the depth is a
// per-thread counter with no effect on the application, and keeping it
// exact means no call is ever reported before NCCL enqueues it.
XSC_NCCL_EXPORT ncclResult_t ncclGroupStart() {
  using Fn = ncclResult_t (*)();
  ncclResult_t result = call_real<Fn>(real_GroupStart);
  if (result == ncclSuccess) group_started();
  return result;
}

XSC_NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  using Fn = ncclResult_t (*)();
  ncclResult_t result = call_real<Fn>(real_GroupEnd);
  group_ended(enqueued(result));
  return result;
}

#endif  // __has_include(<nccl.h>)
