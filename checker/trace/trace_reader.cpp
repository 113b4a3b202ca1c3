// Trace replay input. Every line is validated completely, and every malformed
// input ends the read with one "PATH:LINE: message" error: the reader never
// trusts a count, an id or a length from the file to size anything.
//
// Two paths read a line. The precise path parses one line with simdjson's DOM
// parser (syntax and UTF-8 checked in full) and knows every error message.
// The fast path runs simdjson's On-Demand document stream over all complete
// lines in the read buffer at once (one stage-1 pass per buffer instead of
// one per line) and takes only an event record that is exactly one object on
// its own line, whose keys are all known and whose values all have their
// expected types, strings without escapes; every value is visited, so
// nothing it accepts is left unchecked. Anything else (definitions, blank
// lines, unknown keys, escapes, a wrong type, bad JSON, a record spread over
// lines) it declines, and the precise path reads that line, so results and
// messages never depend on the path.
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "checker/trace/trace.h"
#include "checker/trace/trace_fields.h"

namespace xsc {
namespace {

constexpr std::size_t kMaxLine = 16u << 20;        // bytes per record
constexpr std::size_t kMaxFrames = 4096;           // frames per stack
constexpr std::uint64_t kMaxRangeBytes = 1ull << 50;  // 1 PiB: beyond any device
constexpr std::size_t kReadChunk = 1u << 20;
// Records handed to one document stream: enough to amortize a stage-1 pass,
// small enough that the text and its structural index stay in the L2 cache
// next to the checker's own working set.
constexpr std::size_t kStreamSlice = 64u << 10;

using namespace trace_fields;

class Reader {
 public:
  // Exactly one of `sink` and `batch_sink` is set.
  Reader(const std::string& path, NameTable& names, StackDepot& stacks,
         const std::function<void(const Event&)>* sink, const EventBatchSink* batch_sink,
         TraceHeader* header, std::string* error)
      : path_(path), names_(names), stacks_(stacks), sink_(sink), batch_sink_(batch_sink),
        header_(header), error_(error) {
    if (batch_sink_ != nullptr) batch_.reserve(kBatch);
  }

  // Reads the whole trace; every event read is delivered before it returns.
  bool run() {
    const bool ok = read_all();
    flush();
    return ok;
  }

 private:
  // Messages echo values taken from the trace; a control character in one
  // (a JSON-escaped newline, say) must not break the one-line error rule,
  // and a huge value must not flood the terminal.
  bool fail(const std::string& message) {
    constexpr std::size_t kMaxEcho = 200;
    std::string printable;
    for (unsigned char ch : message) {
      if (printable.size() >= kMaxEcho) {
        printable += "...";
        break;
      }
      if (ch < 0x20 || ch == 0x7f) {
        static const char kHex[] = "0123456789abcdef";
        printable += "\\x";
        printable += kHex[ch >> 4];
        printable += kHex[ch & 15];
      } else {
        printable += static_cast<char>(ch);
      }
    }
    *error_ = path_ + ":" + std::to_string(line_no_) + ": " + printable;
    return false;
  }
  bool read_all();
  bool line(const char* data, std::size_t size, std::size_t capacity, bool has_newline);
  bool lines(const char* data, std::size_t size, std::size_t batch_size);
  bool precise_line(const char* data, std::size_t size);
  enum class Fast { kTaken, kDeclined, kFailed };
  Fast fast_record(simdjson::ondemand::document_stream::iterator& it,
                   simdjson::ondemand::document_reference document, const char* line,
                   std::size_t size);
  bool header(simdjson::dom::element root);
  bool record(simdjson::dom::element root);
  bool decode(simdjson::dom::object object, Fields* f);
  bool require(const Fields& f, std::uint32_t bits, std::string_view what) {
    return (bits & ~f.present) == 0 || missing_field(f, bits, what);
  }
  bool missing_field(const Fields& f, std::uint32_t bits, std::string_view what);
  bool bad_range(const Fields& f);
  bool name_definition(const Fields& f);
  bool stack_definition(const Fields& f);
  bool event(const Fields& f, EventKind kind);
  // Trace id to session id, through the caches first.
  bool map_name(std::uint64_t trace_id, NameId* out) {
    const CachedId& slot = name_cache_[trace_id % kIdCacheSlots];
    if (slot.trace_id == trace_id && trace_id != 0) {
      *out = slot.id;
      return true;
    }
    return map_name_uncached(trace_id, out);
  }
  StackId map_stack(std::uint64_t trace_id) {
    const CachedId& slot = stack_cache_[trace_id % kIdCacheSlots];
    if (slot.trace_id == trace_id && trace_id != 0) return slot.id;
    return map_stack_uncached(trace_id);
  }
  bool map_name_uncached(std::uint64_t trace_id, NameId* out);
  StackId map_stack_uncached(std::uint64_t trace_id);

