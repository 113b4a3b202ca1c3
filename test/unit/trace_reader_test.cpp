// The trace reader's two paths must agree: a record the fast path takes must
// give the same events, and one it declines the same error, as the precise
// path. A leading space is valid JSON but sends a line (and the rest of its
// buffer) down the precise path, so each case is read both ways and compared.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checker/engine/stack_depot.h"
#include "checker/trace/trace.h"

namespace xsc {
namespace {

struct Outcome {
  bool ok = false;
  std::string error;
  std::vector<Event> events;
};

bool same_event(const Event& a, const Event& b) {
  return a.kind == b.kind && a.thread == b.thread && a.stack == b.stack && a.stream == b.stream &&
         a.event == b.event && a.addr == b.addr && a.size == b.size && a.name == b.name &&
         a.graph == b.graph && a.stream_flags == b.stream_flags && a.alloc_kind == b.alloc_kind &&
         a.free_kind == b.free_kind && a.access == b.access && a.what == b.what &&
         a.deferred == b.deferred;
}

class TraceReaderPaths : public ::testing::Test {
 protected:
  void TearDown() override { std::filesystem::remove(path_); }

  void write(const std::string& text) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << text;
  }

  // Reads `text` from a file at the same path every time, so that error
  // messages (which start with the path) compare equal.
  Outcome read(const std::string& text) {
    write(text);
    Outcome o;
    NameTable names;
    StackDepot stacks;
    TraceHeader header;
    o.ok = read_trace(path_, names, stacks, [&](const Event& e) { o.events.push_back(e); }, &header,
                      &o.error);
    return o;
  }

  // The same through read_trace_batched(), keeping the batch sizes.
  Outcome read_batched(const std::string& text, std::vector<std::size_t>* batches) {
    write(text);
    Outcome o;
    NameTable names;
    StackDepot stacks;
    TraceHeader header;
    o.ok = read_trace_batched(
        path_, names, stacks,
        [&](const Event* events, std::size_t count) {
          batches->push_back(count);
          o.events.insert(o.events.end(), events, events + count);
        },
        &header, &o.error);
    return o;
  }

  void expect_same(const std::string& fast_text, const std::string& precise_text, const std::string& what) {
    Outcome fast = read(fast_text);
    Outcome precise = read(precise_text);
    EXPECT_EQ(fast.ok, precise.ok) << what;
    EXPECT_EQ(fast.error, precise.error) << what;
    ASSERT_EQ(fast.events.size(), precise.events.size()) << what;
    for (std::size_t i = 0; i < fast.events.size(); ++i)
      EXPECT_TRUE(same_event(fast.events[i], precise.events[i])) << what << " event " << i;
  }

