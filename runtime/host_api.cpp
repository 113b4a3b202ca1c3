// The xsc_host_api table (include/xstream_check/host_api.h) and the loading
// of run-time adapters that report through it (libxstream_torch.so).
#include "xstream_check/host_api.h"

#include <dlfcn.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/cuda/ops.h"
#include "runtime/rtl.h"
#include "runtime/timing.h"

namespace xsc::rt {
namespace {

StackId stack_or_capture(std::uint32_t stack) { return stack != 0 ? stack : capture_stack(); }

// Uses and collectives are launches as far as stacks go: the adapter's
// Python stack when it has one (an NCCL collective called from
// torch.distributed names its Python line). Not for allocations and frees:
// the caching allocator reports those holding its own mutex, where taking
// the GIL could deadlock.
StackId use_stack_or_capture(std::uint32_t stack) {
  return stack != 0 ? stack : capture_launch_stack();
}

StreamId adapter_stream(std::uint64_t handle) {
  return resolve(handle, /*per_thread_default=*/false);
}

// Locked::emit routes every event through capture_event (capture.cpp): a use
// or collective on a stream being captured becomes part of the graph, fed at
// each launch of it, exactly like a kernel launched there.
void emit_event(Event event) {
  Locked locked;
  if (locked) locked.emit(event);
}

std::vector<Frame> to_frames(const xsc_frame* frames, std::size_t n) {
  std::vector<Frame> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    Frame frame;
    if (frames[i].function != nullptr) frame.function = frames[i].function;
    if (frames[i].file != nullptr) frame.file = frames[i].file;
    frame.line = frames[i].line;
    out.push_back(std::move(frame));
  }
  return out;
}

std::uint32_t api_intern_frames(const xsc_frame* frames, size_t n) {
  Session* session = session_unlocked();
  if (session == nullptr || frames == nullptr || n == 0) return kNoStack;
  return session->stacks().intern_frames(to_frames(frames, n));
}

std::uint32_t api_intern_deferred(xsc_deferred_stack stack) {
  Session* session = session_unlocked();
  if (session == nullptr || stack.resolve == nullptr) {
    if (stack.release != nullptr) stack.release(stack.context);
    return kNoStack;
  }
  return session->stacks().intern_deferred([stack]() {
    constexpr std::size_t kCap = 128;
    xsc_frame frames[kCap] = {};
    std::size_t n = stack.resolve(stack.context, frames, kCap);
    if (n > kCap) n = kCap;
    std::vector<Frame> out = to_frames(frames, n);
    if (stack.release != nullptr) stack.release(stack.context);
    return out;
  });
}

void api_alloc(std::uint64_t addr, std::uint64_t size, std::uint64_t stream, int alloc_kind,
               std::uint32_t stack) {
  const PartScope part(Part::kAdapterEvents);
  if (addr == 0 || !enabled() || alloc_kind < 0 || alloc_kind > 3) return;
  if (alloc_kind == XSC_ALLOC_PINNED_HOST) note_pinned_memory();
  Event event;
  event.kind = EventKind::kAlloc;
  event.addr = addr;
  event.size = size;
  event.stream = adapter_stream(stream);
  event.alloc_kind = static_cast<AllocKind>(alloc_kind);
  event.stack = stack_or_capture(stack);
  emit_event(event);
}

void api_free(std::uint64_t addr, std::uint64_t stream, int free_kind, int deferred,
              std::uint32_t stack) {
  const PartScope part(Part::kAdapterEvents);
  if (addr == 0 || !enabled() || free_kind < 0 || free_kind > 3) return;
  Event event;
  event.kind = EventKind::kFree;
  event.addr = addr;
  event.stream = adapter_stream(stream);
  event.free_kind = static_cast<FreeKind>(free_kind);
  event.deferred = deferred != 0;
  if (stack == 0 && event.free_kind == FreeKind::kCachingAllocator) {
    // No Python stack: a C++ thread (PyTorch's autograd workers free most
    // of the backward pass's blocks), whose native stack costs an unwind.
    // A caching block is released on its allocation stream, so one that
    // nothing but that stream ever used can never be reported as freed
    // unordered: it goes without a stack. (A raw pointer used after the
    // free would be reported without the free's stack.) Decided and
    // emitted under one lock; otherwise captured outside it, as usual.
    Locked locked;
    if (!locked) return;
    if (!locked.used_off_allocation_stream(addr) &&
        !graph_uses_pending(locked)) {
      note_stack(StackHow::kSkipped);
      locked.emit(event);
      return;
    }
  }
  event.stack = stack_or_capture(stack);
  emit_event(event);
}

void api_free_completed(std::uint64_t addr, std::uint32_t stack) {
  const PartScope part(Part::kAdapterEvents);
  if (addr == 0 || !enabled()) return;
  Event event;
  event.kind = EventKind::kFreeCompleted;
  event.addr = addr;
  event.stack = stack;  // completion is found by polling; its stack says little
  emit_event(event);
}

void emit_use(std::uint64_t addr, std::uint64_t size, std::uint64_t stream, int access,
              const char* name, std::uint32_t stack, UseWhat what) {
  const PartScope part(Part::kAdapterEvents);
  if (addr == 0 || !enabled()) return;
  Session* session = session_unlocked();
  if (session == nullptr) return;
  Event event;
  event.kind = EventKind::kUse;
  event.addr = addr;
  event.size = size;
  event.stream = adapter_stream(stream);
  event.access = access >= 0 && access <= 2 ? static_cast<Access>(access) : Access::kUnknown;
  event.what = what;
  event.name = name != nullptr ? session->names().intern(name) : kNoName;
  event.stack = use_stack_or_capture(stack);
  // A device use of pinned memory has host operators followed while it may
  // be pending, as a copy's does (host/pinned_uses.cpp).
  if (what == UseWhat::kHostAccess)
    emit_event(event);
  else
    emit_reported_device_use(event, name != nullptr ? name : "a reported use");
}

void api_use(std::uint64_t addr, std::uint64_t size, std::uint64_t stream, int access,
             const char* what, std::uint32_t stack) {
  emit_use(addr, size, stream, access, what, stack, UseWhat::kAnnotated);
}

void api_collective(std::uint64_t addr, std::uint64_t size, std::uint64_t stream, int access,
                    const char* name, std::uint32_t stack) {
  emit_use(addr, size, stream, access, name, stack, UseWhat::kCollective);
}

void api_notice(const char* message) {
  if (message != nullptr) notice(message);
}

void api_set_launch_stack_hook(std::uint32_t (*hook)(void)) { set_launch_stack_hook(hook); }

int api_operator_access_wanted() { return enabled() && options().torch_op_access ? 1 : 0; }

std::uint64_t api_enqueue_mark() { return enqueue_mark(); }

int api_enqueued_since(std::uint64_t stream, std::uint64_t mark) {
  return enqueued_since(adapter_stream(stream), mark) ? 1 : 0;
}

void api_operator_writes(const char* name, std::uint64_t stream, std::uint64_t mark,
                         const xsc_operator_write* writes, size_t n) {
  if (writes == nullptr) return;
  static_assert(sizeof(xsc_operator_write) == sizeof(OperatorWrite) &&
                offsetof(xsc_operator_write, addr) == offsetof(OperatorWrite, addr) &&
                offsetof(xsc_operator_write, size) == offsetof(OperatorWrite, size));
  on_operator_writes(name, adapter_stream(stream), mark,
                     reinterpret_cast<const OperatorWrite*>(writes), n);
}

int api_pinned_memory_seen() { return pinned_device_use_seen() ? 1 : 0; }

void api_host_access(std::uint64_t addr, std::uint64_t size, int access, const char* name,
                     std::uint32_t stack) {
  if (addr == 0 || size == 0 || !enabled() || !pinned_memory_seen()) return;
  {
    Locked locked;
    if (!locked) return;
    AllocInfo info;
    if (!locked.lookup_allocation(addr, &info) || info.kind != AllocKind::kPinnedHost) return;
    const std::uint64_t end = info.addr + info.size;
    if (size > end - addr) size = end - addr;  // cut to the allocation
  }
  // The lock is released: the stack may come from the launch stack hook,
  // which takes the GIL.
  emit_use(addr, size, 0, access, name, stack, UseWhat::kHostAccess);
}

void api_set_thread_start_hook(void (*hook)(void)) { set_thread_start_hook(hook); }

void api_set_pinned_memory_hook(void (*hook)(void)) { set_pinned_memory_hook(hook); }
void api_set_pinned_pending_hook(void (*hook)(int)) { set_pinned_pending_hook(hook); }

std::uint32_t api_backward_stack(const char* node, std::uint32_t forward_stack) {
  Session* session = session_unlocked();
  if (session == nullptr || node == nullptr || *node == '\0' || forward_stack == kNoStack)
    return kNoStack;
  std::vector<Frame> frames = session->stacks().frames(forward_stack);
  if (frames.empty()) return kNoStack;
  Frame head;
  head.function = node;
  head.autograd_node = true;
  frames.insert(frames.begin(), std::move(head));
  return session->stacks().intern_frames(std::move(frames));
}

void api_kernel_params(std::uint64_t function, const xsc_kernel_param* params, size_t n) {
  if (params == nullptr || n > 4096) return;
  std::vector<DeclaredParam> declared(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (params[i].access == XSC_PARAM_READ) {
      declared[i].access = DeclaredAccess::kRead;
    } else if (params[i].access == XSC_PARAM_WRITES_ARRAY) {
      declared[i].access = DeclaredAccess::kWritesArray;
      declared[i].itemsize = params[i].itemsize;
      declared[i].ndim = params[i].ndim;
    }
  }
  declare_kernel_params(function, declared.data(), declared.size());
}

int api_parts_timed() { return callback_timing_on.load(std::memory_order_relaxed) ? 1 : 0; }

int api_part_enter(int part) {
  if (part != XSC_PART_OPERATOR_HOOK && part != XSC_PART_CONTEXT_RECORDER)
    return PartScope::kOff;
  return xsc::rt::part_enter(static_cast<Part>(part));
}

void api_part_leave(int outer) { xsc::rt::part_leave(outer); }

static_assert(XSC_PART_OPERATOR_HOOK == static_cast<int>(Part::kOperatorHook));
static_assert(XSC_PART_CONTEXT_RECORDER == static_cast<int>(Part::kContextRecorder));

const xsc_host_api kHostApi = {
    XSC_HOST_API_VERSION,
    api_intern_frames,
    api_intern_deferred,
    api_alloc,
    api_free,
    api_free_completed,
    api_use,
    api_notice,
    api_collective,
    api_set_launch_stack_hook,
    api_operator_access_wanted,
    api_enqueue_mark,
    api_enqueued_since,
    api_operator_writes,
    api_pinned_memory_seen,
    api_host_access,
    api_set_thread_start_hook,
    api_set_pinned_memory_hook,
    api_backward_stack,
    api_parts_timed,
    api_part_enter,
    api_part_leave,
    api_set_pinned_pending_hook,
    api_kernel_params,
};

std::string own_directory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<const void*>(&kHostApi), &info) == 0 || info.dli_fname == nullptr)
    return ".";
  std::string path = info.dli_fname;
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::atomic<bool> torch_adapter_tried{false};
// xsc_torch_poll of the attached adapter until it reports that nothing is
// left to do (the allocator hooks are in, or cannot be).
using PollFn = int (*)(void);
std::atomic<PollFn> torch_adapter_poll{nullptr};

}  // namespace

