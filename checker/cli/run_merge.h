// `xstream-check run --log-path=P --report=json`: the program runs as a
// child, and when it is done the per-process reports it left (one per rank
// under a launcher such as torchrun) are merged into one summary.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "checker/options.h"

namespace xsc::cli {

// Runs `argv` (PATH lookup as execvp) with the environment already set,
// waits for it, prints the merged summary of the report files it wrote
// under options.log_path, and returns the status `run` exits with: the
// child's own status when it failed (128+N when killed by signal N), else
// options.exitcode when the merged reports hold findings, else 0.
int run_and_merge(const std::vector<std::string>& argv, const Options& options);

// Report files named PREFIX.<pid> or PREFIX.rank<R>.<pid>, with their
// modification times, sorted by path.
using ReportListing = std::vector<std::pair<std::string, long long>>;
ReportListing list_process_reports(const std::string& prefix);

// Paths in `after` that are missing from `before` or changed since.
std::vector<std::string> new_reports(const ReportListing& before, const ReportListing& after);

}  // namespace xsc::cli
