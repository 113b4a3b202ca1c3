// The human-readable report, laid out like ThreadSanitizer's.
#include <cinttypes>
#include <cstdio>

#include "checker/report/report.h"

namespace xsc {
namespace {

std::string thread_name(ThreadId t) { return "T" + std::to_string(t); }

void print_stack(std::ostream& out, const StackDepot& stacks, StackId id) {
  std::vector<Frame> frames = stacks.frames(id);
  if (frames.empty()) {
    out << "    <no stack recorded>\n";
    return;
  }
  const std::vector<std::string_view> roles = frame_roles(frames);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (roles[i] == kOwnFrameRole) {
      // xstream-check's own frames (an interposed library call's wrapper)
      // are out of the way: one line per run of them, naming the outermost,
      // the entry point the program called. JSON keeps every frame.
      std::size_t last = i;
      while (last + 1 < frames.size() && roles[last + 1] == kOwnFrameRole) ++last;
      out << "    #" << i;
      if (last > i) out << "-#" << last;
      out << " [" << kOwnFrameRole << "] "
          << (frames[last].function.empty() ? "<unknown>" : frames[last].function);
      if (last > i) out << " (" << last - i + 1 << " frames)";
      out << '\n';
      i = last;
      continue;
    }
    out << "    #" << i << ' ' << frame_text(frames[i]);
    const std::string_view role = roles[i];
    if (!role.empty()) out << " [" << role << ']';
    out << '\n';
  }
}

std::string access_suffix(Access access) {
  std::string_view word = access_word(access);
  return word.empty() ? std::string() : " (" + std::string(word) + ")";
}

// " of 0x...100000 (1048576 bytes at offset 0x100000)" when the use went
// through an interior pointer or covered part of the block; "" otherwise.
std::string interior_use(const Finding& f) {
  bool whole = f.use.addr == f.alloc.addr && (f.use.size == 0 || f.use.size == f.alloc.size);
  if (whole) return "";
  std::string text = " of " + hex(f.use.addr) + " (";
  if (f.use.size != 0) text += std::to_string(f.use.size) + " bytes ";
  return text + "at offset " + hex(f.use.addr - f.alloc.addr) + ")";
}

std::uint64_t use_bytes(const Finding& f) { return f.use.size != 0 ? f.use.size : f.alloc.size; }

void print_alloc(std::ostream& out, const Finding& f, const StackDepot& stacks) {
  out << "  Allocated " << f.alloc.size << " bytes ";
  if (f.alloc.kind == AllocKind::kPinnedHost)
    out << "of pinned host memory";
  else
    out << "on " << describe_stream(f.alloc.stream);
  out << " by thread " << thread_name(f.alloc.thread) << ":\n";
  print_stack(out, stacks, f.alloc.stack);
}

std::string free_detail(const Finding& f) {
  std::string text(free_kind_word(f.free.kind));
  if (f.free.deferred) text += ", deferred by record_stream";
  if (f.free.kind == FreeKind::kCachingAllocator || f.free.stream != f.alloc.stream)
    text += "; allocation " + describe_stream(f.alloc.stream);
  return text;
}

// The reallocation of a finding's memory, when there was one.
void print_reallocation(std::ostream& out, const Reuse& r, const StackDepot& stacks) {
  if (!r.has_alloc) return;
  out << "  The memory was allocated again: " << r.alloc.size << " bytes at " << hex(r.alloc.addr)
      << " on " << describe_stream(r.alloc.stream) << " by thread " << thread_name(r.alloc.thread)
      << " (" << alloc_kind_word(r.alloc.kind) << "):\n";
  print_stack(out, stacks, r.alloc.stack);
}

// The reallocation and the racing use of a finding that has them.
void print_reuse(std::ostream& out, const Finding& f, const NameTable& names,
                 const StackDepot& stacks, std::string_view earlier) {
  const Reuse& r = f.reuse;
  print_reallocation(out, r, stacks);
  out << "  and used on " << describe_stream(r.use.stream) << " by " << describe_use(r.use, names)
      << access_suffix(r.use.access) << " by thread " << thread_name(r.use.thread) << " while "
      << earlier << " may still run:\n";
  print_stack(out, stacks, r.use.stack);
}

void print_finding(std::ostream& out, const Finding& f, const ReportContext& ctx) {
  const NameTable& names = *ctx.names;
  const StackDepot& stacks = *ctx.stacks;
  out << "==================\n";
  out << "WARNING: xstream-check: " << headline(f.kind) << " (pid=" << ctx.pid << ")\n";
  if (f.test != kNoName) out << "  test: " << names.get(f.test) << '\n';
  std::string use_text = describe_use(f.use, names);
  switch (f.kind) {
    case FindingKind::kUnorderedFree:
      out << "  Free of " << hex(f.alloc.addr) << " (" << f.alloc.size << " bytes) on "
          << describe_stream(f.free.stream) << " by thread " << thread_name(f.free.thread) << " ("
          << free_detail(f) << "):\n";
      print_stack(out, stacks, f.free.stack);
      out << "  is not ordered after the last use" << interior_use(f) << " on " << describe_stream(f.use.stream) << " by "
          << use_text << access_suffix(f.use.access) << " by thread " << thread_name(f.use.thread)
          << ":\n";
      print_stack(out, stacks, f.use.stack);
      print_alloc(out, f, stacks);
      if (f.has_reuse) print_reuse(out, f, names, stacks, "that use");
      if (f.latent)
        out << "  note: this run never used the memory again while that use could still run "
               "(a latent free-before-wait, reported under strict)\n";
      if (f.has_late_wait) {
        out << "  note: the wait that would have ordered this use came after the free; move it "
               "before the free:\n";
        print_stack(out, stacks, f.late_wait.stack);
      }
      break;
    case FindingKind::kUseAfterFree:
      out << "  Use of " << hex(f.use.addr) << " (" << use_bytes(f) << " bytes) on "
          << describe_stream(f.use.stream) << " by " << use_text << access_suffix(f.use.access)
          << " by thread " << thread_name(f.use.thread) << ":\n";
      print_stack(out, stacks, f.use.stack);
      out << "  after the buffer " << hex(f.alloc.addr) << " (" << f.alloc.size
          << " bytes) was freed on " << describe_stream(f.free.stream) << " by thread "
          << thread_name(f.free.thread) << " (" << free_detail(f) << "):\n";
      print_stack(out, stacks, f.free.stack);
      print_alloc(out, f, stacks);
      break;
    case FindingKind::kWriteAfterRead:
    case FindingKind::kUseBeforeReady:
      if (f.use.what == UseWhat::kHostAccess) {
        // The host's own access: no stream, the thread and its stack.
        out << "  Host " << (f.use.access == Access::kWrite ? "write" : "read") << " of "
            << hex(f.use.addr) << " (" << use_bytes(f) << " bytes)";
        if (!names.get(f.use.name).empty()) out << " by \"" << names.get(f.use.name) << '"';
        out << " by thread " << thread_name(f.use.thread) << ":\n";
      } else {
        out << "  " << (f.kind == FindingKind::kWriteAfterRead ? "Write" : "Use") << " of "
            << hex(f.use.addr) << " (" << use_bytes(f) << " bytes) on "
            << describe_stream(f.use.stream) << " by " << use_text << access_suffix(f.use.access)
            << " by thread " << thread_name(f.use.thread) << ":\n";
      }
      print_stack(out, stacks, f.use.stack);
      if (f.has_earlier) {
        if (f.earlier_first_use) {
          // No known write: the new block's first use, which fills it.
          out << "  is not ordered after the first use of the new block " << hex(f.alloc.addr)
              << " on " << describe_stream(f.earlier.stream) << ", its allocation stream, by "
              << describe_use(f.earlier, names) << " by thread "
              << thread_name(f.earlier.thread) << ", the work that fills it:\n";
        } else {
          out << "  is not ordered after the "
              << (f.kind == FindingKind::kUseBeforeReady ? "write" : "earlier use") << " of "
              << hex(f.earlier.addr);
          if (f.earlier.size != 0) out << " (" << f.earlier.size << " bytes)";
          out << " on " << describe_stream(f.earlier.stream) << " by "
              << describe_use(f.earlier, names) << access_suffix(f.earlier.access)
              << " by thread " << thread_name(f.earlier.thread) << ":\n";
        }
        print_stack(out, stacks, f.earlier.stack);
        print_alloc(out, f, stacks);
        if (f.kind == FindingKind::kUseBeforeReady && f.earlier.what == UseWhat::kMemcpy &&
            f.earlier.synchronous && f.earlier.pageable && f.earlier.access == Access::kWrite)
          out << "  note: " << pageable_copy_note() << '\n';
        break;
      }
      out << "  is not ordered after its " << alloc_kind_word(f.alloc.kind) << " of "
          << f.alloc.size << " bytes at " << hex(f.alloc.addr) << " on "
          << describe_stream(f.alloc.stream) << " by thread " << thread_name(f.alloc.thread)
          << ":\n";
      print_stack(out, stacks, f.alloc.stack);
      break;
    case FindingKind::kReuseRace: {
      const Reuse& r = f.reuse;
      out << "  Use of " << hex(r.use.addr) << " (" << (r.use.size != 0 ? r.use.size : r.alloc.size)
          << " bytes) on " << describe_stream(r.use.stream) << " by " << describe_use(r.use, names)
          << access_suffix(r.use.access) << " by thread " << thread_name(r.use.thread) << ":\n";
      print_stack(out, stacks, r.use.stack);
      out << "  is not ordered after the earlier use of this memory on "
          << describe_stream(f.use.stream) << " by " << use_text << access_suffix(f.use.access)
          << " by thread " << thread_name(f.use.thread) << ":\n";
      print_stack(out, stacks, f.use.stack);
      out << "  That use was made through an earlier buffer, " << f.alloc.size << " bytes at "
          << hex(f.alloc.addr) << ", freed on " << describe_stream(f.free.stream) << " by thread "
          << thread_name(f.free.thread) << " (" << free_detail(f)
          << ") after every use was ordered:\n";
      print_stack(out, stacks, f.free.stack);
      print_reallocation(out, r, stacks);
      break;
    }
  }
  out << "  fix: " << fix_advice(f) << '\n';
  if (f.count > 1) out << "  seen " << f.count << " times\n";
  out << "SUMMARY: xstream-check: " << to_string(f.kind) << ' '
      << site_text(stacks.frames(primary_stack(f))) << '\n';
  out << "==================\n";
}

}  // namespace

