// From clang's CFG to the stream-ordering IR: recognizes the CUDA runtime and
// driver calls, annotated functions and configured names, and names buffers,
// streams and events by what they refer to.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analysis/config.h"
#include "analysis/param_effects.h"
#include "analysis/ops.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"
#include "clang/Analysis/CFG.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace xsc::lint {

// What a called function does to buffers and streams.
enum class ApiRole : std::uint8_t {
  kNone,
  kAlloc,         // stream-ordered allocation (out-argument or return value)
  kFree,          // stream-ordered free (explicit stream, or the allocation stream)
  kSyncFree,      // cudaFree: waits for the whole device, then frees
  kUse,           // enqueues work that touches its buffer arguments
  kRecord,        // cudaEventRecord(event, stream)
  kWait,          // cudaStreamWaitEvent(stream, event)
  kStreamSync,    // cudaStreamSynchronize(stream)
  kEventSync,     // cudaEventSynchronize(event)
  kDeviceSync,    // cudaDeviceSynchronize()
  kRecordStream,  // allocator-level record_stream(buffer, stream)
  kHostMayWait,   // may block the host until work is done: a synchronous copy or memset, a query
  kStreamCreate,  // cudaStreamCreate(&s), cudaStreamCreateWithFlags(&s, flags), ...
  kLaunchApi,     // cudaLaunchKernel(f, grid, block, args, shmem, stream) and its kin: a launch
                  // whose arguments are an array of their addresses (or, for
                  // cudaLaunchKernelEx, follow the kernel)
  kWriteValue,    // cuStreamWriteValue32(stream, addr, value, flags): a signal through a word,
                  // taken as a record of an event the word names
  kWaitValue,     // cuStreamWaitValue32(stream, addr, value, flags): a wait for that signal
  kBindHandle,    // cublasSetStream(handle, stream) and its kin: the library's later calls
                  // through the handle enqueue on that stream
  kHandleUse,     // a library call through a handle (cublasSgemm(handle, ...)): a use of its
                  // buffer arguments on the stream the handle is bound to
  kCreateHandle,  // cublasCreate(&handle) and its kin: a new handle, bound to the legacy
                  // default stream until bound to another
};

struct InlineSummary;

// Classifies functions, caching per declaration. Shared by every function of
// a translation unit.
class ApiModel {
 public:
  explicit ApiModel(const LintConfig& config) : config_(config) {}

  ApiRole role_of(const clang::FunctionDecl* fd);
  // A class whose destructor frees the buffer it owns (annotated, configured,
  // or whose destructor body calls a stream-ordered free).
  bool destructor_frees(const clang::CXXRecordDecl* rd);
  // A constructor that allocates the buffer its object owns.
  bool constructor_allocates(const clang::CXXConstructorDecl* cd);

  // Whether the function body could produce a finding at all: it frees
  // something stream-ordered, or enqueues a known write (an async copy or
  // memset, a kernel whose body writes through a parameter), directly or
  // in an inlinable helper. Most functions are skipped by this.
  bool body_may_find(const clang::Stmt* body, int depth = kMaxInlineDepth);

  // Small helpers defined in the project (a launch wrapper, an event helper)
  // are inlined at their call sites, so that wrapping a kernel launch in a
  // function does not hide the use. Returns null when `fd` is not inlinable.
  static constexpr int kMaxInlineDepth = 4;
  const clang::FunctionDecl* inlinable_definition(const clang::FunctionDecl* fd);
  const InlineSummary* summary_of(clang::ASTContext& ctx, const clang::FunctionDecl* def);

  // What a call of `fd` pins through its `i`th argument, when its body
  // pins what a parameter points to: kPointee for `cudaMallocHost(pp, n)`
  // or `cudaHostRegister(*pp, n, 0)` (`alloc_pinned(&h, n)` pins `h`),
  // kArgument for `cudaHostRegister(p, n, 0)` (`pin(h, n)` pins `h`).
  enum class Pins : std::uint8_t { kNothing, kPointee, kArgument };
  Pins pins_through_param(const clang::FunctionDecl* fd, unsigned i);

