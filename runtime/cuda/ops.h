// The normalized CUDA operations the CUPTI handlers (runtime_api.cpp,
// driver_api.cpp) hand to the files that turn them into events. Runtime
// and driver twins, and their _ptsz/_ptds variants, all arrive here in one
// form.
#pragma once

#include <cstddef>
#include <cstdint>

#include "checker/engine/event.h"

namespace xsc::rt {

// A use that touches no tracked allocation (address 0): the operation is
// still an op on `stream`, which is what orders blocking streams around
// legacy-stream work and what a later record on that stream covers. The
// checker enqueues it and finds no allocation to record it against.
inline Event bare_use(StreamId stream, UseWhat what, NameId name = kNoName) {
  Event event;
  event.kind = EventKind::kUse;
  event.stream = stream;
  event.what = what;
  event.access = Access::kUnknown;
  event.name = name;
  return event;
}

// memory.cpp
enum class CopyKind : std::uint8_t { kHostToHost, kHostToDevice, kDeviceToHost, kDeviceToDevice,
                                     kDefault };
void on_alloc(Addr addr, std::uint64_t size, StreamId stream, AllocKind kind);
void on_free(Addr addr, StreamId stream, FreeKind kind);
// True once a pinned host allocation was fed.
bool pinned_memory_seen();
void note_pinned_memory();
// `bytes` 0: extent unknown (2D copies), the whole allocation.
void on_copy(Addr dst, Addr src, std::uint64_t bytes, CopyKind kind, StreamId stream,
             bool synchronous);
void on_memset(Addr dst, std::uint64_t bytes, StreamId stream);

// sync.cpp
// An ordering event of `kind` on `stream` with its stack, taken before the
// session mutex is (as every event of sync.cpp's is).
Event sync_event(EventKind kind, StreamId stream, EventId event);
void on_event_record(EventId event, StreamId stream);
void on_stream_wait_event(StreamId stream, EventId event);
void on_stream_sync(StreamId stream);
void on_event_sync(EventId event);
void on_device_sync();
void on_host_func(StreamId stream);
void on_event_destroy(EventId event);
void on_stream_create(StreamId stream, StreamFlags flags);
void on_stream_destroy(StreamId stream);

// stream_memops.cpp: a write of a value to a word in memory on `stream`
// (cuStreamWriteValue32/64, `wide` for 64 bits), and a wait on `stream`
// until the word satisfies `flags`' condition (CUstreamWaitValue_flags,
// wait_value.h) against `value`.
void on_stream_write_value(StreamId stream, Addr addr, std::uint64_t value, bool wide);
void on_stream_wait_value(StreamId stream, Addr addr, std::uint64_t value, unsigned flags,
                          bool wide);

// capture.cpp and graph.cpp (the locked halves are declared in rtl.h and
// graph_state.h)
// `graph`: the application's graph a capture adds to
// (cudaStreamBeginCaptureToGraph, `to_graph`), else 0; `has_dependencies`:
// the capture was given nodes of it to follow. Any capture mode.
void on_stream_begin_capture(StreamId stream, std::uint64_t graph, bool to_graph,
                             bool has_dependencies);
void on_stream_end_capture(StreamId stream, std::uint64_t graph);
// cudaStreamGetCaptureInfo answered the application: `stream` captures into
// `graph`, after nodes `deps`.
void on_stream_capture_info(StreamId stream, std::uint64_t graph, const std::uint64_t* deps,
                            std::size_t ndeps);
// cudaStreamUpdateCaptureDependencies: `stream`'s next node follows `nodes`.
void on_stream_capture_dependencies(StreamId stream, const std::uint64_t* nodes,
                                    std::size_t count);
// Every instantiate form; `flags`: cudaGraphInstantiateFlags.
void on_graph_instantiate(std::uint64_t exec, std::uint64_t graph, unsigned long long flags);
// cudaGraphExecUpdate: `exec` now runs `graph`'s nodes.
void on_graph_exec_update(std::uint64_t exec, std::uint64_t graph);
void on_graph_exec_launch(std::uint64_t exec, StreamId stream);
void on_graph_exec_destroy(std::uint64_t exec);
// A graph created or destroyed: what was known of its handle is dropped.
void on_graph_forget(std::uint64_t graph);
void on_graph_clone(std::uint64_t clone, std::uint64_t original);
// A conditional node (`type`: 0 IF, 1 WHILE, 2 SWITCH) added to `graph`
// after `deps`; `bodies` are its body graphs.
void on_conditional_node(std::uint64_t graph, std::uint64_t node, const std::uint64_t* deps,
                         std::size_t ndeps, int type, const std::uint64_t* bodies,
                         unsigned count);
// A kernel, memset or copy node added by hand to `graph`: the call it
// stands for is fed (on_kernel_launch, on_memset, on_copy) on
// `stream` between these two, and its work lands in the graph, after what
// the graph holds (its dependencies are node handles the runtime does not
// follow). `ready` false: nothing to feed.
struct NodeByHand {
  StreamId stream = kLegacyStream;
  bool ready = false;
  bool own_capture = false;
};
NodeByHand begin_node_by_hand(std::uint64_t graph);
void end_node_by_hand(std::uint64_t graph, const NodeByHand& node);
// A child graph node: `child`'s work, as it is now, after what `graph` holds.
void on_child_graph_node(std::uint64_t graph, std::uint64_t child);
// A graph memory node added by hand: said once to be unchecked.
void on_graph_memory_node();

}  // namespace xsc::rt
