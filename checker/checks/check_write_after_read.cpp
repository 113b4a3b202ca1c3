// Checks on the bytes of live memory, between uses of two agents:
//  * use before ready: a use not ordered after another agent's last known
//    write to the same bytes (a read before the copy that fills it lands);
//  * write after read: a known write not ordered after another agent's use
//    of the same bytes (a copy into a slot a kernel may still read).
//
// Known writes are the ones whose direction is certain and whose ordering
// the checker sees, over bytes known exactly: a copy's destination, a
// memset, a collective's receive buffer (NCCL's receive side, on the ranks
// that certainly receive: runtime/libs/nccl/nccl_interpose.cpp), an annotated
// write, a host write, and a PyTorch operator's argument that its schema
// marks written (`Tensor(a!)`, e.g. aten::add_'s self), fed at the
// operator's return on the stream its kernels went to (runtime/torch/
// operator_access.cpp); and the outputs of cuBLAS calls, over the bytes
// they certainly wrote, fed the same way (runtime/libs/cublas/cublas.cpp), and the
// dense outputs of cuDNN's batch norm and convolutions (runtime/libs/cudnn/cudnn.cpp).
// A copy, memset or collective of unknown extent (a 2D copy or memset, a
// collective whose element type or rank count NCCL could not tell) is not
// a known write: its use stands for the whole allocation, more bytes than
// it may write (a 2D copy into a block of a wider matrix leaves the rest
// of each row to whoever else writes it).
// cuDNN's handle creation clears a buffer with a memset that nothing
// orders with the kernels reading it later: a real race inside the library,
// suppressed by default (checker/report/builtin_suppressions.cpp).
// Not a kernel's argument, even one its signature marks const: that makes
// it a read (launch.cpp), and a write is never inferred from a signature.
// A kernel's pointer argument gives no extent, so a kernel use counts as
// touching the bytes at the pointer (two slots of one pool tensor stay two
// buffers). Two uses of which neither is a known write (two reads, a read
// and a kernel of unknown direction) never conflict here.
#include <algorithm>

#include "checker/engine/checker_impl.h"

namespace xsc {
namespace {

struct Extent {
  Addr begin, end;
};

Extent extent_of(const UseInfo& u, const Allocation& a) {
  if (u.size != 0) {
    const Addr end = u.size > ~Addr{0} - u.addr ? ~Addr{0} : u.addr + u.size;
    return {u.addr, end};
  }
  if (u.what == UseWhat::kKernel) return {u.addr, u.addr + 1};  // the bytes at the pointer
  return {a.info.addr, a.end()};
}

bool overlap(Extent x, Extent y) { return x.begin < y.end && y.begin < x.end; }

bool known_write(const UseInfo& u) {
  if (u.access != Access::kWrite) return false;
  switch (u.what) {
    case UseWhat::kAnnotated:
    case UseWhat::kHostAccess:
    case UseWhat::kOperator:
      return true;
    case UseWhat::kMemcpy:
    case UseWhat::kMemset:
    case UseWhat::kCollective:
      return u.size != 0;
    case UseWhat::kKernel:
      break;
  }
  return false;
}

// Whether a use is judged against a new block's first use, taken as the
// write that fills it: only a use that surely touches the bytes it names.
// A kernel's argument of unknown direction may be a word the kernel never
// reads: a table of pointers passed by value holds stale entries past
// those the launch filled, where no layout says how many it did
// (param_fill.h), and judged so it would be a race the program does not
// have. A copy's, a library call's, a collective's or a `const T*`
// parameter's bytes are the ones it touches. A known write is left out
// too: over a use it is a write after read already.
bool judged_against_first_use(const UseInfo& u) {
  return (u.what != UseWhat::kKernel || u.access == Access::kRead) && !known_write(u);
}

}  // namespace

void Checker::Impl::check_known_writes(Allocation& a, AgentId agent, Epoch epoch,
                                       const VectorClock& clock, const UseInfo& use) {
  const Extent bytes = extent_of(use, a);
  if (config.check_use_before_ready) {
    for (const Allocation::KnownWrite& w : a.known_writes) {
      if (w.agent == agent || clock.get(w.agent) >= w.epoch || !overlap({w.begin, w.end}, bytes))
        continue;
      if (w.first_use && !judged_against_first_use(use)) continue;
      // A host thread's write is ordered before what follows it by the
      // host's own synchronization (a queue, a lock: a DataLoader's pinning
      // thread hands its batches over), which no CUDA call shows; a host
      // write is only checked against the device work it overwrites.
      if (w.use.what == UseWhat::kHostAccess) continue;
      bool fresh = false;
      Finding& f = report({FindingKind::kUseBeforeReady, use.stack, w.use.stack,
                           key_name(use.stack, use.name), current_test},
                          &fresh);
      if (fresh) {
        f.alloc = a.info;
        f.use = use;
        f.has_earlier = true;
        f.earlier = w.use;
        f.earlier_first_use = w.first_use;
      } else {
        prefer_directed(&f.use, use);
      }
    }
  }
  if (!known_write(use)) return;
  if (config.check_write_after_read) {
    for (std::size_t i = 0; i < a.last_use.size(); ++i) {
      const UseEpoch u = a.last_use[i];
      if (u.agent == agent || u.epoch == 0 || clock.get(u.agent) >= u.epoch) continue;
      const UseInfo& earlier = a.last_use_info[i];
      if (!overlap(extent_of(earlier, a), bytes)) continue;
      // A host write over a copy another host thread issued: the threads'
      // own handover (a DataLoader's pinning thread and the thread that
      // uploads its batches, PyTorch's pinned allocator handing a block to
      // another thread) is not seen, so only the issuing thread is checked.
      if (use.what == UseWhat::kHostAccess && earlier.thread != use.thread) continue;
      bool fresh = false;
      Finding& f = report({FindingKind::kWriteAfterRead, use.stack, earlier.stack,
                           key_name(use.stack, use.name), current_test},
                          &fresh);
      if (fresh) {
        f.alloc = a.info;
        f.use = use;
        f.has_earlier = true;
        f.earlier = earlier;
      } else {
        prefer_directed(&f.use, use);
        prefer_directed(&f.earlier, earlier);
      }
    }
  }
  // The agent's latest known write stands for its earlier ones on the same
  // bytes; one of another part replaces it too (one record per agent).
  for (Allocation::KnownWrite& w : a.known_writes) {
    if (w.agent != agent) continue;
    w = {agent, epoch, bytes.begin, bytes.end, use};
    return;
  }
  a.known_writes.push_back({agent, epoch, bytes.begin, bytes.end, use});
}

}  // namespace xsc