  const std::string& path_;
  NameTable& names_;
  StackDepot& stacks_;
  // Hands `e` to the sink, or to the batch that goes to the batch sink.
  void deliver(const Event& e) {
    if (batch_sink_ == nullptr) {
      (*sink_)(e);
      return;
    }
    batch_.push_back(e);
    if (batch_.size() == kBatch) flush();
  }
  void flush() {
    if (batch_.empty()) return;
    (*batch_sink_)(batch_.data(), batch_.size());
    batch_.clear();
  }

  const std::function<void(const Event&)>* sink_;
  const EventBatchSink* batch_sink_;
  // Events not yet handed over (batch sink only): enough for a consumer to
  // look well ahead, few enough to stay in the L1 cache.
  static constexpr std::size_t kBatch = 256;
  std::vector<Event> batch_;
  TraceHeader* header_;
  std::string* error_;

  simdjson::dom::parser parser_;
  simdjson::ondemand::parser stream_parser_;
  std::uint64_t line_no_ = 0;
  bool seen_header_ = false;
  std::uint64_t version_ = kTraceVersion;  // the header's
  std::unordered_map<std::uint64_t, NameId> name_ids_;
  std::unordered_map<std::uint64_t, StackId> stack_ids_;
  // Direct-mapped caches in front of the two maps: nearly every event names
  // a stack and many a kernel, from a few hundred ids, and a hash lookup per
  // event costs more than the rest of its decoding. A trace id, once mapped,
  // keeps its mapping, so a cached entry never goes stale. Id 0 never
  // reaches them (it means "none"), so a zeroed slot is empty.
  struct CachedId {
    std::uint64_t trace_id = 0;
    std::uint32_t id = 0;
  };
  static constexpr std::size_t kIdCacheSlots = 1024;
  std::array<CachedId, kIdCacheSlots> name_cache_{};
  std::array<CachedId, kIdCacheSlots> stack_cache_{};
  // Stacks referenced before their definition: trace id -> line of first use.
  std::unordered_map<std::uint64_t, std::uint64_t> pending_stacks_;
};

bool Reader::read_all() {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path_.c_str(), "rb"), &std::fclose);
  if (!file) {
    *error_ = path_ + ": cannot open trace: " + std::strerror(errno);
    return false;
  }
  // [begin, end) holds unread bytes; SIMDJSON_PADDING readable bytes always
  // follow `end`, so a line can be parsed in place.
  std::string buffer(kReadChunk + simdjson::SIMDJSON_PADDING, '\0');
  std::size_t begin = 0, end = 0;
  bool eof = false;
  // One thread: a batch never spans more than the buffer, so simdjson would
  // not start its stage-1 thread anyway; say so.
  stream_parser_.threaded = false;
  for (;;) {
    const char* base = buffer.data();
    // The complete lines in the next slice of the buffer, in one go; the
    // whole rest of the buffer only when one line is longer than a slice.
    const std::size_t slice = std::min(end - begin, kStreamSlice);
    const void* last_nl = ::memrchr(base + begin, '\n', slice);
    if (last_nl == nullptr && slice < end - begin) last_nl = ::memrchr(base + begin, '\n', end - begin);
    if (last_nl != nullptr) {
      std::size_t lines_end = static_cast<const char*>(last_nl) - base + 1;
      if (!lines(base + begin, lines_end - begin, std::max(lines_end - begin, kStreamSlice))) return false;
      begin = lines_end;
      continue;
    }
    if (eof) {
      if (end > begin) {
        ++line_no_;
        if (!line(base + begin, end - begin, buffer.size() - begin, false)) return false;
      }
      break;
    }
    // Need more bytes: keep the partial line, make room and read.
    if (end - begin > kMaxLine) {
      ++line_no_;
      return fail("record longer than " + std::to_string(kMaxLine) + " bytes");
    }
    std::memmove(buffer.data(), base + begin, end - begin);
    end -= begin;
    begin = 0;
    if (buffer.size() - simdjson::SIMDJSON_PADDING - end < kReadChunk / 2)
      buffer.resize(buffer.size() * 2);
    std::size_t room = buffer.size() - simdjson::SIMDJSON_PADDING - end;
    std::size_t got = std::fread(buffer.data() + end, 1, room, file.get());
    if (got < room) {
      if (std::ferror(file.get())) {
        *error_ = path_ + ": read error: " + std::strerror(errno);
        return false;
      }
      eof = true;
    }
    end += got;
  }
  if (!seen_header_) {
    line_no_ = 1;
    return fail("empty trace: no header line");
  }
  if (!pending_stacks_.empty()) {
    auto first = pending_stacks_.begin();
    for (auto it = pending_stacks_.begin(); it != pending_stacks_.end(); ++it)
      if (it->second < first->second) first = it;
    line_no_ = first->second;
    return fail("stack id " + std::to_string(first->first) + " is used but never defined");
  }
  return true;
}

