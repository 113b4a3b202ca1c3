// A test fixture owning a Checker: feed events, count findings by kind.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>

#include "checker/engine/checker.h"
#include "event_builder.h"

namespace xsc::test {

// The checklist rule (strict): every free must be ordered after every use.
// The ordering tests use it, since it judges a free by itself; the default
// rule judges the memory's next use (DefaultRuleTest).
inline CheckerConfig strict_config() {
  CheckerConfig config;
  config.strict = true;
  return config;
}

class CheckerTest : public ::testing::Test {
 protected:
  void feed(const Event& e) { checker.on_event(e); }
  std::size_t count(FindingKind kind) const {
    std::size_t n = 0;
    for (const Finding& f : checker.findings()) n += f.kind == kind;
    return n;
  }
  Checker checker{strict_config()};
};

// The default rule: an unordered free is a finding when this run uses the
// memory again while the use may still run, else latent.
class DefaultRuleTest : public ::testing::Test {
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
