// Where a report goes: one file per process, named so that the reports of a
// multi-rank job (torchrun, mpirun, srun) do not overwrite each other.
#pragma once

#include <string>

#include "checker/options.h"

namespace xsc {

// The process's rank under a launcher, from the first of RANK,
// OMPI_COMM_WORLD_RANK, PMI_RANK and SLURM_PROCID that holds a non-negative
// integer; -1 when none does.
int launcher_rank();

// options.log_path empty: "" (report to stderr). "stderr" / "stdout": kept
// as is. Otherwise PREFIX.<pid>, or PREFIX.rank<R>.<pid> under a launcher.
std::string resolve_log_path(const Options& options, int pid);
// Same, for a known rank (-1: none), e.g. the one a replayed trace names.
std::string resolve_log_path(const Options& options, int pid, int rank);

}  // namespace xsc
