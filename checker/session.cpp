// One checking session, shared by the live runtime and trace replay.
#include "checker/session.h"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "checker/report/builtin_suppressions.h"
#include "checker/log_path.h"
#include "checker/report/report.h"
#include "checker/report/suppressions.h"
#include "checker/report/timeline.h"
#include "checker/trace/trace.h"

namespace xsc {
namespace {

CheckerConfig checker_config(const Options& options) {
  CheckerConfig config;
  config.check_use_after_free = options.use_after_free;
  config.check_use_before_ready = options.use_before_ready;
  config.check_reuse_race = options.reuse_race;
  config.check_write_after_read = options.write_after_read;
  config.first_use_writes = options.first_use_writes;
  config.strict = options.strict;
  return config;
}

// The program's command line, for the trace header.
std::string own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw)
    if (c == '\0') c = ' ';
  return raw;
}

}  // namespace

struct Session::Impl {
  explicit Impl(Options o) : options(std::move(o)), checker(checker_config(options)) {
    if (!options.timeline.empty()) timeline = std::make_unique<TimelineRecorder>();
  }

  Options options;
  NameTable names;
  StackDepot stacks;
  Checker checker;
  Suppressions suppressions;
  bool suppressions_loaded = false;
  TraceWriter recorder;
  std::unique_ptr<TimelineRecorder> timeline;  // timeline=DIR only
  std::int64_t pid = ::getpid();
  int rank = launcher_rank();
  // set_trace_lacks_own_stream_uses(): the replayed trace may lack
  // own-stream uses. Runtimes of those versions either left every kernel
  // use of a caching block on its allocation stream out (outside graph
  // capture) or kept them all, so one such use seen shows they were kept
  // (own_uses_seen). Only a trace with caching blocks (caching_seen) can
  // miss them.
  bool lacks_own_stream_uses = false;
  bool caching_seen = false;
  bool own_uses_seen = false;

  bool own_uses_undecided() const { return lacks_own_stream_uses && !own_uses_seen; }

  // Before `e` is fed: the allocation a use names is live then.
  void note_own_uses(const Event& e) {
    if (e.kind == EventKind::kAlloc && e.alloc_kind == AllocKind::kCachingAllocator) caching_seen = true;
    if (e.kind != EventKind::kUse || e.what != UseWhat::kKernel || e.graph != 0) return;
    AllocInfo alloc;
    if (checker.lookup_allocation(e.addr, &alloc) && alloc.kind == AllocKind::kCachingAllocator &&
        alloc.stream == e.stream)
      own_uses_seen = true;
  }

  bool load_suppressions(std::string* error) {
    if (suppressions_loaded) return true;
    suppressions_loaded = true;
    if (options.builtin_suppressions &&
        !suppressions.parse(builtin_suppressions(), "builtin suppressions", error))
      return false;
    if (options.suppressions.empty()) return true;
    return suppressions.load_file(options.suppressions, error);
  }
};

