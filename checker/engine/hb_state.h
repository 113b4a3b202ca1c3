// Happens-before state: the agents (streams and host threads), their vector
// clocks, and the snapshots taken by recorded CUDA events.
//
// Ordering rules, in one place:
//  * Work a host thread enqueues on a stream happens after everything that
//    thread did and synchronized with: the stream joins the thread's clock.
//  * The legacy default stream waits for every live blocking stream, and
//    every blocking stream waits for the legacy stream. Non-blocking streams
//    are exempt.
//  * A recorded event snapshots its stream; a wait joins that snapshot into
//    the waiting stream; a host sync joins it (or a stream) into the thread.
//  * A host function runs after its stream's earlier work: the thread that
//    runs it joins the stream's snapshot taken when it was enqueued. Once it
//    runs, that work is complete (as a successful event query shows), so
//    every host thread's later actions are ordered after it; once it has
//    returned, after what the function itself did too.
//  * A thread starts after what its creator did before creating it.
//  * A thread that acquires a host synchronization object (a semaphore's
//    wait that returned, a join) is after every release of it so far: the
//    object's clock joins each releasing thread's, as ThreadSanitizer's
//    sync objects do.
// Destroying a stream retires its agent: a later stream with the same handle
// is a new agent, since CUDA reuses handle values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "checker/engine/event.h"
#include "checker/engine/vector_clock.h"

namespace xsc {

class HbState {
 public:
  HbState();

  // The live agent of stream `id`, created (blocking) on first reference.
  AgentId stream_agent(StreamId id) {
    const StreamCacheEntry& c = stream_cache_[stream_cache_index(id)];
    if (c.agent != kNoAgent && c.stream == id) return c.agent;
    return stream_agent_lookup(id);
  }
  // The live agent of host thread `id`, created on first reference.
  AgentId thread_agent(ThreadId id) {
    if (id < dense_threads_.size() && dense_threads_[id] != kNoAgent)
      return dense_threads_[id];
    return thread_agent_lookup(id);
  }

  // kStreamCreate: a fresh agent for `id` (retiring a live one with the same
  // handle, whose destroy must have been missed).
  AgentId create_stream(StreamId id, StreamFlags flags);
  // kStreamDestroy: retires the live agent of `id`; unknown ids are ignored.
  void destroy_stream(StreamId id);

  // Enqueues one operation on `stream` by `thread`: applies the thread and
  // legacy-stream joins and ticks the stream. Returns the op's epoch.
  Epoch enqueue(AgentId stream, AgentId thread) {
    // The common case inline: the stream already holds all of the thread's
    // clock but its own component, and no legacy-stream join applies.
    Agent& s = agents_[stream];
    const Agent& t = agents_[thread];
    if (s.joined_thread == thread && s.joined_version == t.version && stream != legacy_ &&
        !(s.blocking && legacy_ != kNoAgent)) {
      s.clock.raise(thread, t.clock.get(thread));
      return s.clock.tick(stream);
    }
    return enqueue_joining(stream, thread);
  }
  // A host action of `thread` (allocation, synchronous free, host access).
  Epoch host_action(AgentId thread) { return agents_[thread].clock.tick(thread); }

  // kEventRecord, after the record was enqueued on `stream`.
  void record_event(EventId event, AgentId stream);
  // The snapshot of the latest record of `event`; null if never recorded.
  const VectorClock* event_snapshot(EventId event) const;
  // kStreamWaitEvent: `stream` joins `event`'s snapshot (if recorded).
  void wait_event(AgentId stream, EventId event);

  // Host synchronizations by `thread`.
  void sync_stream(AgentId thread, AgentId stream);
  void sync_event(AgentId thread, EventId event);
  void sync_device(AgentId thread);

  // Host functions (kHostFunc with a token, kHostFuncRun, kHostFuncDone).
  void host_func_enqueued(EventId token, AgentId stream);
  void host_func_run(AgentId thread, EventId token);
  void host_func_done(AgentId thread, EventId token);
  // Threads (kThreadCreate, kThreadStart).
  void thread_create(AgentId thread, EventId token);
  void thread_start(AgentId thread, EventId token);
  // Host synchronization objects (kSyncRelease, kSyncAcquire).
  void sync_release(AgentId thread, EventId object);
  void sync_acquire(AgentId thread, EventId object);
  // Joins what completed host functions made known to every thread, when
  // `thread` has not yet: call before any action of `thread`.
  void catch_up(AgentId thread) {
    if (agents_[thread].completed_seen != completed_version_) catch_up_slow(thread);
  }

