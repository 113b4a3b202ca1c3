// Host reads of pinned tensors that are not aten operators: Tensor.numpy,
// Tensor.__array__ (np.asarray), Tensor.tolist, Tensor.__dlpack__
// (np.from_dlpack) and torch.from_numpy hand the host a view of the bytes,
// or read them, without going through the dispatcher (Tensor.item does go
// through it: aten::item, which operator_access.cpp follows).
//
// Once torch.cuda is initialized, those five are wrapped in Python (the
// wrappers call the original with the same arguments and return its result
// or raise its exception): a wrapper tells the adapter when the call starts
// and, once it returned, which bytes its tensor holds (all of a contiguous
// tensor, else its first element). The runtime feeds a host read of the
// part inside pinned allocations, at the caller's Python line, named after
// the call ("Tensor.numpy"). Before the process has pinned memory a wrapper
// costs one call into the adapter, which answers at once; the aten
// operators a wrapped call makes inside (tolist's resolve_conj) are left to
// the wrapper, like the pieces of an operator.
#pragma once

#include <stdint.h>

#include "runtime/torch/python_stacks.h"
#include "xstream_check/host_api.h"

namespace xsc::torch_adapter {

// Called once at attach.
void init_host_views(const xsc_host_api* api);

// True while this thread is inside a wrapped call (operator_access.cpp then
// leaves host operators to it).
bool in_host_view();

}  // namespace xsc::torch_adapter

// Exported for the wrappers (ctypes.PyDLL, so the GIL stays held) and for
// the queued call after torch.cuda's initialization (cuda_init_hook.cpp).
extern "C" {
// 1 when the process has pinned memory: the call is followed, and
// xsc_torch_view_leave must follow it. 0: nothing to do.
int xsc_torch_view_enter(void);
// The wrapped call returned (size 0: raised, or no host bytes); `what`
// indexes the wrapped names.
void xsc_torch_view_leave(uint64_t addr, uint64_t size, int what);
// Wraps the five calls, once, when the runtime wants host accesses.
void xsc_torch_install_host_views(void);
}
