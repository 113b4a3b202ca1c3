// Device uses of pinned host memory, and whether one may still be pending.
//
// A host access of pinned memory can race only with a device use of its
// bytes that the accessing thread is not ordered after (docs/rules.md, "The
// host on pinned memory"). The PyTorch adapter sees host accesses through a
// RecordFunction callback that boxes every operator's arguments, which
// costs a host-bound training step about 1 ms (docs/performance.md), so it
// asks to have it on only while such a use may be pending:
//  - on at a device use of pinned memory (a copy, a memset, a kernel's or
//    a library call's argument), on the thread that enqueued it, before
//    its call returns: no host access after it on that thread goes unseen;
//  - off once the checker took that use and says that some host thread is
//    ordered after every device use of pinned memory so far
//    (Checker::pinned_device_uses_pending): each has then run to its end.
// `loss.item()` is the common case: PyTorch copies the scalar into a
// pinned buffer on the current stream and synchronizes that stream, so the
// callback is on for the few microseconds between the two.
// Device uses that only read pinned memory (uploads from a staging buffer,
// as FSDP2's chunk_cat makes for its metadata at every reduce-scatter and
// no synchronization settles before the step ends) race only with host
// writes: while no device use that may write pinned memory is pending
// (Checker::pinned_device_writes_pending), the adapter is asked to follow
// host writers only, which its writer kernels do without the callback.
//
// With the checker on its own thread, "took that use" is a position in the
// events fed: the latest device use of pinned memory is at position
// g_last_use, the latest that may write it at g_last_write (stored under
// the session lock as they are fed), and the checker's thread lowers what
// is followed only once it has taken that many events. The hook's calls
// are made under g_mu, in the order decided; a use stores its position
// before it takes g_mu, so either the checker's thread sees the position
// and leaves what is followed, or the use finds it lowered and raises it
// again (before its call returns, as always).
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "runtime/cuda/ops.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

std::atomic<bool> g_seen{false};  // a device use of pinned memory was fed
// Feed positions of the latest device use of pinned memory, and of the
// latest one that may write it.
std::atomic<std::uint64_t> g_last_use{0}, g_last_write{0};
std::atomic<bool> g_captured{false};  // a capture took a device use of pinned memory
std::mutex g_mu;
// What the adapter is asked to follow: the pending hook's argument (0
// nothing; 1 every host operator: a device write of pinned memory may be
// pending, which a host read or write races with; 2 host writers only: all
// that may be pending are device reads).
enum Follow : int { kFollowNone = 0, kFollowAll = 1, kFollowWriters = 2 };
int strength(int follow) {
  return follow == kFollowAll ? 2 : follow == kFollowWriters ? 1 : 0;
}
int g_follow = kFollowNone;  // under g_mu
std::atomic<bool> g_on{false};  // g_follow != kFollowNone, read without the lock
void (*g_pending_hook)(int) = nullptr;  // under g_mu
void (*g_once_hook)(void) = nullptr;    // under g_mu

// Under g_mu. An older adapter's hook (version 4 or 5) is called once, at
// the first use, and follows every operator from then on.
void follow(int level) {
  const bool first = g_follow == kFollowNone;
  g_follow = level;
  g_on.store(level != kFollowNone, std::memory_order_release);
  if (g_pending_hook != nullptr) g_pending_hook(level);
  else if (first && level != kFollowNone && g_once_hook != nullptr) g_once_hook();
}

}  // namespace

bool pinned_device_use_seen() { return g_seen.load(std::memory_order_acquire); }

bool pinned_hook_on() { return g_on.load(std::memory_order_relaxed); }

void pinned_use_fed(Locked& locked, bool may_write) {
  const std::uint64_t position = checker_feed_position();
  g_last_use.store(position, std::memory_order_release);
  if (may_write) g_last_write.store(position, std::memory_order_release);
  // Captured work reaches the checker only when its graph is launched, and
  // a launch replays it without passing here: a graph that may use pinned
  // memory keeps the hook on from now on.
  if (captures_underway(locked)) g_captured.store(true, std::memory_order_release);
}

