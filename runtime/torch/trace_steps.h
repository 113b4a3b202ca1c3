// XSC_TORCH_TRACE=1: one stderr line per step the adapter takes (attach,
// version check, each allocator hook, the first few contexts and trace
// entries), written with write(2) so that the last line before a crash
// survives it. Off by default; meant for diagnosing a torch the adapter has
// not been tried with.
#pragma once

namespace xsc::torch_adapter {

bool tracing_steps();
// Writes "xstream-check: torch adapter: <what>[ <value>]" when tracing.
void trace_step(const char* what, unsigned long long value = 0, bool with_value = false);
// Like trace_step, for events that recur: only the first `limit` of `counter`.
void trace_first(int* counter, int limit, const char* what, unsigned long long value);

}  // namespace xsc::torch_adapter
