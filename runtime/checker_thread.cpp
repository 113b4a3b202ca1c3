// The checker's thread (checker_thread=1): the session is fed from a thread
// of the runtime's own, so that a program thread making an event pays for
// handing it over (a copy into a batch under the session mutex), not for
// checking it.
//
// Order is kept: producers append under the session mutex, batches go to
// the checker's thread whole and in order, and it feeds them in that order,
// so the checker sees exactly the sequence it would have seen fed inline.
// What the program's threads ask while the checker lags behind is answered
// by the AllocationView (checker/engine/allocation_view.h), which follows
// the same events at the moment they are fed; anything that needs the
// checker itself (the host guard's orderings, a test's findings, the
// report) first waits for it to catch up (checker_catch_up).
//
// The thread is started at the first event, never makes a CUDA call, never
// takes the GIL and is never observed (its ThreadState guard is up). Across
// fork it is quiesced first: the child, which has no such thread, gets a
// session the checker is not halfway through, and starts its own thread on
// its first event.
#include <pthread.h>

#include <condition_variable>
#include <mutex>
#include <vector>

#include "runtime/cuda/launch_uses.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

namespace xsc::rt {
namespace {

// Events handed over at once: enough that the checker's thread wakes a
// few times per millisecond of a busy program, not per event.
constexpr std::size_t kBatch = 256;
// Events the checker may lag behind before producers wait for it, which
// bounds the memory the backlog takes (64-byte events: 4 MiB).
constexpr std::uint64_t kMaxBacklog = 1 << 16;

// Events handed over together, in order. A launch whose words were handed
// over unlooked (checker_feed_launch) is one event, its use at address 0,
// standing for the uses its words make; the words lie apart, 9 bytes each.
struct Batch {
  struct Launch {
    std::size_t event = 0;       // in `events`
    std::size_t first_word = 0;  // in `words` and `reads`
    std::size_t count = 0;
  };
  std::vector<Event> events;
  std::vector<Launch> launches;
  std::vector<std::uint64_t> words;
  std::vector<std::uint8_t> reads;  // 1: the word came through a read-only parameter

  bool empty() const { return events.empty(); }
  void clear() {
    events.clear();
    launches.clear();
    words.clear();
    reads.clear();
  }
  // Moves `other`'s events after these; `other` ends up empty.
  void take(Batch& other) {
    if (empty()) {
      std::swap(*this, other);  // `other` gets this one's storage
      return;
    }
    for (Launch launch : other.launches) {
      launch.event += events.size();
      launch.first_word += words.size();
      launches.push_back(launch);
    }
    events.insert(events.end(), other.events.begin(), other.events.end());
    words.insert(words.end(), other.words.begin(), other.words.end());
    reads.insert(reads.end(), other.reads.begin(), other.reads.end());
    other.clear();
  }
};

struct Feed {
  // Producers' side, under the session mutex.
  Batch filling;
  bool threaded = false;  // a checker's thread runs in this process
  // Events are fed inline in this process: checker_thread=0, or the
  // thread could not be started. Decided at the first event.
  bool inline_only = false;
  Session* session = nullptr;