void maybe_attach_torch_adapter() {
  if (torch_adapter_tried.load(std::memory_order_relaxed) || !enabled()) return;
  // RTLD_NOLOAD only answers whether PyTorch's CUDA library is already in
  // the process; it loads nothing.
  void* c10_cuda = dlopen("libc10_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
  if (c10_cuda == nullptr) return;
  dlclose(c10_cuda);
  if (torch_adapter_tried.exchange(true)) return;
  // XSC_TORCH_ADAPTER names another adapter file (a path that does not
  // exist turns the adapter off, with the usual one-line notice).
  const char* override_path = std::getenv("XSC_TORCH_ADAPTER");
  const std::string path = override_path != nullptr && *override_path != '\0'
                               ? std::string(override_path)
                               : own_directory() + "/libxstream_torch.so";
  void* adapter = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (adapter == nullptr) {
    const char* why = dlerror();
    notice("PyTorch is loaded but its allocator adapter is not (" +
           std::string(why != nullptr ? why : path) +
           "); caching-allocator frees are not checked");
    return;
  }
  auto attach = reinterpret_cast<xsc_adapter_attach_fn>(dlsym(adapter, "xsc_torch_attach"));
  if (attach == nullptr) {
    notice(path + " has no xsc_torch_attach; caching-allocator frees are not checked");
    return;
  }
  // On failure the adapter prints its own notice. 0: it waits for PyTorch's
  // lazy CUDA initialization, and must be polled.
  if (attach(&kHostApi) == 0) {
    if (auto poll = reinterpret_cast<PollFn>(dlsym(adapter, "xsc_torch_poll")))
      torch_adapter_poll.store(poll, std::memory_order_release);
  }
}

void poll_torch_adapter() {
  PollFn poll = torch_adapter_poll.load(std::memory_order_acquire);
  if (poll == nullptr) return;
  // Installing the hooks may make CUDA calls, whose callbacks come back here.
  thread_local bool polling = false;
  if (polling) return;
  polling = true;
  const int done = poll();
  polling = false;
  if (done != 0) torch_adapter_poll.store(nullptr, std::memory_order_release);
}

}  // namespace xsc::rt

extern "C" __attribute__((visibility("default"))) const xsc_host_api* xsc_runtime_host_api(void) {
  return xsc::rt::enabled() ? &xsc::rt::kHostApi : nullptr;
}