  // A lower bound, per agent, of what every host thread's clock holds: a
  // use at or below it is ordered before every later action of any thread
  // and of any stream (an op joins its enqueuing thread's clock). Recomputed
  // lazily; a new thread lowers it (its clock starts empty).
  const VectorClock& thread_frontier();

  const VectorClock& clock(AgentId agent) const { return agents_[agent].clock; }
  StreamId stream_id(AgentId agent) const { return agents_[agent].stream; }
  bool is_stream(AgentId agent) const { return agents_[agent].is_stream; }
  // The live agent of stream `id`, or kNoAgent before its first reference
  // (a retired agent whose handle was reused is not it). Creates nothing.
  AgentId live_stream_agent(StreamId id) const {
    const auto it = streams_.find(id);
    return it != streams_.end() ? it->second : kNoAgent;
  }

  std::uint64_t live_streams() const { return live_streams_.size(); }
  std::uint64_t threads() const { return thread_count_; }
  std::uint64_t agents() const { return agents_.size(); }

 private:
  struct Agent {
    VectorClock clock;
    // Bumped whenever a thread's clock learns from another agent (host
    // synchronizations); its own ticks leave it alone. A stream that joined
    // the thread's clock at this version holds all of it but the thread's
    // own component, so the next enqueue by that thread raises one
    // component instead of joining the whole clock.
    std::uint64_t version = 0;
    AgentId joined_thread = kNoAgent;  // streams: the thread last joined...
    std::uint64_t joined_version = 0;  // ...and its version then
    StreamId stream = 0;
    ThreadId thread = 0;
    bool is_stream = false;
    bool blocking = true;
    bool live = true;
    std::uint64_t completed_seen = 0;  // threads: completed_version_ joined
  };

  Epoch enqueue_joining(AgentId stream, AgentId thread);
  AgentId stream_agent_lookup(StreamId id);
  AgentId thread_agent_lookup(ThreadId id);
  AgentId new_agent(bool is_stream);
  void catch_up_slow(AgentId thread);
  AgentId new_stream(StreamId id, StreamFlags flags);
  void retire(AgentId agent);

  std::vector<Agent> agents_;
  std::unordered_map<StreamId, AgentId> streams_;
  // Direct-mapped cache in front of streams_: consecutive events name a few
  // streams in turn. Cleared whenever a stream agent retires.
  struct StreamCacheEntry {
    StreamId stream = 0;
    AgentId agent = kNoAgent;
  };
  static constexpr std::size_t kStreamCacheSize = 16;
  static std::size_t stream_cache_index(StreamId id) {
    return static_cast<std::size_t>((id * 0x9e3779b97f4a7c15ULL) >> 60);
  }
  void cache_stream(StreamId id, AgentId agent) {
    stream_cache_[stream_cache_index(id)] = StreamCacheEntry{id, agent};
  }
  StreamCacheEntry stream_cache_[kStreamCacheSize];
  AgentId legacy_ = kNoAgent;
  std::vector<AgentId> live_streams_;      // including the legacy stream
  std::vector<AgentId> blocking_streams_;  // live, blocking, not legacy
  // Thread ids are small and dense; huge ones (bad input) go to the map.
  static constexpr ThreadId kDenseThreads = 1 << 16;
  std::vector<AgentId> dense_threads_;
  std::unordered_map<ThreadId, AgentId> sparse_threads_;
  std::uint64_t thread_count_ = 0;
  std::unordered_map<EventId, VectorClock> events_;
  // Joined clocks of retired streams: their work still completes, and a
  // device-wide synchronization waits for it.
  VectorClock retired_;
  // Snapshots by token: a host function's stream when it was enqueued, a
  // creating thread when it started another.
  std::unordered_map<EventId, VectorClock> host_funcs_;
  std::unordered_map<EventId, VectorClock> thread_starts_;
  std::unordered_map<EventId, VectorClock> sync_objects_;
  // What returned host functions knew; every thread joins it (catch_up).
  VectorClock completed_;
  std::uint64_t completed_version_ = 0;
  std::vector<AgentId> thread_agents_;
  VectorClock frontier_;
  bool frontier_valid_ = false;
};

}  // namespace xsc
