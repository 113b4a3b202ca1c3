#include "runtime/timing.h"

#include <time.h>

#include <cstdio>

namespace xsc::rt {
namespace {

std::atomic<std::uint64_t> callbacks_timed{0};
std::atomic<std::uint64_t> callback_ns{0};
std::atomic<std::uint64_t> stacks_by_how[static_cast<int>(StackHow::kCount)] = {};
std::atomic<std::uint64_t> stack_ns{0};
std::atomic<std::uint64_t> adapter_events{0};
std::atomic<std::uint64_t> adapter_event_ns{0};
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

void note_callback_time(std::uint64_t ns) {
  callback_ns.fetch_add(ns, std::memory_order_relaxed);
  callbacks_timed.fetch_add(1, std::memory_order_relaxed);
}

void note_stack(StackHow how) {
  if (!callback_timing_on.load(std::memory_order_relaxed)) return;
  stacks_by_how[static_cast<int>(how)].fetch_add(1, std::memory_order_relaxed);
}

void note_stack_time(std::uint64_t ns) { stack_ns.fetch_add(ns, std::memory_order_relaxed); }

void note_adapter_event_time(std::uint64_t ns) {
  adapter_event_ns.fetch_add(ns, std::memory_order_relaxed);
  adapter_events.fetch_add(1, std::memory_order_relaxed);
}

void note_symbolizer_setup_time(std::uint64_t ns) {
  symbolizer_setup_ns.fetch_add(ns, std::memory_order_relaxed);
}

void note_symbolized_frame_time(std::uint64_t ns, bool looked_up) {
  frame_symbolize_ns.fetch_add(ns, std::memory_order_relaxed);
  frames_symbolized.fetch_add(1, std::memory_order_relaxed);
  if (looked_up) frames_looked_up.fetch_add(1, std::memory_order_relaxed);
}

std::string timing_summary() {
  const StartupTimes& t = startup_times();
  char text[320];
  std::snprintf(text, sizeof text,
                "timing: start-up %.1f ms (CUPTI load and subscription %.1f ms), %llu callbacks "
                "handled in %.1f ms, report at exit %.1f ms",
                ms_between(t.constructor_begin, t.constructor_end),
                ms_between(t.cupti_begin, t.cupti_end),
                static_cast<unsigned long long>(callbacks_timed.load(std::memory_order_relaxed)),
                static_cast<double>(callback_ns.load(std::memory_order_relaxed)) / 1e6,
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
                static_cast<double>(stack_ns.load(std::memory_order_relaxed)) / 1e6,
                count(StackHow::kSkipped),
                static_cast<unsigned long long>(adapter_events.load(std::memory_order_relaxed)),
                static_cast<double>(adapter_event_ns.load(std::memory_order_relaxed)) / 1e6);
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
