// Races inside libraries, real under CUDA's ordering rules, that no user
// can fix and that every program using the library would otherwise see
// reported (as ThreadSanitizer ships suppressions for its standard
// libraries). Each rule matches only memory and calls of the library's own;
// builtin_suppressions=0 turns them all off, and their findings are
// counted as suppressed in every report.
#include "checker/report/builtin_suppressions.h"

namespace xsc {

std::string_view builtin_suppressions() {
  // cuDNN's handle creation: cudnnCreate allocates a small buffer with
  // cudaMalloc and clears it with cudaMemsetAsync on one of the
  // non-blocking streams it creates for itself, then returns without
  // recording, waiting on or synchronizing that stream. Its batch-norm
  // kernels read the buffer later on the stream the caller sets on the
  // handle, so the read is a use before ready under the stream rules:
  // cudaMalloc does not order two other streams' commands (measured on an
  // H200, driver 580: test/gpu/probes/implicit_sync.cu). The buffer is
  // allocated inside cudnnCreate, which is what the rule matches (the
  // memset's own stack may be the caller's Python lines). docs/rules.md.
  return "use_before_ready:cudnnCreate\n";
}

}  // namespace xsc