  std::string path_ = (std::filesystem::temp_directory_path() /
                       ("xsc_trace_reader_test." + std::to_string(::getpid()) + ".jsonl"))
                          .string();
};

const char* const kHead =
    "{\"format\":\"xstream-trace\",\"version\":1,\"pid\":7}\n"
    "{\"t\":\"name\",\"id\":1,\"str\":\"k\"}\n"
    "{\"t\":\"stack\",\"id\":3,\"frames\":[{\"fn\":\"f\",\"line\":2}]}\n"
    "{\"t\":\"alloc\",\"a\":4096,\"n\":256,\"s\":16,\"ak\":\"caching\",\"sk\":3}\n";
const char* const kTail = "{\"t\":\"use\",\"a\":4096,\"n\":8,\"s\":32,\"ac\":\"read\",\"w\":\"kernel\",\"nm\":1}";

const std::vector<std::string> kRecords = {
    // Valid, every field type.
    R"({"t":"use","a":4096,"n":8,"s":32,"ac":"write","w":"collective","nm":1,"sk":3,"th":2,"g":5})",
    R"({"t":"free","a":4096,"s":16,"fk":"caching","d":true})",
    R"({"t":"stream_create","s":48,"fl":"non_blocking"})",
    R"({"t":"wait","s":1,"e":2,"s":5})",  // duplicate key: the last one wins
    R"({"t":"wait","s":1,"e":2})" "\r",
    R"({"t":"wait","s":1,"e":2}   )",
    R"({"t":"device_sync","zz":[1,2,{"x":null}]})",  // unknown key
    R"({"\u0074":"device_sync"})",
    R"({"t":"dev\u0069ce_sync"})",
    R"({"t":"wait","s":18446744073709551615,"e":2})",
    R"({"t":"record","s":1,"e":2,"sk":9})",  // a stack defined nowhere
    R"({"t":"use","a":4096,"n":8,"s":32,"ac":"re\u0061d","w":"kernel","nm":1})",  // escaped value
    R"({"t":"use","a":4096,"n":8,"s":32,"\u0061c":"read","w":"kernel","nm":1})",  // escaped key
    R"({"t":"use","a":4096,"n":8,"\u0073":32,"ac":"read","w":"kernel"})",
    R"({"t":"record","s":1,"e":2,"s\u006b":3})",
    R"({"t":"device_sync","":1})",  // empty key
    R"({"t":"device_sync","str":"x"})",  // a definition's key on an event
    R"({"t":"device_sync","framesx":1,"abc":2,"sks":3})",  // longer than a known key
    // Invalid.
    R"({"t":"wait","s":1,"e":2}{"t":"device_sync"})",
    R"({"t":"wait","s":1,"e":2} x)",
    R"({"t":"wait","s":1,"e":2}])",
    R"({"t":"wait","s":1,"e":2)",
    R"({"t":"alloc","a":01,"n":2,"s":3,"ak":"caching"})",
    R"({"t":"alloc","a":1.0,"n":2,"s":3,"ak":"caching"})",
    R"({"t":"alloc","a":-1,"n":2,"s":3,"ak":"caching"})",
    R"({"t":"alloc","a":1e2,"n":2,"s":3,"ak":"caching"})",
    R"({"t":"alloc","a":18446744073709551616,"n":2,"s":3,"ak":"caching"})",
    R"({"t":"alloc","a":1,"n":2,"s":3,"ak":"bump"})",
    R"({"t":"alloc","a":1,"n":2,"s":3,"ak":"cach\"ing"})",
    R"({"t":"alloc","a":1,"n":2,"s":3,"ak":"\\caching"})",
    R"({"t":"use","a":4096,"n":8,"s":32,"ac":"read","w":"kernel_with_a_long_name","nm":1})",
    R"({"t":"alloc","a":1,"n":1152921504606846976,"s":3,"ak":"caching"})",
    R"({"t":"alloc","a":18446744073709551615,"n":2,"s":3,"ak":"caching"})",
    R"({"t":"alloc","a":1,"s":3,"ak":"caching"})",
    R"({"t":"device_sync","zz":[1,,2]})",
    R"({"t":"device_sync","d":tru})",
    R"({"t":"device_sync" "s":1})",
    R"({"t":"device_sync","s" 1})",
    R"({"t":"device_sync",})",
    R"({"t":"free","a":1,"s":1,"fk":"caching","d":1})",
    R"({"t":"wait","s":"1","e":2})",
    R"({"t":"wait","s":1,"e":2,"th":4294967296})",
    R"({"t":"use","a":1,"n":2,"s":3,"ac":"read","w":"kernel","nm":99})",
    R"({"t":"use","a":4096,"n":8,"s":32,"ac":"write","w":"op","nm":1})",  // version 3 only
    R"({"t":"teleport"})",
    R"({"t":"test","nm":1})",  // a version 3 kind in a version 1 trace
    R"({"s":1})",
    "{\"t\":\"wait\",\"s\":1,\"e\":\"\xff\"}",  // not UTF-8
    "{\"t\":\"wait\",\"s\":1,\"e\":\"a\tb\"}",  // a raw tab inside a string
    "{\"t\":\"wait\",\"s\":1,\n\"e\":2}",  // one record over two lines
    "{\"t\":\"wait\",\"s\":1,\"e\":2}\n\n  \n{\"t\":\"device_sync\"}",  // blank lines
    "[1,2]",
    "\"use\"",
};

TEST_F(TraceReaderPaths, FastAndPrecisePathsAgree) {
  for (const std::string& record : kRecords) {
    // In the middle of the file, and as its last line.
    expect_same(std::string(kHead) + record + "\n" + kTail + "\n",
                std::string(kHead) + " " + record + "\n" + kTail + "\n", "middle: " + record);
    expect_same(std::string(kHead) + record + "\n", std::string(kHead) + " " + record + "\n",
                "last: " + record);
  }
}

TEST_F(TraceReaderPaths, OperatorUsesNeedVersion3) {
  const std::string use = R"({"t":"use","a":4096,"n":8,"s":32,"ac":"write","w":"op","nm":1})";
  const std::string body = "{\"t\":\"name\",\"id\":1,\"str\":\"aten::add_\"}\n" + use + "\n";
  Outcome v3 = read("{\"format\":\"xstream-trace\",\"version\":3,\"pid\":7}\n" + body);
  ASSERT_TRUE(v3.ok) << v3.error;
  ASSERT_EQ(v3.events.size(), 1u);
  EXPECT_EQ(v3.events[0].what, UseWhat::kOperator);
  EXPECT_EQ(v3.events[0].access, Access::kWrite);
  for (const char* old_version : {"1", "2"}) {
    Outcome old = read(std::string("{\"format\":\"xstream-trace\",\"version\":") + old_version +
                       ",\"pid\":7}\n" + body);
    EXPECT_FALSE(old.ok);
    EXPECT_NE(old.error.find(":3: use of kind 'op' needs trace version 3"), std::string::npos)
        << old.error;
  }
}

