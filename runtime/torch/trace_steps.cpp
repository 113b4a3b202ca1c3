#include "runtime/torch/trace_steps.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xsc::torch_adapter {

bool tracing_steps() {
  static const bool on = [] {
    const char* value = std::getenv("XSC_TORCH_TRACE");
    return value != nullptr && *value != '\0' && std::strcmp(value, "0") != 0;
  }();
  return on;
}

void trace_step(const char* what, unsigned long long value, bool with_value) {
  if (!tracing_steps()) return;
  char line[256];
  const int n = with_value
                    ? std::snprintf(line, sizeof line, "xstream-check: torch adapter: %s %#llx\n",
                                    what, value)
                    : std::snprintf(line, sizeof line, "xstream-check: torch adapter: %s\n", what);
  if (n > 0) (void)!write(STDERR_FILENO, line, static_cast<std::size_t>(n) < sizeof line ? n : sizeof line - 1);
}

void trace_first(int* counter, int limit, const char* what, unsigned long long value) {
  if (!tracing_steps()) return;
  // Racy across threads on purpose: an extra line or two is harmless.
  if (*counter >= limit) return;
  ++*counter;
  trace_step(what, value, true);
}

}  // namespace xsc::torch_adapter
