// The checks on top of the happens-before state.
//
//  1. Unordered free: at the point where a free makes a block reusable, every
//     stream's last use of the block must happen before that point.
//  2. Late wait: an unordered use that the free's stream waits for only
//     after the free. Reported as a note on finding 1.
//  3. Use after free: a use of a range that was freed (and not reallocated).
//  4. Use before ready: a stream-ordered allocation used on another stream
//     that is not ordered after the allocation.
#include "checker/checker.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <map>
#include <unordered_map>

#include "checker/alloc_map.h"
#include "checker/hb_state.h"
#include "checker/vector_clock.h"

namespace xsc {
namespace {

// Unordered (free, use) pairs waiting for a late wait on the free's stream,
// one record per (free stream, use stream, finding). Such triples are few;
// the bound only guards against pathological input.
constexpr std::size_t kMaxPendingLateWaits = 4096;

struct PendingLateWait {
  Epoch use_epoch;
  std::uint32_t finding;
};

// The records of one (free stream, use stream) pair. A wait whose snapshot
// does not reach `min_epoch` covers none of them: one comparison skips all.
struct LateWaitBucket {
  AgentId use_agent = kNoAgent;
  Epoch min_epoch = 0;
  std::vector<PendingLateWait> records;
};

struct FindingKey {
  FindingKind kind;
  StackId site;  // free stack, or the allocation stack for use-before-ready
  StackId use_stack;
  NameId use_name;
  bool operator==(const FindingKey&) const = default;
};

struct FindingKeyHash {
  std::size_t operator()(const FindingKey& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.kind);
    h = h * 0x9e3779b97f4a7c15ULL + k.site;
    h = h * 0x9e3779b97f4a7c15ULL + k.use_stack;
    h = h * 0x9e3779b97f4a7c15ULL + k.use_name;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// A caching-allocator block whose reuse the allocator deferred.
struct DeferredBlock {
  AllocMap::Slot slot = AllocMap::kNoSlot;
  FreeInfo free;
  bool parked = false;
};

UseInfo use_info(const Event& e) {
  UseInfo u;
  u.addr = e.addr;
  u.size = e.size;
  u.stream = e.stream;
  u.what = e.what;
  u.access = e.access;
  u.name = e.name;
  u.graph = e.graph;
  u.thread = e.thread;
  u.stack = e.stack;
  return u;
}

FreeInfo free_info(const Event& e) {
  FreeInfo f;
  f.addr = e.addr;
  f.stream = e.stream;
  f.kind = e.free_kind;
  f.deferred = e.deferred;
  f.thread = e.thread;
  f.stack = e.stack;
  return f;
}

}  // namespace

struct Checker::Impl {
  explicit Impl(CheckerConfig c) : config(c), quarantine(c.quarantine_entries) {}

  CheckerConfig config;
  HbState hb;
  AllocMap live;
  Quarantine quarantine;
  std::vector<Finding> findings;
  std::unordered_map<FindingKey, std::uint32_t, FindingKeyHash> finding_index;
  // Indexed by the free's stream agent.
  std::vector<std::vector<LateWaitBucket>> pending;
  std::size_t pending_records = 0;
  VectorClock point;  // scratch ordering point, storage reused
  std::uint64_t events = 0;
  bool finished = false;

  // Deferred caching-allocator frees by address; their ranges are disjoint.
  std::map<Addr, DeferredBlock> deferred;
  // The latest deferred free, held apart until the next event: a caching
  // allocator completes most frees at once (no record_stream), and a
  // completion that is the very next event then costs no map node. Any
  // other event parks it into `deferred` first, so every other reader of
  // the deferred frees finds it there.
  bool has_requested = false;
  Addr requested = 0;
  DeferredBlock requested_block;
  std::uint64_t parked_now = 0;
  std::uint64_t parked_bytes_now = 0;
  std::unordered_map<StackId, std::uint64_t> parked_by_site;
  ParkedBlockStats parked_stats;

  void on_event(const Event& e);

  Finding& report(const FindingKey& key, bool* fresh) {
    auto [it, inserted] = finding_index.try_emplace(
        key, static_cast<std::uint32_t>(findings.size()));
    *fresh = inserted;
    if (inserted) {
      findings.emplace_back();
      findings.back().kind = key.kind;
      findings.back().count = 0;
    }
    Finding& f = findings[it->second];
    ++f.count;
    return f;
  }

  // Check 1 against the ordering point in `point`. `free_agent` is the stream
  // a late wait would have to be enqueued on (kNoAgent: none can help).
  void check_free(const Allocation& a, const FreeInfo& free, AgentId free_agent) {
    for (std::size_t i = 0; i < a.last_use.size(); ++i) {
      const UseEpoch use = a.last_use[i];
      if (point.get(use.agent) >= use.epoch) continue;
      const UseInfo& info = a.last_use_info[i];
      bool fresh = false;
      Finding& f = report(
          {FindingKind::kUnorderedFree, free.stack, info.stack, info.name},
          &fresh);
      if (fresh) {
        f.alloc = a.info;
        f.free = free;
        f.use = info;
      }
      if (free_agent != kNoAgent && !f.has_late_wait)
        remember_late_wait(free_agent, use.agent, use.epoch,
                           static_cast<std::uint32_t>(&f - findings.data()));
    }
  }

