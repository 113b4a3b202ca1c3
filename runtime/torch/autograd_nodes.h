// Stacks for the backward pass: the autograd node and its forward line.
//
// The autograd engine runs a node's backward on its own threads, where no
// Python frame is: a kernel launch, allocation or free there would get a
// stack of libtorch's C++ functions. PyTorch knows which node a thread
// evaluates (torch::autograd::get_current_node) and gives every node a
// sequence number, from a per-thread counter, when the forward operator
// creates it, before the operator's kernels allocate its outputs.
//
// So each Python stack the adapter captures on a forward thread (for an
// allocation, a free or a launch: paid already) is remembered with that
// thread's sequence counter, once per counter value: the first capture
// after node s was created, inside the operator that created it, has
// counter s + 1. A capture with no Python frame on a thread that evaluates
// node s takes the remembered stack of counter s + 1 of the node's forward
// thread, and the runtime makes [node, forward frames] of it
// (backward_stack in the host API). Nothing is done per node or per
// operator: a forward capture costs one compare when the counter did not
// move, and an append to a ring of the last kRemembered values when it did.
//
// A forward operator that creates a node but allocates nothing (an in-place
// one) leaves no capture at its counter: the next capture before the next
// node was made by another line (a grad-less operator's allocation), and
// its backward would be named with that line. Such a node whose counter no
// capture matched gets no line: the launch keeps its native stack.
#pragma once

#include <cstdint>

#include "xstream_check/host_api.h"

namespace xsc::torch_adapter {

// Called once at attach; without backward_stack in the host API (older
// runtimes) the rest does nothing.
void init_autograd_nodes(const xsc_host_api* api);

// A capture on this thread produced Python stack `id` (non-zero).
void note_forward_stack(std::uint32_t id);

// For a capture that found no Python frame: the node this thread
// evaluates with its forward stack, or 0.
std::uint32_t backward_stack();

}  // namespace xsc::torch_adapter
