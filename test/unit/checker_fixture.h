// A test fixture owning a Checker: feed events, count findings by kind.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>

#include "checker/checker.h"
#include "event_builder.h"

namespace xsc::test {

class CheckerTest : public ::testing::Test {
 protected:
  void feed(const Event& e) { checker.on_event(e); }
  std::size_t count(FindingKind kind) const {
    std::size_t n = 0;
    for (const Finding& f : checker.findings()) n += f.kind == kind;
    return n;
  }
  Checker checker;
};

}  // namespace xsc::test
