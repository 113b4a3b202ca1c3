// Check: a stream-ordered allocation (cudaMallocAsync) used on another
// stream that is not ordered after the allocation's point on its stream.
#include "checker/engine/checker_impl.h"

namespace xsc {

void Checker::Impl::use_before_ready(const Allocation& a, const Event& e) {
  bool fresh = false;
  Finding& f =
      report({FindingKind::kUseBeforeReady, a.info.stack, e.stack, e.name, current_test}, &fresh);
  if (fresh) {
    f.alloc = a.info;
    f.use = use_info(e);
  }
}

}  // namespace xsc
