// The suppressions the checker applies unless builtin_suppressions=0, in
// the format of a suppressions file (checker/report/suppressions.h).
#pragma once

#include <string_view>

namespace xsc {

std::string_view builtin_suppressions();

}  // namespace xsc
