// The xstream-check subcommands. Each returns the process exit status:
// 0 clean, kFindingsExit (or the exitcode option) when findings were
// reported, kUsageExit for bad input or usage (after one line on stderr).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "checker/options.h"

namespace xsc::cli {

inline constexpr int kFindingsExit = 66;
inline constexpr int kUsageExit = 2;

int replay_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int merge_command(const std::vector<std::string>& args);

// Prints "xstream-check: MESSAGE" on stderr and returns kUsageExit.
int usage_error(const std::string& message);

// Applies a command-line flag "--some-name=value" as the option
// "some_name=value". False when `flag` names no option; *error is set when
// it does but the value is bad.
bool apply_option_flag(std::string_view flag, Options* options, std::string* error);
// "name=value" with the value quoted when it holds an option separator, for
// building an XSC_OPTIONS string.
std::string option_item(std::string_view name, std::string_view value);

}  // namespace xsc::cli