  // Whether a stream member is non-blocking in every object of its class:
  // a private or protected field that the class's own member functions
  // create with cudaStreamNonBlocking (CU_STREAM_NON_BLOCKING), a constant,
  // at every creation, and otherwise only read. A member created in a
  // constructor and used in another member function is then judged
  // against both default streams, as a local stream created so is.
  bool member_stream_non_blocking(const clang::FieldDecl* fd);

  // The member stream a class always binds a member library handle to:
  // every `cublasSetStream(handle_, s)` (and its kin) in the class's
  // member functions names the same member stream `s`. Null when the class
  // binds it to anything else, or never. A member function that uses the
  // handle without binding it then runs its calls on that stream.
  const clang::FieldDecl* member_handle_stream(const clang::FieldDecl* handle);

  // What functions' bodies do through their parameters (param_effects.h).
  ParamEffects& param_effects() { return param_effects_; }

 private:
  ApiRole classify(const clang::FunctionDecl* fd);
  bool body_calls(const clang::Stmt* body, ApiRole role, int depth);

  const LintConfig& config_;
  llvm::DenseMap<const clang::FunctionDecl*, ApiRole> roles_;
  llvm::DenseMap<const clang::CXXRecordDecl*, bool> freeing_dtors_;
  llvm::DenseMap<const clang::CXXConstructorDecl*, bool> allocating_ctors_;
  llvm::DenseMap<const clang::FunctionDecl*, std::vector<Pins>> pinning_params_;
  llvm::DenseMap<const clang::FunctionDecl*, std::unique_ptr<InlineSummary>> summaries_;
  llvm::DenseMap<const clang::FieldDecl*, bool> non_blocking_members_;
  llvm::DenseMap<const clang::FieldDecl*, const clang::FieldDecl*> handle_streams_;
  int inline_depth_ = 0;
  ParamEffects param_effects_;
};

bool is_stream_type(clang::QualType t);
bool is_event_type(clang::QualType t);

// What a site or key stands for in the source.
struct SiteInfo {
  clang::SourceLocation loc;
  bool is_destructor = false;  // an implicit destructor call at scope end
};

struct KeyInfo {
  std::string display;       // source text, or a description
  bool is_legacy = false;    // the legacy default stream
  bool is_host = false;      // the host, as the agent of its own accesses of pinned memory
};

// Whether `fd` is an async copy or memset, whose first argument is the
// memory it writes (cudaMemcpyAsync, cudaMemset2DAsync, cuMemcpyHtoDAsync,
// ...; not cudaMemcpyToSymbolAsync, whose first argument is a symbol).
bool writes_first_argument(const clang::FunctionDecl* fd);

struct FunctionOps {
  OpGraph graph;
  std::vector<SiteInfo> sites;
  std::vector<KeyInfo> keys;
  std::vector<std::string> key_ids;  // the identity each KeyId was interned from
  KeyId returned_buffer = kNoKey;    // what `return` hands back, if tracked
  KeyId returned_event = kNoKey;
  // The variable a key's root ("v<decl>", the part of its id before the
  // first '.') names, for keys rooted at a variable. Inlined helpers and
  // lambdas add theirs: a lambda's keys may name its caller's variables.
  std::map<std::string, const clang::VarDecl*> root_vars;
};

// A helper's effects as one straight-line op list (its CFG in reverse
// post-order), with keys still in the helper's own terms.
struct InlineSummary {
  std::vector<Op> ops;
  std::vector<KeyInfo> keys;
  std::vector<std::string> key_ids;
  KeyId returned_buffer = kNoKey;
  KeyId returned_event = kNoKey;
  std::map<std::string, const clang::VarDecl*> root_vars;
};

// Builds the op graph for one function body from its CFG. With
// `split_range_loops` (the function analyzed, not a helper's straight-line
// summary), a loop over a named range gets an edge that assumes the range
// empty (loop_ranges.h), and a member library handle the class always
// binds to one member stream is bound to it at the function's entry.
std::unique_ptr<FunctionOps> build_function_ops(clang::ASTContext& ctx, ApiModel& model,
                                                const clang::CFG& cfg, const clang::Stmt* body,
                                                bool split_range_loops);

// The variable (or `this`) a key id is rooted at: its path up to the first
// member or element ("v<decl>" of "sv<decl>.f<field>", "bv<decl>[r<range>]").
llvm::StringRef key_root(llvm::StringRef key_id);

}  // namespace xsc::lint
