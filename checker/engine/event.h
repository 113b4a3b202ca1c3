// The one event model of xstream-check.
//
// Everything the checker knows about a program arrives as a sequence of
// Event values in host-call order: the live runtime (CUPTI callbacks, the
// PyTorch allocator tracker, NCCL hooks, annotations) produces them, the
// trace writer serializes them, and trace replay reads them back. There is
// no second model: a field added here is a field the trace format carries.
#pragma once

#include <cstdint>
#include <string_view>

namespace xsc {

// Opaque identities. Stream and event ids are the application's handle values
// (cudaStream_t / cudaEvent_t as integers) resolved by the producer: the
// legacy default stream is kLegacyStream, and each host thread's per-thread
// default stream gets a distinct id chosen by the producer.
using StreamId = std::uint64_t;
using EventId = std::uint64_t;
using ThreadId = std::uint32_t;  // small, dense host-thread numbers (T0, T1, ...)
using StackId = std::uint32_t;   // key into StackDepot; kNoStack when unknown
using NameId = std::uint32_t;    // key into NameTable (kernel names etc.)
using Addr = std::uint64_t;

inline constexpr StreamId kLegacyStream = 0;
// Stream ids with this bit are no application's streams: a producer's
// stand-ins for the branches of a launched CUDA graph that run apart from
// the stream it was launched on (each forked from that stream and joined
// back). Event ids with it are the stand-ins' events.
inline constexpr StreamId kGraphBranchStreamBit = 1ull << 62;
inline constexpr StackId kNoStack = 0;
inline constexpr NameId kNoName = 0;

enum class EventKind : std::uint8_t {
  kStreamCreate,    // stream, flags (blocking / non-blocking)
  kStreamDestroy,   // stream
  kAlloc,           // addr, size, stream = allocation stream, alloc_kind
  kFree,            // addr, stream = stream the free is ordered on, free_kind
  kFreeCompleted,   // addr: a deferred caching-allocator free became reusable
  kUse,             // addr, size, stream, access, name (kernel / copy / ...)
                    // addr 0: an op touching nothing tracked, still ordered
  kEventRecord,     // event, stream
  kStreamWaitEvent, // stream waits on event
  kStreamSync,      // host thread synchronizes with stream
  kEventSync,       // host thread synchronizes with event
  kDeviceSync,      // host thread synchronizes with every stream
  kHostFunc,        // a host function enqueued on stream (an op on it);
                    // event: its token (0: not followed), which the
                    // kHostFuncRun / kHostFuncDone of its call name
  kGraphLaunch,     // graph (name) launched on stream; its captured work
                    // follows as kUse events on that stream with `graph` set
  kThreadName,      // names host thread `thread` (name)
  // Trace version 2:
  kHostFuncRun,     // host function `event` (token) starts running on
                    // `thread`: that thread, and every host action after
                    // this one, is ordered after its stream's earlier work
  kHostFuncDone,    // host function `event` returned on `thread`: every
                    // host action after this one is ordered after it
  kThreadCreate,    // `thread` starts a thread; event: token
  kThreadStart,     // `thread` begins, started by the kThreadCreate with
                    // the same token
  // Trace version 3:
  kTest,            // name: the test now current in the process (a pytest
                    // node id), kNoName when none is. No ordering effect:
                    // the frees and uses that follow are attributed to it
  // Trace version 4:
  kUnchecked,       // name: a form of the program the producer saw but does
                    // not model ("graphs with conditional nodes: bodies not
                    // checked"). No ordering effect: the report names each
                    // distinct one once, on its closing line
  // Trace version 6:
  kSyncRelease,     // `thread` releases the host synchronization object
                    // `event` (a semaphore's address posted, a thread's
                    // exit): what it did and knew so far goes with it
  kSyncAcquire,     // `thread` acquired `event` (a wait that returned, a
                    // join): it is ordered after every release of it so far
};
inline constexpr int kNumEventKinds = 22;

enum class StreamFlags : std::uint8_t {
  kBlocking = 0,     // cudaStreamDefault: synchronizes with the legacy stream
  kNonBlocking = 1,  // cudaStreamNonBlocking: exempt
};

enum class AllocKind : std::uint8_t {
  kStreamOrdered,     // cudaMallocAsync / cuMemAllocAsync / from-pool
  kCachingAllocator,  // PyTorch's caching allocator, annotated allocators
  kSynchronous,       // cudaMalloc / cuMemAlloc
  // Trace version 4: page-locked host memory (cudaHostAlloc, cudaMallocHost,
  // cudaHostRegister and their driver forms, PyTorch's pinned host
  // allocator's blocks). The host touches it directly (kHostAccess uses) and
  // copies touch it from a stream; no stream owns it (`stream` is unused).
  kPinnedHost,
};

enum class FreeKind : std::uint8_t {
  kStreamOrdered,     // cudaFreeAsync(p, stream): an op on `stream`
  kCachingAllocator,  // a host action; block reusable on its allocation stream
  kSynchronous,       // cudaFree: synchronizes the device first
  // Trace version 4: pinned host memory given back (cudaFreeHost,
  // cuMemFreeHost, cudaHostUnregister, cuMemHostUnregister). A host action.
  // Its next occupant is taken as ordered after its earlier uses:
  // cudaFreeHost synchronizes the device first (fed as a kDeviceSync before
  // it), and memory that is registered again belongs to the program.
  kPinnedHost,
};

enum class Access : std::uint8_t { kRead, kWrite, kUnknown };

// What a kUse is, for reports ("kernel foo", "memcpy D2D", "ncclAllGather").
// kOperator (trace version 3): a library operation's operand, its direction
// known from the operation's definition, fed when the operation returns, on
// the stream its kernels went to: a PyTorch operator's tensor argument, from
// its schema ("aten::add_"), or a cuBLAS GEMM's matrix ("cublasGemmEx",
// runtime/libs/cublas/cublas.cpp).
enum class UseWhat : std::uint8_t {
  kKernel, kMemcpy, kMemset, kCollective, kAnnotated, kHostAccess, kOperator,
};

// One observed action. Plain data, no ownership: names and stacks are ids
// resolved through the session's NameTable and StackDepot. The fields are
// laid out to leave no holes: a program thread hands events over to the
// checker's thread (runtime/checker_thread.cpp), and each cache line they
// fill moves between the two cores.
struct Event {
  EventKind kind = EventKind::kUse;
  ThreadId thread = 0;     // host thread that made the call
  StackId stack = kNoStack;  // host (or Python) stack of the call
  NameId name = kNoName;   // kernel/op name (kUse), graph (kGraphLaunch),
                           // thread name (kThreadName), test (kTest),
                           // what is not checked (kUnchecked)
  StreamId stream = kLegacyStream;
  EventId event = 0;       // kEventRecord / kStreamWaitEvent / kEventSync;
                           // a token for host functions and thread starts;
                           // a host synchronization object (kSync*)
  Addr addr = 0;
  std::uint64_t size = 0;  // bytes; 0 on a kUse means "the whole allocation"
  std::uint64_t graph = 0; // kUse made by a graph launch: the graph's id
  StreamFlags stream_flags = StreamFlags::kBlocking;  // kStreamCreate
  AllocKind alloc_kind = AllocKind::kStreamOrdered;   // kAlloc
  FreeKind free_kind = FreeKind::kStreamOrdered;      // kFree
  Access access = Access::kUnknown;                   // kUse
  UseWhat what = UseWhat::kKernel;                    // kUse
  // kFree of kind kCachingAllocator: true when the allocator defers the
  // block's reuse (record_stream) and a kFreeCompleted will follow.
  bool deferred = false;
  // kUse of a copy (kMemcpy), trace version 4: made by a synchronous call
  // (cudaMemcpy, cuMemcpyHtoD, ...) rather than an async one...
  bool synchronous = false;
  // ...and its host side is pageable memory (not in a pinned allocation the
  // checker knows). A synchronous copy from pageable memory to the device
  // may return before its DMA lands (the Runtime API's "API
  // synchronization behavior"): no host synchronization comes with it.
  bool pageable = false;
};
static_assert(sizeof(Event) == 64, "a field added to Event goes where it leaves no hole");

std::string_view to_string(EventKind kind);
std::string_view to_string(StreamFlags flags);
std::string_view to_string(AllocKind kind);
std::string_view to_string(FreeKind kind);
std::string_view to_string(Access access);
std::string_view to_string(UseWhat what);

// Inverse of to_string; return false on an unknown spelling.
bool parse(std::string_view text, EventKind* out);
bool parse(std::string_view text, StreamFlags* out);
bool parse(std::string_view text, AllocKind* out);
bool parse(std::string_view text, FreeKind* out);
bool parse(std::string_view text, Access* out);
bool parse(std::string_view text, UseWhat* out);

}  // namespace xsc