// [data, data + size) is a run of complete lines, the last one ending in
// '\n'; at least SIMDJSON_PADDING readable bytes follow it.
bool Reader::lines(const char* data, std::size_t size, std::size_t batch_size) {
  // The header, and anything before it, precisely.
  while (!seen_header_ && size > 0) {
    const char* nl = static_cast<const char*>(std::memchr(data, '\n', size));
    std::size_t line_size = static_cast<std::size_t>(nl - data);
    if (!precise_line(data, line_size)) return false;
    data += line_size + 1;
    size -= line_size + 1;
  }
  std::size_t pos = 0;
  simdjson::ondemand::document_stream stream;
  if (size > 0 && !stream_parser_.iterate_many(data, size, batch_size).get(stream)) {
    for (auto it = stream.begin(); it != stream.end() && pos < size; ++it) {
      if (it.error()) break;  // bad JSON somewhere ahead: the precise path says where
      const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', size - pos));
      std::size_t line_size = static_cast<std::size_t>(nl - (data + pos));
      // Blank lines between records.
      while (data[pos] != '{' && is_blank(data + pos, line_size)) {
        if (!precise_line(data + pos, line_size)) return false;
        pos += line_size + 1;
        if (pos == size) break;
        nl = static_cast<const char*>(std::memchr(data + pos, '\n', size - pos));
        line_size = static_cast<std::size_t>(nl - (data + pos));
      }
      if (pos == size) break;
      // The document starts where the line starts (fast_record checks that
      // it also ends on this line).
      if (it.current_index() != pos || data[pos] != '{' || line_size > kMaxLine) break;
      ++line_no_;
      Fast outcome = Fast::kDeclined;
      simdjson::ondemand::document_reference document;
      if (!(*it).get(document)) outcome = fast_record(it, document, data + pos, line_size);
      if (outcome == Fast::kFailed) return false;
      if (outcome == Fast::kDeclined &&
          !line(data + pos, line_size, line_size + simdjson::SIMDJSON_PADDING, true))
        return false;
      pos += line_size + 1;
    }
  }
  // Whatever the fast path did not reach, line by line.
  while (pos < size) {
    const char* nl = static_cast<const char*>(std::memchr(data + pos, '\n', size - pos));
    std::size_t line_size = static_cast<std::size_t>(nl - (data + pos));
    if (!precise_line(data + pos, line_size)) return false;
    pos += line_size + 1;
  }
  return true;
}

// One line, newline excluded, through the DOM parser.
bool Reader::precise_line(const char* data, std::size_t size) {
  ++line_no_;
  if (size > kMaxLine) return fail("record longer than " + std::to_string(kMaxLine) + " bytes");
  return line(data, size, size + simdjson::SIMDJSON_PADDING, true);
}

