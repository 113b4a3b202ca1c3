// The runtime's own costs (verbosity=2): loading CUPTI, the callbacks it
// handles, the host stacks it takes, the events adapters report, the report
// at exit, and when each happened. Points are on CLOCK_MONOTONIC, the clock
// a benchmark harness in the parent process reads as well, so it can place
// them on the timeline of the process it started and tell the runtime's
// time from CUPTI's work inside the driver and from process start and
// teardown.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace xsc::rt {

std::uint64_t monotonic_ns();

// Nanoseconds on CLOCK_MONOTONIC; 0 where the step did not happen.
struct StartupTimes {
  std::uint64_t constructor_begin = 0;
  std::uint64_t constructor_end = 0;
  std::uint64_t cupti_begin = 0;       // subscription started
  std::uint64_t cupti_loaded = 0;      // libcupti loaded
  std::uint64_t cupti_subscribed = 0;  // cuptiSubscribe returned
  std::uint64_t cupti_end = 0;         // subscription done (or given up)
  std::atomic<std::uint64_t> first_callback{0};
  std::uint64_t exit_begin = 0;
  std::uint64_t exit_end = 0;
};
StartupTimes& startup_times();

// Callback handling is timed only when asked (set once, at subscription):
// two clock reads per callback are a measurable part of a launch.
extern std::atomic<bool> callback_timing_on;
void note_callback_time(std::uint64_t ns);

// Adds the time of its scope to `note` when callback timing is on: one
// clock read on each side, none otherwise.
class TimedScope {
 public:
  explicit TimedScope(void (*note)(std::uint64_t))
      : note_(note),
        begin_(callback_timing_on.load(std::memory_order_relaxed) ? monotonic_ns() : 0) {}
  ~TimedScope() {
    if (begin_ != 0) note_(monotonic_ns() - begin_);
  }
  TimedScope(const TimedScope&) = delete;
  TimedScope& operator=(const TimedScope&) = delete;

 private:
  void (*note_)(std::uint64_t);
  std::uint64_t begin_;
};

// Host stacks (counted only with callback timing on): captures by how they
// were had, and the time spent in them.
enum class StackHow : int {
  kPython,     // the PyTorch adapter's Python stack
  kShapeHit,   // a native stack this thread captured before, by its shape
  kUnwind,     // a native stack unwound
  kSkipped,    // a free that can never be reported: no stack taken
  kCount,
};
void note_stack(StackHow how);
void note_stack_time(std::uint64_t ns);
// Events reported through the host API (the PyTorch allocator adapter's).
void note_adapter_event_time(std::uint64_t ns);
// The report's symbolization: setting the symbolizer up (loading elfutils,
// reading the process's modules) and turning each frame into a name.
void note_symbolizer_setup_time(std::uint64_t ns);
// `looked_up`: false when the frame's pc was symbolized before.
void note_symbolized_frame_time(std::uint64_t ns, bool looked_up);

// The lines printed at exit with verbosity=2: the costs, then the CUPTI
// split and the points in time, then the host stacks and adapter events,
// then the report's symbolization.
std::string timing_summary();
std::string timing_points();
std::string timing_stacks();
std::string timing_symbolizer();

}  // namespace xsc::rt
