// Trace recording. Event lines are formatted by hand because they hold only
// numbers and fixed words and are written on the hot path; name and stack
// definitions, which hold arbitrary text, go through nlohmann::json for
// correct escaping.
#include <cerrno>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "checker/trace/trace.h"

namespace xsc {
namespace {

constexpr std::size_t kFlushThreshold = 1 << 20;

void append_uint(std::string& out, std::uint64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  (void)ec;
  out.append(buf, end);
}

void field(std::string& out, std::string_view key, std::uint64_t v) {
  out += ",\"";
  out += key;
  out += "\":";
  append_uint(out, v);
}

void field(std::string& out, std::string_view key, std::string_view word) {
  out += ",\"";
  out += key;
  out += "\":\"";
  out += word;  // a fixed vocabulary word: never needs escaping
  out += '"';
}

std::string dump(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

TraceWriter::TraceWriter() = default;

TraceWriter::~TraceWriter() {
  std::string ignored;
  finish(&ignored);
}

bool TraceWriter::open(const std::string& path, const TraceHeader& header, std::string* error) {
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) {
    *error = path + ": cannot write trace: " + std::strerror(errno);
    return false;
  }
  path_ = path;
  header_ = header;
  header_written_ = false;
  return true;
}

void TraceWriter::set_process(std::int64_t pid, int rank) {
  header_.pid = pid;
  header_.rank = rank;
}

void TraceWriter::set_own_stream_uses(bool own_stream_uses) { header_.own_stream_uses = own_stream_uses; }

void TraceWriter::write_header() {
  header_written_ = true;
  nlohmann::json h = {{"format", kTraceFormatName},
                      {"version", kTraceVersion},
                      {"pid", header_.pid},
                      {"program", header_.program}};
  if (header_.rank >= 0) h["rank"] = header_.rank;
  if (!header_.own_stream_uses) h["own_stream_uses"] = false;
  buffer_ += dump(h);  // nothing precedes it: it is written before any record
  buffer_ += '\n';
}

void TraceWriter::define_name(NameId id, const NameTable& names) {
  if (id >= names_defined_.size()) names_defined_.resize(id + 1024, false);
  if (names_defined_[id]) return;
  names_defined_[id] = true;
  buffer_ += dump({{"t", "name"}, {"id", id}, {"str", names.get(id)}});
  buffer_ += '\n';
}

void TraceWriter::define_stack(StackId id, const StackDepot& stacks) {
  if (id >= stacks_defined_.size()) stacks_defined_.resize(id + 1024, false);
  if (stacks_defined_[id]) return;
  stacks_defined_[id] = true;
  nlohmann::json frames = nlohmann::json::array();
  for (const Frame& f : stacks.frames(id)) {
    nlohmann::json frame = nlohmann::json::object();
    if (!f.function.empty()) frame["fn"] = f.function;
    if (!f.file.empty()) frame["file"] = f.file;
    if (f.line != 0) frame["line"] = f.line;
    if (!f.module.empty()) frame["mod"] = f.module;
    if (f.pc != 0) frame["pc"] = f.pc;
    if (f.autograd_node) frame["node"] = true;
    frames.push_back(std::move(frame));
  }
  buffer_ += dump({{"t", "stack"}, {"id", id}, {"frames", frames}});
  buffer_ += '\n';
}

void TraceWriter::write(const Event& e, const NameTable& names, const StackDepot& stacks) {
  if (file_ == nullptr) return;
  if (!header_written_) write_header();
  if (e.stack != kNoStack) define_stack(e.stack, stacks);
  if (e.name != kNoName) define_name(e.name, names);

  std::string& out = buffer_;
  out += "{\"t\":\"";
  out += trace_name(e.kind);
  out += '"';
  if (e.thread != 0) field(out, "th", e.thread);
  if (e.stack != kNoStack) field(out, "sk", e.stack);
  switch (e.kind) {
    case EventKind::kStreamCreate:
      field(out, "s", e.stream);
      field(out, "fl", trace_name(e.stream_flags));
      break;
    case EventKind::kStreamDestroy:
    case EventKind::kStreamSync:
      field(out, "s", e.stream);
      break;
    case EventKind::kHostFunc:
      field(out, "s", e.stream);
      if (e.event != 0) field(out, "e", e.event);
      break;
    case EventKind::kAlloc:
      field(out, "a", e.addr);
      field(out, "n", e.size);
      field(out, "s", e.stream);
      field(out, "ak", trace_name(e.alloc_kind));
      break;
    case EventKind::kFree:
      field(out, "a", e.addr);
      field(out, "s", e.stream);
      field(out, "fk", trace_name(e.free_kind));
      if (e.deferred) out += ",\"d\":true";
      break;
    case EventKind::kFreeCompleted:
      field(out, "a", e.addr);
      break;
    case EventKind::kUse:
      field(out, "a", e.addr);
      field(out, "n", e.size);
      field(out, "s", e.stream);
      field(out, "ac", trace_name(e.access));
      field(out, "w", trace_name(e.what));
      if (e.name != kNoName) field(out, "nm", e.name);
      if (e.graph != 0) field(out, "g", e.graph);
      if (e.synchronous) out += ",\"sy\":true";
      if (e.pageable) out += ",\"pg\":true";
      break;
    case EventKind::kEventRecord:
    case EventKind::kStreamWaitEvent:
      field(out, "s", e.stream);
      field(out, "e", e.event);
      break;
    case EventKind::kEventSync:
      field(out, "e", e.event);
      break;
    case EventKind::kDeviceSync:
      break;
    case EventKind::kGraphLaunch:
      field(out, "s", e.stream);
      field(out, "g", e.graph);
      if (e.name != kNoName) field(out, "nm", e.name);
      break;
    case EventKind::kThreadName:
      field(out, "nm", e.name);
      break;
    case EventKind::kHostFuncRun:
    case EventKind::kHostFuncDone:
      field(out, "s", e.stream);
      field(out, "e", e.event);
      break;
    case EventKind::kThreadCreate:
    case EventKind::kThreadStart:
    case EventKind::kSyncRelease:
    case EventKind::kSyncAcquire:
      field(out, "e", e.event);
      break;
    case EventKind::kTest:
      if (e.name != kNoName) field(out, "nm", e.name);
      break;
    case EventKind::kUnchecked:
      field(out, "nm", e.name);
      break;
  }
  out += "}\n";
  ++events_;
  if (out.size() >= kFlushThreshold) flush_buffer();
}

void TraceWriter::flush_buffer() {
  if (file_ == nullptr || buffer_.empty()) return;
  if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) write_failed_ = true;
  buffer_.clear();
}

bool TraceWriter::finish(std::string* error) {
  if (file_ == nullptr) return true;
  if (!header_written_) write_header();
  flush_buffer();
  bool ok = !write_failed_ && std::fflush(file_) == 0;
  ok = std::fclose(file_) == 0 && ok;
  file_ = nullptr;
  if (!ok) *error = path_ + ": error while writing trace";
  return ok;
}

}  // namespace xsc
