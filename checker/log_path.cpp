#include "checker/log_path.h"

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace xsc {

int launcher_rank() {
  // Order matters: torchrun's RANK is the job-wide rank even when the job
  // itself was started by SLURM.
  for (const char* var : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(var);
    if (value == nullptr || *value == '\0') continue;
    std::string_view text(value);
    int rank = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (ec == std::errc() && end == text.data() + text.size() && rank >= 0) return rank;
  }
  return -1;
}

std::string resolve_log_path(const Options& options, int pid) {
  return resolve_log_path(options, pid, launcher_rank());
}

std::string resolve_log_path(const Options& options, int pid, int rank) {
  const std::string& prefix = options.log_path;
  if (prefix.empty() || prefix == "stderr" || prefix == "stdout") return prefix;
  if (rank >= 0) return prefix + ".rank" + std::to_string(rank) + "." + std::to_string(pid);
  return prefix + "." + std::to_string(pid);
}

}  // namespace xsc
