// xstream-check replay: check a recorded trace offline.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "checker/log_path.h"
#include "checker/session.h"
#include "checker/trace/trace.h"
#include "commands.h"

namespace xsc::cli {

int replay_command(const std::vector<std::string>& args) {
  Options options;
  std::string error;
  // The same options the runtime reads: XSC_OPTIONS first, flags on top.
  if (!apply_env_options(&options, &error)) return usage_error(error);
  std::string trace_path;
  std::string output_path;
  for (const std::string& arg : args) {
    if (arg.rfind("--output=", 0) == 0) {
      output_path = arg.substr(9);
      if (output_path.empty()) return usage_error("--output needs a file name");
    } else if (arg.rfind("--", 0) == 0 && arg.size() > 2) {
      if (!apply_option_flag(arg, &options, &error)) return usage_error("unknown flag '" + arg + "' for replay");
      if (!error.empty()) return usage_error(arg + ": " + error);
    } else if (trace_path.empty()) {
      trace_path = arg;
    } else {
      return usage_error("replay takes one trace, got '" + trace_path + "' and '" + arg + "'");
    }
  }
  if (trace_path.empty()) return usage_error("replay needs a trace file (xstream-check replay TRACE)");

  Session session(options);
  if (!session.start(&error)) return usage_error(error);
  TraceHeader header;
  // The header is read before the first event: a re-recorded trace keeps
  // the traced process's identity.
  bool identified = false;
  auto identify = [&] {
    identified = true;
    session.set_process(header.pid, header.rank >= 0 ? header.rank : launcher_rank());
    if (!header.own_stream_uses) session.set_trace_lacks_own_stream_uses();
  };
  bool ok = read_trace_batched(
      trace_path, session.names(), session.stacks(),
      [&](const Event* events, std::size_t count) {
        if (!identified) identify();
        session.on_events(events, count);
      },
      &header, &error);
  if (!ok) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return kUsageExit;
  }
  if (!identified) identify();
  // The trace's rank when it names one, else this process's launcher rank.
  const int rank = header.rank >= 0 ? header.rank : launcher_rank();

  std::ofstream file;
  if (output_path.empty() && !options.log_path.empty()) {
    output_path = resolve_log_path(options, static_cast<int>(header.pid), rank);
    if (output_path == "stdout") output_path.clear();
  }
  std::ostream* out = &std::cout;
  if (output_path == "stderr") {
    out = &std::cerr;
  } else if (!output_path.empty()) {
    file.open(output_path, std::ios::binary | std::ios::trunc);
    if (!file) return usage_error("cannot write report to '" + output_path + "'");
    out = &file;
  }
  // The summary line is replay's answer, so it is printed for a clean
  // trace too (a checked process stays silent instead).
  std::uint64_t reported = session.finish(*out, Session::CleanText::kSummaryLine);
  if (file.is_open()) {
    file.close();
    if (!file) return usage_error("error while writing report to '" + output_path + "'");
  }
  return reported > 0 ? options.exitcode : 0;
}

}  // namespace xsc::cli
