// The strong definitions behind include/xstream_check/annotations.h.
#define XSC_ANNOTATION_WEAK /* strong here */
// The header's inline wrappers test the (here strong) functions for null.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress"
#include "xstream_check/annotations.h"
#pragma GCC diagnostic pop

#include "runtime/rtl.h"

namespace xsc::rt {
namespace {

StreamId annotated_stream(CUstream_st* stream) {
  return resolve(reinterpret_cast<std::uint64_t>(stream), /*per_thread_default=*/false);
}

}  // namespace
}  // namespace xsc::rt

using namespace xsc;

extern "C" __attribute__((visibility("default"))) void xsc_annotate_alloc(void* ptr, size_t size,
                                                                          CUstream_st* stream) {
  if (ptr == nullptr || !rt::enabled()) return;
  Event event;
  event.kind = EventKind::kAlloc;
  event.addr = reinterpret_cast<Addr>(ptr);
  event.size = size;
  event.stream = rt::annotated_stream(stream);
  event.alloc_kind = AllocKind::kCachingAllocator;
  event.stack = rt::capture_stack();
  rt::Locked locked;
  if (locked) locked.emit(event);
}

// A caching allocator's free is a host action: the block becomes reusable
// by later work on its allocation stream.
extern "C" __attribute__((visibility("default"))) void xsc_annotate_free(void* ptr,
                                                                         CUstream_st* stream) {
  if (ptr == nullptr || !rt::enabled()) return;
  Event event;
  event.kind = EventKind::kFree;
  event.addr = reinterpret_cast<Addr>(ptr);
  event.stream = rt::annotated_stream(stream);
  event.free_kind = FreeKind::kCachingAllocator;
  event.stack = rt::capture_stack();
  rt::Locked locked;
  if (locked) locked.emit(event);
}

extern "C" __attribute__((visibility("default"))) void xsc_annotate_use(void* ptr, size_t size,
                                                                        CUstream_st* stream,
                                                                        int is_write) {
  if (ptr == nullptr || !rt::enabled()) return;
  Event event;
  event.kind = EventKind::kUse;
  event.addr = reinterpret_cast<Addr>(ptr);
  event.size = size;
  event.stream = rt::annotated_stream(stream);
  event.what = UseWhat::kAnnotated;
  event.access = is_write ? Access::kWrite : Access::kRead;
  event.stack = rt::capture_stack();
  rt::Locked locked;
  if (locked) locked.emit(event);
}
