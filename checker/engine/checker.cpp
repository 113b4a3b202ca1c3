// The happens-before engine: events in host-call order update the agents'
// clocks (hb_state), the live allocations and the freed ranges (alloc_map),
// and hand each free and each use to the checks (checker_impl.h lists them,
// one file each).
#include "checker/engine/checker.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "checker/engine/checker_impl.h"

namespace xsc {

Finding& Checker::Impl::report(const FindingKey& key, bool* fresh) {
  auto [it, inserted] =
      finding_index.try_emplace(key, static_cast<std::uint32_t>(findings.size()));
  *fresh = inserted;
  if (inserted) {
    findings.emplace_back();
    findings.back().kind = key.kind;
    findings.back().test = key.test;
    findings.back().count = 0;
  }
  Finding& f = findings[it->second];
  ++f.count;
  return f;
}

// A caching-allocator block becomes reusable by later work on its
// allocation stream: that stream plus what the freeing (or, for a deferred
// free, the completing) thread knows is the ordering point.
void Checker::Impl::release_caching_block(AllocMap::Slot slot, const FreeInfo& free,
                                          AgentId thread, bool completed) {
  const AgentId alloc_stream = hb.stream_agent(live.at(slot).info.stream);
  if (live.at(slot).used_only_by(alloc_stream)) {
    // Its own stream's uses all precede the ordering point (that stream's
    // clock): no clock to build. Most blocks of a PyTorch program live and
    // die on their allocation stream.
    retire(slot, free, alloc_stream, /*all_ordered=*/true);
    return;
  }
  point.assign(hb.clock(alloc_stream));
  point.join(hb.clock(thread));
  if (completed) {
    // The allocator's successful event queries showed the uses the point
    // holds complete: the memory need not carry them.
    Allocation& a = live.at(slot);
    for (std::size_t i = 0; i < a.last_use.size(); ++i)
      if (point.get(a.last_use[i].agent) >= a.last_use[i].epoch)
        a.last_use.set_epoch(i, 0);
  }
  retire(slot, free, alloc_stream, /*all_ordered=*/false);
}

void Checker::Impl::park_requested() {
  has_requested = false;
  DeferredBlock& block =
      deferred.insert_or_assign(requested, std::move(requested_block)).first->second;
  block.parked = true;
  ++parked_now;
  parked_bytes_now += live.at(block.slot).info.size;
  parked_stats.max_parked = std::max(parked_stats.max_parked, parked_now);
  parked_stats.peak_parked_bytes = std::max(parked_stats.peak_parked_bytes, parked_bytes_now);
  std::uint64_t& site = parked_by_site[block.free.stack];
  ++site;
  if (site > parked_stats.top_site_count) {
    parked_stats.top_site_count = site;
    parked_stats.top_site = block.free.stack;
  }
}

std::map<Addr, DeferredBlock>::iterator Checker::Impl::first_deferred_overlapping(Addr begin,
                                                                                 Addr end) {
  if (begin >= end || deferred.empty()) return deferred.end();
  auto it = deferred.upper_bound(begin);
  if (it != deferred.begin()) {
    auto prev = std::prev(it);
    if (live.at(prev->second.slot).end() > begin) return prev;
  }
  return it;
}

void Checker::Impl::unpark(DeferredBlock& block) {
  if (!block.parked) return;
  block.parked = false;
  --parked_now;
  parked_bytes_now -= live.at(block.slot).info.size;
}

void Checker::Impl::on_alloc(const Event& e, AgentId thread) {
  AllocInfo info;
  info.addr = e.addr;
  info.size = e.size;
  info.stream = e.stream;
  info.kind = e.alloc_kind;
  info.thread = e.thread;
  info.stack = e.stack;
  AgentId ready_agent = kNoAgent;
  Epoch ready_epoch = 0;
  const AgentId alloc_stream = hb.stream_agent(e.stream);
  if (e.alloc_kind == AllocKind::kStreamOrdered) {
    ready_agent = alloc_stream;
    ready_epoch = hb.enqueue(ready_agent, thread);
  } else {
    hb.host_action(thread);
  }
  const Addr end = range_end(e.addr, e.size);
  // The memory's earlier occupants' uses come along with it; the parts of a
  // freed range the allocation does not take stay remembered, carrying the
  // same uses (a caching allocator splits freed blocks).
  forgotten.clear();
  quarantine.forget(e.addr, end, &forgotten);
  using PastUses = Quarantine::PastUses;
  for (FreedRange& r : forgotten.parts) {
    const bool back = end < r.end;
    if (r.begin < e.addr)
      quarantine.push_part(r.alloc, r.free, r.begin, e.addr, &r.past,
                           back ? PastUses::kCopy : PastUses::kTake);
    if (back) quarantine.push_part(r.alloc, r.free, end, r.end, &r.past, PastUses::kTake);
  }
  // A deferred block the allocator hands out again was reusable already; a
  // missed completion is not a reason to keep it parked.
  for (auto it = first_deferred_overlapping(e.addr, end);
       it != deferred.end() && it->first < end;) {
    unpark(it->second);
    if (has_requested && requested == it->first) has_requested = false;
    live.release(it->second.slot);
    it = deferred.erase(it);
  }
  // Memory freed with cudaFreeAsync goes to an allocation on another stream
  // only once that stream is ordered after the free: by an event it waited
  // on, by the free having completed (opportunistic reuse), or by a
  // dependency the driver inserts (Programming Guide, "Stream Ordered Memory
  // Allocator", reuse policies); a pool gives memory back to the system
  // (where cudaMalloc may get it) only once the free has completed. cudaFree
  // synchronizes the device first. Uses ordered before such a free are then
  // ordered before any new occupant; the uses an unordered free left behind
  // stay (the free-before-wait bug on a pool). A caching allocator's free
  // gives no such guarantee: its block goes to the next allocation on its
  // stream at once, and another stream's first use may race.
  std::erase_if(forgotten.uses, [](const PastUse& p) {
    return p.site == kNoSite && p.free.kind != FreeKind::kCachingAllocator;
  });
  if (Allocation* a = live.insert(info)) {
    a->ready_agent = ready_agent;
    a->ready_epoch = ready_epoch;
    if (!forgotten.uses.empty()) inherit(*a, forgotten.uses);
  }
}

void Checker::Impl::on_free(const Event& e, AgentId thread) {
  const FreeInfo free = free_info(e, current_test);
  switch (e.free_kind) {
    case FreeKind::kStreamOrdered: {
      // cudaFreeAsync is an op on its stream; that stream's clock after the
      // enqueue is what the memory's next user is ordered after.
      AgentId stream = hb.stream_agent(e.stream);
      hb.enqueue(stream, thread);
      const AllocMap::Slot slot = live.extract(e.addr);
      if (slot == AllocMap::kNoSlot) return;
      point.assign(hb.clock(stream));
      retire(slot, free, stream, /*all_ordered=*/false);
      return;
    }
    case FreeKind::kSynchronous: {
      // cudaFree synchronizes the device first: "managing memory with
      // cudaMalloc/cudaFree causes the GPU to synchronize across all
      // executing CUDA streams" (CUDA Programming Guide). Only another
      // thread's host accesses can be unordered with it.
      hb.sync_device(thread);
      hb.host_action(thread);
      const AllocMap::Slot slot = live.extract(e.addr);
      if (slot == AllocMap::kNoSlot) return;
      point.assign(hb.clock(thread));
      retire(slot, free, kNoAgent, /*all_ordered=*/false);
      return;
    }
    case FreeKind::kPinnedHost: {
      // Pinned host memory given back. cudaFreeHost synchronizes the device
      // first (a kDeviceSync precedes this event); PyTorch's pinned host
      // allocator gives a block out again only after the events it recorded
      // on the streams that used it completed. Either way the memory's next
      // occupant is ordered after the uses it carries.
      hb.host_action(thread);
      const AllocMap::Slot slot = live.extract(e.addr);
      if (slot == AllocMap::kNoSlot) return;
      point.assign(hb.clock(thread));
      retire(slot, free, kNoAgent, /*all_ordered=*/true);
      return;
    }
    case FreeKind::kCachingAllocator: {
      hb.host_action(thread);
      const AllocMap::Slot slot = live.extract(e.addr);
      if (slot == AllocMap::kNoSlot) return;
      if (e.deferred) {
        ++parked_stats.deferred_frees;
        if (has_requested) park_requested();
        requested_block = DeferredBlock{};
        requested_block.slot = slot;
        requested_block.free = free;
        has_requested = true;
        requested = e.addr;
        return;
      }
      release_caching_block(slot, free, thread, /*completed=*/false);  // reusable at once
      return;
    }
  }
}

void Checker::Impl::on_free_completed(const Event& e, AgentId thread) {
  DeferredBlock block;
  if (has_requested && requested == e.addr) {
    has_requested = false;
    block = std::move(requested_block);
  } else {
    auto it = deferred.find(e.addr);
    if (it == deferred.end()) return;
    block = std::move(it->second);
    deferred.erase(it);
  }
  hb.host_action(thread);
  // A completion that came right after its request was an immediate free:
  // reports call it that, not a block parked by record_stream.
  const bool was_parked = block.parked;
  if (!was_parked) block.free.deferred = false;
  unpark(block);
  // The allocator's successful event query made the completing thread
  // synchronize with the consumers' events before this point.
  release_caching_block(block.slot, block.free, thread, /*completed=*/was_parked);
}

void Checker::Impl::on_use(const Event& e, AgentId thread) {
  // A host access is the thread's own action; everything else is an op on
  // its stream.
  AgentId agent;
  Epoch epoch;
  if (e.what == UseWhat::kHostAccess) {
    agent = thread;
    epoch = hb.host_action(thread);
  } else {
    agent = hb.stream_agent(e.stream);
    epoch = hb.enqueue(agent, thread);
  }
  const VectorClock& clock = hb.clock(agent);
  const UseInfo use = use_info(e);
  auto touch = [&](Allocation& a) {
    if (a.info.kind == AllocKind::kPinnedHost && agent != thread)
      note_pinned_device_use(agent, epoch, use.access != Access::kRead);
    check_ready(a, agent, clock, e);
    if (!a.inherited.empty()) check_past_uses(a.inherited, &a, /*report=*/true, agent, clock, use);
    const bool fills = fills_new_block(a, agent, use);
    if (use.access == Access::kWrite || !a.known_writes.empty())
      check_known_writes(a, agent, epoch, clock, use);
    if (fills) note_first_use_write(a, agent, epoch, use);
    a.record_use(agent, epoch, use);
  };

  Addr begin = e.addr;
  Addr end;
  if (e.size == 0) {
    if (Allocation* a = live.find_containing(e.addr)) {
      touch(*a);
      return;
    }
    end = begin + 1 > begin ? begin + 1 : begin;
  } else {
    end = range_end(begin, e.size);
    if (live.for_each_overlapping(begin, end, touch) != 0) return;
  }
  auto parked = first_deferred_overlapping(begin, end);
  if (parked != deferred.end() && parked->first < end) {
    use_of_parked_block(e, parked->second);
    return;
  }
  if (FreedRange* freed = quarantine.find_overlapping(begin, end))
    use_after_free(e, *freed, agent, clock);
}

void Checker::Impl::on_event(const Event& e) {
  ++events;
  // A test marker changes no ordering and no agent: the events around it
  // are checked exactly as if it were not there.
  if (e.kind == EventKind::kTest) {
    current_test = e.name;
    return;
  }
  // Neither does a notice of something not modelled: it is only said.
  if (e.kind == EventKind::kUnchecked) {
    if (std::find(unchecked.begin(), unchecked.end(), e.name) == unchecked.end())
      unchecked.push_back(e.name);
    return;
  }
  // A deferred free whose completion is not the very next event parks.
  if (has_requested && !(e.kind == EventKind::kFreeCompleted && e.addr == requested))
    park_requested();

  const AgentId thread = hb.thread_agent(e.thread);
  hb.catch_up(thread);
  switch (e.kind) {
    case EventKind::kStreamCreate:
      hb.create_stream(e.stream, e.stream_flags);
      break;
    case EventKind::kStreamDestroy:
      hb.destroy_stream(e.stream);
      break;
    case EventKind::kAlloc:
      on_alloc(e, thread);
      break;
    case EventKind::kFree:
      on_free(e, thread);
      break;
    case EventKind::kFreeCompleted:
      on_free_completed(e, thread);
      break;
    case EventKind::kUse:
      on_use(e, thread);
      break;
    case EventKind::kEventRecord: {
      AgentId stream = hb.stream_agent(e.stream);
      hb.enqueue(stream, thread);
      hb.record_event(e.event, stream);
      break;
    }
    case EventKind::kStreamWaitEvent: {
      AgentId stream = hb.stream_agent(e.stream);
      hb.enqueue(stream, thread);
      hb.wait_event(stream, e.event);
      match_late_waits(stream, e);
      break;
    }
    case EventKind::kStreamSync:
      hb.sync_stream(thread, hb.stream_agent(e.stream));
      hb.host_action(thread);
      break;
    case EventKind::kEventSync:
      hb.sync_event(thread, e.event);
      hb.host_action(thread);
      break;
    case EventKind::kDeviceSync:
      hb.sync_device(thread);
      hb.host_action(thread);
      break;
    case EventKind::kHostFunc: {
      AgentId stream = hb.stream_agent(e.stream);
      hb.enqueue(stream, thread);
      hb.host_func_enqueued(e.event, stream);
      break;
    }
    case EventKind::kGraphLaunch:
      hb.enqueue(hb.stream_agent(e.stream), thread);
      break;
    case EventKind::kHostFuncRun:
      hb.host_func_run(thread, e.event);
      hb.host_action(thread);
      break;
    case EventKind::kHostFuncDone:
      hb.host_action(thread);
      hb.host_func_done(thread, e.event);
      break;
    case EventKind::kThreadCreate:
      hb.thread_create(thread, e.event);
      hb.host_action(thread);
      break;
    case EventKind::kSyncRelease:
      hb.sync_release(thread, e.event);
      hb.host_action(thread);
      break;
    case EventKind::kSyncAcquire:
      hb.sync_acquire(thread, e.event);
      break;
    case EventKind::kThreadStart:
      hb.thread_start(thread, e.event);
      hb.host_action(thread);
      break;
    case EventKind::kThreadName:
    case EventKind::kTest:  // handled above
    case EventKind::kUnchecked:
      break;
  }
  if (settles_pinned_uses(e.kind)) settle_pinned_uses(thread);
}

Checker::Checker(CheckerConfig config) : impl_(std::make_unique<Impl>(config)) {}
Checker::~Checker() = default;

void Checker::on_event(const Event& event) { impl_->on_event(event); }

void Checker::on_events(const Event* events, std::size_t count) {
  Impl& impl = *impl_;
  for (std::size_t i = 0; i < count; ++i) impl.on_event(events[i]);
}

void Checker::finish() {
  if (impl_->finished) return;
  impl_->finished = true;
  // A deferred free still waiting at the end stayed parked to the end.
  if (impl_->has_requested) impl_->park_requested();
  impl_->finish_unordered_frees();
}

const std::vector<Finding>& Checker::findings() const { return impl_->findings; }

const std::vector<Finding>& Checker::latent() const { return impl_->latent; }

const std::vector<NameId>& Checker::unchecked() const { return impl_->unchecked; }

ParkedBlockStats Checker::parked_blocks() const { return impl_->parked_stats; }

bool Checker::lookup_allocation(Addr addr, AllocInfo* out, bool* carries_past_uses) const {
  const Allocation* a = impl_->live.find_containing(addr);
  if (!a) return false;
  if (out) *out = a->info;
  if (carries_past_uses) {
    const AgentId own = impl_->hb.live_stream_agent(a->info.stream);
    bool other = !a->used_only_by(own);
    for (const PastUse& p : a->inherited) other = other || p.agent != own;
    for (const Allocation::KnownWrite& w : a->known_writes) other = other || w.agent != own;
    *carries_past_uses = other;
  }
  return true;
}

bool Checker::used_off_allocation_stream(Addr addr) const {
  const Allocation* a = impl_->live.find_containing(addr);
  if (!a || a->info.addr != addr) return true;
  return !a->used_only_by(impl_->hb.live_stream_agent(a->info.stream));
}

namespace {

void note_latest(std::vector<std::pair<AgentId, Epoch>>* pending, AgentId stream, Epoch epoch) {
  for (auto& [agent, latest] : *pending) {
    if (agent != stream) continue;
    if (epoch > latest) latest = epoch;
    return;
  }
  pending->emplace_back(stream, epoch);
}

}  // namespace

void Checker::Impl::note_pinned_device_use(AgentId stream, Epoch epoch, bool may_write) {
  note_latest(&pinned_pending, stream, epoch);
  if (may_write) note_latest(&pinned_pending_writes, stream, epoch);
}

void Checker::Impl::settle_pinned_uses(AgentId thread) {
  if (pinned_pending.empty()) return;
  const VectorClock& clock = hb.clock(thread);
  auto ordered = [&](const std::pair<AgentId, Epoch>& p) {
    return clock.get(p.first) >= p.second;
  };
  std::erase_if(pinned_pending, ordered);
  std::erase_if(pinned_pending_writes, ordered);
}

bool Checker::pinned_device_uses_pending() const { return !impl_->pinned_pending.empty(); }

bool Checker::pinned_device_writes_pending() const {
  return !impl_->pinned_pending_writes.empty();
}

bool Checker::settles_pinned_uses(EventKind kind) {
  return kind == EventKind::kStreamSync || kind == EventKind::kEventSync ||
         kind == EventKind::kDeviceSync || kind == EventKind::kHostFuncRun;
}

Checker::StreamPoint Checker::stream_point(StreamId stream) const {
  StreamPoint point;
  const AgentId agent = impl_->hb.stream_agent(stream);
  point.agent = agent;
  point.epoch = impl_->hb.clock(agent).get(agent);
  return point;
}

bool Checker::thread_ordered_after(ThreadId thread, StreamPoint point) const {
  // The lookups and the catch-up are lazy state of the happens-before
  // engine: they change no ordering.
  if (point.epoch == 0) return true;
  if (point.agent >= impl_->hb.agents()) return false;
  const AgentId agent = impl_->hb.thread_agent(thread);
  impl_->hb.catch_up(agent);
  return impl_->hb.clock(agent).get(point.agent) >= point.epoch;
}

CheckerStats Checker::stats() const {
  CheckerStats s;
  s.events = impl_->events;
  s.live_allocations = impl_->live.size();
  s.streams = impl_->hb.live_streams();
  s.threads = impl_->hb.threads();
  return s;
}

}  // namespace xsc
