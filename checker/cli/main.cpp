// xstream-check: replay recorded traces, run programs under the runtime,
// merge per-rank reports.
#include <cstdio>
#include <iostream>

#include "checker/report/report.h"
#include "commands.h"

namespace xsc::cli {

namespace {

constexpr const char* kUsage =
    "usage: xstream-check <command> [options]\n"
    "\n"
    "Finds buffers freed (or used) on one CUDA stream before another stream is\n"
    "done with them.\n"
    "\n"
    "commands:\n"
    "  replay TRACE [--report=text|json|sarif] [--suppressions=FILE] [--strict] [--output=FILE]\n"
    "      Check a recorded trace (docs/trace-format.md). Any runtime option can\n"
    "      be given as --name=value (e.g. --advisory=0, --use-after-free=0).\n"
    "  run [--report=..] [--suppressions=..] [--record=TRACE] [--log-path=P]\n"
    "      [--exitcode=N] [--strict] -- PROG ARGS...\n"
    "      Run PROG with the runtime (libxstream_check.so) preloaded; the flags\n"
    "      are passed to it through XSC_OPTIONS, after any already set there.\n"
    "      XSC_RUNTIME_LIBRARY overrides the runtime library's path.\n"
    "  merge REPORT.json...\n"
    "      Merge per-process JSON reports (report=json with log_path): a\n"
    "      finding seen on several ranks is listed once, with where it was seen.\n"
    "\n"
    "exit status: 0 no findings, 66 findings (the exitcode option changes it),\n"
    "2 bad input or usage.\n"
    "\n"
    "options (XSC_OPTIONS=\"name=value:...\" or --name=value):\n"
    "  report=text|json|sarif  suppressions=FILE  log_path=PREFIX  record=TRACE\n"
    "  exitcode=N  advisory=0|1  stack_depth=N  verbosity=N\n"
    "  use_after_free=0|1  use_before_ready=0|1  reuse_race=0|1  write_after_read=0|1\n"
    "  first_use_writes=0|1 (a new caching block's first kernel on its allocation\n"
    "                       stream fills it, for use before ready; default 1)\n"
    "  builtin_suppressions=0|1 (races inside libraries no user can fix, counted\n"
    "                           as suppressed; default 1)\n"
    "  strict=0|1 (every free before a wait is a finding, not only those whose\n"
    "             memory this run used again while the use could still run)\n"
    "  timeline=DIR (a picture of each finding: DIR/finding-N.svg, and\n"
    "               DIR/finding-N.json for Perfetto or chrome://tracing)\n"
    "  launch_callbacks=auto|runtime|driver (run only)\n"
    "  call_callbacks=auto|runtime (run only: copies, memsets, event records,\n"
    "                  waits and destroys seen through the driver once calibrated)\n"
    "  torch_op_access=0|1 (run only: what PyTorch operators write, from their\n"
    "                      schemas, counts as known writes; default 1)\n"
    "  cublas_access=0|1 (run only: what cuBLAS calls read and write; default 1)\n"
    "  checker_thread=0|1 (run only: the checker on a thread of its own, the\n"
    "                     program's threads only hand events over; default 1)\n"
    "  param_fills=0|1 (run only: of PyTorch's kernel parameters filled in part,\n"
    "                  only the filled entries are read; default 1)\n"
    "  host_sync=0|1 (run only: semaphores, locks and joins order threads; default 1)\n";

}  // namespace

int usage_error(const std::string& message) {
  std::fprintf(stderr, "xstream-check: %s\n", message.c_str());
  return kUsageExit;
}

}  // namespace xsc::cli

int main(int argc, char** argv) {
  using namespace xsc::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("missing command (try --help)");
  const std::string command = args.front();
  args.erase(args.begin());
  if (command == "--help" || command == "-h" || command == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (command == "--version") {
    std::printf("xstream-check %s\n", xsc::kVersion);
    return 0;
  }
  if (command == "replay") return replay_command(args);
  if (command == "run") return run_command(args);
  if (command == "merge") return merge_command(args);
  return usage_error("unknown command '" + command + "' (try --help)");
}
