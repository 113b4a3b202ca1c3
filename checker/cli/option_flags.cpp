#include <algorithm>

#include "commands.h"

namespace xsc::cli {

std::string option_item(std::string_view name, std::string_view value) {
  std::string item(name);
  item += '=';
  bool plain = value.find_first_of(": ,\t\n'\"") == std::string_view::npos;
  if (plain) return item + std::string(value);
  char quote = value.find('\'') == std::string_view::npos ? '\'' : '"';
  return item + quote + std::string(value) + quote;
}

bool apply_option_flag(std::string_view flag, Options* options, std::string* error) {
  error->clear();
  if (flag.substr(0, 2) != "--") return false;
  flag.remove_prefix(2);
  if (flag == "strict") flag = "strict=1";  // a bare switch
  std::size_t eq = flag.find('=');
  if (eq == std::string_view::npos || eq == 0) return false;
  std::string name(flag.substr(0, eq));
  std::replace(name.begin(), name.end(), '-', '_');
  std::string_view value = flag.substr(eq + 1);
  if (!parse_options(option_item(name, value), options, error)) {
    // An unknown name is "not an option flag"; the caller words that error.
    if (error->rfind("unknown option", 0) == 0) {
      error->clear();
      return false;
    }
    return true;
  }
  return true;
}

}  // namespace xsc::cli
