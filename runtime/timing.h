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

// The runtime's parts are timed only when asked (verbosity=2 or
// XSC_PROFILE=parts, set once at subscription): two clock reads per scope
// are a measurable part of a launch.
extern std::atomic<bool> callback_timing_on;

// Where the runtime's host time goes. Each part's time is its own: while a
// part runs inside another on the same thread (the checker inside a
// callback, a stack inside an adapter event), the outer one's clock stops.
// Parts the PyTorch adapter runs are timed through the host API
// (part_enter/part_leave), so they nest the same way.
enum class Part : int {
  kCallbacks,        // CUPTI callbacks handled (argument scan, bookkeeping)
  kLockWait,         // waiting for the session mutex
  kChecker,          // events fed to the session (checks, trace, graphs)
  kNativeStacks,     // native stacks captured (unwind, shape cache)
  kPythonStacks,     // Python stacks at launches (the adapter's hook)
  kAdapterEvents,    // events reported through the host API (allocator, uses)
  kInterposers,      // cuBLAS, cuBLASLt, cuDNN, NCCL: reading a call's operands
  kOperatorHook,     // the PyTorch operator-write hook's own work
  kContextRecorder,  // the PyTorch allocator's context recorder (its stacks)
  kCheckerWait,      // waiting for the checker's thread (catching up, a full backlog)
  kCheckerThread,    // the checker's own thread feeding the session: not the program's time
  kCount,
};
const char* part_name(Part part);

// Enters `part` on this thread (pausing the part it is in) and returns
// the part to go back to; part_leave ends `part` and resumes `outer`.
// Both do nothing but return when timing is off.
int part_enter(Part part);
void part_leave(int outer);

// Times its scope as `part` when timing is on.
class PartScope {
 public:
  explicit PartScope(Part part)
      : outer_(callback_timing_on.load(std::memory_order_relaxed) ? part_enter(part) : kOff) {}
  ~PartScope() {
    if (outer_ != kOff) part_leave(outer_);
  }
  PartScope(const PartScope&) = delete;
  PartScope& operator=(const PartScope&) = delete;
  static constexpr int kOff = -2;

 private:
  int outer_;
};

// Totals so far, per part: nanoseconds and scopes entered.
struct PartTotals {
  std::uint64_t ns[static_cast<int>(Part::kCount)] = {};
  std::uint64_t count[static_cast<int>(Part::kCount)] = {};
};
PartTotals part_totals();

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
// The report's symbolization: setting the symbolizer up (loading elfutils,
// reading the process's modules) and turning each frame into a name.
void note_symbolizer_setup_time(std::uint64_t ns);
// `looked_up`: false when the frame's pc was symbolized before.
void note_symbolized_frame_time(std::uint64_t ns, bool looked_up);

// The lines printed at exit with verbosity=2: the costs, then the CUPTI
// split and the points in time, then the host stacks and adapter events,
// then each part's own time, then the CUDA calls the callbacks came for,
// then the report's symbolization.
std::string timing_summary();
std::string timing_points();
std::string timing_stacks();
std::string timing_parts();
std::string timing_symbolizer();
// The CUDA calls whose callbacks came most often (verbosity=2 and
// XSC_PROFILE=parts count them: where a program's CUPTI cost comes from).
std::string timing_calls();

// One call seen at its entry callback: `driver` for the driver API's
// domain, `name` CUPTI's function name (a static string).
void note_cuda_call(bool driver, unsigned cbid, const char* name);

}  // namespace xsc::rt
