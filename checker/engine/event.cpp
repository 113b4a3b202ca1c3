// Spellings of the event model's enumerations. The trace format and the
// reports use exactly these words, so a change here is a format change.
#include "checker/engine/event.h"

#include <array>
#include <cstddef>

namespace xsc {
namespace {

constexpr std::array<std::string_view, kNumEventKinds> kEventKindNames = {
    "stream-create", "stream-destroy", "alloc",       "free",
    "free-completed", "use",           "event-record", "stream-wait-event",
    "stream-sync",   "event-sync",     "device-sync", "host-func",
    "graph-launch",  "thread-name",    "host-func-run", "host-func-done",
    "thread-create", "thread-start",   "test",          "unchecked",
    "sync-release",  "sync-acquire",
};
constexpr std::array<std::string_view, 2> kStreamFlagsNames = {"blocking",
                                                               "non-blocking"};
// Allocation and free kinds share their spellings.
constexpr std::array<std::string_view, 4> kMemoryKindNames = {
    "stream-ordered", "caching", "synchronous", "pinned-host"};
constexpr std::array<std::string_view, 3> kAccessNames = {"read", "write",
                                                          "unknown"};
constexpr std::array<std::string_view, 7> kUseWhatNames = {
    "kernel", "memcpy", "memset", "collective", "annotated", "host-access", "operator"};

template <std::size_t N>
std::string_view name_of(const std::array<std::string_view, N>& names,
                         std::size_t index) {
  return index < N ? names[index] : std::string_view("invalid");
}

template <typename Enum, std::size_t N>
bool parse_name(const std::array<std::string_view, N>& names,
                std::string_view text, Enum* out) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) {
      *out = static_cast<Enum>(i);
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view to_string(EventKind kind) {
  return name_of(kEventKindNames, static_cast<std::size_t>(kind));
}
std::string_view to_string(StreamFlags flags) {
  return name_of(kStreamFlagsNames, static_cast<std::size_t>(flags));
}
std::string_view to_string(AllocKind kind) {
  return name_of(kMemoryKindNames, static_cast<std::size_t>(kind));
}
std::string_view to_string(FreeKind kind) {
  return name_of(kMemoryKindNames, static_cast<std::size_t>(kind));
}
std::string_view to_string(Access access) {
  return name_of(kAccessNames, static_cast<std::size_t>(access));
}
std::string_view to_string(UseWhat what) {
  return name_of(kUseWhatNames, static_cast<std::size_t>(what));
}

bool parse(std::string_view text, EventKind* out) {
  return parse_name(kEventKindNames, text, out);
}
bool parse(std::string_view text, StreamFlags* out) {
  return parse_name(kStreamFlagsNames, text, out);
}
bool parse(std::string_view text, AllocKind* out) {
  return parse_name(kMemoryKindNames, text, out);
}
bool parse(std::string_view text, FreeKind* out) {
  return parse_name(kMemoryKindNames, text, out);
}
bool parse(std::string_view text, Access* out) {
  return parse_name(kAccessNames, text, out);
}
bool parse(std::string_view text, UseWhat* out) {
  return parse_name(kUseWhatNames, text, out);
}

}  // namespace xsc