TEST_F(TraceReaderPaths, ManyRecordsReadInOrder) {
  // Enough records to fill several read buffers, with definitions and blank
  // lines between them.
  std::string text = kHead;
  const int kRecordsToWrite = 40000;
  for (int i = 0; i < kRecordsToWrite; ++i) {
    if (i % 997 == 0) text += "\n";
    text += "{\"t\":\"use\",\"a\":" + std::to_string(4096 + i % 256) +
            ",\"n\":1,\"s\":32,\"ac\":\"read\",\"w\":\"kernel\",\"nm\":1}\n";
  }
  Outcome o = read(text);
  ASSERT_TRUE(o.ok) << o.error;
  ASSERT_EQ(o.events.size(), 1u + kRecordsToWrite);
  for (int i = 0; i < kRecordsToWrite; ++i) EXPECT_EQ(o.events[1 + i].addr, 4096u + i % 256) << i;
}

TEST_F(TraceReaderPaths, ErrorLineNumberAfterManyFastRecords) {
  std::string text = kHead;
  for (int i = 0; i < 30000; ++i) text += std::string(kTail) + "\n";
  text += "{\"t\":\"wait\",\"s\":1}\n";  // line 4 + 30000 + 1
  Outcome o = read(text);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.error, path_ + ":30005: 'wait' record lacks field 'e'");
  EXPECT_EQ(o.events.size(), 30001u);
}

TEST_F(TraceReaderPaths, BatchesHoldTheSameEventsInOrder) {
  // Several read buffers of records, a name definition after record 1000
  // and a stack definition after record 2000.
  std::string text = kHead;
  for (int i = 0; i < 3000; ++i) {
    if (i == 1000) text += "{\"t\":\"name\",\"id\":2,\"str\":\"k2\"}\n";
    if (i == 2000) text += "{\"t\":\"stack\",\"id\":4,\"frames\":[]}\n";
    text += "{\"t\":\"use\",\"a\":" + std::to_string(4096 + i) +
            ",\"n\":1,\"s\":32,\"ac\":\"read\",\"w\":\"kernel\",\"nm\":1}\n";
  }
  Outcome one_by_one = read(text);
  std::vector<std::size_t> batches;
  Outcome batched = read_batched(text, &batches);
  ASSERT_TRUE(one_by_one.ok) << one_by_one.error;
  ASSERT_TRUE(batched.ok) << batched.error;
  ASSERT_EQ(batched.events.size(), one_by_one.events.size());
  for (std::size_t i = 0; i < batched.events.size(); ++i)
    EXPECT_TRUE(same_event(batched.events[i], one_by_one.events[i])) << i;
  // A batch ends before each definition (the alloc in kHead is event 0),
  // and none is larger than the reader's batch.
  std::vector<std::size_t> ends;
  std::size_t delivered = 0;
  for (std::size_t n : batches) {
    EXPECT_GT(n, 0u);
    EXPECT_LE(n, 256u);
    delivered += n;
    ends.push_back(delivered);
  }
  EXPECT_NE(std::find(ends.begin(), ends.end(), 1001u), ends.end());
  EXPECT_NE(std::find(ends.begin(), ends.end(), 2001u), ends.end());
}

TEST_F(TraceReaderPaths, BatchesDeliverEveryEventBeforeAnError) {
  std::string text = kHead;
  for (int i = 0; i < 1000; ++i) text += std::string(kTail) + "\n";
  text += "{\"t\":\"wait\",\"s\":1}\n";  // line 4 + 1000 + 1
  std::vector<std::size_t> batches;
  Outcome o = read_batched(text, &batches);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.error, path_ + ":1005: 'wait' record lacks field 'e'");
  EXPECT_EQ(o.events.size(), 1001u);
}

TEST_F(TraceReaderPaths, UncheckedNeedsVersion4) {
  const std::string body =
      "{\"t\":\"name\",\"id\":1,\"str\":\"the bodies of conditional graph nodes\"}\n"
      "{\"t\":\"unchecked\",\"nm\":1}\n";
  Outcome v4 = read("{\"format\":\"xstream-trace\",\"version\":4,\"pid\":7}\n" + body);
  ASSERT_TRUE(v4.ok) << v4.error;
  ASSERT_EQ(v4.events.size(), 1u);
  EXPECT_EQ(v4.events[0].kind, EventKind::kUnchecked);
  EXPECT_NE(v4.events[0].name, kNoName);
  Outcome v3 = read("{\"format\":\"xstream-trace\",\"version\":3,\"pid\":7}\n" + body);
  EXPECT_FALSE(v3.ok);
  EXPECT_NE(v3.error.find(":3: event kind 'unchecked' needs trace version 4"), std::string::npos)
      << v3.error;
  Outcome unnamed = read("{\"format\":\"xstream-trace\",\"version\":4,\"pid\":7}\n"
                         "{\"t\":\"unchecked\"}\n");
  EXPECT_FALSE(unnamed.ok);
}

}  // namespace
}  // namespace xsc