namespace {

// verbosity=2: each time host operators are followed again, the use that
// turned them on and where it was made (the first kTurnOnsNamed times).
constexpr int kTurnOnsNamed = 16;
std::atomic<int> g_turn_ons_named{0};

void name_turn_on(const char* what, Addr addr, StackId stack) {
  if (g_turn_ons_named.fetch_add(1, std::memory_order_relaxed) >= kTurnOnsNamed) return;
  char line[200];
  std::snprintf(line, sizeof line, "host operators followed again: %s used pinned 0x%llx", what,
                static_cast<unsigned long long>(addr));
  std::string text = line;
  Session* session = session_unlocked();
  if (session != nullptr && stack != kNoStack) {
    int shown = 0;
    for (const Frame& frame : session->stacks().frames(stack)) {
      if (shown++ == 3) break;
      text += shown == 1 ? " at " : " < ";
      text += frame.function.empty() ? "?" : frame.function;
      if (!frame.file.empty()) text += " " + frame.file + ":" + std::to_string(frame.line);
    }
  }
  notice(text);
}

}  // namespace

void note_pinned_device_use(const char* what, Addr addr, bool may_write, StackId stack) {
  if (!g_seen.load(std::memory_order_acquire) && !g_seen.exchange(true) &&
      options().verbosity >= 1) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "host accesses of pinned memory followed from here: %s used pinned 0x%llx", what,
                  static_cast<unsigned long long>(addr));
    notice(line);
  }
  bool turned_on = false;
  {
    // Always under g_mu, never decided from g_on alone: the checker's thread
    // may be turning the hook off under g_mu, having read g_last_use just
    // before this use stored it; then it is turned on again here.
    std::lock_guard<std::mutex> lock(g_mu);
    const int wanted = may_write ? kFollowAll : kFollowWriters;
    if (strength(g_follow) < strength(wanted)) {
      turned_on = g_follow == kFollowNone;
      follow(wanted);
    }
  }
  if (turned_on && options().verbosity >= 2) name_turn_on(what, addr, stack);
}

void emit_reported_device_use(const Event& use, const char* what) {
  bool pinned = false;
  const bool may_write = use.access != Access::kRead;
  {
    Locked locked;
    if (!locked) return;
    AllocInfo info;
    // Pinned memory is looked up only once the process has some.
    pinned = pinned_memory_seen() && locked.lookup_allocation(use.addr, &info) &&
             info.kind == AllocKind::kPinnedHost;
    locked.emit(use);
    if (pinned) pinned_use_fed(locked, may_write);
  }
  if (pinned) note_pinned_device_use(what, use.addr, may_write, use.stack);
}

void settle_pinned_uses(const Checker& checker, std::uint64_t fed) {
  if (!g_on.load(std::memory_order_acquire) || checker.pinned_device_writes_pending()) return;
  int wanted = checker.pinned_device_uses_pending() ? kFollowWriters : kFollowNone;
  std::lock_guard<std::mutex> lock(g_mu);
  // An older adapter's hook cannot be turned off.
  if (g_follow == kFollowNone || g_pending_hook == nullptr || g_captured.load()) return;
  // A device use of pinned memory the checker has not taken yet: a write
  // keeps every operator followed, a read the writers.
  if (fed < g_last_write.load(std::memory_order_acquire)) return;
  if (fed < g_last_use.load(std::memory_order_acquire)) wanted = kFollowWriters;
  if (strength(wanted) < strength(g_follow)) follow(wanted);
}

void set_pinned_memory_hook(void (*hook)(void)) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_once_hook = hook;
  if (hook != nullptr && g_follow != kFollowNone && g_pending_hook == nullptr) hook();
}

void set_pinned_pending_hook(void (*hook)(int pending)) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_pending_hook = hook;
  if (hook != nullptr && g_follow != kFollowNone) hook(g_follow);
}

}  // namespace xsc::rt