// An event record through On-Demand. kDeclined leaves nothing behind: no
// event was delivered and no state changed, so the precise path can read the
// same line. kFailed: the record is invalid and *error_ says why, exactly as
// the precise path would have.
Reader::Fast Reader::fast_record(simdjson::ondemand::document_stream::iterator& it,
                                 simdjson::ondemand::document_reference document,
                                 const char* line, std::size_t size) {
  simdjson::ondemand::object object;
  if (document.get_object().get(object)) return Fast::kDeclined;
  Fields f;
  for (auto member : object) {
    simdjson::ondemand::field field;
    if (std::move(member).get(field)) return Fast::kDeclined;
    const Field key = lookup_raw_key(field.key().raw());
    if (key == kUnknownField) return Fast::kDeclined;
    simdjson::ondemand::value value = field.value();
    switch (kFieldType[key]) {
      case Type::kUint:
        if (value.get_uint64().get(f.*kUintMember[key])) return Fast::kDeclined;
        break;
      case Type::kString: {
        // Every known string value is a plain word: taken in place; one
        // with an escape goes to the precise path, which decodes it.
        simdjson::ondemand::raw_json_string raw_string;
        if (value.get_raw_json_string().get(raw_string)) return Fast::kDeclined;
        const char* text = raw_string.raw();
        bool escaped = false;
        const std::size_t length = plain_string_length(text, &escaped);
        if (escaped) return Fast::kDeclined;
        f.*kStringMember[key] = std::string_view(text, length);
        break;
      }
      case Type::kBool:
        if (value.get_bool().get(f.*kBoolMember[key])) return Fast::kDeclined;
        break;
      case Type::kArray:
        return Fast::kDeclined;  // stack frames: definitions are rare
    }
    f.present |= 1u << key;
  }
  // The object must be this line and nothing else. Stage 1 rejects a raw
  // newline inside a string, so when the token after the closing brace
  // starts the next line, the object ended on this one. Otherwise (the last
  // line of the buffer, a blank line next, anything odd) compare the
  // document's extent with the line, allowing only a trailing '\r'.
  const char* next = nullptr;
  if (document.current_location().get(next) || next != line + size + 1) {
    std::size_t body = size;
    if (body > 0 && line[body - 1] == '\r') --body;
    std::string_view source = it.source();
    if (source.data() != line || source.size() != body) return Fast::kDeclined;
  }
  EventKind kind;
  if (!(f.present & kT) || !parse_trace_name(f.t, &kind)) return Fast::kDeclined;
  return event(f, kind) ? Fast::kTaken : Fast::kFailed;
}

bool Reader::line(const char* data, std::size_t size, std::size_t capacity, bool has_newline) {
  if (size > 0 && data[size - 1] == '\r') --size;
  std::size_t i = 0;
  while (i < size && (data[i] == ' ' || data[i] == '\t')) ++i;
  if (i == size) {
    if (!seen_header_) return fail("empty trace: no header line");
    return true;  // blank lines between records are allowed
  }
  simdjson::dom::element root;
  auto err = parser_.parse(reinterpret_cast<const std::uint8_t*>(data), size, false).get(root);
  (void)capacity;  // the padding is guaranteed by the caller's buffer
  if (err) {
    if (ends_inside_value(data, size))
      return fail(has_newline ? "truncated record: the line ends inside a JSON value"
                              : "truncated record at end of file");
    return fail(std::string("malformed JSON: ") + simdjson::error_message(err));
  }
  if (!seen_header_) {
    if (!header(root)) return false;
    seen_header_ = true;
    return true;
  }
  return record(root);
}

