// OpenMP's parallel regions and barriers between a program's threads (GCC's
// libgomp): a region's threads start after what the thread that opened it
// did, the thread that opened it goes on after what every thread of the
// region did, and a barrier orders every thread's arrival before any
// leaves. libgomp keeps its threads in a pool: a thread that runs the
// second region was started for the first, so its start orders nothing of
// what came between, and no join ends a region. Without these edges a
// download one thread of a region synchronized with, read after the region
// by the thread that opened it, would look unordered, as would a buffer
// the opening thread allocated on a stream and synchronized before the
// region, used by another thread inside it.
//
// The executable's calls of GOMP_parallel (what `#pragma omp parallel`
// compiles to) are rewritten (got_patch.h): the opening thread releases the
// region's start, each of its threads acquires it before the region's body
// and releases the region's end after it, and the opening thread acquires
// the end once libgomp has joined the team. GOMP_barrier (`#pragma omp
// barrier`) releases and acquires the team's barrier of that generation;
// GOMP_critical_start/_end and their named forms (`#pragma omp critical`)
// acquire and release a lock. Each region, barrier and critical section is
// an object of its own (kRegionObjectBit), apart from locks' addresses and
// threads.
//
// Only with program_locks_followed (a program that is no Python
// interpreter, host_sync=1); a region with a team counts as the program
// starting threads (program_threads_started). Not followed: LLVM's OpenMP
// runtime (__kmpc_fork_call takes its arguments as varargs), tasks and
// their waits, the implicit barriers of worksharing loops with a dynamic
// schedule (GOMP_loop_end), and offloading.
#include <dlfcn.h>

#include <atomic>

#include "runtime/host/got_patch.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

constexpr EventId kRegionObjectBit = 1ull << 62;
constexpr EventId kCriticalObject = kRegionObjectBit | 1;  // the unnamed critical section

using ParallelFn = void (*)(void (*)(void*), void*, unsigned, unsigned);
using VoidFn = void (*)();
using NamedFn = void (*)(void**);

std::atomic<ParallelFn> real_parallel{nullptr};
std::atomic<VoidFn> real_barrier{nullptr};
std::atomic<VoidFn> real_critical_start{nullptr};
std::atomic<VoidFn> real_critical_end{nullptr};
std::atomic<NamedFn> real_critical_name_start{nullptr};
std::atomic<NamedFn> real_critical_name_end{nullptr};

// Objects are numbered; each region takes a block of them: its start, its
// end and its barriers' generations.
constexpr EventId kObjectsPerRegion = 1 << 20;
std::atomic<EventId> next_region{1};

struct Region {
  void (*body)(void*) = nullptr;
  void* data = nullptr;
  EventId first_object = 0;  // the start; +1 the end; +2.. the barriers
};

// The region this thread runs, and how many barriers it passed in it.
struct TeamMember {
  const Region* region = nullptr;
  EventId barriers = 0;
};
thread_local TeamMember member;

void run_body(void* raw) {
  const auto* region = static_cast<const Region*>(raw);
  const TeamMember outer = member;
  member = {region, 0};
  sync_acquire(region->first_object, true);
  region->body(region->data);
  sync_release(region->first_object + 1, true);
  member = outer;
}

void parallel(void (*body)(void*), void* data, unsigned threads, unsigned flags) {
  const ParallelFn real = real_parallel.load(std::memory_order_relaxed);
  // A team: the program now has threads of its own at work (the wrapper
  // is installed only where the program's locks are followed).
  program_threads_started.store(true, std::memory_order_relaxed);
  const EventId first =
      kRegionObjectBit |
      (next_region.fetch_add(1, std::memory_order_relaxed) * kObjectsPerRegion);
  Region region{body, data, first};
  sync_release(first, true);
  real(&run_body, &region, threads, flags);
  sync_acquire(first + 1, true);
}

void barrier() {
  const VoidFn real = real_barrier.load(std::memory_order_relaxed);
  if (member.region == nullptr || !following_program_locks()) return real();
  const EventId generation = member.barriers++ % (kObjectsPerRegion - 2);
  const EventId object = member.region->first_object + 2 + generation;
  sync_release(object, true);
  real();
  sync_acquire(object, true);
}

void critical_start() {
  real_critical_start.load(std::memory_order_relaxed)();
  if (following_program_locks()) sync_acquire(kCriticalObject, true);
}

void critical_end() {
  if (following_program_locks()) sync_release(kCriticalObject, true);
  real_critical_end.load(std::memory_order_relaxed)();
}

// A named section's object: the address of libgomp's slot for the name.
void critical_name_start(void** name) {
  real_critical_name_start.load(std::memory_order_relaxed)(name);
  if (following_program_locks()) sync_acquire(reinterpret_cast<EventId>(name), true);
}

void critical_name_end(void** name) {
  if (following_program_locks()) sync_release(reinterpret_cast<EventId>(name), true);
  real_critical_name_end.load(std::memory_order_relaxed)(name);
}

template <class Fn>
bool look_up(std::atomic<Fn>& slot, const char* name) {
  void* found = dlsym(RTLD_DEFAULT, name);
  slot.store(reinterpret_cast<Fn>(found), std::memory_order_relaxed);
  return found != nullptr;
}

}  // namespace

std::size_t install_openmp_hooks() {
  // Only the functions libgomp gives: a slot is rewritten only where its
  // function was found, so a wrapper never calls a null one. Looked up
  // before the walk of loaded objects, outside the loader's lock.
  struct {
    GotHook list[6];
    std::size_t count = 0;
  } hooks;
  if (look_up(real_parallel, "GOMP_parallel"))
    hooks.list[hooks.count++] = {"GOMP_parallel", reinterpret_cast<void*>(&parallel)};
  else
    return 0;  // no libgomp
  if (look_up(real_barrier, "GOMP_barrier"))
    hooks.list[hooks.count++] = {"GOMP_barrier", reinterpret_cast<void*>(&barrier)};
  if (look_up(real_critical_start, "GOMP_critical_start") &&
      look_up(real_critical_end, "GOMP_critical_end")) {
    hooks.list[hooks.count++] = {"GOMP_critical_start", reinterpret_cast<void*>(&critical_start)};
    hooks.list[hooks.count++] = {"GOMP_critical_end", reinterpret_cast<void*>(&critical_end)};
  }
  if (look_up(real_critical_name_start, "GOMP_critical_name_start") &&
      look_up(real_critical_name_end, "GOMP_critical_name_end")) {
    hooks.list[hooks.count++] = {"GOMP_critical_name_start",
                                 reinterpret_cast<void*>(&critical_name_start)};
    hooks.list[hooks.count++] = {"GOMP_critical_name_end",
                                 reinterpret_cast<void*>(&critical_name_end)};
  }
  return patch_executable_got(hooks.list, hooks.count);
}

}  // namespace xsc::rt
