// What a signal handler reads from the context the kernel hands it, shared
// by the fatal-signal report (signals.cpp) and host_guard=1's fault handler
// (host_guard.cpp).
#pragma once

#include <cstdint>

namespace xsc::rt {

// The program counter of the faulting instruction (0 when the architecture
// is not known or there is no context). Async-signal-safe.
std::uint64_t faulting_pc(const void* ucontext);

}  // namespace xsc::rt
