// Check: a stream-ordered allocation (cudaMallocAsync) used on another
// stream that is not ordered after the allocation's point on its stream.
#include "checker/checker_impl.h"

namespace xsc {

void Checker::Impl::check_ready(const Allocation& a, AgentId agent, const VectorClock& clock,
                                const Event& e) {
  if (!config.check_use_before_ready || a.ready_epoch == 0 || a.ready_agent == agent ||
      clock.get(a.ready_agent) >= a.ready_epoch)
    return;
  bool fresh = false;
  Finding& f = report({FindingKind::kUseBeforeReady, a.info.stack, e.stack, e.name}, &fresh);
  if (fresh) {
    f.alloc = a.info;
    f.use = use_info(e);
  }
}

}  // namespace xsc
