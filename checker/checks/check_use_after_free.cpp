// Check: a use of freed memory that no allocation holds now (a stale
// pointer), or of a block the caching allocator parked for record_stream.
// It is the stale-pointer case of the memory's past uses: such a use is
// reported as a use after free, and the unordered frees it races with are
// not latent.
#include "checker/engine/checker_impl.h"

namespace xsc {

void Checker::Impl::use_after_free(const Event& e, FreedRange& freed, AgentId agent,
                                   const VectorClock& clock) {
  const UseInfo use = use_info(e);
  // Memory left over from a split block may have been handed out unseen:
  // its use is judged as a reuse, not as a use after free.
  check_past_uses(freed.past, nullptr, /*report=*/freed.leftover, agent, clock, use);
  if (!config.check_use_after_free || freed.leftover) return;
  bool fresh = false;
  Finding& f = report({FindingKind::kUseAfterFree, freed.free.stack, e.stack,
                       key_name(e.stack, e.name), freed.free.test},
                      &fresh);
  if (fresh) {
    f.alloc = freed.alloc;
    f.free = freed.free;
    f.use = use;
  } else {
    prefer_directed(&f.use, use);
  }
}

void Checker::Impl::use_of_parked_block(const Event& e, const DeferredBlock& block) {
  if (!config.check_use_after_free) return;
  bool fresh = false;
  Finding& f = report({FindingKind::kUseAfterFree, block.free.stack, e.stack,
                       key_name(e.stack, e.name), block.free.test},
                      &fresh);
  if (fresh) {
    f.alloc = live.at(block.slot).info;
    f.free = block.free;
    f.use = use_info(e);
  } else {
    prefer_directed(&f.use, use_info(e));
  }
}

}  // namespace xsc
