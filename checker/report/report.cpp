// Wording and identities shared by every report format.
#include "checker/report/report.h"

#include <cinttypes>
#include <cstdio>

namespace xsc {

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::vector<const Finding*> reported_findings(const std::vector<Finding>& findings,
                                              const ReportContext& context) {
  std::vector<const Finding*> all;
  for (const Finding& f : findings) all.push_back(&f);
  if (context.latent)
    for (const Finding& f : *context.latent) all.push_back(&f);
  return all;
}

void write_report(ReportFormat format, const std::vector<Finding>& findings,
                  const ReportContext& context, std::ostream& out) {
  switch (format) {
    case ReportFormat::kText: write_text_report(findings, context, out); break;
    case ReportFormat::kJson: write_json_report(findings, context, out); break;
    case ReportFormat::kSarif: write_sarif_report(findings, context, out); break;
  }
  out.flush();
}

std::string describe_stream(StreamId stream) {
  if (stream == kLegacyStream) return "stream 0 (legacy default)";
  // A stand-in for a branch of a launched graph, not a stream the
  // application has: named by its number among the stand-ins.
  if ((stream & kGraphBranchStreamBit) != 0 && (stream >> 63) == 0)
    return "graph branch " + std::to_string(stream & ~kGraphBranchStreamBit);
  return "stream " + hex(stream);
}

std::string_view what_word(UseWhat what) {
  switch (what) {
    case UseWhat::kKernel: return "kernel";
    case UseWhat::kMemcpy: return "memcpy";
    case UseWhat::kMemset: return "memset";
    case UseWhat::kCollective: return "collective";
    case UseWhat::kAnnotated: return "annotated use";
    case UseWhat::kHostAccess: return "host access";
    case UseWhat::kOperator: return "operator";
  }
  return "use";
}

std::string describe_use(const UseInfo& use, const NameTable& names) {
  std::string text;
  if (use.what == UseWhat::kMemcpy && use.synchronous) text = "synchronous ";
  text += what_word(use.what);
  std::string_view name = names.get(use.name);
  if (!name.empty()) {
    text += " \"";
    text += name;
    text += '"';
  }
  if (use.graph != 0) text += " in graph " + hex(use.graph);
  if (use.what == UseWhat::kMemcpy && use.synchronous && use.pageable)
    text += " from pageable host memory";
  return text;
}

std::string_view access_word(Access access) {
  switch (access) {
    case Access::kRead: return "read";
    case Access::kWrite: return "write";
    case Access::kUnknown: return "";
  }
  return "";
}

std::string_view access_name(Access access) {
  std::string_view word = access_word(access);
  return word.empty() ? "unknown" : word;
}

std::string_view free_kind_word(FreeKind kind) {
  switch (kind) {
    case FreeKind::kStreamOrdered: return "stream-ordered free";
    case FreeKind::kCachingAllocator: return "caching-allocator free";
    case FreeKind::kSynchronous: return "synchronous free";
    case FreeKind::kPinnedHost: return "pinned host memory free";
  }
  return "free";
}

std::string_view alloc_kind_word(AllocKind kind) {
  switch (kind) {
    case AllocKind::kStreamOrdered: return "stream-ordered allocation";
    case AllocKind::kCachingAllocator: return "caching-allocator allocation";
    case AllocKind::kSynchronous: return "synchronous allocation";
    case AllocKind::kPinnedHost: return "pinned host allocation";
  }
  return "allocation";
}

std::string_view headline(FindingKind kind) {
  switch (kind) {
    case FindingKind::kUnorderedFree: return "unordered free";
    case FindingKind::kUseAfterFree: return "use after free";
    case FindingKind::kUseBeforeReady: return "use before ready";
    case FindingKind::kReuseRace: return "reuse race";
    case FindingKind::kWriteAfterRead: return "write after read";
  }
  return "finding";
}

// The device work a host access of pinned memory must wait for, as the fix
// names it: mostly a copy, but a kernel may read or write pinned memory
// itself.
const char* device_work(const UseInfo& earlier) {
  switch (earlier.what) {
    case UseWhat::kMemcpy: return "copy";
    case UseWhat::kMemset: return "memset";
    case UseWhat::kKernel: return "kernel";
    default: return "device's use";
  }
}

std::string fix_advice(const Finding& f) {
  std::string use_stream = describe_stream(f.use.stream);
  // Two nodes of one graph launch: their order is the graph's, made where
  // the graph was captured, not at the launch.
  if ((f.kind == FindingKind::kUseBeforeReady || f.kind == FindingKind::kWriteAfterRead) &&
      f.has_earlier && f.use.graph != 0 && f.use.graph == f.earlier.graph)
    return "order the two nodes inside graph " + hex(f.use.graph) +
           " where it is captured: record an event after the first on the stream that captured "
           "it and make the stream that captures the second wait on it first";
  switch (f.kind) {
    case FindingKind::kUnorderedFree: {
      if (f.free.kind == FreeKind::kSynchronous)
        return "a synchronous free does not wait for other streams: synchronize the host with " +
               use_stream + " (or with an event recorded after its last use) before the free";
      // A caching allocator hands the block back on its allocation stream, so
      // that is the stream that must be ordered after the use.
      StreamId ordered = f.free.kind == FreeKind::kCachingAllocator ? f.alloc.stream : f.free.stream;
      return "record an event on " + use_stream + " after its last use and make " +
             describe_stream(ordered) + " wait on it before the free (or free it on " + use_stream +
             ", or synchronize the host with " + use_stream + " before the free)";
    }
    case FindingKind::kUseAfterFree:
      return "do not use the buffer after its free: move the free after its last use on " + use_stream +
             " (if that use is on another stream than the free, order the free after it with an event)";
    case FindingKind::kUseBeforeReady:
      if (f.use.what == UseWhat::kHostAccess && f.has_earlier)
        return "synchronize the host with " + describe_stream(f.earlier.stream) + " after the " +
               device_work(f.earlier) +
               " and before the host reads the memory (stream.synchronize(), "
               "cudaStreamSynchronize, or an event recorded after it and synchronized; "
               "torch.cuda.synchronize() or cudaDeviceSynchronize also do)";
      if (f.has_earlier)
        return "make " + use_stream + " wait for " + describe_stream(f.earlier.stream) +
               " (record an event on it after the write, or wait_stream) before the use";
      return "record an event on " + describe_stream(f.alloc.stream) +
             " after the allocation and make " + use_stream +
             " wait on it before the use (or use the buffer on " + describe_stream(f.alloc.stream) +
             ")";
    case FindingKind::kWriteAfterRead:
      if (f.use.what == UseWhat::kHostAccess)
        return "synchronize the host with " + describe_stream(f.earlier.stream) + " after the " +
               device_work(f.earlier) +
               " and before the host writes the memory again (stream.synchronize(), "
               "cudaStreamSynchronize, or an event recorded after it and synchronized), or "
               "write the next batch into another pinned buffer";
      return "make " + use_stream + " wait for " + describe_stream(f.earlier.stream) +
             " (record an event on it after that use, or wait_stream) before the write";
    case FindingKind::kReuseRace: {
      const std::string racing = describe_stream(f.reuse.use.stream);
      return "make " + racing + " wait for " + use_stream +
             " (record an event on it after its last use of this memory, or wait_stream) before "
             "this use, or allocate the buffer under " + racing + " after that wait";
    }
  }
  return "";
}

std::string_view pageable_copy_note() {
  return "the write is a synchronous copy from pageable host memory, which may return before the "
         "device has the data: \"For transfers from pageable host memory to device memory, ... "
         "The function will return once the pageable buffer has been copied to the staging memory "
         "for DMA transfer to device memory, but the DMA to final destination may not have "
         "completed.\" (CUDA Runtime API, API synchronization behavior); a stream that does not "
         "synchronize with the copy's stream (a non-blocking one) may read the old bytes";
}

StackId primary_stack(const Finding& f) {
  switch (f.kind) {
    case FindingKind::kUnorderedFree: return f.free.stack;
    case FindingKind::kReuseRace: return f.reuse.use.stack;
    default: return f.use.stack;
  }
}

namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// `prefix` followed by an upper-case letter: cudaFreeAsync, cuMemFree_v2.
bool api_name(std::string_view fn, std::string_view prefix) {
  return fn.size() > prefix.size() && starts_with(fn, prefix) && fn[prefix.size()] >= 'A' &&
         fn[prefix.size()] <= 'Z';
}

}  // namespace

