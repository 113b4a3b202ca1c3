// Stream memory operations (cuStreamWriteValue32/64, cuStreamWaitValue32/64
// and their cuStreamBatchMemOp forms): a stream that waits until a word in
// memory satisfies a condition is ordered after the write that made it so,
// as a stream waiting for an event is ordered after the event's record.
// Libraries signal between streams this way (symmetric memory's signal
// pads, NVSHMEM), and without these edges what they order looks unordered.
//
// A write of a value is a record of an event of the runtime's own (64 per
// word, reused in turn); a wait acquires the first earlier write whose value satisfies the
// wait's condition. Which write a wait saw is not known: only the first
// satisfying write of one stream is certain to have landed before any later
// one of that stream, so the wait is ordered after it only when every
// satisfying write seen so far came from that stream, and when no write
// older than those kept could have satisfied it instead. Otherwise, as when
// no satisfying write was seen (the host wrote the word, or a write comes
// later), the wait orders nothing: a report the program's own ordering may
// not allow is preferred to a missed one, and such waits are rare.
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "runtime/cuda/ops.h"
#include "runtime/cuda/wait_value.h"
#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

// Tags the events of value writes apart from CUDA's event handles (user
// space addresses) and the host's synchronization objects.
constexpr EventId kValueWriteTag = 1ull << 61;
// Writes kept per word; a word's events are reused in turn, so the checker
// keeps at most this many per word.
constexpr std::uint64_t kWritesKept = 64;
// Words followed; past this many, writes to new words are not followed.
constexpr std::uint32_t kMaxWords = 1u << 20;

struct ValueWrite {
  std::uint64_t value = 0;
  StreamId stream = 0;
  EventId event = 0;
};

struct Word {
  std::uint32_t index = 0;    // names its events
  std::uint64_t written = 0;  // writes so far
  std::deque<ValueWrite> recent;
};

// The words written so far. Read and written under the session mutex, the
// lock the write's and the wait's events are fed under: a wait on another
// thread that finds a write finds its event recorded, and fork (which
// takes the session mutex first) never copies the table halfway through.
struct MemopState {
  std::unordered_map<Addr, Word> words;
  std::uint32_t next_index = 0;
};

MemopState& memop_state() {
  static auto* state = new MemopState;  // outlives the program's last callbacks
  return *state;
}

}  // namespace

void on_stream_write_value(StreamId stream, Addr addr, std::uint64_t value, bool wide) {
  if (!enabled()) return;
  Event record = sync_event(EventKind::kEventRecord, stream, 0);
  Locked locked;
  if (!locked) return;
  MemopState& state = memop_state();
  auto it = state.words.find(addr);
  if (it == state.words.end()) {
    if (state.next_index >= kMaxWords) return;
    it = state.words.emplace(addr, Word{state.next_index++, 0, {}}).first;
  }
  Word& word = it->second;
  record.event = kValueWriteTag | (std::uint64_t{word.index} << 8) | (word.written % kWritesKept);
  word.recent.push_back(ValueWrite{value & value_mask(wide), stream, record.event});
  if (word.recent.size() > kWritesKept) word.recent.pop_front();
  ++word.written;
  locked.emit(record);
}

void on_stream_wait_value(StreamId stream, Addr addr, std::uint64_t value, unsigned flags,
                          bool wide) {
  if (!enabled()) return;
  Event wait = sync_event(EventKind::kStreamWaitEvent, stream, 0);
  Locked locked;
  if (!locked) return;
  const MemopState& state = memop_state();
  auto it = state.words.find(addr);
  if (it == state.words.end()) return;
  const Word& word = it->second;
  const ValueWrite* first = nullptr;
  for (const ValueWrite& write : word.recent) {
    if (!value_satisfies(write.value, value, flags, wide)) continue;
    if (first == nullptr) {
      first = &write;
    } else if (write.stream != first->stream) {
      return;  // another stream's write may have satisfied it first
    }
  }
  if (first == nullptr) return;
  // A write older than those kept may have satisfied it.
  if (first == &word.recent.front() && word.written > word.recent.size()) return;
  wait.event = first->event;
  locked.emit(wait);
}

}  // namespace xsc::rt
