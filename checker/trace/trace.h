// The replayable trace: a versioned JSON Lines file holding every Event of a
// run, with the names and stacks they reference. docs/trace-format.md is the
// specification; this header is its implementation's interface.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/engine/event.h"
#include "checker/engine/stack_depot.h"

namespace xsc {

inline constexpr std::string_view kTraceFormatName = "xstream-trace";
inline constexpr std::uint64_t kTraceVersion = 6;
// The oldest version a reader still reads (version 1 lacks the host
// function and thread start kinds, version 2 the operator uses and the
// test kind, version 3 the unchecked kind, version 4 the autograd node
// frames, version 5 the host synchronization kinds, and nothing else).
inline constexpr std::uint64_t kOldestTraceVersion = 1;
// Traces of versions before this one were written by runtimes that left a
// caching block's kernel uses on its own allocation stream out of the trace
// (some version 2 writers already kept them): a reuse of a block on its
// allocation stream is then not seen, and an unordered free whose block was
// reused so replays as a latent free-before-wait.
inline constexpr std::uint64_t kOwnStreamUsesTraceVersion = 3;

struct TraceHeader {
  std::uint64_t version = kTraceVersion;
  std::int64_t pid = 0;
  int rank = -1;          // launcher rank, -1 when none
  std::string program;    // command line of the traced program
  // False when the trace may lack own-stream uses of caching blocks: a
  // version before kOwnStreamUsesTraceVersion, or a header that says
  // "own_stream_uses":false (a rewrite of such a trace). Written only when
  // false.
  bool own_stream_uses = true;
};

// The trace's spellings of the event model's enums. They are part of the
// format (docs/trace-format.md) and never change within a version.
std::string_view trace_name(EventKind kind);
std::string_view trace_name(StreamFlags flags);
std::string_view trace_name(AllocKind kind);
std::string_view trace_name(FreeKind kind);
std::string_view trace_name(Access access);
std::string_view trace_name(UseWhat what);
bool parse_trace_name(std::string_view text, EventKind* out);
bool parse_trace_name(std::string_view text, StreamFlags* out);
bool parse_trace_name(std::string_view text, AllocKind* out);
bool parse_trace_name(std::string_view text, FreeKind* out);
bool parse_trace_name(std::string_view text, Access* out);
bool parse_trace_name(std::string_view text, UseWhat* out);

// Writes a trace. Names and stacks are written the first time an event
// references them (stacks symbolized through the depot at that point), so a
// reader never meets an id it has not seen defined. Output is buffered;
// finish() flushes and closes. Not thread-safe: the session serializes.
class TraceWriter {
 public:
  TraceWriter();
  ~TraceWriter();
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  bool open(const std::string& path, const TraceHeader& header, std::string* error);
  // Changes the header's pid and rank; effective until the first write(),
  // which is when the header line is emitted.
  void set_process(std::int64_t pid, int rank);
  // The same for TraceHeader::own_stream_uses: a rewrite of a trace that may
  // lack own-stream uses says so too.
  void set_own_stream_uses(bool own_stream_uses);
  void write(const Event& event, const NameTable& names, const StackDepot& stacks);
  // Flushes and closes. False with *error when a write failed.
  bool finish(std::string* error);
  bool is_open() const { return file_ != nullptr; }
  std::uint64_t events_written() const { return events_; }

 private:
  void define_name(NameId id, const NameTable& names);
  void define_stack(StackId id, const StackDepot& stacks);
  void flush_buffer();
  void write_header();

  std::FILE* file_ = nullptr;
  std::string path_;
  std::string buffer_;
  std::vector<bool> names_defined_;
  std::vector<bool> stacks_defined_;
  TraceHeader header_;
  bool header_written_ = false;
  std::uint64_t events_ = 0;
  bool write_failed_ = false;
};

// Reads the trace at `path`: names and stacks are interned into `names` and
// `stacks` (trace ids are mapped to the session's ids), each event is passed
// to `sink` in order. On malformed input: false with a one-line
// "PATH:LINE: message" in *error; events before the bad line were delivered.
bool read_trace(const std::string& path, NameTable& names, StackDepot& stacks,
                const std::function<void(const Event&)>& sink, TraceHeader* header,
                std::string* error);

// The same, handing the events over in batches (a few hundred at most), in
// order: decoding a batch and then checking it (Session::on_events) keeps
// each side's code and data in cache. A batch ends when it is full, before
// a name or stack definition is read, and when reading ends: on malformed
// input too, so every event before the bad line is delivered before this
// returns.
using EventBatchSink = std::function<void(const Event* events, std::size_t count)>;
bool read_trace_batched(const std::string& path, NameTable& names, StackDepot& stacks,
                        const EventBatchSink& sink, TraceHeader* header, std::string* error);

}  // namespace xsc