std::string_view cuda_frame_role(const Frame& frame) {
  const std::string_view fn = frame.function;
  const std::string_view file = frame.file;
  const std::string_view module = base_name(frame.module);
  // nvcc's generated launch stubs, the file it generates them in, and the
  // toolkit's launch helper they inline (crt/device_functions.h).
  if (fn.find("__device_stub__") != std::string_view::npos || ends_with(file, ".cudafe1.stub.c") ||
      starts_with(fn, "__cudaLaunchKernel") || ends_with(file, "crt/device_functions.h"))
    return "kernel launch stub";
  if (starts_with(module, "libcuda.so")) return "CUDA driver";
  if (starts_with(module, "libcudart")) return "CUDA runtime";
  // The runtime's inline templates (cudaLaunchKernel<T>, cudaMallocAsync<T>)
  // compiled into the program, with the toolkit's headers as their files.
  const std::string_view header = base_name(file);
  if (header == "cuda_runtime.h" || header == "cuda_runtime_api.h") return "CUDA runtime";
  // A statically linked runtime carries no line information: its entry
  // points and internals are known by name.
  if (file.empty() && (starts_with(fn, "__cudart") || api_name(fn, "cuda"))) return "CUDA runtime";
  if (file.empty() && api_name(fn, "cu")) return "CUDA driver";
  // xstream-check's own annotation functions (static inline in the public
  // header): the site is the program's line that calls them.
  if (ends_with(file, "xstream_check/annotations.h") || starts_with(fn, "XSC_ANNOTATE_"))
    return "annotation";
  return "";
}