  void remember_late_wait(AgentId free_agent, AgentId use_agent, Epoch epoch,
                          std::uint32_t finding) {
    if (free_agent >= pending.size()) pending.resize(free_agent + 1);
    std::vector<LateWaitBucket>& buckets = pending[free_agent];
    LateWaitBucket* bucket = nullptr;
    for (LateWaitBucket& b : buckets)
      if (b.use_agent == use_agent) bucket = &b;
    if (!bucket) {
      buckets.emplace_back();
      bucket = &buckets.back();
      bucket->use_agent = use_agent;
      bucket->min_epoch = epoch;
    }
    // A wait that covers the earliest epoch of a triple is the first wait to
    // cover any of them, so one record per triple suffices.
    for (PendingLateWait& p : bucket->records) {
      if (p.finding == finding) {
        p.use_epoch = std::min(p.use_epoch, epoch);
        bucket->min_epoch = std::min(bucket->min_epoch, epoch);
        return;
      }
    }
    if (pending_records == kMaxPendingLateWaits) return;
    ++pending_records;
    bucket->records.push_back({epoch, finding});
    bucket->min_epoch = std::min(bucket->min_epoch, epoch);
  }

  void match_late_waits(AgentId stream, const Event& wait) {
    if (pending_records == 0 || stream >= pending.size()) return;
    const VectorClock* snapshot = hb.event_snapshot(wait.event);
    if (!snapshot) return;
    for (LateWaitBucket& bucket : pending[stream]) {
      const Epoch reached = snapshot->get(bucket.use_agent);
      if (bucket.records.empty() || reached < bucket.min_epoch) continue;
      Epoch min_left = std::numeric_limits<Epoch>::max();
      auto covered = [&](const PendingLateWait& p) {
        if (reached < p.use_epoch) {
          min_left = std::min(min_left, p.use_epoch);
          return false;
        }
        Finding& f = findings[p.finding];
        if (!f.has_late_wait) {
          f.has_late_wait = true;
          f.late_wait = LateWait{wait.stream, wait.event, wait.thread, wait.stack};
        }
        return true;
      };
      auto keep_end =
          std::remove_if(bucket.records.begin(), bucket.records.end(), covered);
      pending_records -= static_cast<std::size_t>(bucket.records.end() - keep_end);
      bucket.records.erase(keep_end, bucket.records.end());
      bucket.min_epoch = min_left;
    }
  }

  // Check 1 against `point`; then the range is remembered for use-after-free.
  void check_and_retire(AllocMap::Slot slot, const FreeInfo& free, AgentId late_wait_agent) {
    check_free(live.at(slot), free, late_wait_agent);
    quarantine.push(live.at(slot).info, free);
    live.release(slot);
  }

  // A caching-allocator block becomes reusable by later work on its
  // allocation stream: that stream plus what the freeing (or, for a deferred
  // free, the completing) thread knows is the ordering point.
  void release_caching_block(AllocMap::Slot slot, const FreeInfo& free, AgentId thread) {
    const AgentId alloc_stream = hb.stream_agent(live.at(slot).info.stream);
    if (live.at(slot).used_only_by(alloc_stream)) {
      // Its own stream's uses all precede the ordering point (that stream's
      // clock): nothing to check, and no clock to build. Most blocks of a
      // PyTorch program live and die on their allocation stream.
      quarantine.push(live.at(slot).info, free);
      live.release(slot);
      return;
    }
    point.assign(hb.clock(alloc_stream));
    point.join(hb.clock(thread));
    check_and_retire(slot, free, alloc_stream);
  }

  void on_alloc(const Event& e, AgentId thread);
  void on_free(const Event& e, AgentId thread);
  void on_free_completed(const Event& e, AgentId thread);
  void on_use(const Event& e, AgentId thread);
  void use_freed_range(const Event& e, const AllocInfo& alloc, const FreeInfo& free);

