// Check: memory used again while an earlier occupant's use may still run.
//
// Memory carries the uses of its earlier occupants (PastUse) until every
// later action is ordered after them. A use of the memory by an agent that
// is not ordered after such a use by another agent is a hazard: the two may
// run at the same time on the same bytes. This depends on the order of API
// calls only, never on GPU timing, and it is judged at the use: a block
// allocated before the wait that orders it, and first used after that wait,
// is safe.
//
// When the earlier occupant's free was itself unordered with that use (the
// free-before-wait bug), the finding is that free's (check_unordered_free).
// When the free was ordered (a same-stream free whose block is then first
// touched on another stream that never waited), the finding is a reuse race
// reported at the racing use.
#include <algorithm>

#include "checker/engine/checker_impl.h"

namespace xsc {
namespace {

bool pending_pair(const PastUse& p) { return p.site != kNoSite && !p.raced; }

}  // namespace

void Checker::Impl::prune(std::vector<PastUse>& past) {
  if (past.empty()) return;
  const VectorClock& frontier = hb.thread_frontier();
  std::erase_if(past, [&](const PastUse& p) { return frontier.get(p.agent) >= p.epoch; });
  if (past.size() < 2) return;
  // A later use of the same agent stands for an earlier one: whatever is
  // not ordered after the earlier use is not ordered after the later one.
  // An unordered pair not yet raced is kept until a later pair stands for
  // it, so that a race is told against the free that caused it.
  // In place: an entry is dropped once one that stands for it is kept.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < past.size(); ++i) {
    bool dropped = false;
    for (std::size_t j = 0; j < past.size() && !dropped; ++j) {
      if (i == j || past[j].agent != past[i].agent) continue;
      const bool newer = past[j].epoch > past[i].epoch || (past[j].epoch == past[i].epoch && j < i);
      dropped = newer && (!pending_pair(past[i]) || pending_pair(past[j]));
    }
    if (!dropped) {
      if (kept != i) past[kept] = past[i];
      ++kept;
    }
  }
  past.resize(kept);
}

void Checker::Impl::inherit(Allocation& a, std::vector<PastUse>& past) {
  prune(past);
  a.inherited.swap(past);  // `past` gets the slot's empty storage
  past.clear();
}

void Checker::Impl::check_past_uses(std::vector<PastUse>& past, const Allocation* reuse_alloc,
                                    bool report_it, AgentId agent, const VectorClock& clock,
                                    const UseInfo& use) {
  for (PastUse& p : past) {
    if (p.agent == agent || p.raced_by == agent) continue;
    if (clock.get(p.agent) >= p.epoch) continue;
    // Each (earlier use, racing agent) once: the agent's next uses race
    // with it for the same reason until the agent is ordered after it.
    p.raced_by = agent;
    if (p.site != kNoSite) {
      unordered_pair_raced(p, reuse_alloc, report_it, use);
      continue;
    }
    // Through a stale pointer the use is a use after free, told as such.
    if (!report_it || !config.check_reuse_race) continue;
    // One finding per (racing use, earlier occupant's free): the earlier
    // use itself may have been seen without a stack (the runtime records a
    // caching block's uses on its own stream stackless until another stream
    // takes part), and it is the same bug as the later rounds' with one.
    bool fresh = false;
    Finding& f = report({FindingKind::kReuseRace, use.stack, p.free.stack,
                         key_name(use.stack, use.name), p.free.test},
                        &fresh);
    if (!fresh) {
      if (f.use.stack == kNoStack && p.use.stack != kNoStack) f.use = p.use;
      prefer_directed(&f.reuse.use, use);
      continue;
    }
    f.alloc = p.alloc;
    f.free = p.free;
    f.use = p.use;
    f.has_reuse = true;
    f.reuse.has_alloc = reuse_alloc != nullptr;
    if (reuse_alloc) f.reuse.alloc = reuse_alloc->info;
    f.reuse.use = use;
  }
}

}  // namespace xsc