bool Reader::header(simdjson::dom::element root) {
  simdjson::dom::object object;
  if (root.get_object().get(object))
    return fail("not an xstream-check trace: the first line must be a header object");
  std::string_view format;
  if (object["format"].get_string().get(format) || format != kTraceFormatName)
    return fail("not an xstream-check trace: header lacks \"format\":\"xstream-trace\"");
  std::uint64_t version = 0;
  auto version_field = object["version"];
  if (version_field.error()) return fail("header lacks field 'version'");
  if (version_field.get_uint64().get(version)) return fail("header field 'version' must be an unsigned integer");
  if (version < kOldestTraceVersion || version > kTraceVersion)
    return fail("unsupported trace version " + std::to_string(version) + " (this reader reads versions " +
                std::to_string(kOldestTraceVersion) + " to " + std::to_string(kTraceVersion) + ")");
  version_ = version;
  TraceHeader h;
  h.version = version;
  auto pid_field = object["pid"];
  if (pid_field.error()) return fail("header lacks field 'pid'");
  if (pid_field.get_int64().get(h.pid) || h.pid < 0)
    return fail("header field 'pid' must be a non-negative integer");
  auto program_field = object["program"];
  if (!program_field.error()) {
    std::string_view program;
    if (program_field.get_string().get(program)) return fail("header field 'program' must be a string");
    h.program = program;
  }
  auto rank_field = object["rank"];
  if (!rank_field.error()) {
    std::int64_t rank = 0;
    if (rank_field.get_int64().get(rank) || rank < -1 || rank > (1 << 30))
      return fail("header field 'rank' must be an integer rank");
    h.rank = static_cast<int>(rank);
  }
  // Optional: a rewritten old trace keeps saying what it may lack. A
  // version older than kOwnStreamUsesTraceVersion lacks it whatever it says.
  h.own_stream_uses = version >= kOwnStreamUsesTraceVersion;
  auto own_field = object["own_stream_uses"];
  if (!own_field.error()) {
    bool own = true;
    if (own_field.get_bool().get(own)) return fail("header field 'own_stream_uses' must be true or false");
    h.own_stream_uses = h.own_stream_uses && own;
  }
  if (header_ != nullptr) *header_ = std::move(h);
  return true;
}

bool Reader::decode(simdjson::dom::object object, Fields* f) {
  for (auto [key, value] : object) {
    const Field field = lookup_key(key);
    if (field == kUnknownField) continue;
    bool bad = false;
    switch (kFieldType[field]) {
      case Type::kUint: {
        std::uint64_t v = 0;
        bad = value.get_uint64().get(v) != simdjson::SUCCESS;
        f->*kUintMember[field] = v;
        break;
      }
      case Type::kString: {
        std::string_view v;
        bad = value.get_string().get(v) != simdjson::SUCCESS;
        f->*kStringMember[field] = v;
        break;
      }
      case Type::kBool:
        bad = value.get_bool().get(f->*kBoolMember[field]) != simdjson::SUCCESS;
        break;
      case Type::kArray:
        bad = value.get_array().get(f->frames) != simdjson::SUCCESS;
        break;
    }
    if (bad) return fail("field '" + std::string(key) + "' must be " + type_word(kFieldType[field]));
    f->present |= 1u << field;
  }
  return true;
}

bool Reader::bad_range(const Fields& f) {
  if (f.n > kMaxRangeBytes) return fail("absurd size " + std::to_string(f.n) + " bytes");
  return fail("address range overflows");
}

bool Reader::missing_field(const Fields& f, std::uint32_t bits, std::string_view what) {
  std::uint32_t missing = bits & ~f.present;
  std::uint32_t first = missing & (~missing + 1);
  return fail("'" + std::string(what) + "' record lacks field '" + field_name(first) + "'");
}

bool Reader::record(simdjson::dom::element root) {
  simdjson::dom::object object;
  if (root.get_object().get(object)) return fail("record is not a JSON object");
  Fields f;
  if (!decode(object, &f)) return false;
  if (!(f.present & kT)) return fail("record lacks field 't' (its type)");
  if (f.t == "name") return name_definition(f);
  if (f.t == "stack") return stack_definition(f);
  EventKind kind;
  if (!parse_trace_name(f.t, &kind)) return fail("unknown event kind '" + std::string(f.t) + "'");
  return event(f, kind);
}

bool Reader::name_definition(const Fields& f) {
  // Events before a definition reach the consumer before the definition
  // changes the name table, as they would one at a time.
  flush();
  if (!require(f, kId | kStr, "name")) return false;
  if (f.id == 0) return fail("name id 0 is reserved");
  NameId id = names_.intern(f.str);
  auto [it, inserted] = name_ids_.emplace(f.id, id);
  if (!inserted && it->second != id)
    return fail("name id " + std::to_string(f.id) + " is defined twice with different text");
  return true;
}