void write_text_report(const std::vector<Finding>& findings, const ReportContext& ctx,
                       std::ostream& out) {
  for (const Finding& f : findings) print_finding(out, f, ctx);
  out << "xstream-check: " << findings.size() << " finding(s) (" << ctx.suppressed
      << " suppressed)" << latent_summary(ctx);
  if (ctx.missing_own_stream_uses) out << "; " << own_stream_uses_notice(ctx);
  out << unchecked_summary(ctx) << '\n';
  for (std::size_t i = 0; i < ctx.timelines.size() && i < findings.size(); ++i)
    if (!ctx.timelines[i].empty())
      out << "xstream-check: timeline of finding " << i + 1 << ": " << ctx.timelines[i] << ".svg, "
          << ctx.timelines[i] << ".json (Perfetto, chrome://tracing)\n";
  const ParkedBlockStats& parked = ctx.parked;
  if (ctx.advisory && parked.max_parked > 0) {
    char mib[32];
    std::snprintf(mib, sizeof mib, "%.1f", static_cast<double>(parked.peak_parked_bytes) / (1024.0 * 1024.0));
    out << "xstream-check: advisory: record_stream parked up to " << parked.max_parked
        << " blocks (" << mib << " MiB) waiting for their streams' events; most parked from:\n";
    print_stack(out, *ctx.stacks, parked.top_site);
    out << "  keep a reference to the buffer and make its allocation stream wait_event on the "
           "consumer's event before dropping it (keepalive), so the memory bound is a chosen "
           "number instead of CPU run-ahead\n";
  }
}

}  // namespace xsc
