#include "run_merge.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <regex>

#include "commands.h"

namespace xsc::cli {
namespace {

namespace fs = std::filesystem;

pid_t g_child = -1;

// SIGTERM to the tool (a job scheduler's cancel) goes on to the program, so
// its ranks can still write their reports; the tool then merges what exists.
void forward_signal(int sig) {
  if (g_child > 0) ::kill(g_child, sig);
}

int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace

ReportListing list_process_reports(const std::string& prefix) {
  ReportListing listing;
  fs::path full(prefix);
  fs::path dir = full.has_parent_path() ? full.parent_path() : fs::path(".");
  std::string base = full.filename().string();
  if (base.empty()) return listing;
  // The names resolve_log_path gives: BASE.<pid> or BASE.rank<R>.<pid>.
  const std::regex suffix(R"(\.(rank[0-9]+\.)?[0-9]+)");
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.size() <= base.size() || name.compare(0, base.size(), base) != 0) continue;
    if (!std::regex_match(name.substr(base.size()), suffix)) continue;
    struct stat st;
    if (::stat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    long long mtime = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000LL + st.st_mtim.tv_nsec;
    listing.emplace_back((dir / name).string(), mtime);
  }
  std::sort(listing.begin(), listing.end());
  return listing;
}

std::vector<std::string> new_reports(const ReportListing& before, const ReportListing& after) {
  std::vector<std::string> fresh;
  for (const auto& entry : after) {
    if (!std::binary_search(before.begin(), before.end(), entry)) fresh.push_back(entry.first);
  }
  return fresh;
}

int run_and_merge(const std::vector<std::string>& argv, const Options& options) {
  // Files left by earlier runs with the same prefix are not this run's.
  ReportListing before = list_process_reports(options.log_path);

  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  // Flush before fork so buffered output is not written twice.
  std::cout.flush();
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child < 0) return usage_error(std::string("cannot fork: ") + std::strerror(errno));
  if (child == 0) {
    ::execvp(args[0], args.data());
    std::fprintf(stderr, "xstream-check: cannot run '%s': %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }

  // Like system(): the terminal's ^C reaches the program (same process
  // group) and the tool stays to merge whatever reports were written.
  g_child = child;
  struct sigaction ignore{}, forward{}, old_int{}, old_quit{}, old_term{};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  ::sigaction(SIGINT, &ignore, &old_int);
  ::sigaction(SIGQUIT, &ignore, &old_quit);
  ::sigaction(SIGTERM, &forward, &old_term);
  int wait_status = 0;
  pid_t waited;
  do {
    waited = ::waitpid(child, &wait_status, 0);
  } while (waited < 0 && errno == EINTR);
  ::sigaction(SIGINT, &old_int, nullptr);
  ::sigaction(SIGQUIT, &old_quit, nullptr);
  ::sigaction(SIGTERM, &old_term, nullptr);
  g_child = -1;
  if (waited < 0) return usage_error(std::string("waitpid: ") + std::strerror(errno));
  int child_status = status_of(wait_status);

  std::vector<std::string> reports = new_reports(before, list_process_reports(options.log_path));
  if (reports.empty()) {
    std::cerr << "xstream-check: no report was written under " << options.log_path
              << ".* (did the program start its processes with the runtime preloaded?)\n";
    return child_status;
  }
  std::cout.flush();
  int merged = merge_command(reports);
  std::cout.flush();
  if (child_status != 0) return child_status;
  if (merged == kFindingsExit) return options.exitcode;
  return merged;  // 0, or kUsageExit for a report merge could not read
}

}  // namespace xsc::cli
