// Checks on the bytes of live memory, between uses of two agents:
//  * use before ready: a use not ordered after another agent's last known
//    write to the same bytes (a read before the copy that fills it lands);
//  * write after read: a known write not ordered after another agent's use
//    of the same bytes (a copy into a slot a kernel may still read).
//
// Known writes are the ones whose direction is certain and whose ordering
// the checker sees: a copy's destination, an annotated write, a host write,
// and a PyTorch operator's argument that its schema marks written
// (`Tensor(a!)`, e.g. aten::add_'s self), fed at the operator's return on
// the stream its kernels went to (runtime/torch/operator_access.cpp); and
// the C matrix of a cuBLAS GEMM, over the bytes it certainly wrote, fed
// the same way (runtime/cublas.cpp).
//
// Not a collective's receive buffer: in a DDP run on the H200 a kernel on
// the default stream read parameters written by the initial ncclBcast with
// no wait the checker saw, in a correct program. That run had one rank, the
// broadcast's root, for which NCCL only reads the buffer; the runtime
// labelled it a write on every rank, which it no longer does (runtime/nccl/
// nccl_interpose.cpp). That is the likely cause, not a confirmed one (the
// DDP and FSDP1 traces of test/replay/corpus.test, recorded later, replay
// with no finding with receive buffers counted, root label and all): until
// a multi-rank run shows receive buffers ordered the way the checker sees
// them, they keep their "write" label in reports but are not known writes.
// Not a memset: cuDNN clears a buffer with a memset on a stream of its own
// that nothing the checker sees orders with the default-stream kernels
// reading it (docs/rules.md), so counting memsets would be a false report
// in every program using cuDNN's batch norm.
// Not a kernel's argument, even one its signature marks const: that makes
// it a read (launch.cpp), and a write is never inferred from a signature.
// A kernel's pointer argument gives no extent, so a kernel use counts as
// touching the bytes at the pointer (two slots of one pool tensor stay two
// buffers). Two uses of which neither is a known write (two reads, a read
// and a kernel of unknown direction) never conflict here.
#include <algorithm>

#include "checker/checker_impl.h"

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
  return u.access == Access::kWrite &&
         (u.what == UseWhat::kMemcpy || u.what == UseWhat::kAnnotated ||
          u.what == UseWhat::kHostAccess || u.what == UseWhat::kOperator);
}

}  // namespace

void Checker::Impl::check_known_writes(Allocation& a, AgentId agent, Epoch epoch,
                                       const VectorClock& clock, const UseInfo& use) {
  const Extent bytes = extent_of(use, a);
  if (config.check_use_before_ready) {
    for (const Allocation::KnownWrite& w : a.known_writes) {
      if (w.agent == agent || clock.get(w.agent) >= w.epoch || !overlap({w.begin, w.end}, bytes))
        continue;
      bool fresh = false;
      Finding& f = report(
          {FindingKind::kUseBeforeReady, use.stack, w.use.stack, use.name, current_test}, &fresh);
      if (fresh) {
        f.alloc = a.info;
        f.use = use;
        f.has_earlier = true;
        f.earlier = w.use;
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
      bool fresh = false;
      Finding& f =
          report({FindingKind::kWriteAfterRead, use.stack, earlier.stack, use.name, current_test},
                 &fresh);
      if (fresh) {
        f.alloc = a.info;
        f.use = use;
        f.has_earlier = true;
        f.earlier = earlier;
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
