// A checking session: the checker, its name table and stack depot, an
// optional trace recorder and the report at the end. The live runtime and
// trace replay both drive one Session, so both report the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "checker/engine/checker.h"
#include "checker/engine/event.h"
#include "checker/options.h"
#include "checker/engine/stack_depot.h"

namespace xsc {

class Session {
 public:
  explicit Session(Options options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts recording to options.record when it is set. False (with a
  // one-line message in *error) when the file cannot be written.
  bool start(std::string* error);

  NameTable& names();
  StackDepot& stacks();
  const Options& options() const;

  // Feeds the checker and the recorder. Not thread-safe: callers serialize.
  void on_event(const Event& event);
  // The same for events[0, count) in order (Checker::on_events).
  void on_events(const Event* events, std::size_t count);

  // What a text report says when there is nothing to tell: no finding, none
  // suppressed, no parked-block advisory and verbosity 0. A checked process
  // stays silent then, like ThreadSanitizer; the offline tool prints its
  // one summary line, since that line is the tool's answer.
  enum class CleanText : unsigned char { kSilent, kSummaryLine };

  // Ends the session: finishes the checker, writes the report (in the
  // configured format, suppressions applied) to `out`, flushes the trace.
  // JSON and SARIF reports are always written: a machine reader needs the
  // summary object even when it says zero. Returns the number of findings
  // reported after suppressions.
  std::uint64_t finish(std::ostream& out, CleanText clean_text = CleanText::kSilent);

  // The findings made so far that are attributed to `test` (Finding::test;
  // nullopt: every finding), from the `first`-th of them on, reported in
  // `format` with suppressions applied, without ending the session: the
  // runtime's queries while a test session runs. The checker has not
  // finished, so a late wait still to come is not named yet and latent frees
  // are not listed. Returns how many findings are attributed to `test` in
  // all; the report's closing line counts those it shows.
  std::size_t report_findings(ReportFormat format, std::optional<NameId> test, std::size_t first,
                              std::ostream& out);

  const Checker& checker() const;

  // The process the report and the recorded trace speak for. Defaults to
  // this process (getpid(), launcher rank); replay sets the traced one's.
  void set_process(std::int64_t pid, int rank);

  // Replay of a trace that may lack own-stream uses of caching blocks
  // (TraceHeader::own_stream_uses false: written before version 3). When it
  // has caching blocks and no kernel use of one on its allocation stream,
  // the report says so once (ReportContext::missing_own_stream_uses). A
  // trace recorded from it carries the header's flag on.
  void set_trace_lacks_own_stream_uses();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xsc
