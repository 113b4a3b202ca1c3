// libFuzzer target over trace replay: the bytes are a trace file, read and
// checked through the code `xstream-check replay` runs (read_trace feeding a
// Session, then the report). Bad input must end in an error, never a crash,
// a hang, or unbounded memory.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>

#include "checker/options.h"
#include "checker/session.h"
#include "checker/trace/trace.h"

namespace {

// The trace lives in an anonymous in-memory file, so the reader opens a path
// exactly as replay does without touching the disk.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("xsc-fuzz-trace", 0)) {}
  ~MemoryFile() {
    if (fd_ >= 0) close(fd_);
  }
  bool assign(const std::uint8_t* data, std::size_t size) {
    if (fd_ < 0 || ftruncate(fd_, 0) != 0 || lseek(fd_, 0, SEEK_SET) != 0) return false;
    while (size > 0) {
      ssize_t n = write(fd_, data, size);
      if (n <= 0) return false;
      data += n;
      size -= static_cast<std::size_t>(n);
    }
    return true;
  }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static MemoryFile file;
  if (!file.assign(data, size)) {
    std::perror("trace_fuzzer: cannot write the in-memory trace");
    std::abort();
  }

  xsc::Options options;
  // Every report writer gets inputs; which one is a function of the input so
  // that a crash reproduces from its bytes alone.
  static constexpr xsc::ReportFormat kFormats[] = {xsc::ReportFormat::kText, xsc::ReportFormat::kJson,
                                                   xsc::ReportFormat::kSarif};
  options.report = kFormats[size % 3];
  xsc::Session session(options);
  std::string error;
  if (!session.start(&error)) std::abort();  // nothing to record: cannot fail

  xsc::TraceHeader header;
  bool ok = xsc::read_trace(file.path(), session.names(), session.stacks(),
                            [&session](const xsc::Event& e) { session.on_event(e); }, &header,
                            &error);
  if (!ok) {
    // Replay prints this one line and exits 2: it must be one line.
    if (error.empty() || error.find('\n') != std::string::npos) {
      std::fprintf(stderr, "trace_fuzzer: error is not one line: '%s'\n", error.c_str());
      std::abort();
    }
    return 0;
  }
  session.set_process(header.pid, header.rank);
  std::ostringstream report;
  session.finish(report);
  return 0;
}