bool Reader::stack_definition(const Fields& f) {
  flush();  // as for names
  if (!require(f, kId | kFrames, "stack")) return false;
  if (f.id == 0) return fail("stack id 0 is reserved");
  if (f.frames.size() > kMaxFrames)
    return fail("stack has " + std::to_string(f.frames.size()) + " frames (at most " +
                std::to_string(kMaxFrames) + ")");
  std::vector<Frame> frames;
  frames.reserve(f.frames.size());
  std::size_t index = 0;
  for (simdjson::dom::element element : f.frames) {
    simdjson::dom::object object;
    if (element.get_object().get(object))
      return fail("stack frame " + std::to_string(index) + " is not an object");
    Frame frame;
    for (auto [key, value] : object) {
      std::string_view text;
      std::uint64_t number = 0;
      auto bad_type = [&](const char* type) {
        return fail("stack frame " + std::to_string(index) + " field '" + std::string(key) + "' must be " + type);
      };
      if (key == "fn" || key == "file" || key == "mod") {
        if (value.get_string().get(text)) return bad_type("a string");
        (key == "fn" ? frame.function : key == "file" ? frame.file : frame.module) = text;
      } else if (key == "line") {
        if (value.get_uint64().get(number) || number > 0xffffffffu) return bad_type("a line number");
        frame.line = static_cast<std::uint32_t>(number);
      } else if (key == "pc") {
        if (value.get_uint64().get(number)) return bad_type("an unsigned integer");
        frame.pc = number;
      } else if (key == "node") {
        bool node = false;
        if (value.get_bool().get(node)) return bad_type("true or false");
        if (version_ < 5)
          return fail("stack frame " + std::to_string(index) +
                      " field 'node' needs trace version 5 (the header says " +
                      std::to_string(version_) + ")");
        frame.autograd_node = node;
      }
    }
    frames.push_back(std::move(frame));
    ++index;
  }
  auto it = stack_ids_.find(f.id);
  if (it == stack_ids_.end()) {
    stack_ids_.emplace(f.id, stacks_.intern_frames(std::move(frames)));
    return true;
  }
  auto pending = pending_stacks_.find(f.id);
  if (pending == pending_stacks_.end())
    return fail("stack id " + std::to_string(f.id) + " is defined twice");
  stacks_.define(it->second, std::move(frames));
  pending_stacks_.erase(pending);
  return true;
}

bool Reader::map_name_uncached(std::uint64_t trace_id, NameId* out) {
  if (trace_id == 0) {
    *out = kNoName;
    return true;
  }
  auto it = name_ids_.find(trace_id);
  if (it == name_ids_.end()) return fail("name id " + std::to_string(trace_id) + " is used before its definition");
  *out = it->second;
  name_cache_[trace_id % kIdCacheSlots] = {trace_id, it->second};
  return true;
}

StackId Reader::map_stack_uncached(std::uint64_t trace_id) {
  if (trace_id == 0) return kNoStack;
  auto it = stack_ids_.find(trace_id);
  StackId id;
  if (it != stack_ids_.end()) {
    id = it->second;
  } else {
    // Defined later in the file (a producer may symbolize lazily).
    id = stacks_.reserve();
    stack_ids_.emplace(trace_id, id);
    pending_stacks_.emplace(trace_id, line_no_);
  }
  stack_cache_[trace_id % kIdCacheSlots] = {trace_id, id};
  return id;
}

