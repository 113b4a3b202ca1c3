// Finding the application's real library entry points (cuBLAS, cuBLASLt,
// cuDNN, NCCL) from inside the interposers that shadow them, and calling
// them: the one lookup and the one call_real that every interposer in
// libs/ uses.
//
// The interposers live in libxstream_check.so, which is preloaded, so every
// reference to ncclAllReduce & co. in the process binds to them first. The
// real definitions are in whichever libnccl the application loaded: usually
// reachable with dlsym(RTLD_NEXT), but not when libnccl came in as a
// dependency of a library dlopen()ed with RTLD_LOCAL (torch/_C.so pulls in
// libtorch_cuda.so and libnccl.so.2 that way). RTLD_NEXT only searches the
// global scope, so the lookup then falls back to the objects actually loaded.
#pragma once

#include <atomic>
#include <utility>

namespace xsc::libs {

// The address of the real definition of `name`, never one of ours; nullptr
// when no loaded object other than this library defines it.
void* find_real_symbol(const char* name);

// One cached lookup per entry point. Thread-safe: a race resolves the same
// address twice and stores it twice. A miss is not cached, so a libnccl
// loaded later is still found.
class RealSymbol {
 public:
  explicit constexpr RealSymbol(const char* name) : name_(name) {}

  template <typename Fn>
  Fn get() {
    void* fn = cached_.load(std::memory_order_acquire);
    if (fn == nullptr) {
      fn = find_real_symbol(name_);
      if (fn != nullptr) cached_.store(fn, std::memory_order_release);
    }
    return reinterpret_cast<Fn>(fn);
  }

  const char* name() const { return name_; }

 private:
  const char* name_;
  std::atomic<void*> cached_{nullptr};
};

// Says once per entry point, on stderr, that the real function is missing
// and what the interposer returns instead (`returning`, e.g.
// "ncclSystemError").
void report_missing_symbol(const char* name, const char* returning);

// What an interposer returns, and says it returns, when the real function
// is missing: the status with which the library fails a call it cannot
// make. Specialized once per status type, beside the library's
// interposers (cuBLAS: libs/cublas/blas_uses.h, cuDNN:
// libs/cudnn/cudnn_tensors.h, NCCL: libs/nccl/nccl_interpose.cpp), as
//   static constexpr Status kValue;    // e.g. ncclSystemError
//   static constexpr const char* kName; // "ncclSystemError"
template <typename Status>
struct MissingStatus;

// Calls the real `symbol` as an Fn with `args` and returns its status, or,
// when no loaded library defines it, says so once (report_missing_symbol)
// and returns MissingStatus<the status type>::kValue.
template <typename Fn, typename... Args>
auto call_real(RealSymbol& symbol, Args... args) {
  using Status = decltype(std::declval<Fn>()(args...));
  Fn fn = symbol.get<Fn>();
  if (fn == nullptr) {
    report_missing_symbol(symbol.name(), MissingStatus<Status>::kName);
    return MissingStatus<Status>::kValue;
  }
  return fn(args...);
}

// A library release, as its header's macros or its version call say.
struct Release {
  int major = 0, minor = 0, patch = 0;
};

// Says once per library, on stderr, when the release the process loaded is
// newer (by major or minor) than the headers this library was built with:
// what the newer release added (attributes, operations, entry points) is
// not followed, and what the older headers describe still is. `library`
// names it ("cuDNN"), `root_option` the CMake option that picks its
// headers ("XSC_CUDNN_ROOT"). Nothing when `loaded` is all zero (the
// library could not say).
void note_loaded_release(const char* library, const char* root_option, Release built,
                         Release loaded);

}  // namespace xsc::libs