  void park_requested();
  std::map<Addr, DeferredBlock>::iterator first_deferred_overlapping(Addr begin,
                                                                     Addr end);
  void unpark(DeferredBlock& block);
};

void Checker::Impl::park_requested() {
  has_requested = false;
  DeferredBlock& block =
      deferred.insert_or_assign(requested, std::move(requested_block)).first->second;
  block.parked = true;
  ++parked_now;
  parked_bytes_now += live.at(block.slot).info.size;
  parked_stats.max_parked = std::max(parked_stats.max_parked, parked_now);
  parked_stats.peak_parked_bytes =
      std::max(parked_stats.peak_parked_bytes, parked_bytes_now);
  std::uint64_t& site = parked_by_site[block.free.stack];
  ++site;
  if (site > parked_stats.top_site_count) {
    parked_stats.top_site_count = site;
    parked_stats.top_site = block.free.stack;
  }
}

std::map<Addr, DeferredBlock>::iterator
Checker::Impl::first_deferred_overlapping(Addr begin, Addr end) {
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
  const Addr end = e.size > std::numeric_limits<Addr>::max() - e.addr
                       ? std::numeric_limits<Addr>::max()
                       : e.addr + e.size;
  quarantine.forget(e.addr, end);
  // A deferred block the allocator hands out again was reusable already; a
  // missed completion is not a reason to keep it parked.
  for (auto it = first_deferred_overlapping(e.addr, end);
       it != deferred.end() && it->first < end;) {
    unpark(it->second);
    if (has_requested && requested == it->first) has_requested = false;
    live.release(it->second.slot);
    it = deferred.erase(it);
  }
  if (Allocation* a = live.insert(info)) {
    a->ready_agent = ready_agent;
    a->ready_epoch = ready_epoch;
  }
}

void Checker::Impl::on_free(const Event& e, AgentId thread) {
  const FreeInfo free = free_info(e);
  switch (e.free_kind) {
    case FreeKind::kStreamOrdered: {
      // cudaFreeAsync is an op on its stream; that stream's clock after the
      // enqueue is what the memory's next user is ordered after.
      AgentId stream = hb.stream_agent(e.stream);
      hb.enqueue(stream, thread);
      const AllocMap::Slot slot = live.extract(e.addr);
      if (slot == AllocMap::kNoSlot) return;
      point.assign(hb.clock(stream));
      check_and_retire(slot, free, stream);
      return;
    }
    case FreeKind::kSynchronous: {
      // cudaFree is not an ordering point for other streams' work: only
      // what the freeing thread itself synchronized with counts.
      hb.host_action(thread);
      const AllocMap::Slot slot = live.extract(e.addr);
      if (slot == AllocMap::kNoSlot) return;
      point.assign(hb.clock(thread));
      check_and_retire(slot, free, kNoAgent);
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
      release_caching_block(slot, free, thread);  // reusable at once
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
  if (!block.parked) block.free.deferred = false;
  unpark(block);
  // The allocator's successful event query made the completing thread
  // synchronize with the consumers' events before this point.
  release_caching_block(block.slot, block.free, thread);
}

void Checker::Impl::use_freed_range(const Event& e, const AllocInfo& alloc,
                                    const FreeInfo& free) {
  bool fresh = false;
  Finding& f =
      report({FindingKind::kUseAfterFree, free.stack, e.stack, e.name}, &fresh);
  if (fresh) {
    f.alloc = alloc;
    f.free = free;
    f.use = use_info(e);
  }
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
    if (config.check_use_before_ready && a.ready_epoch != 0 &&
        a.ready_agent != agent && clock.get(a.ready_agent) < a.ready_epoch) {
      bool fresh = false;
      Finding& f = report(
          {FindingKind::kUseBeforeReady, a.info.stack, e.stack, e.name}, &fresh);
      if (fresh) {
        f.alloc = a.info;
        f.use = use;
      }
    }
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
    end = e.size > std::numeric_limits<Addr>::max() - begin
              ? std::numeric_limits<Addr>::max()
              : begin + e.size;
    if (live.for_each_overlapping(begin, end, touch) != 0) return;
  }
  if (!config.check_use_after_free) return;
  auto parked = first_deferred_overlapping(begin, end);
  if (parked != deferred.end() && parked->first < end) {
    use_freed_range(e, live.at(parked->second.slot).info, parked->second.free);
    return;
  }
  if (const FreedRange* freed = quarantine.find_overlapping(begin, end))
    use_freed_range(e, freed->alloc, freed->free);
}

void Checker::Impl::on_event(const Event& e) {
  ++events;
  // A deferred free whose completion is not the very next event parks.
  if (has_requested &&
      !(e.kind == EventKind::kFreeCompleted && e.addr == requested))
    park_requested();

  const AgentId thread = hb.thread_agent(e.thread);
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
    case EventKind::kHostFunc:
    case EventKind::kGraphLaunch:
      hb.enqueue(hb.stream_agent(e.stream), thread);
      break;
    case EventKind::kThreadName:
      break;
  }
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
}

const std::vector<Finding>& Checker::findings() const { return impl_->findings; }

ParkedBlockStats Checker::parked_blocks() const { return impl_->parked_stats; }

bool Checker::lookup_allocation(Addr addr, AllocInfo* out) const {
  const Allocation* a = impl_->live.find_containing(addr);
  if (!a) return false;
  if (out) *out = a->info;
  return true;
}

bool Checker::used_off_allocation_stream(Addr addr) const {
  const Allocation* a = impl_->live.find_containing(addr);
  if (!a || a->info.addr != addr) return true;
  return !a->used_only_by(impl_->hb.live_stream_agent(a->info.stream));
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
