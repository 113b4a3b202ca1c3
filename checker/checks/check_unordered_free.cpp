// Check: a free that is not ordered after a use of the buffer on another
// stream (the unordered (free, use) pair), and the late wait that would
// have ordered it.
//
// At the free, each last use the free's ordering point does not hold makes
// an unordered pair. The memory keeps carrying the use (PastUse); whether
// the pair is a finding depends on what this run does with the memory next
// (check_reuse_race.cpp): a use of it that is not ordered after the pair's
// use makes the pair a finding, reported at the free with the reallocation
// and that use as notes. A pair whose memory is used again only after the
// ordering arrived (a late wait, a host synchronization), or never, is a
// latent free-before-wait: counted, and a finding only under strict.
#include <algorithm>
#include <limits>

#include "checker/engine/checker_impl.h"

namespace xsc {
namespace {

// Pending late waits, one record per (free stream, use stream, site). Such
// triples are few; the bound only guards against pathological input.
constexpr std::size_t kMaxPendingLateWaits = 4096;

FindingKey site_key(const FreeInfo& free, const UseInfo& use) {
  return {FindingKind::kUnorderedFree, free.stack, use.stack, key_name(use.stack, use.name),
          free.test};
}

}  // namespace

void Checker::Impl::retire(AllocMap::Slot slot, const FreeInfo& free, AgentId late_wait_agent,
                           bool all_ordered) {
  Allocation& a = live.at(slot);
  carried.clear();
  // `carried` holds whatever storage the quarantine slot it was last
  // swapped with had: one reservation instead of growing use by use.
  carried.reserve(a.last_use.size() + a.inherited.size());
  for (std::size_t i = 0; i < a.last_use.size(); ++i) {
    const UseEpoch use = a.last_use[i];
    if (use.epoch == 0) continue;  // known complete (a deferred free)
    PastUse& past = carried.emplace_back();
    past.agent = use.agent;
    past.epoch = use.epoch;
    past.use = a.last_use_info[i];
    past.alloc = a.info;
    past.free = free;
    if (!all_ordered && point.get(use.agent) < use.epoch) {
      past.site = unordered_pair(a, free, past.use);
      if (late_wait_agent != kNoAgent)
        remember_late_wait(late_wait_agent, use.agent, use.epoch, past.site);
    }
  }
  // The earlier occupants' uses go on, but for those a later use of the
  // same agent stands for (the common case: a block reused on its own
  // stream, whose new use makes the old one moot).
  const std::size_t own = carried.size();
  for (const PastUse& p : a.inherited) {
    bool stood_for = false;
    if (p.site == kNoSite || p.raced)
      for (std::size_t i = 0; i < own && !stood_for; ++i)
        stood_for = carried[i].agent == p.agent && carried[i].epoch >= p.epoch;
    if (!stood_for) carried.push_back(p);
  }
  if (carried.size() > own) prune(carried);
  quarantine.push(a.info, free, &carried);
  live.release(slot);
}

std::uint32_t Checker::Impl::unordered_pair(const Allocation& a, const FreeInfo& free,
                                            const UseInfo& use) {
  const FindingKey key = site_key(free, use);
  auto [it, inserted] = site_index.try_emplace(key, static_cast<std::uint32_t>(sites.size()));
  if (inserted) {
    sites.emplace_back();
    Finding& first = sites.back().first;
    first.kind = FindingKind::kUnorderedFree;
    first.test = free.test;
    first.alloc = a.info;
    first.free = free;
    first.use = use;
  }
  UnorderedFreeSite& site = sites[it->second];
  if (!inserted) prefer_directed(&site.first.use, use);
  ++site.frees;
  if (config.strict) report_site(site);
  return it->second;
}

void Checker::Impl::report_site(UnorderedFreeSite& site) {
  bool fresh = false;
  Finding& f = report(site_key(site.first.free, site.first.use), &fresh);
  if (!fresh) {
    prefer_directed(&f.use, site.first.use);
    return;
  }
  f.alloc = site.first.alloc;
  f.free = site.first.free;
  f.use = site.first.use;
  f.has_late_wait = site.has_late_wait;
  f.late_wait = site.late_wait;
  site.finding = &f - findings.data();
}

void Checker::Impl::unordered_pair_raced(PastUse& past, const Allocation* reuse_alloc,
                                         bool report_it, const UseInfo& racing) {
  UnorderedFreeSite& site = sites[past.site];
  if (!past.raced) {
    past.raced = true;
    ++site.raced;
    // A stale pointer's use is a use after free, reported as such; the
    // pair is then not latent, and needs no second finding.
    if (!config.strict && report_it) report_site(site);
  }
  if (site.finding < 0 || !report_it) return;
  Finding& f = findings[static_cast<std::size_t>(site.finding)];
  if (f.has_reuse) return;
  f.has_reuse = true;
  f.reuse.has_alloc = reuse_alloc != nullptr;
  if (reuse_alloc) f.reuse.alloc = reuse_alloc->info;
  f.reuse.use = racing;
}

void Checker::Impl::remember_late_wait(AgentId free_agent, AgentId use_agent, Epoch epoch,
                                       std::uint32_t site) {
  if (sites[site].has_late_wait) return;
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
    if (p.site == site) {
      p.use_epoch = std::min(p.use_epoch, epoch);
      bucket->min_epoch = std::min(bucket->min_epoch, epoch);
      return;
    }
  }
  if (pending_records == kMaxPendingLateWaits) return;
  ++pending_records;
  bucket->records.push_back({epoch, site});
  bucket->min_epoch = std::min(bucket->min_epoch, epoch);
}

void Checker::Impl::match_late_waits(AgentId stream, const Event& wait) {
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
      UnorderedFreeSite& site = sites[p.site];
      if (!site.has_late_wait) {
        site.has_late_wait = true;
        site.late_wait = LateWait{wait.stream, wait.event, wait.thread, wait.stack};
        if (site.finding >= 0) {
          Finding& f = findings[static_cast<std::size_t>(site.finding)];
          if (!f.has_late_wait) {
            f.has_late_wait = true;
            f.late_wait = site.late_wait;
          }
        }
      }
      return true;
    };
    auto keep_end = std::remove_if(bucket.records.begin(), bucket.records.end(), covered);
    pending_records -= static_cast<std::size_t>(bucket.records.end() - keep_end);
    bucket.records.erase(keep_end, bucket.records.end());
    bucket.min_epoch = min_left;
  }
}

void Checker::Impl::finish_unordered_frees() {
  for (const UnorderedFreeSite& site : sites) {
    if (site.finding >= 0) {
      Finding& f = findings[static_cast<std::size_t>(site.finding)];
      if (!f.has_late_wait && site.has_late_wait) {
        f.has_late_wait = true;
        f.late_wait = site.late_wait;
      }
      // Strict reports every pair; say when none of them was followed by
      // a racing use in this run.
      if (config.strict && site.raced == 0) f.latent = true;
    }
    if (config.strict || site.frees <= site.raced) continue;
    Finding l = site.first;
    l.latent = true;
    l.count = site.frees - site.raced;
    l.has_late_wait = site.has_late_wait;
    l.late_wait = site.late_wait;
    latent.push_back(l);
  }
}

}  // namespace xsc
