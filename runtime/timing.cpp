#include "runtime/timing.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace xsc::rt {
namespace {

constexpr int kParts = static_cast<int>(Part::kCount);
std::atomic<std::uint64_t> part_ns[kParts] = {};
std::atomic<std::uint64_t> part_count[kParts] = {};
std::atomic<std::uint64_t> stacks_by_how[static_cast<int>(StackHow::kCount)] = {};

// The part this thread is in (-1: none) and since when its clock runs.
struct PartClock {
  int current = -1;
  std::uint64_t since = 0;
};
constinit thread_local PartClock part_clock __attribute__((tls_model("initial-exec")));

double part_ms(Part part) {
  return static_cast<double>(part_ns[static_cast<int>(part)].load(std::memory_order_relaxed)) /
         1e6;
}

unsigned long long part_scopes(Part part) {
  return part_count[static_cast<int>(part)].load(std::memory_order_relaxed);
}
std::atomic<std::uint64_t> symbolizer_setup_ns{0};
std::atomic<std::uint64_t> frames_symbolized{0};
std::atomic<std::uint64_t> frames_looked_up{0};
std::atomic<std::uint64_t> frame_symbolize_ns{0};

double ms_between(std::uint64_t from, std::uint64_t to) {
  return from != 0 && to >= from ? static_cast<double>(to - from) / 1e6 : 0.0;
}

double ms_at(std::uint64_t t) { return static_cast<double>(t) / 1e6; }

}  // namespace

std::atomic<bool> callback_timing_on{false};

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

StartupTimes& startup_times() {
  static auto* times = new StartupTimes;  // never destroyed: read at exit
  return *times;
}

const char* part_name(Part part) {
  switch (part) {
    case Part::kCallbacks: return "callbacks";
    case Part::kLockWait: return "lock_wait";
    case Part::kChecker: return "checker";
    case Part::kNativeStacks: return "native_stacks";
    case Part::kPythonStacks: return "python_stacks";
    case Part::kAdapterEvents: return "adapter_events";
    case Part::kInterposers: return "interposers";
    case Part::kOperatorHook: return "operator_hook";
    case Part::kContextRecorder: return "context_recorder";
    case Part::kCheckerWait: return "checker_wait";
    case Part::kCheckerThread: return "checker_thread";
    case Part::kCount: break;
  }
  return "?";
}

int part_enter(Part part) {
  if (!callback_timing_on.load(std::memory_order_relaxed)) return PartScope::kOff;
  const std::uint64_t now = monotonic_ns();
  PartClock& clock = part_clock;
  const int outer = clock.current;
  if (outer >= 0) part_ns[outer].fetch_add(now - clock.since, std::memory_order_relaxed);
  clock.current = static_cast<int>(part);
  clock.since = now;
  part_count[static_cast<int>(part)].fetch_add(1, std::memory_order_relaxed);
  return outer;
}

void part_leave(int outer) {
  if (outer == PartScope::kOff) return;
  const std::uint64_t now = monotonic_ns();
  PartClock& clock = part_clock;
  if (clock.current >= 0)
    part_ns[clock.current].fetch_add(now - clock.since, std::memory_order_relaxed);
  clock.current = outer;
  clock.since = now;
}

PartTotals part_totals() {
  PartTotals totals;
  for (int i = 0; i < kParts; ++i) {
    totals.ns[i] = part_ns[i].load(std::memory_order_relaxed);
    totals.count[i] = part_count[i].load(std::memory_order_relaxed);
  }
  return totals;
}

void note_stack(StackHow how) {
  if (!callback_timing_on.load(std::memory_order_relaxed)) return;
  stacks_by_how[static_cast<int>(how)].fetch_add(1, std::memory_order_relaxed);
}


void note_symbolizer_setup_time(std::uint64_t ns) {
  symbolizer_setup_ns.fetch_add(ns, std::memory_order_relaxed);
}

void note_symbolized_frame_time(std::uint64_t ns, bool looked_up) {
  frame_symbolize_ns.fetch_add(ns, std::memory_order_relaxed);
  frames_symbolized.fetch_add(1, std::memory_order_relaxed);
  if (looked_up) frames_looked_up.fetch_add(1, std::memory_order_relaxed);
}

namespace {

// Per domain (runtime, driver) and callback id; ids past the table are
// not counted (CUPTI's ids stay below a thousand in each domain).
constexpr unsigned kCallIds = 1024;
std::atomic<std::uint64_t> calls_by_id[2][kCallIds];
std::atomic<const char*> call_names[2][kCallIds];

}  // namespace

void note_cuda_call(bool driver, unsigned cbid, const char* name) {
  if (cbid >= kCallIds) return;
  calls_by_id[driver][cbid].fetch_add(1, std::memory_order_relaxed);
  if (call_names[driver][cbid].load(std::memory_order_relaxed) == nullptr)
    call_names[driver][cbid].store(name != nullptr ? name : "?", std::memory_order_relaxed);
}

