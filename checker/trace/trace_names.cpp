// The trace format's spellings of the event model's enums.
#include <array>

#include "checker/trace/trace.h"

namespace xsc {
namespace {

template <typename Enum, std::size_t N>
using Table = std::array<std::pair<Enum, std::string_view>, N>;

constexpr Table<EventKind, kNumEventKinds> kEventKinds = {{
    {EventKind::kStreamCreate, "stream_create"},
    {EventKind::kStreamDestroy, "stream_destroy"},
    {EventKind::kAlloc, "alloc"},
    {EventKind::kFree, "free"},
    {EventKind::kFreeCompleted, "free_done"},
    {EventKind::kUse, "use"},
    {EventKind::kEventRecord, "record"},
    {EventKind::kStreamWaitEvent, "wait"},
    {EventKind::kStreamSync, "stream_sync"},
    {EventKind::kEventSync, "event_sync"},
    {EventKind::kDeviceSync, "device_sync"},
    {EventKind::kHostFunc, "host_func"},
    {EventKind::kGraphLaunch, "graph_launch"},
    {EventKind::kThreadName, "thread_name"},
    {EventKind::kHostFuncRun, "host_func_run"},
    {EventKind::kHostFuncDone, "host_func_done"},
    {EventKind::kThreadCreate, "thread_create"},
    {EventKind::kThreadStart, "thread_start"},
    {EventKind::kTest, "test"},
    {EventKind::kUnchecked, "unchecked"},  // version 4
    {EventKind::kSyncRelease, "sync_release"},  // version 6
    {EventKind::kSyncAcquire, "sync_acquire"},  // version 6
}};
constexpr Table<StreamFlags, 2> kStreamFlags = {{
    {StreamFlags::kBlocking, "blocking"},
    {StreamFlags::kNonBlocking, "non_blocking"},
}};
constexpr Table<AllocKind, 4> kAllocKinds = {{
    {AllocKind::kStreamOrdered, "stream_ordered"},
    {AllocKind::kCachingAllocator, "caching"},
    {AllocKind::kSynchronous, "sync"},
    {AllocKind::kPinnedHost, "pinned"},  // version 4
}};
constexpr Table<FreeKind, 4> kFreeKinds = {{
    {FreeKind::kStreamOrdered, "stream_ordered"},
    {FreeKind::kCachingAllocator, "caching"},
    {FreeKind::kSynchronous, "sync"},
    {FreeKind::kPinnedHost, "pinned"},  // version 4
}};
constexpr Table<Access, 3> kAccesses = {{
    {Access::kRead, "read"},
    {Access::kWrite, "write"},
    {Access::kUnknown, "unknown"},
}};
constexpr Table<UseWhat, 7> kWhats = {{
    {UseWhat::kKernel, "kernel"},
    {UseWhat::kMemcpy, "memcpy"},
    {UseWhat::kMemset, "memset"},
    {UseWhat::kCollective, "collective"},
    {UseWhat::kAnnotated, "annotated"},
    {UseWhat::kHostAccess, "host"},
    {UseWhat::kOperator, "op"},  // version 3
}};

template <typename Enum, std::size_t N>
std::string_view name_of(const Table<Enum, N>& table, Enum value) {
  for (const auto& [e, name] : table)
    if (e == value) return name;
  return "?";
}

template <typename Enum, std::size_t N>
bool value_of(const Table<Enum, N>& table, std::string_view text, Enum* out) {
  for (const auto& [e, name] : table) {
    if (name == text) {
      *out = e;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view trace_name(EventKind v) { return name_of(kEventKinds, v); }
std::string_view trace_name(StreamFlags v) { return name_of(kStreamFlags, v); }
std::string_view trace_name(AllocKind v) { return name_of(kAllocKinds, v); }
std::string_view trace_name(FreeKind v) { return name_of(kFreeKinds, v); }
std::string_view trace_name(Access v) { return name_of(kAccesses, v); }
std::string_view trace_name(UseWhat v) { return name_of(kWhats, v); }
bool parse_trace_name(std::string_view t, EventKind* out) { return value_of(kEventKinds, t, out); }
bool parse_trace_name(std::string_view t, StreamFlags* out) { return value_of(kStreamFlags, t, out); }
bool parse_trace_name(std::string_view t, AllocKind* out) { return value_of(kAllocKinds, t, out); }
bool parse_trace_name(std::string_view t, FreeKind* out) { return value_of(kFreeKinds, t, out); }
bool parse_trace_name(std::string_view t, Access* out) { return value_of(kAccesses, t, out); }
bool parse_trace_name(std::string_view t, UseWhat* out) { return value_of(kWhats, t, out); }

}  // namespace xsc