namespace {

// A frame of xstream-check itself: its runtime (libxstream_check.so) or
// PyTorch adapter (libxstream_torch.so), which every native frame the
// runtime records names as its module (inlined calls too: an interposed
// cuBLAS entry point's `interpose<...>` from runtime/libs/cublas/cublas.cpp), or a
// function of its namespace, when a producer left the module out.
bool own_frame(const Frame& frame) {
  const std::string_view module = base_name(frame.module);
  return starts_with(module, "libxstream_check") || starts_with(module, "libxstream_torch") ||
         starts_with(frame.function, "xsc::");
}

// `file` inside an installed torch package: "torch/..." relative (as a
// producer may strip the prefix), or ".../site-packages/torch/..." (also
// dist-packages). The part after "torch/", or npos when it is not one: a
// directory of the user's that happens to be named torch is not.
std::string_view torch_package_tail(std::string_view file) {
  if (starts_with(file, "torch/")) return file.substr(6);
  for (std::string_view dir : {std::string_view("/site-packages/torch/"), std::string_view("/dist-packages/torch/")}) {
    const auto at = file.rfind(dir);
    if (at != std::string_view::npos) return file.substr(at + dir.size());
  }
  return std::string_view();
}

// PyTorch's Python code between the user's call and the work: module calls
// and their hooks (Module._wrapped_call_impl, Module._call_impl,
// BackwardHook), the modules' own forward (torch/nn/modules/linear.py's
// F.linear call), the functional layer, autograd's entry points and custom
// Function.apply, TorchDynamo's frames, the optimizers: any Python file of
// the installed torch package. They carry out a call the user's frame made,
// and the user changes that line, not PyTorch's.
bool torch_machinery_frame(const Frame& frame) {
  const std::string_view tail = torch_package_tail(frame.file);
  return !tail.empty() && ends_with(tail, ".py");
}

}  // namespace

std::string_view frame_role(const Frame& frame) {
  if (frame.autograd_node) return kAutogradNodeRole;
  if (own_frame(frame)) return kOwnFrameRole;
  if (torch_machinery_frame(frame)) return kTorchMachineryRole;
  return cuda_frame_role(frame);
}

std::vector<std::string_view> frame_roles(const std::vector<Frame>& frames) {
  std::vector<std::string_view> roles(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    roles[i] = frame_role(frames[i]);
    // The caller of nvcc's `__device_stub__` is always the kernel's
    // host-side function, which nvcc generates under the kernel's name at
    // the kernel's line, to call it: the stub too, whether the stub was
    // inlined into it (same pc) or not (an H200 build of
    // examples/cuda/cublas_write.cu symbolized it at its own pc). Only for
    // stubs: a CUDA runtime template inlined into the user's function
    // leaves the user's function the user's.
    if (i > 0 && roles[i].empty() &&
        frames[i - 1].function.find("__device_stub__") != std::string::npos)
      roles[i] = "kernel launch stub";
  }
  return roles;
}

std::size_t locating_frame(const std::vector<Frame>& frames) {
  const std::vector<std::string_view> roles = frame_roles(frames);
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (!frames[i].file.empty() && roles[i].empty()) return i;
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (roles[i].empty()) return i;
  // Nothing but API, launch-stub and PyTorch machinery frames (and the
  // checker's): the innermost of them with a source file, else the
  // innermost; never the checker's own.
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (!frames[i].file.empty() && roles[i] != kOwnFrameRole) return i;
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (roles[i] != kOwnFrameRole) return i;
  return frames.size();
}

