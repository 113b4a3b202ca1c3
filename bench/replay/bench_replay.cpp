// Events per second of the happens-before engine alone and of a full replay
// from a trace file, on a synthetic workload shaped like a busy training
// step: 8 streams, 10^4 live allocations, 10^6 events of kernels, copies,
// collectives, cross-stream event handoffs and allocation churn; and of the
// engine alone on the event stream of a launch-bound PyTorch training loop
// (BM_CheckerTrainingLoop).
//
//   build/bin/xsc_bench_replay [--benchmark_filter=...]
//
// Counters: events/s (items_per_second), peak_rss_MiB (the process's peak
// resident set so far), trace_MiB (size of the trace file).
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "checker/engine/allocation_view.h"
#include "checker/engine/checker.h"
#include "checker/session.h"
#include "checker/engine/stack_depot.h"
#include "checker/trace/trace.h"

namespace xsc {
namespace {

constexpr std::size_t kEvents = 1'000'000;
constexpr int kStreams = 8;
constexpr std::size_t kLiveAllocations = 10'000;
constexpr int kKernelNames = 64;
constexpr int kStacks = 512;

struct Workload {
  NameTable names;
  StackDepot stacks;
  std::vector<Event> events;
};

// Deterministic: the same seed gives the same events on every run.
const Workload& workload() {
  static Workload* w = [] {
    auto* w = new Workload;
    std::mt19937_64 rng(0x5eed);
    std::vector<NameId> kernels;
    for (int i = 0; i < kKernelNames; ++i) kernels.push_back(w->names.intern("kernel_" + std::to_string(i)));
    std::vector<StackId> stacks;
    for (int i = 0; i < kStacks; ++i) {
      std::vector<Frame> frames;
      for (int d = 0; d < 6; ++d) {
        Frame f;
        f.function = "fn_" + std::to_string(i) + "_" + std::to_string(d);
        f.file = "/src/model/layer" + std::to_string(i % 17) + ".py";
        f.line = 10 + d;
        frames.push_back(std::move(f));
      }
      stacks.push_back(w->stacks.intern_frames(std::move(frames)));
    }
    auto pick_stack = [&] { return stacks[rng() % stacks.size()]; };
    auto stream_of = [](int i) -> StreamId { return 0x1000 + static_cast<StreamId>(i) * 0x100; };

    std::vector<Event>& out = w->events;
    out.reserve(kEvents);
    for (int i = 0; i < kStreams; ++i) {
      Event e;
      e.kind = EventKind::kStreamCreate;
      e.stream = stream_of(i);
      e.stream_flags = StreamFlags::kNonBlocking;
      out.push_back(e);
    }
    struct Live {
      Addr addr;
      std::uint64_t size;
      StreamId stream;
    };
    std::vector<Live> live;
    Addr next_addr = 0x7f0000000000;
    auto alloc = [&](std::size_t slot) {
      Event e;
      e.kind = EventKind::kAlloc;
      e.addr = next_addr;
      e.size = 4096u << (rng() % 8);
      next_addr += 1u << 20;
      e.stream = stream_of(static_cast<int>(rng() % kStreams));
      e.alloc_kind = AllocKind::kCachingAllocator;
      e.stack = pick_stack();
      out.push_back(e);
      Live l{e.addr, e.size, e.stream};
      if (slot < live.size()) live[slot] = l;
      else live.push_back(l);
    };
    for (std::size_t i = 0; i < kLiveAllocations; ++i) alloc(i);

    EventId next_event = 1;
    while (out.size() < kEvents) {
      unsigned roll = rng() % 100;
      if (roll < 70) {
        // A kernel, copy or collective on some stream touching a live buffer.
        const Live& l = live[rng() % live.size()];
        Event e;
        e.kind = EventKind::kUse;
        e.addr = l.addr + (rng() % 2 ? 0 : l.size / 2);
        e.size = l.size / 2;
        e.stream = rng() % 4 == 0 ? stream_of(static_cast<int>(rng() % kStreams)) : l.stream;
        e.access = rng() % 2 ? Access::kRead : Access::kWrite;
        e.what = rng() % 10 == 0 ? UseWhat::kCollective : UseWhat::kKernel;
        e.name = kernels[rng() % kernels.size()];
        e.stack = pick_stack();
        out.push_back(e);
      } else if (roll < 85) {
        // A cross-stream handoff: record on one stream, wait on another.
        Event r;
        r.kind = EventKind::kEventRecord;
        r.event = next_event;
        r.stream = stream_of(static_cast<int>(rng() % kStreams));
        r.stack = pick_stack();
        out.push_back(r);
        Event wt = r;
        wt.kind = EventKind::kStreamWaitEvent;
        wt.stream = stream_of(static_cast<int>(rng() % kStreams));
        out.push_back(wt);
        next_event = next_event % 256 + 1;  // events are re-recorded, as in real code
      } else if (roll < 99) {
        // Churn: free a buffer on its allocation stream and allocate anew.
        std::size_t slot = rng() % live.size();
        Event f;
        f.kind = EventKind::kFree;
        f.addr = live[slot].addr;
        f.stream = live[slot].stream;
        f.free_kind = FreeKind::kCachingAllocator;
        f.stack = pick_stack();
        out.push_back(f);
        alloc(slot);
      } else {
        Event s;
        s.kind = EventKind::kStreamSync;
        s.stream = stream_of(static_cast<int>(rng() % kStreams));
        out.push_back(s);
      }
    }
    return w;
  }();
  return *w;
}

const std::string& trace_file() {
  static std::string path = [] {
    const Workload& w = workload();
    // XSC_BENCH_TRACE_OUT keeps the generated trace at that path, so that a
    // whole `xstream-check replay` process can be timed on it.
    const char* keep = std::getenv("XSC_BENCH_TRACE_OUT");
    std::string p = keep != nullptr && *keep != '\0'
                        ? std::string(keep)
                        : (std::filesystem::temp_directory_path() /
                           ("xsc_bench_replay." + std::to_string(::getpid()) + ".jsonl"))
                              .string();
    TraceWriter writer;
    std::string error;
    TraceHeader header;
    header.pid = ::getpid();
    header.program = "xsc_bench_replay";
    if (!writer.open(p, header, &error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      std::exit(2);
    }
    for (const Event& e : w.events) writer.write(e, w.names, w.stacks);
    if (!writer.finish(&error)) {
      std::fprintf(stderr, "%s\n", error.c_str());
      std::exit(2);
    }
    if (keep == nullptr || *keep == '\0')
      std::atexit([] { std::filesystem::remove(trace_file()); });
    return p;
  }();
  return path;
}

double peak_rss_mib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

// Runs a fresh Checker over the workload per iteration, `feed` handing it
// the events.
template <class Feed>
void time_engine(benchmark::State& state, Feed&& feed) {
  const Workload& w = workload();
  std::uint64_t findings = 0;
  for (auto _ : state) {
    Checker checker;
    feed(checker, w.events);
    checker.finish();
    findings = checker.findings().size();
    benchmark::DoNotOptimize(findings);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * w.events.size()));
  state.counters["findings"] = static_cast<double>(findings);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}

void BM_CheckerOnEvent(benchmark::State& state) {
  time_engine(state, [](Checker& checker, const std::vector<Event>& events) {
    for (const Event& e : events) checker.on_event(e);
  });
}
BENCHMARK(BM_CheckerOnEvent)->Unit(benchmark::kMillisecond);

// The engine fed in batches of 256, as trace replay feeds it.
void BM_CheckerOnEvents(benchmark::State& state) {
  time_engine(state, [](Checker& checker, const std::vector<Event>& events) {
    constexpr std::size_t kBatch = 256;
    for (std::size_t i = 0; i < events.size(); i += kBatch)
      checker.on_events(events.data() + i, std::min(kBatch, events.size() - i));
  });
}
BENCHMARK(BM_CheckerOnEvents)->Unit(benchmark::kMillisecond);

// The event stream of a launch-bound PyTorch training loop: 128 idle pool
// streams exist beside the default (legacy) stream and a copy stream, and
// a device synchronization at start-up made the host thread's clock span
// all of them. Each step allocates short-lived caching blocks on the
// default stream, uses each once to three times there and frees it at once
// (a requested free and its completion), and reads a batch block that the
// copy stream filled, after an event wait, then releases it one step later
// after the copy stream waited in turn (keepalive). Most blocks never leave
// their allocation stream: the engine's common case in such a program.
const std::vector<Event>& training_loop_events() {
  static const std::vector<Event>* events = [] {
    auto* out = new std::vector<Event>;
    std::mt19937_64 rng(0x7e57);
    constexpr int kPoolStreams = 128;
    constexpr StreamId kCopy = 0x9000;
    constexpr int kSteps = 4000;
    constexpr int kBlocksPerStep = 60;
    auto push = [&](Event e) { out->push_back(e); };
    auto on_stream = [](EventKind kind, StreamId stream) {
      Event e;
      e.kind = kind;
      e.stream = stream;
      return e;
    };
    auto alloc = [&](Addr addr, std::uint64_t size, StreamId stream) {
      Event e = on_stream(EventKind::kAlloc, stream);
      e.addr = addr;
      e.size = size;
      e.alloc_kind = AllocKind::kCachingAllocator;
      push(e);
    };
    auto use = [&](Addr addr, StreamId stream, UseWhat what) {
      Event e = on_stream(EventKind::kUse, stream);
      e.addr = addr;
      e.what = what;
      push(e);
    };
    auto event_op = [&](EventKind kind, EventId event, StreamId stream) {
      Event e = on_stream(kind, stream);
      e.event = event;
      push(e);
    };
    // A caching-allocator free without record_stream: requested, then
    // completed at once.
    auto release = [&](Addr addr, StreamId stream) {
      Event free = on_stream(EventKind::kFree, stream);
      free.addr = addr;
      free.free_kind = FreeKind::kCachingAllocator;
      free.deferred = true;
      push(free);
      Event done;
      done.kind = EventKind::kFreeCompleted;
      done.addr = addr;
      push(done);
    };
    for (int i = 0; i <= kPoolStreams; ++i) {
      Event e = on_stream(EventKind::kStreamCreate,
                          i == kPoolStreams ? kCopy : 0x1000 + static_cast<StreamId>(i) * 0x10);
      e.stream_flags = StreamFlags::kNonBlocking;
      push(e);
    }
    Event sync;
    sync.kind = EventKind::kDeviceSync;
    push(sync);
    const Addr kBlocks = 0x7f0000000000, kBatches = 0x7f4000000000;
    Addr kept_batch = 0;
    for (int step = 0; step < kSteps; ++step) {
      // The batch: filled on the copy stream, handed to the default stream.
      const Addr batch = kBatches + static_cast<Addr>(step % 2) * (1u << 20);
      alloc(batch, 1u << 20, kCopy);
      use(batch, kCopy, UseWhat::kMemcpy);
      event_op(EventKind::kEventRecord, 1, kCopy);
      event_op(EventKind::kStreamWaitEvent, 1, kLegacyStream);
      // The step's own blocks, on the default stream.
      for (int b = 0; b < kBlocksPerStep; ++b) {
        const Addr block = kBlocks + static_cast<Addr>(rng() % 512) * (1u << 16);
        alloc(block, 1u << 16, kLegacyStream);
        const int uses = 1 + static_cast<int>(rng() % 3);
        for (int u = 0; u < uses; ++u) {
          use(block, kLegacyStream, UseWhat::kKernel);
          if (b % 20 == 0 && u == 0) use(batch, kLegacyStream, UseWhat::kKernel);
        }
        release(block, kLegacyStream);
      }
      // Keepalive: the previous batch goes once the copy stream waited on
      // the default stream's event after the batch's last use.
      event_op(EventKind::kEventRecord, 2 + static_cast<EventId>(step % 2), kLegacyStream);
      if (kept_batch != 0) {
        event_op(EventKind::kStreamWaitEvent, 2 + static_cast<EventId>((step + 1) % 2), kCopy);
        release(kept_batch, kCopy);
      }
      kept_batch = batch;
    }
    return out;
  }();
  return *events;
}

void BM_CheckerTrainingLoop(benchmark::State& state) {
  const std::vector<Event>& events = training_loop_events();
  std::uint64_t findings = 0;
  for (auto _ : state) {
    Checker checker;
    for (const Event& e : events) checker.on_event(e);
    checker.finish();
    findings = checker.findings().size();
    benchmark::DoNotOptimize(findings);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events.size()));
  state.counters["findings"] = static_cast<double>(findings);
}
BENCHMARK(BM_CheckerTrainingLoop)->Unit(benchmark::kMillisecond);

void BM_ReplayFromFile(benchmark::State& state) {
  const std::string& path = trace_file();
  std::uint64_t events = 0;
  for (auto _ : state) {
    Options options;
    options.report = ReportFormat::kJson;
    Session session(options);
    std::string error;
    TraceHeader header;
    events = 0;
    // As `xstream-check replay` reads: in batches.
    bool ok = read_trace_batched(
        path, session.names(), session.stacks(),
        [&](const Event* batch, std::size_t count) {
          events += count;
          session.on_events(batch, count);
        },
        &header, &error);
    if (!ok) {
      state.SkipWithError(error.c_str());
      return;
    }
    std::ostringstream report;
    session.finish(report);
    benchmark::DoNotOptimize(report);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
  state.counters["trace_MiB"] = static_cast<double>(std::filesystem::file_size(path)) / (1024.0 * 1024.0);
  state.counters["peak_rss_MiB"] = peak_rss_mib();
}
BENCHMARK(BM_ReplayFromFile)->Unit(benchmark::kMillisecond);

// Reading alone (parsing and id mapping, no checking): where replay time goes.
void BM_ReadTraceOnly(benchmark::State& state) {
  const std::string& path = trace_file();
  std::uint64_t events = 0;
  for (auto _ : state) {
    NameTable names;
    StackDepot stacks;
    std::string error;
    TraceHeader header;
    events = 0;
    if (!read_trace(path, names, stacks, [&](const Event&) { ++events; }, &header, &error)) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * events));
}
BENCHMARK(BM_ReadTraceOnly)->Unit(benchmark::kMillisecond);

// A whole number from the environment variable `name`, left as it is when
// the variable is unset; false (with a one-line error) when it is not a
// whole number of at most 2^32.
bool env_count(const char* name, std::size_t* value, std::string* error) {
  const char* text = std::getenv(name);
  if (text == nullptr) return true;
  char* end = nullptr;
  errno = 0;
  const unsigned long long parsed = std::strtoull(text, &end, 10);
  if (*text == '\0' || *text == '-' || *end != '\0' || errno != 0 || parsed > (1ull << 32)) {
    *error = std::string(name) + ": expected a whole number, got '" + text + "'";
    return false;
  }
  *value = static_cast<std::size_t>(parsed);
  return true;
}

// What the program's thread does with one event, as the runtime's producer
// does it (XSC_BENCH_PRODUCER):
//   engine  feeds the checker (the default);
//   inline  asks the checker what the launch path and the allocator
//           adapter ask (the allocation a use's address lies in; whether a
//           caching free's block was used off its stream, to decide on a
//           stack) and feeds it: checker_thread=0;
//   thread  asks the AllocationView the same and has it follow the event;
//           the checker runs on another thread and is not fed here:
//           checker_thread=1.
// Not inlined, so that callgrind can count inside it alone
// (--toggle-collect='*producer_step*').
enum class Producer { kEngine, kInline, kThread };

[[gnu::noinline]] void producer_step(Producer producer, Checker& checker, AllocationView& view,
                                     const Event& e) {
  const bool asks_lookup = e.kind == EventKind::kUse;
  const bool asks_stack = e.kind == EventKind::kFree && e.free_kind == FreeKind::kCachingAllocator;
  AllocInfo info;
  bool carries = false;
  switch (producer) {
    case Producer::kEngine:
      checker.on_event(e);
      return;
    case Producer::kInline:
      if (asks_lookup) benchmark::DoNotOptimize(checker.lookup_allocation(e.addr, &info, &carries));
      if (asks_stack) benchmark::DoNotOptimize(checker.used_off_allocation_stream(e.addr));
      checker.on_event(e);
      return;
    case Producer::kThread:
      if (asks_lookup) benchmark::DoNotOptimize(view.lookup(e.addr, &info, &carries));
      if (asks_stack) benchmark::DoNotOptimize(view.used_off_allocation_stream(e.addr));
      view.note(e);
      return;
  }
}

bool producer_from_env(Producer* producer, std::string* error) {
  const char* text = std::getenv("XSC_BENCH_PRODUCER");
  if (text == nullptr || std::string(text) == "engine") return true;
  if (std::string(text) == "inline") {
    *producer = Producer::kInline;
    return true;
  }
  if (std::string(text) == "thread") {
    *producer = Producer::kThread;
    return true;
  }
  *error = std::string("XSC_BENCH_PRODUCER: expected engine, inline or thread, got '") + text + "'";
  return false;
}

// The engine fed one event at a time, as the runtime feeds it, with the
// events of a trace recorded from a real program (XSC_BENCH_TRACE=FILE,
// e.g. `XSC_OPTIONS=record=FILE` around bench/real/train_step.py): the
// checker's share of a checked process, without the trace's parsing.
// Skipped when XSC_BENCH_TRACE is unset.
void BM_CheckerOnRecordedTrace(benchmark::State& state) {
  const char* path = std::getenv("XSC_BENCH_TRACE");
  if (path == nullptr || *path == '\0') {
    state.SkipWithError("XSC_BENCH_TRACE is not set");
    return;
  }
  static NameTable names;
  static StackDepot stacks;
  static std::vector<Event>* recorded = nullptr;
  if (recorded == nullptr) {
    recorded = new std::vector<Event>;
    std::string error;
    TraceHeader header;
    if (!read_trace(path, names, stacks, [&](const Event& e) { recorded->push_back(e); },
                    &header, &error)) {
      state.SkipWithError(error.c_str());
      return;
    }
  }
  // XSC_BENCH_TOUCH_KIB=N: after each event, read N KiB of a 64 MiB
  // buffer, as a training process's own work runs between two of the
  // runtime's calls and evicts the engine's data from the caches. The
  // engine's time then includes the misses a live process pays; under
  // callgrind's cache simulation with --toggle-collect='*producer_step*'
  // the counted misses are the program thread's alone
  // (bench/replay/engine_misses.py). XSC_BENCH_PRODUCER: producer_step.
  // XSC_BENCH_QUARANTINE=N: remember N freed ranges instead of the
  // default, so that a short trace reaches the steady state of a long run,
  // where every free overwrites the oldest remembered one.
  std::size_t touch_kib = 0;
  CheckerConfig config;
  std::string error;
  Producer producer = Producer::kEngine;
  if (!env_count("XSC_BENCH_TOUCH_KIB", &touch_kib, &error) ||
      !env_count("XSC_BENCH_QUARANTINE", &config.quarantine_entries, &error) ||
      !producer_from_env(&producer, &error)) {
    state.SkipWithError(error.c_str());
    return;
  }
  const std::size_t touch_bytes = touch_kib << 10;
  constexpr std::size_t kProgramBytes = std::size_t{64} << 20;
  std::vector<unsigned char> program(touch_bytes > 0 ? kProgramBytes : 0, 1);
  std::size_t cursor = 0;
  unsigned sink = 0;
  std::size_t findings = 0;
  for (auto _ : state) {
    Checker checker(config);
    AllocationView view;
    for (const Event& e : *recorded) {
      producer_step(producer, checker, view, e);
      for (std::size_t k = 0; k < touch_bytes; k += 64)
        sink += program[(cursor + k) % kProgramBytes];
      cursor = (cursor + touch_bytes) % kProgramBytes;
    }
    findings = checker.findings().size();
    benchmark::DoNotOptimize(findings);
  }
  benchmark::DoNotOptimize(sink);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * recorded->size()));
  state.counters["findings"] = static_cast<double>(findings);
  state.counters["events"] = static_cast<double>(recorded->size());
}
BENCHMARK(BM_CheckerOnRecordedTrace)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xsc

BENCHMARK_MAIN();