std::string timing_calls() {
  struct Seen {
    std::uint64_t count;
    const char* name;
  };
  std::vector<Seen> seen;
  for (int domain = 0; domain < 2; ++domain)
    for (unsigned id = 0; id < kCallIds; ++id)
      if (const std::uint64_t n = calls_by_id[domain][id].load(std::memory_order_relaxed))
        seen.push_back({n, call_names[domain][id].load(std::memory_order_relaxed)});
  std::sort(seen.begin(), seen.end(),
            [](const Seen& a, const Seen& b) { return a.count > b.count; });
  constexpr std::size_t kShown = 12;
  std::string text = "timing: CUDA calls seen, most first:";
  for (std::size_t i = 0; i < seen.size() && i < kShown; ++i)
    text += (i == 0 ? " " : ", ") + std::string(seen[i].name) + " " +
            std::to_string(seen[i].count);
  if (seen.empty()) text += " none";
  return text;
}

std::string timing_summary() {
  const StartupTimes& t = startup_times();
  char text[320];
  std::snprintf(text, sizeof text,
                "timing: start-up %.1f ms (CUPTI load and subscription %.1f ms), %llu callbacks "
                "handled in %.1f ms, report at exit %.1f ms",
                ms_between(t.constructor_begin, t.constructor_end),
                ms_between(t.cupti_begin, t.cupti_end),
                part_scopes(Part::kCallbacks), part_ms(Part::kCallbacks),
                ms_between(t.exit_begin, t.exit_end));
  return text;
}

std::string timing_points() {
  const StartupTimes& t = startup_times();
  char text[320];
  std::snprintf(text, sizeof text,
                "timing: CUPTI loading %.1f ms, cuptiSubscribe %.1f ms, enabling callbacks "
                "%.1f ms; CLOCK_MONOTONIC ms: runtime loaded %.3f, first callback %.3f, "
                "report at exit %.3f to %.3f",
                ms_between(t.cupti_begin, t.cupti_loaded),
                ms_between(t.cupti_loaded, t.cupti_subscribed),
                ms_between(t.cupti_subscribed, t.cupti_end), ms_at(t.constructor_begin),
                ms_at(t.first_callback.load(std::memory_order_relaxed)), ms_at(t.exit_begin),
                ms_at(t.exit_end));
  return text;
}

std::string timing_stacks() {
  auto count = [](StackHow how) {
    return static_cast<unsigned long long>(
        stacks_by_how[static_cast<int>(how)].load(std::memory_order_relaxed));
  };
  char text[320];
  std::snprintf(text, sizeof text,
                "timing: host stacks: %llu Python, %llu native by shape, %llu native unwound, "
                "in %.1f ms; %llu frees needed none; %llu adapter events handled in %.1f ms",
                count(StackHow::kPython), count(StackHow::kShapeHit), count(StackHow::kUnwind),
                part_ms(Part::kNativeStacks) + part_ms(Part::kPythonStacks),
                count(StackHow::kSkipped), part_scopes(Part::kAdapterEvents),
                part_ms(Part::kAdapterEvents));
  return text;
}

std::string timing_parts() {
  std::string text = "timing: each part's own time:";
  for (int i = 0; i < kParts; ++i) {
    char item[96];
    std::snprintf(item, sizeof item, "%s %s %.1f ms (%llu)", i == 0 ? "" : ",",
                  part_name(static_cast<Part>(i)), part_ms(static_cast<Part>(i)),
                  part_scopes(static_cast<Part>(i)));
    text += item;
  }
  return text;
}

std::string timing_symbolizer() {
  char text[200];
  std::snprintf(text, sizeof text,
                "timing: symbolizer set-up %.1f ms, %llu frames (%llu looked up) symbolized in "
                "%.1f ms",
                static_cast<double>(symbolizer_setup_ns.load(std::memory_order_relaxed)) / 1e6,
                static_cast<unsigned long long>(frames_symbolized.load(std::memory_order_relaxed)),
                static_cast<unsigned long long>(frames_looked_up.load(std::memory_order_relaxed)),
                static_cast<double>(frame_symbolize_ns.load(std::memory_order_relaxed)) / 1e6);
  return text;
}

}  // namespace xsc::rt

extern "C" __attribute__((visibility("default"))) int xsc_runtime_parts(const char** names,
                                                                     std::uint64_t* ns,
                                                                     std::uint64_t* count,
                                                                     int capacity) {
  using namespace xsc::rt;
  if (!callback_timing_on.load(std::memory_order_relaxed)) return 0;
  const PartTotals totals = part_totals();
  const int n = capacity < static_cast<int>(Part::kCount) ? capacity
                                                          : static_cast<int>(Part::kCount);
  for (int i = 0; i < n; ++i) {
    if (names != nullptr) names[i] = part_name(static_cast<Part>(i));
    if (ns != nullptr) ns[i] = totals.ns[i];
    if (count != nullptr) count[i] = totals.count[i];
  }
  return n;
}