Session::Session(Options options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Session::~Session() = default;

bool Session::start(std::string* error) {
  if (!impl_->load_suppressions(error)) return false;
  if (!impl_->options.record.empty() && !impl_->recorder.is_open()) {
    TraceHeader header;
    header.pid = impl_->pid;
    header.rank = impl_->rank;
    header.program = own_command_line();
    if (!impl_->recorder.open(impl_->options.record, header, error)) return false;
  }
  return true;
}

NameTable& Session::names() { return impl_->names; }
StackDepot& Session::stacks() { return impl_->stacks; }
const Options& Session::options() const { return impl_->options; }
const Checker& Session::checker() const { return impl_->checker; }

void Session::set_process(std::int64_t pid, int rank) {
  impl_->pid = pid;
  impl_->rank = rank;
  impl_->recorder.set_process(pid, rank);
}

void Session::set_trace_lacks_own_stream_uses() {
  impl_->lacks_own_stream_uses = true;
  impl_->recorder.set_own_stream_uses(false);
}

void Session::on_event(const Event& event) {
  if (impl_->own_uses_undecided()) impl_->note_own_uses(event);
  // Record first: if checking ever fails, the trace still holds the event
  // that triggered it.
  if (impl_->recorder.is_open()) impl_->recorder.write(event, impl_->names, impl_->stacks);
  if (impl_->timeline) {
    impl_->timeline->on_event(event);
    impl_->checker.on_event(event);
    impl_->timeline->note_findings(impl_->checker.findings());
    return;
  }
  impl_->checker.on_event(event);
}

void Session::on_events(const Event* events, std::size_t count) {
  // Event by event while a trace's own-stream uses are undecided: each use
  // is looked up before it is fed.
  if (impl_->recorder.is_open() || impl_->timeline || impl_->own_uses_undecided()) {
    for (std::size_t i = 0; i < count; ++i) on_event(events[i]);
    return;
  }
  impl_->checker.on_events(events, count);
}

std::size_t Session::report_findings(ReportFormat format, std::optional<NameId> test,
                                     std::size_t first, std::ostream& out) {
  Impl& s = *impl_;
  std::string error;
  if (!s.load_suppressions(&error)) out << "xstream-check: " << error << '\n';
  std::vector<Finding> shown;
  std::size_t total = 0;
  std::uint64_t suppressed = 0;
  for (const Finding& f : s.checker.findings()) {
    if (test && f.test != *test) continue;
    if (s.suppressions.suppresses(f, s.names, s.stacks)) {
      ++suppressed;
      continue;
    }
    if (total++ >= first) shown.push_back(f);
  }
  ReportContext context;
  context.names = &s.names;
  context.stacks = &s.stacks;
  context.pid = static_cast<int>(s.pid);
  context.rank = s.rank;
  context.suppressed = suppressed;
  context.advisory = false;  // the parked-block note belongs to the report at the end
  context.strict = s.options.strict;
  write_report(format, shown, context, out);
  return total;
}

std::uint64_t Session::finish(std::ostream& out, CleanText clean_text) {
  Impl& s = *impl_;
  s.checker.finish();
  s.stacks.resolve_pending();

  std::string error;
  if (!s.load_suppressions(&error)) out << "xstream-check: " << error << '\n';

  std::vector<Finding> kept;
  std::vector<std::size_t> kept_index;  // in the checker's findings()
  std::uint64_t suppressed = 0;
  for (std::size_t i = 0; i < s.checker.findings().size(); ++i) {
    const Finding& f = s.checker.findings()[i];
    if (s.suppressions.suppresses(f, s.names, s.stacks)) {
      ++suppressed;
      continue;
    }
    kept.push_back(f);
    kept_index.push_back(i);
  }

  // A suppressed latent free is left out silently: it is no finding.
  std::vector<Finding> kept_latent;
  for (const Finding& f : s.checker.latent())
    if (!s.suppressions.suppresses(f, s.names, s.stacks)) kept_latent.push_back(f);

  ReportContext context;
  context.names = &s.names;
  context.stacks = &s.stacks;
  context.pid = static_cast<int>(s.pid);
  context.rank = s.rank;
  context.suppressed = suppressed;
  context.parked = s.checker.parked_blocks();
  context.advisory = s.options.advisory;
  context.latent = &kept_latent;
  context.strict = s.options.strict;
  context.missing_own_stream_uses = s.lacks_own_stream_uses && s.caching_seen && !s.own_uses_seen;
  for (NameId what : s.checker.unchecked()) context.unchecked.emplace_back(s.names.get(what));
  if (s.timeline && !kept.empty()) {
    // Pictures are an addition to the report: a failure is one warning and
    // changes neither the report's findings nor the exit status.
    std::vector<TimelineInput> inputs;
    for (std::size_t i = 0; i < kept.size(); ++i) inputs.push_back(TimelineInput{&kept[i], kept_index[i], i + 1});
    // The ranks of one job share their options: each gets a directory.
    std::string dir = s.options.timeline;
    if (s.rank >= 0) dir += "/rank-" + std::to_string(s.rank);
    std::string warning;
    if (!write_timelines(*s.timeline, inputs, s.names, s.stacks, context.pid, dir, &context.timelines,
                         &warning))
      std::cerr << "xstream-check: warning: " << warning << '\n';
  }
  const bool advisory_due = context.advisory && context.parked.max_parked > 0;
  const bool clean = kept.empty() && suppressed == 0 && !advisory_due && s.options.verbosity < 1;
  // Every checked process (fork and exec children too) ends here: a clean
  // text report stays silent so the program's own stderr is unchanged.
  if (!clean || s.options.report != ReportFormat::kText || clean_text == CleanText::kSummaryLine)
    write_report(s.options.report, kept, context, out);

  if (s.options.verbosity >= 1 && s.options.report == ReportFormat::kText) {
    CheckerStats stats = s.checker.stats();
    out << "xstream-check: " << stats.events << " events, " << stats.streams << " streams, "
        << stats.threads << " threads, " << stats.live_allocations << " live allocations, "
        << s.stacks.size() << " stacks\n";
  }
  if (s.recorder.is_open() && !s.recorder.finish(&error)) std::cerr << "xstream-check: " << error << '\n';
  out.flush();
  return kept.size();
}

}  // namespace xsc