  // Shared with the checker's thread, under `mu`.
  std::mutex mu;
  std::condition_variable work;  // to the checker's thread: a batch is in
  std::condition_variable done;  // to producers: the checker took a batch
  Batch inbox;
  std::uint64_t handed = 0;  // events handed over
  std::uint64_t fed = 0;     // events the session has taken
};

// Replaced (and the old one leaked) in a forked child, whose copy of the
// mutex and condition variables may name a thread it does not have.
Feed* feed_instance = new Feed;
Feed& feed_state() { return *feed_instance; }

// The uses of a launch whose words were handed over unlooked, as the
// launching thread would have made them: the checker's allocations, fed up
// to this point, are the ones that thread's view had when it handed them.
void feed_launch(Session& session, const Batch& batch, const Batch::Launch& launch,
                 std::vector<Event>* uses) {
  DistinctAllocations found;
  for (std::size_t i = launch.first_word; i < launch.first_word + launch.count; ++i) {
    AllocInfo alloc;
    if (session.checker().lookup_allocation(batch.words[i], &alloc))
      found.add(alloc.addr, batch.words[i], batch.reads[i] != 0);
  }
  uses->clear();
  for_each_launch_use(found, batch.events[launch.event],
                      [&](const Event& use) { uses->push_back(use); });
  session.on_events(uses->data(), uses->size());
}

// Feeds a batch in order, each handed-over launch as its uses.
void feed_batch(Session& session, const Batch& batch, std::vector<Event>* uses) {
  std::size_t at = 0;
  for (const Batch::Launch& launch : batch.launches) {
    session.on_events(batch.events.data() + at, launch.event - at);
    feed_launch(session, batch, launch, uses);
    at = launch.event + 1;
  }
  session.on_events(batch.events.data() + at, batch.events.size() - at);
}

void* run_checker(void* raw) {
  Feed& feed = *static_cast<Feed*>(raw);
  // Nothing this thread does is the program's: a CUDA call made under the
  // session (the trace writer's, a symbolizer's) is not an event.
  ReentrancyGuard guard;
  Batch taking;
  std::vector<Event> uses;
  std::unique_lock<std::mutex> lock(feed.mu);
  for (;;) {
    feed.work.wait(lock, [&] { return !feed.inbox.empty(); });
    std::swap(taking, feed.inbox);
    lock.unlock();
    const std::uint64_t n = taking.events.size();
    {
      const PartScope part(Part::kCheckerThread);
      feed_batch(*feed.session, taking, &uses);
      // Before the batch counts as taken: a program thread that waits for
      // the checker may read it once it does. `fed` is written by this
      // thread alone.
      settle_pinned_uses(feed.session->checker(), feed.fed + n);
    }
    taking.clear();
    lock.lock();
    feed.fed += n;
    feed.done.notify_all();
  }
  return nullptr;
}

void fork_prepare();
void fork_parent();
void fork_child();

// Under the session mutex: the checker's thread for this process, started
// on the first event. False when events must be fed inline.
bool ensure_thread(Feed& feed, Session& session) {
  if (feed.threaded) return true;
  if (feed.inline_only) return false;
  if (!options().checker_thread) {
    feed.inline_only = true;
    return false;
  }
  feed.session = &session;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t thread;
  // The interposed pthread_create passes this straight on: the session
  // mutex is held, so it feeds no thread-start edge.
  const int rc = pthread_create(&thread, &attr, run_checker, &feed);
  pthread_attr_destroy(&attr);
  if (rc != 0) {
    feed.inline_only = true;
    notice("cannot start the checker's thread; events are checked on the program's threads");
    return false;
  }
  pthread_setname_np(thread, "xsc-checker");
  static std::once_flag at_fork;
  std::call_once(at_fork, [] { pthread_atfork(fork_prepare, fork_parent, fork_child); });
  feed.threaded = true;
  return true;
}

// Under the session mutex: hands the filled batch to the checker's thread.
void hand_off(Feed& feed) {
  if (feed.filling.empty()) return;
  std::unique_lock<std::mutex> lock(feed.mu);
  if (feed.handed - feed.fed >= kMaxBacklog) {
    const PartScope wait(Part::kCheckerWait);
    feed.done.wait(lock, [&] { return feed.handed - feed.fed < kMaxBacklog / 2; });
  }
  feed.handed += feed.filling.events.size();
  feed.inbox.take(feed.filling);
  lock.unlock();
  feed.work.notify_one();
}

void catch_up(Feed& feed) {
  if (!feed.threaded) return;
  hand_off(feed);
  std::unique_lock<std::mutex> lock(feed.mu);
  if (feed.fed == feed.handed) return;
  const PartScope wait(Part::kCheckerWait);
  feed.done.wait(lock, [&] { return feed.fed == feed.handed; });
}

// fork(): the forking thread takes the session mutex and waits for the
// checker to go idle, so that no event is half fed when the address space
// is copied.
void fork_prepare() {
  lock_session_for_fork();
  catch_up(feed_state());
}

void fork_parent() { unlock_session_after_fork(); }

void fork_child() {
  Feed* old = feed_instance;
  Feed* fresh = new Feed;
  fresh->inline_only = old->inline_only;
  fresh->session = old->session;
  fresh->filling.events.reserve(kBatch);
  feed_instance = fresh;  // the old one stays allocated: its mutex may look held
  unlock_session_after_fork();
}

}  // namespace

bool checker_feed(Session& session, const Event& event) {
  Feed& feed = feed_state();
  if (!ensure_thread(feed, session)) {
    session.on_event(event);
    if (Checker::settles_pinned_uses(event.kind))
      settle_pinned_uses(session.checker(), ~std::uint64_t{0});
    return false;
  }
  feed.filling.events.push_back(event);
  if (feed.filling.events.size() >= kBatch ||
      (Checker::settles_pinned_uses(event.kind) && pinned_hook_on()))
    hand_off(feed);
  return true;
}

void checker_feed_launch(const Event& bare, const std::uint64_t* words, const bool* reads,
                         std::size_t count) {
  Batch& filling = feed_state().filling;
  filling.launches.push_back(Batch::Launch{filling.events.size(), filling.words.size(), count});
  filling.events.push_back(bare);
  filling.words.insert(filling.words.end(), words, words + count);
  filling.reads.insert(filling.reads.end(), reads, reads + count);
  if (filling.events.size() >= kBatch) hand_off(feed_state());
}

std::uint64_t checker_feed_position() {
  const Feed& feed = feed_state();
  return feed.threaded ? feed.handed + feed.filling.events.size() : 0;
}

bool checker_thread_running() { return feed_state().threaded; }

void checker_catch_up() { catch_up(feed_state()); }

}  // namespace xsc::rt
