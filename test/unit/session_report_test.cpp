// What Session::finish writes: nothing for a clean text report (a checked
// process stays silent, like ThreadSanitizer), the summary line whenever
// there is something to tell or the caller asks for it, and always the
// machine-readable formats.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "checker/session.h"
#include "event_builder.h"

namespace xsc {
namespace {

using namespace xsc::test;

constexpr StreamId kProducer = 0x1000;
constexpr StreamId kConsumer = 0x2000;
constexpr Addr kBlock = 0x7f0000000000;

// A block allocated, used and freed on its own stream: nothing to report.
void feed_clean(Session& session) {
  session.on_event(Alloc(kBlock, 4096, kProducer));
  session.on_event(Use(kBlock, 4096, kProducer));
  session.on_event(Free(kBlock, kProducer));
}

// The block is read on the consumer stream and handed back on the producer
// stream with nothing ordering the two: an unordered free, latent until the
// producer uses the memory again.
void feed_latent(Session& session) {
  session.on_event(CreateStream(kConsumer, StreamFlags::kNonBlocking));
  session.on_event(Alloc(kBlock, 4096, kProducer));
  session.on_event(Use(kBlock, 4096, kConsumer).name(session.names().intern("consume")));
  session.on_event(Free(kBlock, kProducer));
}

// ...and the producer allocates and writes the block while the read may
// still run: one unordered free with a racing reuse.
void feed_buggy(Session& session) {
  feed_latent(session);
  session.on_event(Alloc(kBlock, 4096, kProducer));
  session.on_event(Use(kBlock, 4096, kProducer).name(session.names().intern("fill")));
}

std::string finish(Session& session,
                   Session::CleanText clean = Session::CleanText::kSilent,
                   std::uint64_t* reported = nullptr) {
  std::ostringstream out;
  std::uint64_t n = session.finish(out, clean);
  if (reported != nullptr) *reported = n;
  return out.str();
}

TEST(SessionReportTest, CleanTextReportIsSilent) {
  Session session{Options{}};
  feed_clean(session);
  std::uint64_t reported = 1;
  EXPECT_EQ(finish(session, Session::CleanText::kSilent, &reported), "");
  EXPECT_EQ(reported, 0u);
}

TEST(SessionReportTest, NoEventsAtAllIsSilent) {
  Session session{Options{}};
  EXPECT_EQ(finish(session), "");
}

TEST(SessionReportTest, CallerCanAskForTheCleanSummaryLine) {
  Session session{Options{}};
  feed_clean(session);
  EXPECT_EQ(finish(session, Session::CleanText::kSummaryLine),
            "xstream-check: 0 finding(s) (0 suppressed)\n");
}

TEST(SessionReportTest, VerbosityPrintsSummaryAndCounters) {
  Options options;
  options.verbosity = 1;
  Session session{options};
  feed_clean(session);
  std::string text = finish(session);
  EXPECT_EQ(text.rfind("xstream-check: 0 finding(s) (0 suppressed)\n", 0), 0u) << text;
  EXPECT_NE(text.find(" events, "), std::string::npos) << text;
}

TEST(SessionReportTest, FindingIsReportedWithSummary) {
  Session session{Options{}};
  feed_buggy(session);
  std::uint64_t reported = 0;
  std::string text = finish(session, Session::CleanText::kSilent, &reported);
  EXPECT_EQ(reported, 1u);
  EXPECT_NE(text.find("WARNING: xstream-check: unordered free"), std::string::npos) << text;
  EXPECT_NE(text.find("xstream-check: 1 finding(s) (0 suppressed)\n"), std::string::npos) << text;
}

TEST(SessionReportTest, LatentFreeIsCountedNotReported) {
  Session session{Options{}};
  feed_latent(session);
  std::uint64_t reported = 1;
  // A clean run stays silent; the summary line counts the latent free.
  EXPECT_EQ(finish(session, Session::CleanText::kSilent, &reported), "");
  EXPECT_EQ(reported, 0u);
  Session asked{Options{}};
  feed_latent(asked);
  EXPECT_EQ(finish(asked, Session::CleanText::kSummaryLine),
            "xstream-check: 0 finding(s) (0 suppressed); 1 latent free-before-wait (strict=1 "
            "reports them)\n");
}

TEST(SessionReportTest, StrictReportsTheLatentFree) {
  Options options;
  options.strict = true;
  Session session{options};
  feed_latent(session);
  std::uint64_t reported = 0;
  std::string text = finish(session, Session::CleanText::kSilent, &reported);
  EXPECT_EQ(reported, 1u);
  EXPECT_NE(text.find("WARNING: xstream-check: unordered free"), std::string::npos) << text;
  EXPECT_NE(text.find("note: this run never used the memory again"), std::string::npos) << text;
}

TEST(SessionReportTest, ReuseIsNamedInTheReport) {
  Session session{Options{}};
  feed_buggy(session);
  std::string text = finish(session);
  EXPECT_NE(text.find("The memory was allocated again: 4096 bytes"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel \"fill\""), std::string::npos) << text;
  EXPECT_EQ(text.find("note: this run never used"), std::string::npos) << text;
}

TEST(SessionReportTest, SuppressedFindingStillPrintsSummary) {
  char path[] = "/tmp/xsc_session_supp_XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << "unordered_free:consume\n";
  Options options;
  options.suppressions = path;
  Session session{options};
  std::string error;
  ASSERT_TRUE(session.start(&error)) << error;
  feed_buggy(session);
  std::uint64_t reported = 1;
  std::string text = finish(session, Session::CleanText::kSilent, &reported);
  std::remove(path);
  EXPECT_EQ(reported, 0u);
  EXPECT_EQ(text, "xstream-check: 0 finding(s) (1 suppressed)\n");
}

TEST(SessionReportTest, ParkedBlockAdvisoryPrintsSummary) {
  Session session{Options{}};
  session.on_event(Alloc(kBlock, 4096, kProducer));
  session.on_event(Free(kBlock, kProducer, FreeKind::kCachingAllocator, /*deferred=*/true));
  session.on_event(DeviceSync());  // the block waits: parked
  session.on_event(FreeCompleted(kBlock));
  std::string text = finish(session);
  EXPECT_EQ(text.rfind("xstream-check: 0 finding(s) (0 suppressed)\n", 0), 0u) << text;
  EXPECT_NE(text.find("xstream-check: advisory: record_stream parked up to "),
            std::string::npos)
      << text;
}

// PyTorch reports every free as deferred; one completed at once never
// parked anything and is no reason for an advisory.
TEST(SessionReportTest, ImmediatelyCompletedFreesAreSilent) {
  Session session{Options{}};
  session.on_event(Alloc(kBlock, 4096, kProducer));
  session.on_event(Free(kBlock, kProducer, FreeKind::kCachingAllocator, /*deferred=*/true));
  session.on_event(FreeCompleted(kBlock));
  EXPECT_EQ(finish(session), "");
}

TEST(SessionReportTest, AdvisoryOffLeavesParkedBlocksSilent) {
  Options options;
  options.advisory = false;
  Session session{options};
  session.on_event(Alloc(kBlock, 4096, kProducer));
  session.on_event(Free(kBlock, kProducer, FreeKind::kCachingAllocator, /*deferred=*/true));
  session.on_event(DeviceSync());  // the block waits: parked, as in the test above
  session.on_event(FreeCompleted(kBlock));
  EXPECT_EQ(finish(session), "");
}

// A JSON or SARIF report is a document a program reads: it says "zero" rather
// than being absent.
TEST(SessionReportTest, CleanJsonReportKeepsItsSummaryObject) {
  Options options;
  options.report = ReportFormat::kJson;
  Session session{options};
  feed_clean(session);
  std::string text = finish(session);
  EXPECT_EQ(text.rfind("{\"summary\":{\"findings\":0,", 0), 0u) << text;
}

TEST(SessionReportTest, CleanSarifReportIsWritten) {
  Options options;
  options.report = ReportFormat::kSarif;
  Session session{options};
  feed_clean(session);
  std::string text = finish(session);
  EXPECT_NE(text.find("\"results\""), std::string::npos) << text;
}

}  // namespace
}  // namespace xsc
