// Test attribution: a kTest marker names the test current in the process;
// a finding is attributed to the test current at its free (also when it is
// judged later, at a use in another test), or at its use when it has no
// free. The marker changes no verdict, and it travels through traces
// (version 3) and the live reports of a running session.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "checker/engine/checker.h"
#include "checker/session.h"
#include "checker/trace/trace.h"
#include "event_builder.h"

namespace xsc {
namespace {

using namespace xsc::test;

constexpr StreamId kProducer = 0x1000;
constexpr StreamId kConsumer = 0x2000;
constexpr Addr kBlock = 0x7f0000000000;
constexpr Addr kOther = 0x7f0001000000;

E Marker(NameId name) { return E(EventKind::kTest).name(name); }

// The seed's bug on one block: read on the consumer stream, handed back on
// the producer stream with nothing ordering the two (the free, at `free_stack`).
void unordered_free(Checker& c, Addr block, StackId free_stack) {
  c.on_event(Alloc(block, 4096, kProducer).stack(1));
  c.on_event(Use(block, 4096, kConsumer).stack(2));
  c.on_event(Free(block, kProducer).stack(free_stack));
}

// ...then the producer takes the block again and writes it: the race.
void reuse(Checker& c, Addr block) {
  c.on_event(Alloc(block, 4096, kProducer).stack(4));
  c.on_event(Use(block, 4096, kProducer).stack(5));
}

TEST(TestAttribution, FindingJudgedInALaterTestBelongsToTheFreeingTest) {
  Checker c;
  c.on_event(CreateStream(kConsumer, StreamFlags::kNonBlocking));
  c.on_event(Marker(7));
  unordered_free(c, kBlock, 3);
  c.on_event(Marker(kNoName));
  c.on_event(Marker(8));
  reuse(c, kBlock);  // judged here, during test 8
  c.finish();
  ASSERT_EQ(c.findings().size(), 1u);
  EXPECT_EQ(c.findings()[0].kind, FindingKind::kUnorderedFree);
  EXPECT_EQ(c.findings()[0].test, 7u);
  EXPECT_EQ(c.findings()[0].free.test, 7u);
}

TEST(TestAttribution, WithoutMarkersNoTest) {
  Checker c;
  c.on_event(CreateStream(kConsumer, StreamFlags::kNonBlocking));
  unordered_free(c, kBlock, 3);
  reuse(c, kBlock);
  c.finish();
  ASSERT_EQ(c.findings().size(), 1u);
  EXPECT_EQ(c.findings()[0].test, kNoName);
}

TEST(TestAttribution, TheSameBugInTwoTestsIsTwoFindings) {
  Checker c;
  c.on_event(CreateStream(kConsumer, StreamFlags::kNonBlocking));
  for (NameId test : {NameId{7}, NameId{8}}) {
    c.on_event(Marker(test));
    unordered_free(c, kBlock, 3);  // the same free and use stacks each time
    reuse(c, kBlock);
    c.on_event(DeviceSync());      // nothing of this test reaches the next
    c.on_event(Free(kBlock, kProducer).stack(6));
  }
  c.finish();
  ASSERT_EQ(c.findings().size(), 2u);
  EXPECT_EQ(c.findings()[0].test, 7u);
  EXPECT_EQ(c.findings()[1].test, 8u);
  EXPECT_EQ(c.findings()[0].count, 1u);
}

TEST(TestAttribution, LatentFreeCarriesItsTest) {
  Checker c;
  c.on_event(CreateStream(kConsumer, StreamFlags::kNonBlocking));
  c.on_event(Marker(9));
  unordered_free(c, kBlock, 3);
  c.finish();
  EXPECT_TRUE(c.findings().empty());
  ASSERT_EQ(c.latent().size(), 1u);
  EXPECT_EQ(c.latent()[0].test, 9u);
}

TEST(TestAttribution, UseAfterFreeBelongsToTheFreeingTest) {
  Checker c;
  c.on_event(Marker(7));
  c.on_event(Alloc(kBlock, 4096, kProducer, AllocKind::kStreamOrdered).stack(1));
  c.on_event(Free(kBlock, kProducer, FreeKind::kStreamOrdered).stack(3));
  c.on_event(Marker(8));
  c.on_event(Use(kBlock, 4096, kConsumer).stack(2));  // a stale pointer
  c.finish();
  ASSERT_EQ(c.findings().size(), 1u);
  EXPECT_EQ(c.findings()[0].kind, FindingKind::kUseAfterFree);
  EXPECT_EQ(c.findings()[0].test, 7u);
}

TEST(TestAttribution, UseBeforeReadyBelongsToTheTestOfTheUse) {
  Checker c;
  c.on_event(Marker(7));
  c.on_event(Alloc(kBlock, 4096, kProducer, AllocKind::kStreamOrdered).stack(1));
  c.on_event(Marker(8));
  c.on_event(Use(kBlock, 4096, kConsumer).stack(2));  // no free: the use decides
  c.finish();
  ASSERT_EQ(c.findings().size(), 1u);
  EXPECT_EQ(c.findings()[0].kind, FindingKind::kUseBeforeReady);
  EXPECT_EQ(c.findings()[0].test, 8u);
}

// A marker between a deferred free and its completion leaves the free an
// immediate one (not parked), as if the marker were not there.
TEST(TestAttribution, MarkerChangesNoVerdict) {
  Checker c;
  c.on_event(Alloc(kOther, 4096, kProducer).stack(1));
  c.on_event(Free(kOther, kProducer, FreeKind::kCachingAllocator, /*deferred=*/true).stack(3));
  c.on_event(Marker(7).thread(5));  // set from another thread
  c.on_event(FreeCompleted(kOther));
  c.finish();
  EXPECT_EQ(c.parked_blocks().deferred_frees, 1u);
  EXPECT_EQ(c.parked_blocks().max_parked, 0u);
  EXPECT_EQ(c.stats().threads, 1u);  // the marker's thread is no agent
}

void feed_two_tests(Session& s) {
  const NameId a = s.names().intern("tests/test_a.py::test_buggy");
  const NameId b = s.names().intern("tests/test_a.py::test_ok");
  s.on_event(CreateStream(kConsumer, StreamFlags::kNonBlocking));
  s.on_event(E(EventKind::kTest).name(a));
  s.on_event(Alloc(kBlock, 4096, kProducer));
  s.on_event(Use(kBlock, 4096, kConsumer));
  s.on_event(Free(kBlock, kProducer));
  s.on_event(Alloc(kBlock, 4096, kProducer));
  s.on_event(Use(kBlock, 4096, kProducer));
  s.on_event(E(EventKind::kTest).name(b));
  s.on_event(Alloc(kOther, 4096, kProducer));
  s.on_event(Use(kOther, 4096, kProducer));
  s.on_event(Free(kOther, kProducer));
}

TEST(TestAttribution, LiveReportSelectsATestsFindings) {
  Session s{Options{}};
  feed_two_tests(s);
  std::ostringstream buggy, ok, from_second, all;
  EXPECT_EQ(s.report_findings(ReportFormat::kText, s.names().intern("tests/test_a.py::test_buggy"), 0,
                              buggy),
            1u);
  EXPECT_NE(buggy.str().find("  test: tests/test_a.py::test_buggy\n"), std::string::npos) << buggy.str();
  EXPECT_NE(buggy.str().find("xstream-check: 1 finding(s) (0 suppressed)\n"), std::string::npos);
  EXPECT_EQ(s.report_findings(ReportFormat::kText, s.names().intern("tests/test_a.py::test_ok"), 0, ok),
            0u);
  EXPECT_EQ(ok.str().find("WARNING"), std::string::npos) << ok.str();
  // From the second finding on: the count stays, the text has none.
  EXPECT_EQ(s.report_findings(ReportFormat::kText, s.names().intern("tests/test_a.py::test_buggy"), 1,
                              from_second),
            1u);
  EXPECT_EQ(from_second.str().find("WARNING"), std::string::npos) << from_second.str();
  EXPECT_EQ(s.report_findings(ReportFormat::kJson, std::nullopt, 0, all), 1u);
  EXPECT_NE(all.str().find("\"test\":\"tests/test_a.py::test_buggy\""), std::string::npos) << all.str();
  // The session goes on: its report at the end still has the finding.
  std::ostringstream end;
  EXPECT_EQ(s.finish(end), 1u);
  EXPECT_NE(end.str().find("  test: tests/test_a.py::test_buggy\n"), std::string::npos) << end.str();
}

TEST(TestAttribution, SarifCarriesTheTestAsAProperty) {
  Options options;
  options.report = ReportFormat::kSarif;
  Session s{options};
  feed_two_tests(s);
  std::ostringstream out;
  s.finish(out);
  EXPECT_NE(out.str().find("\"test\": \"tests/test_a.py::test_buggy\""), std::string::npos) << out.str();
}

class TestMarkerTrace : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = (std::filesystem::temp_directory_path() /
                       ("xsc-test-marker-" + std::to_string(::getpid()) + ".jsonl"))
                          .string();
};

TEST_F(TestMarkerTrace, RoundTripsInTheCurrentVersion) {
  NameTable names;
  StackDepot stacks;
  TraceWriter writer;
  std::string error;
  ASSERT_TRUE(writer.open(path_, TraceHeader{}, &error)) << error;
  writer.write(E(EventKind::kTest).name(names.intern("t.py::test_x")), names, stacks);
  writer.write(E(EventKind::kTest), names, stacks);
  ASSERT_TRUE(writer.finish(&error)) << error;

  NameTable read_names;
  StackDepot read_stacks;
  TraceHeader header;
  std::vector<Event> events;
  ASSERT_TRUE(read_trace(path_, read_names, read_stacks, [&](const Event& e) { events.push_back(e); },
                         &header, &error))
      << error;
  EXPECT_EQ(header.version, kTraceVersion);  // the kind came in version 3
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, EventKind::kTest);
  EXPECT_EQ(read_names.get(events[0].name), "t.py::test_x");
  EXPECT_EQ(events[1].kind, EventKind::kTest);
  EXPECT_EQ(events[1].name, kNoName);
}

TEST_F(TestMarkerTrace, OlderVersionRefusesTheKind) {
  {
    std::ofstream out(path_);
    out << "{\"format\":\"xstream-trace\",\"version\":2,\"pid\":1}\n"
           "{\"t\":\"name\",\"id\":1,\"str\":\"t.py::test_x\"}\n"
           "{\"t\":\"test\",\"nm\":1}\n";
  }
  NameTable names;
  StackDepot stacks;
  std::string error;
  EXPECT_FALSE(read_trace(path_, names, stacks, [](const Event&) {}, nullptr, &error));
  EXPECT_EQ(error, path_ + ":3: event kind 'test' needs trace version 3");
}

}  // namespace
}  // namespace xsc