bool Reader::event(const Fields& f, EventKind kind) {
  std::string_view what = f.t;
  Event e;
  e.kind = kind;
  if (f.th > 0xffffffffu) return fail("thread number " + std::to_string(f.th) + " is out of range");
  e.thread = static_cast<ThreadId>(f.th);
  auto enum_field = [&](std::uint32_t bit, std::string_view text, auto* out) {
    if (!require(f, bit, what)) return false;
    if (!parse_trace_name(text, out))
      return fail("bad value '" + std::string(text) + "' for field '" + field_name(bit) + "'");
    return true;
  };
  auto check_range = [&]() { return (f.n <= kMaxRangeBytes && f.a + f.n >= f.a) || bad_range(f); };
  switch (kind) {
    case EventKind::kStreamCreate:
      if (!require(f, kS, what) || !enum_field(kFl, f.fl, &e.stream_flags)) return false;
      e.stream = f.s;
      break;
    case EventKind::kStreamDestroy:
    case EventKind::kStreamSync:
      if (!require(f, kS, what)) return false;
      e.stream = f.s;
      break;
    case EventKind::kHostFunc:
      if (!require(f, kS, what)) return false;
      e.stream = f.s;
      e.event = f.e;  // the token, optional
      break;
    case EventKind::kAlloc:
      if (!require(f, kA | kN | kS, what) || !enum_field(kAk, f.ak, &e.alloc_kind) || !check_range())
        return false;
      if (e.alloc_kind == AllocKind::kPinnedHost && version_ < 4)
        return fail("allocation of kind 'pinned' needs trace version 4");
      e.addr = f.a;
      e.size = f.n;
      e.stream = f.s;
      break;
    case EventKind::kFree:
      if (!require(f, kA | kS, what) || !enum_field(kFk, f.fk, &e.free_kind)) return false;
      if (e.free_kind == FreeKind::kPinnedHost && version_ < 4)
        return fail("free of kind 'pinned' needs trace version 4");
      e.addr = f.a;
      e.stream = f.s;
      e.deferred = f.d;
      break;
    case EventKind::kFreeCompleted:
      if (!require(f, kA, what)) return false;
      e.addr = f.a;
      break;
    case EventKind::kUse:
      if (!require(f, kA | kN | kS, what) || !enum_field(kAc, f.ac, &e.access) ||
          !enum_field(kW, f.w, &e.what) || !check_range() || !map_name(f.nm, &e.name))
        return false;
      if (e.what == UseWhat::kOperator && version_ < 3)
        return fail("use of kind 'op' needs trace version 3");
      if ((f.present & (kSy | kPg)) && version_ < 4)
        return fail("use field '" + std::string(f.present & kSy ? "sy" : "pg") +
                    "' needs trace version 4");
      e.synchronous = f.sy;
      e.pageable = f.pg;
      e.addr = f.a;
      e.size = f.n;
      e.stream = f.s;
      e.graph = f.g;
      break;
    case EventKind::kEventRecord:
    case EventKind::kStreamWaitEvent:
      if (!require(f, kS | kE, what)) return false;
      e.stream = f.s;
      e.event = f.e;
      break;
    case EventKind::kEventSync:
      if (!require(f, kE, what)) return false;
      e.event = f.e;
      break;
    case EventKind::kDeviceSync:
      break;
    case EventKind::kGraphLaunch:
      if (!require(f, kS | kG, what) || !map_name(f.nm, &e.name)) return false;
      e.stream = f.s;
      e.graph = f.g;
      break;
    case EventKind::kThreadName:
      if (!require(f, kNm, what) || !map_name(f.nm, &e.name)) return false;
      break;
    case EventKind::kHostFuncRun:
    case EventKind::kHostFuncDone:
    case EventKind::kThreadCreate:
    case EventKind::kThreadStart:
      if (version_ < 2)
        return fail("event kind '" + std::string(what) + "' needs trace version 2");
      if (!require(f, kE, what)) return false;
      e.event = f.e;
      e.stream = f.s;  // host functions: the stream they were enqueued on
      break;
    case EventKind::kTest:
      if (version_ < 3)
        return fail("event kind '" + std::string(what) + "' needs trace version 3");
      if (!map_name(f.nm, &e.name)) return false;  // absent: no test is current
      break;
    case EventKind::kUnchecked:
      if (version_ < 4)
        return fail("event kind '" + std::string(what) + "' needs trace version 4");
      if (!require(f, kNm, what) || !map_name(f.nm, &e.name)) return false;
      break;
    case EventKind::kSyncRelease:
    case EventKind::kSyncAcquire:
      if (version_ < 6)
        return fail("event kind '" + std::string(what) + "' needs trace version 6");
      if (!require(f, kE, what)) return false;
      e.event = f.e;
      break;
  }
  e.stack = map_stack(f.sk);
  deliver(e);
  return true;
}

}  // namespace

bool read_trace(const std::string& path, NameTable& names, StackDepot& stacks,
                const std::function<void(const Event&)>& sink, TraceHeader* header,
                std::string* error) {
  Reader reader(path, names, stacks, &sink, nullptr, header, error);
  return reader.run();
}

bool read_trace_batched(const std::string& path, NameTable& names, StackDepot& stacks,
                        const EventBatchSink& sink, TraceHeader* header, std::string* error) {
  Reader reader(path, names, stacks, nullptr, &sink, header, error);
  return reader.run();
}

}  // namespace xsc
