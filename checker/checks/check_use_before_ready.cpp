// Check: a stream-ordered allocation (cudaMallocAsync) used on another
// stream that is not ordered after the allocation's point on its stream.
//
// And a new caching block used on another stream before the work that
// fills it. A caching allocator hands a block to its allocation stream:
// the memory holds nothing of its new occupant until that stream's work
// writes it, and the first kernel that touches it there is the operator
// that produced it (`y = x * 2` allocates y and launches the kernel that
// writes it). PyTorch's kernels take their tensors in structs, so the
// launch itself says nothing of direction; taken as a write of the bytes
// at the pointer it passed, that first use is what a use on another stream
// must be ordered after. A read of memory nothing wrote yet would be a
// bug of its own, so the write that use stands for is the one a correct
// program has. Only use before ready is judged against it: it is no known
// write, and a write after read is never reported at it.
#include "checker/engine/checker_impl.h"

namespace xsc {

bool Checker::Impl::fills_new_block(const Allocation& a, AgentId agent, const UseInfo& use) const {
  return config.check_use_before_ready && config.first_use_writes &&
         use.what == UseWhat::kKernel && use.access == Access::kUnknown && use.graph == 0 &&
         a.info.kind == AllocKind::kCachingAllocator && a.last_use.size() == 0 &&
         a.known_writes.empty() && agent == hb.live_stream_agent(a.info.stream);
}

void Checker::Impl::note_first_use_write(Allocation& a, AgentId agent, Epoch epoch,
                                         const UseInfo& use) {
  Allocation::KnownWrite w;
  w.agent = agent;
  w.epoch = epoch;
  w.begin = use.addr;  // the bytes at the pointer, as for any kernel use
  w.end = use.addr + 1 > use.addr ? use.addr + 1 : use.addr;
  w.use = use;
  w.first_use = true;
  a.known_writes.push_back(w);
}

void Checker::Impl::use_before_ready(const Allocation& a, const Event& e) {
  bool fresh = false;
  Finding& f = report({FindingKind::kUseBeforeReady, a.info.stack, e.stack,
                       key_name(e.stack, e.name), current_test},
                      &fresh);
  if (fresh) {
    f.alloc = a.info;
    f.use = use_info(e);
  } else {
    prefer_directed(&f.use, use_info(e));
  }
}

}  // namespace xsc
