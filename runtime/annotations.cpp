// The strong definitions behind include/xstream_check/annotations.h.
#define XSC_ANNOTATION_WEAK /* strong here */
// The header's inline wrappers test the (here strong) functions for null.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waddress"
#include "xstream_check/annotations.h"
#pragma GCC diagnostic pop

#include "runtime/cuda/ops.h"
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
  rt::on_alloc(reinterpret_cast<Addr>(ptr), size, rt::annotated_stream(stream),
               AllocKind::kCachingAllocator);
}

// A caching allocator's free is a host action: the block becomes reusable
// by later work on its allocation stream.
extern "C" __attribute__((visibility("default"))) void xsc_annotate_free(void* ptr,
                                                                         CUstream_st* stream) {
  if (ptr == nullptr || !rt::enabled()) return;
  rt::on_free(reinterpret_cast<Addr>(ptr), rt::annotated_stream(stream),
              FreeKind::kCachingAllocator);
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
  rt::emit_reported_device_use(event, "an annotated use");
}
