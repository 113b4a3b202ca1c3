#include "checker/engine/hb_state.h"

#include <algorithm>

namespace xsc {

HbState::HbState() { dense_threads_.reserve(64); }

AgentId HbState::new_agent(bool is_stream) {
  AgentId id = static_cast<AgentId>(agents_.size());
  agents_.emplace_back();
  agents_.back().is_stream = is_stream;
  return id;
}

AgentId HbState::new_stream(StreamId id, StreamFlags flags) {
  AgentId agent = new_agent(/*is_stream=*/true);
  Agent& a = agents_[agent];
  a.stream = id;
  // The legacy stream cannot be non-blocking with respect to itself.
  a.blocking = id == kLegacyStream || flags == StreamFlags::kBlocking;
  streams_[id] = agent;
  live_streams_.push_back(agent);
  if (id == kLegacyStream)
    legacy_ = agent;
  else if (a.blocking)
    blocking_streams_.push_back(agent);
  cache_stream(id, agent);
  return agent;
}

void HbState::retire(AgentId agent) {
  Agent& a = agents_[agent];
  a.live = false;
  retired_.join(a.clock);
  a.clock.release();
  streams_.erase(a.stream);
  live_streams_.erase(std::find(live_streams_.begin(), live_streams_.end(), agent));
  auto it = std::find(blocking_streams_.begin(), blocking_streams_.end(), agent);
  if (it != blocking_streams_.end()) blocking_streams_.erase(it);
  if (legacy_ == agent) legacy_ = kNoAgent;
  for (StreamCacheEntry& c : stream_cache_) c = StreamCacheEntry{};
}

AgentId HbState::stream_agent_lookup(StreamId id) {
  auto it = streams_.find(id);
  if (it != streams_.end()) {
    cache_stream(id, it->second);
    return it->second;
  }
  return new_stream(id, StreamFlags::kBlocking);
}

AgentId HbState::thread_agent_lookup(ThreadId id) {
  if (id < kDenseThreads) {
    if (id < dense_threads_.size() && dense_threads_[id] != kNoAgent)
      return dense_threads_[id];
    if (id >= dense_threads_.size()) dense_threads_.resize(id + 1, kNoAgent);
    AgentId agent = new_agent(/*is_stream=*/false);
    agents_[agent].thread = id;
    dense_threads_[id] = agent;
    ++thread_count_;
    thread_agents_.push_back(agent);
    frontier_valid_ = false;
    return agent;
  }
  auto it = sparse_threads_.find(id);
  if (it != sparse_threads_.end()) return it->second;
  AgentId agent = new_agent(/*is_stream=*/false);
  agents_[agent].thread = id;
  sparse_threads_.emplace(id, agent);
  ++thread_count_;
  thread_agents_.push_back(agent);
  frontier_valid_ = false;
  return agent;
}

AgentId HbState::create_stream(StreamId id, StreamFlags flags) {
  auto it = streams_.find(id);
  if (it != streams_.end()) {
    if (id == kLegacyStream) return it->second;  // it is never destroyed
    retire(it->second);
  }
  return new_stream(id, flags);
}

void HbState::destroy_stream(StreamId id) {
  if (id == kLegacyStream) return;
  auto it = streams_.find(id);
  if (it != streams_.end()) retire(it->second);
}

Epoch HbState::enqueue_joining(AgentId stream, AgentId thread) {
  Agent& s = agents_[stream];
  VectorClock& clock = s.clock;
  const Agent& t = agents_[thread];
  if (s.joined_thread == thread && s.joined_version == t.version) {
    clock.raise(thread, t.clock.get(thread));
  } else {
    clock.join(t.clock);
    s.joined_thread = thread;
    s.joined_version = t.version;
  }
  if (stream == legacy_) {
    for (AgentId other : blocking_streams_) clock.join(agents_[other].clock);
  } else if (agents_[stream].blocking && legacy_ != kNoAgent) {
    clock.join(agents_[legacy_].clock);
  }
  return clock.tick(stream);
}

void HbState::record_event(EventId event, AgentId stream) {
  events_[event].assign(agents_[stream].clock);
}

const VectorClock* HbState::event_snapshot(EventId event) const {
  auto it = events_.find(event);
  return it == events_.end() ? nullptr : &it->second;
}

void HbState::wait_event(AgentId stream, EventId event) {
  if (const VectorClock* snapshot = event_snapshot(event))
    agents_[stream].clock.join(*snapshot);
}

void HbState::sync_stream(AgentId thread, AgentId stream) {
  frontier_valid_ = false;
  ++agents_[thread].version;
  agents_[thread].clock.join(agents_[stream].clock);
}

void HbState::sync_event(AgentId thread, EventId event) {
  if (const VectorClock* snapshot = event_snapshot(event)) {
    frontier_valid_ = false;
    ++agents_[thread].version;
    agents_[thread].clock.join(*snapshot);
  }
}

void HbState::sync_device(AgentId thread) {
  frontier_valid_ = false;
  ++agents_[thread].version;
  VectorClock& clock = agents_[thread].clock;
  for (AgentId stream : live_streams_) clock.join(agents_[stream].clock);
  clock.join(retired_);
}

void HbState::host_func_enqueued(EventId token, AgentId stream) {
  if (token == 0) return;
  // A snapshot lives until its function returns. One that never runs (its
  // stream destroyed first, an error) would stay: past a bound the oldest
  // knowledge goes, which can only make later orderings unknown.
  constexpr std::size_t kMaxPendingHostFuncs = 1 << 16;
  if (host_funcs_.size() >= kMaxPendingHostFuncs) host_funcs_.clear();
  host_funcs_[token].assign(agents_[stream].clock);
}

void HbState::host_func_run(AgentId thread, EventId token) {
  auto it = host_funcs_.find(token);
  if (it == host_funcs_.end()) return;
  ++agents_[thread].version;
  agents_[thread].clock.join(it->second);
  // Running, the function shows its stream's earlier work complete: what
  // any thread does from now on is after it. A host that waits for a flag
  // the function sets frees before the function has returned.
  completed_.join(it->second);
  ++completed_version_;
  agents_[thread].completed_seen = completed_version_;
  frontier_valid_ = false;
}

void HbState::host_func_done(AgentId thread, EventId token) {
  host_funcs_.erase(token);
  completed_.join(agents_[thread].clock);
  ++completed_version_;
  frontier_valid_ = false;
  // The returning thread knows all of it already.
  agents_[thread].completed_seen = completed_version_;
}

void HbState::catch_up_slow(AgentId thread) {
  frontier_valid_ = false;
  Agent& t = agents_[thread];
  t.completed_seen = completed_version_;
  ++t.version;
  t.clock.join(completed_);
}

void HbState::thread_create(AgentId thread, EventId token) {
  thread_starts_[token].assign(agents_[thread].clock);
}

void HbState::thread_start(AgentId thread, EventId token) {
  auto it = thread_starts_.find(token);
  if (it == thread_starts_.end()) return;
  ++agents_[thread].version;
  agents_[thread].clock.join(it->second);
  thread_starts_.erase(it);
}

void HbState::sync_release(AgentId thread, EventId object) {
  // Objects are addresses, released over and over: one clock each. Past a
  // bound (objects freed and their addresses never reused) they all go,
  // which can only leave later acquires knowing less.
  constexpr std::size_t kMaxSyncObjects = 1 << 16;
  if (sync_objects_.size() >= kMaxSyncObjects && sync_objects_.count(object) == 0)
    sync_objects_.clear();
  sync_objects_[object].join(agents_[thread].clock);
}

void HbState::sync_acquire(AgentId thread, EventId object) {
  auto it = sync_objects_.find(object);
  if (it == sync_objects_.end()) return;
  frontier_valid_ = false;
  ++agents_[thread].version;
  agents_[thread].clock.join(it->second);
}

const VectorClock& HbState::thread_frontier() {
  if (frontier_valid_) return frontier_;
  frontier_valid_ = true;
  frontier_.clear();
  if (thread_agents_.empty()) return frontier_;
  frontier_.assign(agents_[thread_agents_.front()].clock);
  for (std::size_t i = 1; i < thread_agents_.size(); ++i)
    frontier_.meet(agents_[thread_agents_[i]].clock);
  return frontier_;
}

}  // namespace xsc
