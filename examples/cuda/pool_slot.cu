// A hand-made pool of fixed slots and a load stream that copies the next
// request into a slot the compute stream may still be reading.
//
//   pool_slot [race|event|double] [--slot K] [--trials N]
//
// The pool is one cudaMalloc of four 16 MiB slots. Each trial serves four
// requests; request L is a pinned host buffer filled with L. The compute
// stream waits for the request's copy, spins for a while (the earlier work
// of a real step) and reads the slot with the consumer kernel, whose every
// output must then be kHidden * L.
//
// race    (default) The slot is handed back out as soon as its read is
//         enqueued, and the next request is copied into it with
//         cudaMemcpyAsync on the load stream, which waits for nothing: the
//         copy lands before the read. Every request uses slot K (--slot,
//         default 0).
// event   The same, but compute records an event after the read and the
//         load stream waits on it (cudaStreamWaitEvent) before the copy.
// double  Double buffering over slots 0 and 1 (correct): while compute
//         reads one slot, the load stream fills the other, after waiting
//         for the event recorded after that slot's last read.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common.cuh"

using namespace xsc_example;

namespace {

constexpr int kSlots = 4;
// About two milliseconds of a single thread's spinning: far longer than a
// 16 MiB host-to-device copy, so an unordered copy lands before the read.
constexpr long long kSpinCycles = 4'000'000;

__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

struct Options {
  std::string mode = "race";
  int slot = 0;
  int trials = 10;
};

[[noreturn]] void usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s [race|event|double] [--slot K] [--trials N]\n", argv0);
  std::exit(2);
}

int parse_count(const char* text, int low, int high, const char* argv0) {
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || n < low || n > high) usage(argv0);
  return int(n);
}

Options parse(int argc, char** argv) {
  Options opt;
  bool have_mode = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--slot" && i + 1 < argc) {
      opt.slot = parse_count(argv[++i], 0, kSlots - 1, argv[0]);
    } else if (a == "--trials" && i + 1 < argc) {
      opt.trials = parse_count(argv[++i], 1, 100000, argv[0]);
    } else if (!have_mode && (a == "race" || a == "event" || a == "double")) {
      opt.mode = a;
      have_mode = true;
    } else {
      usage(argv[0]);
    }
  }
  return opt;
}

void read_slot(const float* slot, Fixture& fx, int request, cudaStream_t compute) {
  spin<<<1, 1, 0, compute>>>(kSpinCycles);
  XSC_EXAMPLE_CHECK(cudaGetLastError());
  consume_layer<<<kHidden / 128, 128, 0, compute>>>(slot, fx.x, fx.out_for(request));  // read-site
  XSC_EXAMPLE_CHECK(cudaGetLastError());
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  Fixture fx;
  float* pool = nullptr;
  XSC_EXAMPLE_CHECK(cudaMalloc(&pool, kSlots * kParamBytes));  // pool-alloc
  float* host[kLayers];
  std::vector<float> values(kParamElems);
  for (int r = 0; r < kLayers; ++r) {
    XSC_EXAMPLE_CHECK(cudaMallocHost(&host[r], kParamBytes));
    std::fill(values.begin(), values.end(), float(r + 1));
    std::memcpy(host[r], values.data(), kParamBytes);
  }
  cudaStream_t load, compute;
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&load, cudaStreamNonBlocking));
  XSC_EXAMPLE_CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
  cudaEvent_t read_done[2];
  for (cudaEvent_t& e : read_done)
    XSC_EXAMPLE_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  print_streams(load, compute);
  const auto slot_at = [&](int s) { return pool + std::size_t(s) * kParamElems; };

  std::string title = "pool slot: " + opt.mode;
  if (opt.mode != "double") title += " in slot " + std::to_string(opt.slot);
  TrialReport report(title.c_str());
  for (int t = 0; t < opt.trials; ++t) {
    fx.clear_outputs();
    if (opt.mode == "double") {
      bool recorded[2] = {false, false};
      XSC_EXAMPLE_CHECK(cudaMemcpyAsync(slot_at(0), host[0], kParamBytes, cudaMemcpyHostToDevice,
                                        load));
      for (int request = 1; request <= kLayers; ++request) {
        const int slot = (request - 1) % 2;
        wait_stream(compute, load);  // this request's data
        if (request < kLayers) {
          const int other = request % 2;
          if (recorded[other])
            XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(load, read_done[other], 0));
          XSC_EXAMPLE_CHECK(cudaMemcpyAsync(slot_at(other), host[request], kParamBytes,  // copy-site: double
                                            cudaMemcpyHostToDevice, load));
        }
        read_slot(slot_at(slot), fx, request, compute);
        XSC_EXAMPLE_CHECK(cudaEventRecord(read_done[slot], compute));
        recorded[slot] = true;
        report.note_block(slot_at(slot));
      }
    } else {
      float* slot = slot_at(opt.slot);
      XSC_EXAMPLE_CHECK(cudaMemcpyAsync(slot, host[0], kParamBytes, cudaMemcpyHostToDevice, load));
      for (int request = 1; request <= kLayers; ++request) {
        wait_stream(compute, load);  // this request's data
        read_slot(slot, fx, request, compute);
        report.note_block(slot);
        if (request == kLayers) break;
        // The slot is free again as soon as its read is enqueued.
        if (opt.mode == "event") {
          XSC_EXAMPLE_CHECK(cudaEventRecord(read_done[0], compute));
          XSC_EXAMPLE_CHECK(cudaStreamWaitEvent(load, read_done[0], 0));  // wait-site
        }
        // The site marker sits on the call's first line: a return address
        // inside a multi-line call maps to it.
        XSC_EXAMPLE_CHECK(cudaMemcpyAsync(slot, host[request], kParamBytes,  // copy-site: next
                                          cudaMemcpyHostToDevice, load));
      }
    }
    XSC_EXAMPLE_CHECK(cudaDeviceSynchronize());
    report.end_trial(t, fx.max_diff());
  }
  report.finish();
  for (cudaEvent_t e : read_done) XSC_EXAMPLE_CHECK(cudaEventDestroy(e));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(compute));
  XSC_EXAMPLE_CHECK(cudaStreamDestroy(load));
  for (float* h : host) XSC_EXAMPLE_CHECK(cudaFreeHost(h));
  XSC_EXAMPLE_CHECK(cudaFree(pool));
  return 0;
}