std::uint64_t latent_sites(const ReportContext& context) {
  return context.latent ? context.latent->size() : 0;
}

std::string latent_summary(const ReportContext& context) {
  const std::uint64_t n = latent_sites(context);
  if (n == 0) return "";
  return "; " + std::to_string(n) + " latent free-before-wait (strict=1 reports them)";
}

std::string unchecked_summary(const ReportContext& context) {
  if (context.unchecked.empty()) return "";
  std::string text = "; not checked: ";
  for (std::size_t i = 0; i < context.unchecked.size(); ++i) {
    if (i > 0) text += "; ";
    text += context.unchecked[i];
  }
  return text;
}

std::string own_stream_uses_notice(const ReportContext& context) {
  if (!context.missing_own_stream_uses) return "";
  std::string text =
      "the trace lacks own-stream uses of caching blocks (written before trace version 3 by a "
      "runtime that left them out): a block's reuse on its allocation stream is not seen, so its "
      "unordered free counts as latent";
  text += context.strict ? " (strict=1: latent frees are reported as findings)" : "; --strict reports those frees";
  return text;
}

std::string frame_text(const Frame& frame) {
  std::string text = frame.function.empty() ? "<unknown>" : frame.function;
  if (!frame.file.empty()) {
    text += ' ';
    text += frame.file;
    if (frame.line != 0) text += ":" + std::to_string(frame.line);
  } else if (!frame.module.empty()) {
    text += " (" + frame.module + "+" + hex(frame.pc) + ")";
  } else if (frame.pc != 0) {
    text += " (" + hex(frame.pc) + ")";
  }
  return text;
}

std::string site_text(const std::vector<Frame>& frames) {
  const std::size_t at = locating_frame(frames);
  if (at >= frames.size()) return "<unknown>";
  const Frame& frame = frames[at];
  std::string text;
  if (!frame.file.empty()) {
    text = frame.file;
    if (frame.line != 0) text += ":" + std::to_string(frame.line);
  } else if (!frame.module.empty()) {
    text = "(" + frame.module + "+" + hex(frame.pc) + ")";
  }
  if (!frame.function.empty()) text += (text.empty() ? "in " : " in ") + frame.function;
  if (text.empty()) return "<unknown>";
  // Work of a backward pass: the line is its node's forward call.
  for (std::size_t i = 0; i < at; ++i)
    if (frames[i].autograd_node && !frames[i].function.empty())
      return text + " (backward of " + frames[i].function + ")";
  return text;
}

namespace {

// FNV-1a, 64 bit: tiny, and stable across builds and platforms.
struct Fnv {
  std::uint64_t h = 0xcbf29ce484222325ull;
  void add(std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 0x100000001b3ull;
    }
    h ^= 0xff;  // field separator, so "ab"+"c" != "a"+"bc"
    h *= 0x100000001b3ull;
  }
};

void add_site(Fnv& fnv, const StackDepot& stacks, StackId id) {
  // A few innermost frames identify a site; deeper frames vary with callers
  // that do not change the bug. Module paths and PCs are left out because
  // they differ between machines and runs.
  std::vector<Frame> frames = stacks.frames(id);
  std::size_t n = frames.size() < 4 ? frames.size() : 4;
  fnv.add(std::to_string(n));
  for (std::size_t i = 0; i < n; ++i) {
    fnv.add(frames[i].function);
    fnv.add(frames[i].file);
    fnv.add(std::to_string(frames[i].line));
  }
}

}  // namespace

std::string fingerprint(const Finding& f, const NameTable& names, const StackDepot& stacks) {
  Fnv fnv;
  fnv.add(headline(f.kind));
  fnv.add(what_word(f.use.what));
  fnv.add(names.get(f.use.name));
  if (f.kind == FindingKind::kUseBeforeReady || f.kind == FindingKind::kWriteAfterRead)
    add_site(fnv, stacks, f.alloc.stack);
  else
    add_site(fnv, stacks, f.free.stack);
  if (f.has_earlier) {
    fnv.add(names.get(f.earlier.name));
    add_site(fnv, stacks, f.earlier.stack);
  }
  add_site(fnv, stacks, f.use.stack);
  if (f.kind == FindingKind::kReuseRace) {
    fnv.add(names.get(f.reuse.use.name));
    add_site(fnv, stacks, f.reuse.use.stack);
  }
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, fnv.h);
  return buf;
}

}  // namespace xsc
