#include "analysis/op_builder.h"

#include "analysis/loop_ranges.h"

#include <functional>

#include <algorithm>
#include <map>

#include "clang/AST/Attr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/StmtCXX.h"
#include "clang/AST/StmtVisitor.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/raw_ostream.h"

namespace xsc::lint {

using namespace clang;

// ---------------------------------------------------------------------------
// Types

// ---------------------------------------------------------------------------
// PyTorch's C++ extension API, recognized by qualified name without
// configuration. This table is the one place that lists it. at::cuda
// re-exports c10::cuda (`using namespace c10::cuda` in torch's headers), so
// at::cuda::getCurrentCUDAStream and at::cuda::CUDAEvent are c10's
// declarations; releases that declared their own at::cuda::CUDAEvent or
// at::cuda::CUDAStreamGuard are matched under that name too.

namespace {

enum class TorchApi : std::uint8_t {
  kNone,
  kAllocWithStream,  // raw_alloc_with_stream(n, stream): a block on that stream
  kAllocOnCurrent,   // raw_alloc(n), tensor factories: on the current stream
  kFree,             // raw_delete(p): back to the pool of its allocation stream
  kRecordStream,     // recordStream(data_ptr, stream), tensor.record_stream(stream)
  kCurrentStream,    // getCurrentCUDAStream(): the current stream
  kStreamValue,      // stream.stream(): the stream it is called on
  kEventRecord,      // event.record(stream); record(): the current stream
  kEventBlock,       // event.block(stream): the stream waits for the event
  kEventSync,        // event.synchronize()
  kStreamSync,       // stream.synchronize()
  // Types.
  kStreamType,       // c10::cuda::CUDAStream, c10::Stream
  kEventType,        // CUDAEvent
  kStreamGuardType,  // CUDAStreamGuard: sets the current stream for its scope
  kTensorType,       // at::Tensor: its destructor frees (the caching allocator's free)
  kDataPtrType,      // c10::DataPtr: names the tensor storage it belongs to
  kHandleOnCurrent,  // getCurrentCUDABlasHandle(): a library handle bound to the current stream
};

struct TorchName {
  llvm::StringLiteral name;
  TorchApi api;
};

constexpr TorchName kTorchApi[] = {
    {"c10::cuda::CUDACachingAllocator::raw_alloc_with_stream", TorchApi::kAllocWithStream},
    {"c10::cuda::CUDACachingAllocator::raw_alloc", TorchApi::kAllocOnCurrent},
    {"c10::cuda::CUDACachingAllocator::raw_delete", TorchApi::kFree},
    {"c10::cuda::CUDACachingAllocator::recordStream", TorchApi::kRecordStream},
    {"at::Tensor::record_stream", TorchApi::kRecordStream},
    {"c10::cuda::getCurrentCUDAStream", TorchApi::kCurrentStream},
    {"at::cuda::getCurrentCUDAStream", TorchApi::kCurrentStream},
    {"at::cuda::getCurrentCUDABlasHandle", TorchApi::kHandleOnCurrent},
    {"at::cuda::getCurrentCUDABlasLtHandle", TorchApi::kHandleOnCurrent},
    {"at::cuda::getCurrentCUDASparseHandle", TorchApi::kHandleOnCurrent},
    {"at::cuda::getCurrentCUDASolverDnHandle", TorchApi::kHandleOnCurrent},
    {"at::native::getCudnnHandle", TorchApi::kHandleOnCurrent},
    {"c10::cuda::CUDAStream::stream", TorchApi::kStreamValue},
    {"c10::cuda::CUDAStream::synchronize", TorchApi::kStreamSync},
    {"c10::cuda::CUDAEvent::record", TorchApi::kEventRecord},
    {"at::cuda::CUDAEvent::record", TorchApi::kEventRecord},
    {"c10::cuda::CUDAEvent::block", TorchApi::kEventBlock},
    {"at::cuda::CUDAEvent::block", TorchApi::kEventBlock},
    {"c10::cuda::CUDAEvent::synchronize", TorchApi::kEventSync},
    {"at::cuda::CUDAEvent::synchronize", TorchApi::kEventSync},
    // Tensor factories: a new block from the allocator, on the current stream.
    {"at::empty", TorchApi::kAllocOnCurrent},
    {"at::zeros", TorchApi::kAllocOnCurrent},
    {"at::ones", TorchApi::kAllocOnCurrent},
    {"at::empty_like", TorchApi::kAllocOnCurrent},
    {"at::zeros_like", TorchApi::kAllocOnCurrent},
    {"at::empty_strided", TorchApi::kAllocOnCurrent},
    {"torch::empty", TorchApi::kAllocOnCurrent},
    {"torch::zeros", TorchApi::kAllocOnCurrent},
    {"at::Tensor::clone", TorchApi::kAllocOnCurrent},
    {"at::Tensor::new_empty", TorchApi::kAllocOnCurrent},
    {"at::Tensor::new_zeros", TorchApi::kAllocOnCurrent},
    {"c10::cuda::CUDAStream", TorchApi::kStreamType},
    {"c10::Stream", TorchApi::kStreamType},
    {"c10::cuda::CUDAEvent", TorchApi::kEventType},
    {"at::cuda::CUDAEvent", TorchApi::kEventType},
    {"c10::cuda::CUDAStreamGuard", TorchApi::kStreamGuardType},
    {"at::cuda::CUDAStreamGuard", TorchApi::kStreamGuardType},
    {"at::Tensor", TorchApi::kTensorType},
    {"c10::DataPtr", TorchApi::kDataPtrType},
};

}  // namespace

static TorchApi torch_api(const NamedDecl* d) {
  if (!d) return TorchApi::kNone;
  // The conversion to cudaStream_t (or c10::Stream) is the stream itself.
  if (const auto* conv = dyn_cast<CXXConversionDecl>(d))
    return torch_api(conv->getParent()) == TorchApi::kStreamType ? TorchApi::kStreamValue
                                                                  : TorchApi::kNone;
  const IdentifierInfo* id = d->getIdentifier();
  if (!id) return TorchApi::kNone;
  // Cheap filter before building the qualified name.
  llvm::StringRef last = id->getName();
  bool listed = false;
  for (const TorchName& t : kTorchApi)
    if (t.name.ends_with(last) && t.name.drop_back(last.size()).ends_with("::")) {
      listed = true;
      break;
    }
  if (!listed) return TorchApi::kNone;
  std::string qualified = d->getQualifiedNameAsString();
  for (const TorchName& t : kTorchApi)
    if (qualified == t.name) return t.api;
  return TorchApi::kNone;
}

static TorchApi torch_type(QualType t) {
  if (t.isNull()) return TorchApi::kNone;
  t = t.getNonReferenceType();
  const auto* rd = t->getAsCXXRecordDecl();
  return rd ? torch_api(rd) : TorchApi::kNone;
}

static const RecordDecl* pointee_record(QualType t) {
  t = t.getCanonicalType();
  if (const auto* pt = t->getAs<PointerType>())
    if (const auto* rt = pt->getPointeeType()->getAs<RecordType>()) return rt->getDecl();
  return nullptr;
}

bool is_stream_type(QualType t) {
  const RecordDecl* rd = pointee_record(t);
  if (rd && rd->getIdentifier() && rd->getName() == "CUstream_st") return true;
  return torch_type(t) == TorchApi::kStreamType;
}

bool is_event_type(QualType t) {
  const RecordDecl* rd = pointee_record(t);
  if (rd && rd->getIdentifier() && rd->getName() == "CUevent_st") return true;
  return torch_type(t) == TorchApi::kEventType;
}

// The driver API names device memory by an integer typedef.
static bool is_device_ptr_integer(QualType t) {
  while (const auto* tt = t->getAs<TypedefType>()) {
    if (tt->getDecl()->getName().starts_with("CUdeviceptr")) return true;
    t = tt->desugar();
  }
  return false;
}

// ---------------------------------------------------------------------------
// ApiModel

static bool in_namespace(const Decl* d, llvm::StringRef name) {
  for (const DeclContext* dc = d->getDeclContext(); dc; dc = dc->getParent())
    if (const auto* ns = dyn_cast<NamespaceDecl>(dc))
      if (ns->getIdentifier() && ns->getName() == name) return true;
  return false;
}

static ApiRole annotation_role(const FunctionDecl* fd) {
  for (const FunctionDecl* r : fd->redecls()) {
    for (const auto* a : r->specific_attrs<AnnotateAttr>()) {
      ApiRole role = llvm::StringSwitch<ApiRole>(a->getAnnotation())
                         .Case("xstream::alloc", ApiRole::kAlloc)
                         .Case("xstream::free", ApiRole::kFree)
                         .Case("xstream::use", ApiRole::kUse)
                         .Case("xstream::record_stream", ApiRole::kRecordStream)
                         .Default(ApiRole::kNone);
      if (role != ApiRole::kNone) return role;
    }
  }
  return ApiRole::kNone;
}

static ApiRole cuda_api_role(llvm::StringRef name) {
  // Per-thread-default-stream builds call the _ptsz/_ptds entry points.
  for (llvm::StringRef suffix : {"_ptsz", "_ptds", "_v2"}) name.consume_back(suffix);
  ApiRole role = llvm::StringSwitch<ApiRole>(name)
                     .Cases({"cudaMallocAsync", "cudaMallocFromPoolAsync", "cuMemAllocAsync",
                             "cuMemAllocFromPoolAsync"},
                            ApiRole::kAlloc)
                     .Cases({"cudaFreeAsync", "cuMemFreeAsync"}, ApiRole::kFree)
                     .Cases({"cudaFree", "cuMemFree"}, ApiRole::kSyncFree)
                     .Cases({"cudaEventRecord", "cudaEventRecordWithFlags", "cuEventRecord",
                             "cuEventRecordWithFlags"},
                            ApiRole::kRecord)
                     .Cases({"cudaStreamWaitEvent", "cuStreamWaitEvent"}, ApiRole::kWait)
                     .Cases({"cudaStreamSynchronize", "cuStreamSynchronize"}, ApiRole::kStreamSync)
                     .Cases({"cudaStreamCreate", "cudaStreamCreateWithFlags",
                             "cudaStreamCreateWithPriority", "cuStreamCreate",
                             "cuStreamCreateWithPriority"},
                            ApiRole::kStreamCreate)
                     .Cases({"cudaEventSynchronize", "cuEventSynchronize"}, ApiRole::kEventSync)
                     .Cases({"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaLaunchKernelEx",
                             "cuLaunchKernel", "cuLaunchCooperativeKernel"},
                            ApiRole::kLaunchApi)
                     .Cases({"cuStreamWriteValue32", "cuStreamWriteValue64"}, ApiRole::kWriteValue)
                     .Cases({"cuStreamWaitValue32", "cuStreamWaitValue64"}, ApiRole::kWaitValue)
                     .Cases({"cudaDeviceSynchronize", "cudaThreadSynchronize", "cuCtxSynchronize"},
                            ApiRole::kDeviceSync)
                     // Synchronous copies and memsets, and queries: the host may
                     // have waited (a query polled until it answers "done").
                     .Cases({"cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyToSymbol",
                             "cudaMemcpyFromSymbol", "cudaMemcpyPeer", "cudaMemset", "cudaMemset2D",
                             "cudaMemset3D", "cudaEventQuery", "cudaStreamQuery", "cuMemcpy",
                             "cuMemcpyDtoH", "cuMemcpyHtoD", "cuMemcpyDtoD", "cuMemsetD8", "cuMemsetD32",
                             "cuEventQuery", "cuStreamQuery"},
                            ApiRole::kHostMayWait)
                     .Cases({"ncclAllGather", "ncclAllReduce", "ncclReduceScatter", "ncclBroadcast",
                             "ncclBcast", "ncclReduce", "ncclSend", "ncclRecv", "ncclAlltoAll",
                             "ncclAllToAll"},
                            ApiRole::kUse)
                     .Default(ApiRole::kNone);
  if (role != ApiRole::kNone) return role;
  if (name.ends_with("Async") &&
      (name.starts_with("cudaMemcpy") || name.starts_with("cudaMemset") ||
       name.starts_with("cudaMemPrefetch") || name.starts_with("cuMemcpy") ||
       name.starts_with("cuMemsetD") || name.starts_with("cuMemPrefetch")))
    return ApiRole::kUse;
  return ApiRole::kNone;
}

// The CUDA libraries whose handles are bound to a stream, by the typedef of
// the handle (a call's first parameter) and the prefix of their functions.
struct LibraryHandle {
  llvm::StringLiteral type;
  llvm::StringLiteral prefix;
};
constexpr LibraryHandle kLibraryHandles[] = {
    {"cublasHandle_t", "cublas"},         {"cudnnHandle_t", "cudnn"},
    {"cusparseHandle_t", "cusparse"},     {"cufftHandle", "cufft"},
    {"cusolverDnHandle_t", "cusolverDn"}, {"cusolverSpHandle_t", "cusolverSp"},
    {"curandGenerator_t", "curand"},
};

// The library whose handle type `t` is (cublasHandle_t, cufftHandle, ...),
// else null.
static const LibraryHandle* library_handle_type(QualType t) {
  const auto* handle = t->getAs<TypedefType>();
  if (!handle) return nullptr;
  for (const LibraryHandle& library : kLibraryHandles)
    if (handle->getDecl()->getName() == library.type) return &library;
  return nullptr;
}

// cuBLAS's own async copies, between the host and the device, on the stream
// they are given: cublasSetVectorAsync(n, size, host, incx, device, incy,
// stream), cublasGetVectorAsync(n, size, device, incx, host, incy, stream),
// and the matrix forms. The destination is the non-const pointer.
static bool cublas_async_copy(const FunctionDecl* fd) {
  if (!fd || !fd->getIdentifier()) return false;
  llvm::StringRef name = fd->getName();
  name.consume_back("_64");
  return name == "cublasSetVectorAsync" || name == "cublasGetVectorAsync" || name == "cublasSetMatrixAsync" ||
         name == "cublasGetMatrixAsync";
}

// cublasSetStream(handle, stream) and its kin bind a handle; a call of the
// same library whose first parameter is its handle enqueues work on the
// bound stream (cublasSgemm, cudnnConvolutionForward, cufftExecC2C,
// curandGenerateUniform). cuBLASLt takes its stream as an argument instead.
static ApiRole library_role(const FunctionDecl* fd) {
  llvm::StringRef name = fd->getName();
  for (llvm::StringRef suffix : {"_v2", "_64"}) name.consume_back(suffix);
  // cublasCreate(&handle), cufftCreate(&plan), cufftPlan1d(&plan, ...),
  // curandCreateGenerator(&gen, type): each library binds a new handle to
  // the NULL stream. A host generator (curandCreateGeneratorHost) runs its
  // calls on the host, on no stream.
  if (fd->getNumParams() >= 1 && fd->getParamDecl(0)->getType()->isPointerType())
    if (const LibraryHandle* library =
            library_handle_type(fd->getParamDecl(0)->getType()->getPointeeType());
        library && name.starts_with(library->prefix)) {
      llvm::StringRef verb = name.drop_front(library->prefix.size());
      if (verb == "CreateGeneratorHost") return ApiRole::kNone;
      if (verb.starts_with("Create") || (library->prefix == "cufft" && verb.starts_with("Plan")))
        return ApiRole::kCreateHandle;
    }
  if (name.starts_with("cublasLt") || cublas_async_copy(fd)) {
    for (const ParmVarDecl* p : fd->parameters())
      if (is_stream_type(p->getType())) return ApiRole::kUse;
    return ApiRole::kNone;
  }
  if (fd->getNumParams() < 2) return ApiRole::kNone;
  const LibraryHandle* library = library_handle_type(fd->getParamDecl(0)->getType());
  if (!library || !name.starts_with(library->prefix)) return ApiRole::kNone;
  llvm::StringRef verb = name.drop_front(library->prefix.size());
  if (verb == "SetStream") return ApiRole::kBindHandle;
  if (verb.starts_with("Create") || verb.starts_with("Destroy") || verb.starts_with("Set") ||
      verb.starts_with("Get"))
    return ApiRole::kNone;
  // Host-side queries and plans that enqueue nothing, though they take the
  // buffers the later call will (cusolverDnSgetrf_bufferSize(handle, m, n,
  // A, lda, &lwork), cusparseSpMV_bufferSize, cufftMakePlan1d,
  // cufftEstimate1d).
  if (verb.contains_insensitive("buffersize") || verb.starts_with("Plan") || verb.starts_with("MakePlan") ||
      verb.starts_with("Estimate"))
    return ApiRole::kNone;
  return ApiRole::kHandleUse;
}

// Whether a library call (one library_role names) writes through its i-th
// parameter. The libraries declare what a call only reads as a pointer to
// const (cublasSgemm's A, B and alpha; cudnnConvolutionForward's x and w;
// cublasLtMatmul's C) and its outputs, in-place operands and workspaces
// as pointers to non-const. cuFFT is the exception: an execution's input
// is not const, and only a complex-to-real transform may overwrite it
// (cuFFT's documentation: an out-of-place C2R or Z2D transform may
// overwrite its input).
static bool library_writes(const FunctionDecl* fd, unsigned i) {
  if (!fd || i >= fd->getNumParams()) return false;
  const QualType t = fd->getParamDecl(i)->getType().getNonReferenceType();
  if (!t->isPointerType() || t->getPointeeType().isConstQualified()) return false;
  const llvm::StringRef name = fd->getName();
  if (i == 1 && (name.starts_with("cufftExec") || name.starts_with("cufftXtExec")))
    return name.contains("C2R") || name.contains("Z2D");
  return true;
}

// Libraries that take their stream as an argument and declare their
// outputs as pointers to non-const (library_writes): cuBLASLt, and NCCL's
// collectives (ncclAllReduce(const void* send, void* recv, ...),
// ncclBcast(void* buff, ...): a receive buffer is written).
static bool writes_declared_outputs(const FunctionDecl* fd) {
  return fd && fd->getIdentifier() &&
         (fd->getName().starts_with("cublasLt") || fd->getName().starts_with("nccl") || cublas_async_copy(fd));
}

ApiRole ApiModel::role_of(const FunctionDecl* fd) {
  if (!fd) return ApiRole::kNone;
  fd = fd->getCanonicalDecl();
  auto it = roles_.find(fd);
  if (it != roles_.end()) return it->second;
  ApiRole role = classify(fd);
  roles_[fd] = role;
  return role;
}

ApiRole ApiModel::classify(const FunctionDecl* fd) {
  if (ApiRole role = annotation_role(fd); role != ApiRole::kNone) return role;
  if (const FunctionDecl* pattern = fd->getTemplateInstantiationPattern())
    if (ApiRole role = annotation_role(pattern); role != ApiRole::kNone) return role;
  if (!config_.empty()) {
    std::string qualified = fd->getQualifiedNameAsString();
    if (config_lists(config_.alloc, qualified)) return ApiRole::kAlloc;
    if (config_lists(config_.free, qualified)) return ApiRole::kFree;
    if (config_lists(config_.use, qualified)) return ApiRole::kUse;
    if (config_lists(config_.record_stream, qualified)) return ApiRole::kRecordStream;
  }
  switch (torch_api(fd)) {
    case TorchApi::kAllocWithStream:
    case TorchApi::kAllocOnCurrent:
      return ApiRole::kAlloc;
    case TorchApi::kFree:
      return ApiRole::kFree;
    case TorchApi::kRecordStream:
      return ApiRole::kRecordStream;
    case TorchApi::kEventRecord:
      return ApiRole::kRecord;
    case TorchApi::kEventBlock:
      return ApiRole::kWait;
    case TorchApi::kEventSync:
      return ApiRole::kEventSync;
    case TorchApi::kStreamSync:
      return ApiRole::kStreamSync;
    default:
      break;
  }
  if (const IdentifierInfo* id = fd->getIdentifier()) {
    if (ApiRole role = cuda_api_role(id->getName()); role != ApiRole::kNone) return role;
    if (ApiRole role = library_role(fd); role != ApiRole::kNone) return role;
    // CUB device algorithms take their stream last; each call is a use.
    if (in_namespace(fd, "cub"))
      for (const ParmVarDecl* p : fd->parameters())
        if (is_stream_type(p->getType())) return ApiRole::kUse;
  }
  return ApiRole::kNone;
}

// cudaMallocHost(&h, n), cudaHostAlloc(&h, n, flags), cuMemAllocHost,
// cuMemHostAlloc pin the memory their first argument points to (kPointee),
// and cudaMallocManaged and cuMemAllocManaged make it managed, which the
// host reaches as directly (the analysis calls both pinned);
// cudaHostRegister(h, n, flags) and cuMemHostRegister their first
// argument (kArgument).
static ApiModel::Pins pinning_of(const FunctionDecl* fd) {
  if (!fd || !fd->getIdentifier()) return ApiModel::Pins::kNothing;
  llvm::StringRef name = fd->getName();
  name.consume_back("_v2");
  if (name == "cudaMallocHost" || name == "cudaHostAlloc" || name == "cuMemAllocHost" || name == "cuMemHostAlloc" ||
      name == "cudaMallocManaged" || name == "cuMemAllocManaged")
    return ApiModel::Pins::kPointee;
  if (name == "cudaHostRegister" || name == "cuMemHostRegister") return ApiModel::Pins::kArgument;
  return ApiModel::Pins::kNothing;
}

static void find_pinned_params(const Stmt* s, const FunctionDecl* fd, std::vector<ApiModel::Pins>& out) {
  if (!s) return;
  if (const auto* call = dyn_cast<CallExpr>(s); call && call->getNumArgs() > 0) {
    ApiModel::Pins pins = pinning_of(call->getDirectCallee());
    const Expr* arg = call->getArg(0)->IgnoreParenCasts();
    // cudaHostRegister(*pp, ...) pins what the parameter points to.
    if (pins == ApiModel::Pins::kArgument)
      if (const auto* uo = dyn_cast<UnaryOperator>(arg); uo && uo->getOpcode() == UO_Deref) {
        arg = uo->getSubExpr()->IgnoreParenCasts();
        pins = ApiModel::Pins::kPointee;
      }
    if (pins != ApiModel::Pins::kNothing)
      if (const auto* ref = dyn_cast<DeclRefExpr>(arg))
        if (const auto* p = dyn_cast<ParmVarDecl>(ref->getDecl());
            p && p->getDeclContext() == fd && p->getFunctionScopeIndex() < out.size())
          out[p->getFunctionScopeIndex()] = pins;
  }
  for (const Stmt* child : s->children()) find_pinned_params(child, fd, out);
}

ApiModel::Pins ApiModel::pins_through_param(const FunctionDecl* fd, unsigned i) {
  const FunctionDecl* def = nullptr;
  if (!fd || role_of(fd) != ApiRole::kNone || !fd->hasBody(def) || !def) return Pins::kNothing;
  auto [it, fresh] = pinning_params_.try_emplace(def);
  if (fresh) {
    it->second.assign(def->getNumParams(), Pins::kNothing);
    find_pinned_params(def->getBody(), def, it->second);
  }
  return i < it->second.size() ? it->second[i] : Pins::kNothing;
}

bool ApiModel::body_calls(const Stmt* body, ApiRole wanted, int depth) {
  if (!body) return false;
  if (const auto* call = dyn_cast<CallExpr>(body)) {
    const FunctionDecl* callee = call->getDirectCallee();
    if (callee) {
      if (role_of(callee) == wanted) return true;
      // Look one helper deep: a destructor that calls release() which frees.
      if (depth > 0 && callee->hasBody() && role_of(callee) == ApiRole::kNone &&
          !callee->getASTContext().getSourceManager().isInSystemHeader(callee->getLocation()) &&
          body_calls(callee->getBody(), wanted, depth - 1))
        return true;
    }
  }
  for (const Stmt* child : body->children())
    if (body_calls(child, wanted, depth)) return true;
  return false;
}

bool ApiModel::destructor_frees(const CXXRecordDecl* rd) {
  if (!rd || !rd->hasDefinition()) return false;
  rd = rd->getDefinition();
  auto it = freeing_dtors_.find(rd);
  if (it != freeing_dtors_.end()) return it->second;
  freeing_dtors_[rd] = false;  // guards recursion through the destructor body
  bool frees = torch_api(rd) == TorchApi::kTensorType;
  if (const CXXDestructorDecl* dtor = rd->getDestructor(); dtor && !frees) {
    frees = role_of(dtor) == ApiRole::kFree;
    if (!frees && dtor->hasBody()) frees = body_calls(dtor->getBody(), ApiRole::kFree, 1);
  }
  freeing_dtors_[rd] = frees;
  return frees;
}

bool ApiModel::constructor_allocates(const CXXConstructorDecl* cd) {
  if (!cd) return false;
  auto it = allocating_ctors_.find(cd);
  if (it != allocating_ctors_.end()) return it->second;
  allocating_ctors_[cd] = false;
  bool allocates = role_of(cd) == ApiRole::kAlloc;
  if (!allocates && !cd->isCopyOrMoveConstructor()) {
    const FunctionDecl* def = nullptr;
    if (cd->hasBody(def)) allocates = body_calls(def->getBody(), ApiRole::kAlloc, 1);
  }
  allocating_ctors_[cd] = allocates;
  return allocates;
}

namespace {

// The non-blocking flag of a stream creation's constant flags argument
// (cudaStreamCreateWithFlags(&s, flags), cudaStreamCreateWithPriority(&s,
// flags, p), cuStreamCreate(&s, flags)); false for cudaStreamCreate(&s) and
// for flags that are not a constant.
bool creates_non_blocking(const CallExpr* call, const ASTContext& ctx) {
  constexpr std::uint64_t kNonBlocking = 0x1;
  Expr::EvalResult flags;
  return call->getNumArgs() >= 2 && !call->getArg(1)->isValueDependent() &&
         call->getArg(1)->EvaluateAsInt(flags, ctx) &&
         (flags.Val.getInt().getZExtValue() & kNonBlocking) != 0;
}

// The walk of member_stream_non_blocking: every mention of the field in a
// body is either the `&field` a creation writes through, with its flags, or
// a read of its value (an lvalue-to-rvalue conversion); anything else (an
// assignment, its address handed elsewhere, a reference bound to it) may
// put another stream there.
struct MemberStreamUses {
  const FieldDecl* field;
  ApiModel& model;
  const ASTContext& ctx;
  int creations = 0;
  bool all_non_blocking = true;
  bool other_writes = false;

  bool names_field(const Expr* e) const {
    const auto* me = dyn_cast_or_null<MemberExpr>(e ? e->IgnoreParens() : nullptr);
    return me && me->getMemberDecl()->getCanonicalDecl() == field;
  }

  void walk(const Stmt* s, const Stmt* parent) {
    if (!s || other_writes) return;
    if (const auto* call = dyn_cast<CallExpr>(s);
        call && call->getNumArgs() >= 1 &&
        model.role_of(call->getDirectCallee()) == ApiRole::kStreamCreate) {
      const auto* uo = dyn_cast<UnaryOperator>(call->getArg(0)->IgnoreParenImpCasts());
      if (uo && uo->getOpcode() == UO_AddrOf && names_field(uo->getSubExpr())) {
        ++creations;
        all_non_blocking = all_non_blocking && creates_non_blocking(call, ctx);
        for (unsigned i = 1; i < call->getNumArgs(); ++i) walk(call->getArg(i), call);
        return;
      }
    }
    if (isa<MemberExpr>(s) && names_field(cast<MemberExpr>(s))) {
      const auto* conversion = dyn_cast_or_null<ImplicitCastExpr>(parent);
      if (!conversion || conversion->getCastKind() != CK_LValueToRValue) other_writes = true;
    }
    for (const Stmt* child : s->children()) walk(child, s);
  }
};

// An initializer that leaves a stream null (`= nullptr`, `copy_(0)`).
bool null_initializer(const Expr* init, ASTContext& ctx) {
  return init->isNullPointerConstant(ctx, Expr::NPC_ValueDependentIsNotNull);
}

}  // namespace

bool ApiModel::member_stream_non_blocking(const FieldDecl* fd) {
  if (!fd) return false;
  fd = fd->getCanonicalDecl();
  auto it = non_blocking_members_.find(fd);
  if (it != non_blocking_members_.end()) return it->second;
  bool non_blocking = false;
  const CXXRecordDecl* rd = dyn_cast<CXXRecordDecl>(fd->getParent());
  const bool in_class_init_null = !fd->hasInClassInitializer() || !fd->getInClassInitializer() ||
                                  null_initializer(fd->getInClassInitializer(), fd->getASTContext());
  // Not a class template's: the member functions an instantiation did not
  // need have no body to read, and a template's own bodies name members
  // through dependent expressions.
  const bool templated =
      rd && (rd->isDependentContext() || isa<ClassTemplateSpecializationDecl>(rd));
  if (rd && rd->hasDefinition() && !templated && is_stream_type(fd->getType()) &&
      fd->getAccess() != AS_public && in_class_init_null) {
    MemberStreamUses uses{fd, *this, fd->getASTContext()};
    for (const CXXMethodDecl* method : rd->getDefinition()->methods()) {
      const FunctionDecl* def = nullptr;
      if (!method->hasBody(def)) continue;
      if (const auto* ctor = dyn_cast<CXXConstructorDecl>(def)) {
        for (const CXXCtorInitializer* init : ctor->inits()) {
          if (init->getMember() && init->getMember()->getCanonicalDecl() == fd &&
              init->isWritten() && !null_initializer(init->getInit(), fd->getASTContext()))
            uses.other_writes = true;
          else
            uses.walk(init->getInit(), nullptr);
        }
      }
      uses.walk(def->getBody(), nullptr);
    }
    non_blocking = uses.creations > 0 && uses.all_non_blocking && !uses.other_writes;
  }
  non_blocking_members_[fd] = non_blocking;
  return non_blocking;
}

namespace {

// `this->f` (or plain `f` in a member function): the field, else null.
const FieldDecl* this_member(const Expr* e) {
  const auto* me = dyn_cast_or_null<MemberExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
  if (!me || !isa<CXXThisExpr>(me->getBase()->IgnoreParenImpCasts())) return nullptr;
  const auto* field = dyn_cast<FieldDecl>(me->getMemberDecl());
  return field ? field->getCanonicalDecl() : nullptr;
}

}  // namespace

const FieldDecl* ApiModel::member_handle_stream(const FieldDecl* handle) {
  if (!handle) return nullptr;
  handle = handle->getCanonicalDecl();
  auto it = handle_streams_.find(handle);
  if (it != handle_streams_.end()) return it->second;
  handle_streams_[handle] = nullptr;
  const auto* rd = dyn_cast<CXXRecordDecl>(handle->getParent());
  if (!rd || !rd->hasDefinition()) return nullptr;
  const FieldDecl* bound = nullptr;
  bool consistent = true;
  std::function<void(const Stmt*)> walk = [&](const Stmt* s) {
    if (!s || !consistent) return;
    if (const auto* call = dyn_cast<CallExpr>(s);
        call && call->getNumArgs() >= 2 && role_of(call->getDirectCallee()) == ApiRole::kBindHandle &&
        this_member(call->getArg(0)) == handle) {
      const FieldDecl* stream = this_member(call->getArg(1));
      if (!stream || (bound && bound != stream)) consistent = false;
      bound = stream;
    }
    for (const Stmt* child : s->children()) walk(child);
  };
  for (const CXXMethodDecl* method : rd->getDefinition()->methods()) {
    const FunctionDecl* def = nullptr;
    if (method->hasBody(def)) walk(def->getBody());
  }
  const FieldDecl* result = consistent ? bound : nullptr;
  handle_streams_[handle] = result;
  return result;
}

bool writes_first_argument(const FunctionDecl* fd) {
  const IdentifierInfo* id = fd ? fd->getIdentifier() : nullptr;
  if (!id) return false;
  const StringRef name = id->getName();
  return name.ends_with("Async") && !name.contains("ToSymbol") &&
         (name.starts_with("cudaMemcpy") || name.starts_with("cudaMemset") ||
          name.starts_with("cuMemcpy") || name.starts_with("cuMemsetD"));
}

bool ApiModel::body_may_find(const Stmt* body, int depth) {
  if (!body) return false;
  if (const auto* call = dyn_cast<CallExpr>(body)) {
    const FunctionDecl* callee = call->getDirectCallee();
    const ApiRole role = role_of(callee);
    if (role == ApiRole::kFree || role == ApiRole::kLaunchApi ||
        (role == ApiRole::kUse && writes_first_argument(callee)))
      return true;
    // A library call that writes (a GEMM's output, cublasLtMatmul's D, a
    // collective's receive buffer).
    if (role == ApiRole::kHandleUse || (role == ApiRole::kUse && writes_declared_outputs(callee)))
      for (unsigned i = 0; i < callee->getNumParams(); ++i)
        if (library_writes(callee, i)) return true;
    if (isa<CUDAKernelCallExpr>(call) && param_effects_.writes_some_param(callee)) return true;
    if (depth > 0)
      if (const FunctionDecl* def = inlinable_definition(callee))
        if (body_may_find(def->getBody(), depth - 1)) return true;
  }
  if (const auto* ds = dyn_cast<DeclStmt>(body)) {
    for (const Decl* d : ds->decls())
      if (const auto* vd = dyn_cast<VarDecl>(d))
        if (destructor_frees(vd->getType()->getAsCXXRecordDecl())) return true;
  }
  for (const Stmt* child : body->children())
    if (child && body_may_find(child, depth)) return true;
  return false;
}

const FunctionDecl* ApiModel::inlinable_definition(const FunctionDecl* fd) {
  if (!fd || role_of(fd) != ApiRole::kNone) return nullptr;
  const FunctionDecl* def = nullptr;
  if (!fd->hasBody(def) || !def || def->isDependentContext() || def->isVariadic()) return nullptr;
  if (isa<CXXConstructorDecl>(def) || isa<CXXDestructorDecl>(def)) return nullptr;
  const SourceManager& sm = def->getASTContext().getSourceManager();
  if (sm.isInSystemHeader(sm.getExpansionLoc(def->getLocation()))) return nullptr;
  return def;
}

// ---------------------------------------------------------------------------
// Building the op graph

namespace {

// A pointer offset into a buffer (`p + i * n`, `&p[i]`): the work may touch
// only a part of it.
bool offset_pointer(const Expr* e) {
  e = e ? e->IgnoreParenCasts() : nullptr;
  if (const auto* bo = dyn_cast_or_null<BinaryOperator>(e))
    return (bo->getOpcode() == BO_Add || bo->getOpcode() == BO_Sub) && bo->getType()->isPointerType();
  if (const auto* uo = dyn_cast_or_null<UnaryOperator>(e))
    return uo->getOpcode() == UO_AddrOf && isa<ArraySubscriptExpr>(uo->getSubExpr()->IgnoreParens());
  return false;
}

const Expr* strip(const Expr* e) {
  while (e) {
    const Expr* next = e->IgnoreParenCasts();
    if (const auto* m = dyn_cast<MaterializeTemporaryExpr>(next)) next = m->getSubExpr();
    if (const auto* b = dyn_cast<CXXBindTemporaryExpr>(next)) next = b->getSubExpr();
    if (const auto* c = dyn_cast<ExprWithCleanups>(next)) next = c->getSubExpr();
    if (const auto* d = dyn_cast<CXXDefaultArgExpr>(next)) next = d->getExpr();
    // A by-value argument is a copy of what it names (Streams s -> s).
    if (const auto* c = dyn_cast<CXXConstructExpr>(next);
        c && c->getNumArgs() == 1 && c->getConstructor()->isCopyOrMoveConstructor())
      next = c->getArg(0);
    if (next == e) return e;
    e = next;
  }
  return e;
}

bool is_std_move(const Expr* e) {
  const auto* call = dyn_cast<CallExpr>(e);
  if (!call || call->getNumArgs() != 1) return false;
  const FunctionDecl* fd = call->getDirectCallee();
  return fd && fd->getIdentifier() && (fd->getName() == "move" || fd->getName() == "forward") &&
         fd->isInStdNamespace();
}

// Inlined helpers larger than this are left opaque.
constexpr std::size_t kMaxInlinedOps = 64;

class Builder {
 public:
  Builder(ASTContext& ctx, ApiModel& model, const Stmt* body)
      : ctx_(ctx), model_(model), body_(body), loops_(ctx, body) {
    out_ = std::make_unique<FunctionOps>();
  }

  std::unique_ptr<FunctionOps> build(const CFG& cfg, bool split_range_loops) {
    analyzed_ = split_range_loops;
    find_captures_and_host_memory(cfg);
    out_->graph.blocks.resize(cfg.getNumBlockIDs());
    out_->graph.entry = cfg.getEntry().getBlockID();
    for (const CFGBlock* block : cfg) {
      current_ = &out_->graph.blocks[block->getBlockID()];
      for (const CFGBlock::AdjacentBlock& succ : block->succs())
        if (const CFGBlock* s = succ.getReachableBlock()) current_->succs.push_back(s->getBlockID());
      for (const CFGElement& el : *block) {
        if (auto s = el.getAs<CFGStmt>()) {
          current_stmt_ = s->getStmt();
          visit(s->getStmt());
        } else if (auto d = el.getAs<CFGAutomaticObjDtor>()) {
          current_stmt_ = d->getTriggerStmt();
          visit_destructor(d->getVarDecl(), d->getTriggerStmt());
        }
      }
    }
    for (const auto& [stream, non_blocking] : created_streams_)
      if (non_blocking) out_->graph.non_blocking.push_back(stream);
    std::sort(out_->graph.non_blocking.begin(), out_->graph.non_blocking.end());
    std::map<std::string, std::uint32_t> classes;
    for (const std::string& id : out_->key_ids) {
      out_->graph.key_ranges.push_back(LoopRanges::ranges_in(id));
      std::uint32_t element_class = 0;
      if (!out_->graph.key_ranges.back().empty())
        element_class = classes.try_emplace(LoopRanges::without_depths(id), classes.size() + 1).first->second;
      out_->graph.element_class.push_back(element_class);
    }
    if (split_range_loops) split_loop_entries(cfg);
    return std::move(out_);
  }

 private:
  // A loop over a named range (LoopRanges) entered from outside and left at
  // once ran no round, and neither did any other loop over that range: that
  // edge goes through a block that says so (kAssumeEmpty). The condition
  // block is copied for the entry, so that the edge from the loop's own
  // last round still leaves it plainly.
  void split_loop_entries(const CFG& cfg) {
    std::vector<OpBlock>& blocks = out_->graph.blocks;
    for (const CFGBlock* cond : cfg) {
      const Stmt* loop = cond->getTerminatorStmt();
      const std::uint64_t range = loop ? loops_.range_of_loop(loop) : 0;
      if (range == 0 || cond->succ_size() != 2) continue;
      const CFGBlock* body = cond->succ_begin()->getReachableBlock();
      const CFGBlock* exit = (cond->succ_begin() + 1)->getReachableBlock();
      if (!body || !exit) continue;
      const unsigned id = cond->getBlockID();
      std::vector<unsigned> entries;  // predecessors outside the loop
      for (const CFGBlock::AdjacentBlock& pred : cond->preds())
        if (const CFGBlock* p = pred.getReachableBlock(); p && p->getLoopTarget() != loop)
          entries.push_back(p->getBlockID());
      if (entries.empty()) continue;
      const auto entry_cond = static_cast<unsigned>(blocks.size());
      const auto skip = entry_cond + 1;
      OpBlock copy;
      copy.ops = blocks[id].ops;
      copy.succs = {body->getBlockID(), skip};
      OpBlock assume;
      Op empty;
      empty.kind = OpKind::kAssumeEmpty;
      empty.range = range;
      assume.ops.push_back(empty);
      assume.succs = {exit->getBlockID()};
      blocks.push_back(std::move(copy));
      blocks.push_back(std::move(assume));
      for (unsigned e : entries)
        for (unsigned& succ : blocks[e].succs)
          if (succ == id) succ = entry_cond;
    }
  }

  // --- keys -----------------------------------------------------------------

  KeyId intern(const std::string& id, const Expr* shown, const char* fixed_display = nullptr) {
    if (fixed_display) return intern_with_display(id, KeyInfo{fixed_display, true});
    auto it = key_ids_.find(id);
    if (it != key_ids_.end()) return it->second;
    return intern_with_display(id, KeyInfo{"'" + source_text(shown) + "'", false});
  }

  KeyId intern_with_display(const std::string& id, KeyInfo info) {
    auto [it, inserted] = key_ids_.try_emplace(id, static_cast<KeyId>(out_->keys.size()));
    if (inserted) {
      out_->keys.push_back(std::move(info));
      out_->key_ids.push_back(id);
    }
    return it->second;
  }

  std::string source_text(const Expr* e) {
    if (!e) return "?";
    const SourceManager& sm = ctx_.getSourceManager();
    // An expression written as a macro argument (CHECK(cudaFreeAsync(p, s)))
    // is shown as spelled there; the expansion range would be the whole
    // macro invocation.
    const SourceLocation begin = e->getBeginLoc(), end = e->getEndLoc();
    CharSourceRange range;
    if (begin.isMacroID() && end.isMacroID() && sm.isMacroArgExpansion(begin) &&
        sm.isMacroArgExpansion(end) &&
        sm.getFileID(sm.getSpellingLoc(begin)) == sm.getFileID(sm.getSpellingLoc(end)))
      range = CharSourceRange::getTokenRange(sm.getSpellingLoc(begin), sm.getSpellingLoc(end));
    else
      range = sm.getExpansionRange(e->getSourceRange());
    llvm::StringRef text = Lexer::getSourceText(range, sm, ctx_.getLangOpts());
    if (text.empty()) return "?";
    std::string s = text.str();
    // Keep messages on one line.
    for (char& c : s)
      if (c == '\n' || c == '\t') c = ' ';
    return s;
  }

  // A decl path: x, this->f, x.f, x->f.g; an element of a loop over a named
  // range (LoopRanges): a[i], v[i].f for a counter i, and a range-for's
  // element variable, each as the container's path and the range's marker.
  bool decl_path(const Expr* e, std::string& out) {
    e = strip(e);
    if (const auto* dre = dyn_cast<DeclRefExpr>(e)) {
      const ValueDecl* vd = dre->getDecl();
      if (!isa<VarDecl>(vd) && !isa<BindingDecl>(vd)) return false;
      if (const LoopRanges::Element* element = loops_.element(dyn_cast<VarDecl>(vd))) {
        std::string container;
        if (decl_path(element->container, container)) {
          out += container + LoopRanges::marker(element->position);
          return true;
        }
      }
      std::string root = "v" + llvm::utohexstr(reinterpret_cast<uintptr_t>(vd->getCanonicalDecl()));
      if (const auto* var = dyn_cast<VarDecl>(vd)) out_->root_vars.try_emplace(root, var->getCanonicalDecl());
      out += root;
      return true;
    }
    if (isa<CXXThisExpr>(e)) {
      out += "this";
      return true;
    }
    if (const auto* me = dyn_cast<MemberExpr>(e)) {
      const ValueDecl* member = me->getMemberDecl();
      if (!isa<FieldDecl>(member) && !isa<VarDecl>(member)) return false;
      if (!decl_path(me->getBase(), out)) return false;
      out += ".f" + llvm::utohexstr(reinterpret_cast<uintptr_t>(member->getCanonicalDecl()));
      return true;
    }
    const Expr* base = nullptr;
    const Expr* index = nullptr;
    if (const auto* sub = dyn_cast<ArraySubscriptExpr>(e)) {
      base = sub->getBase();
      index = sub->getIdx();
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(e);
               op && op->getOperator() == OO_Subscript && op->getNumArgs() == 2) {
      base = op->getArg(0);
      index = op->getArg(1);
    }
    if (index) {
      const auto* counter = dyn_cast<DeclRefExpr>(index->IgnoreParenImpCasts());
      const LoopRanges::Position position =
          counter ? loops_.counter(dyn_cast<VarDecl>(counter->getDecl())) : LoopRanges::Position{};
      std::string container;
      if (position.range != 0 && decl_path(base, container)) {
        out += container + LoopRanges::marker(position);
        return true;
      }
    }
    return false;
  }

  KeyId profile_key(const Expr* e, char kind) {
    llvm::FoldingSetNodeID id;
    e->Profile(id, ctx_, /*Canonical=*/true);
    return intern(std::string(1, kind) + "p" + llvm::utohexstr(id.ComputeHash()), e);
  }

  KeyId buffer_key(const Expr* e) {
    if (!e) return kNoKey;
    e = strip(e);
    if (const auto* uo = dyn_cast<UnaryOperator>(e)) {
      if (uo->getOpcode() == UO_AddrOf)
        if (const auto* sub = dyn_cast<ArraySubscriptExpr>(strip(uo->getSubExpr())))
          return buffer_key(sub->getBase());  // &p[i]
      return kNoKey;
    }
    if (const auto* bo = dyn_cast<BinaryOperator>(e)) {
      if (bo->isAdditiveOp()) {
        if (bo->getLHS()->getType()->isPointerType()) return buffer_key(bo->getLHS());
        if (bo->getRHS()->getType()->isPointerType()) return buffer_key(bo->getRHS());
      }
      return kNoKey;
    }
    if (is_std_move(e)) return buffer_key(cast<CallExpr>(e)->getArg(0));
    if (const auto* call = dyn_cast<CallExpr>(e)) {
      auto it = inlined_returns_.find(call);
      if (it != inlined_returns_.end() && it->second.first != kNoKey) return it->second.first;
    }
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(e)) {
      // buf.data(), ptr.get(), operator T*(): the object names the buffer.
      if (mc->getNumArgs() == 0) return buffer_key(mc->getImplicitObjectArgument());
      return kNoKey;
    }
    if (const auto* me = dyn_cast<MemberExpr>(e)) {
      // A field of an owning buffer object names that object.
      const Expr* base = strip(me->getBase());
      QualType bt = base->getType();
      if (me->isArrow() && bt->isPointerType()) bt = bt->getPointeeType();
      if (!isa<CXXThisExpr>(base) && model_.destructor_frees(bt->getAsCXXRecordDecl()))
        return buffer_key(base);
    }
    if (const Alias* alias = alias_of(e)) return alias->target;
    std::string path;
    if (decl_path(e, path)) return intern("b" + path, e);
    if (isa<ArraySubscriptExpr>(e)) return profile_key(e, 'b');  // bufs[i]
    return kNoKey;
  }

  // A raw pointer local written only where it is declared, from a
  // buffer (`float* out = static_cast<float*>(block);`, `auto* x =
  // t.data_ptr<float>();`, `float* half = d + n / 2;`), names that buffer:
  // what is enqueued or freed through it is the buffer's. Through a pointer
  // offset it names a part of it (partial_pointer).
  struct Alias {
    KeyId target = kNoKey;
    bool partial = false;
  };
  const Alias* alias_of(const Expr* e) {
    const auto* ref = dyn_cast_or_null<DeclRefExpr>(strip(e));
    const auto* vd = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
    if (!vd || !vd->isLocalVarDecl() || !vd->getType()->isPointerType()) return nullptr;
    vd = vd->getCanonicalDecl();
    auto it = aliases_.find(vd);
    if (it != aliases_.end()) return it->second.target == kNoKey ? nullptr : &it->second;
    aliases_[vd] = Alias{};  // a cycle through its own init names nothing
    Alias alias;
    const Expr* init = vd->getInit() ? strip(vd->getInit()) : nullptr;
    if (!init || init->isNullPointerConstant(ctx_, Expr::NPC_ValueDependentIsNotNull)) {
      // `float* d;` set only by cudaHostGetDevicePointer((void**)&d, h, 0):
      // the device's address of mapped pinned memory names that memory.
      if (const CallExpr* call = mapped_pointer_call(loops_.sole_address_taken(vd)))
        alias.target = buffer_key(call->getArg(1));
    } else if (const auto* call = dyn_cast<CallExpr>(init); loops_.only_initialized(vd)) {
      // Only names of buffers: a call's value (an allocation, a helper's
      // result) is left to the declaration's own binding, but for a buffer
      // object's `data()`, `get()` or `data_ptr<T>()`.
      const auto* member_call = dyn_cast<CXXMemberCallExpr>(init);
      if (!call || (member_call && member_call->getNumArgs() == 0)) {
        alias.target = buffer_key(init);
        alias.partial = partial_pointer(init);
      }
    }
    aliases_[vd] = alias;
    return alias.target == kNoKey ? nullptr : &aliases_[vd];
  }

  // The cudaHostGetDevicePointer call whose first argument is `taken`
  // (`(void**)&d`), if that is where it is.
  const CallExpr* mapped_pointer_call(const UnaryOperator* taken) {
    if (!taken) return nullptr;
    DynTypedNode node = DynTypedNode::create(*taken);
    for (int steps = 0; steps < 8; ++steps) {
      auto parents = ctx_.getParents(node);
      if (parents.empty()) return nullptr;
      node = parents[0];
      if (const auto* call = node.get<CallExpr>()) {
        const FunctionDecl* fd = call->getDirectCallee();
        const bool mapped = fd && fd->getIdentifier() &&
                            (fd->getName() == "cudaHostGetDevicePointer" ||
                             fd->getName() == "cudaHostGetDevicePointer_v2");
        return mapped && call->getNumArgs() >= 2 && strip(call->getArg(0)) == taken ? call : nullptr;
      }
      if (!node.get<CastExpr>() && !node.get<ParenExpr>()) return nullptr;
    }
    return nullptr;
  }

  // A pointer into a part of a buffer: an offset from it, or a local alias
  // made from one.
  bool partial_pointer(const Expr* e) {
    if (offset_pointer(e)) return true;
    const Alias* alias = alias_of(e);
    return alias && alias->partial;
  }

  KeyId stream_key(const Expr* e) {
    if (!e) return kNoKey;
    e = strip(e);
    if (const auto* call = dyn_cast<CallExpr>(e)) {
      const FunctionDecl* fd = call->getDirectCallee();
      TorchApi api = torch_api(fd);
      if (api == TorchApi::kCurrentStream) return current_stream_at(call);
      // stream.stream(), (cudaStream_t)stream, c10::Stream(stream): the stream.
      if (api == TorchApi::kStreamValue)
        if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call))
          return stream_key(mc->getImplicitObjectArgument());
    }
    if (const VarDecl* vd = torch_stream_alias(e)) return stream_key(vd->getInit());
    if (e->isNullPointerConstant(ctx_, Expr::NPC_ValueDependentIsNotNull))
      return intern("legacy", e, "the legacy default stream");
    // cudaStreamLegacy and cudaStreamPerThread are casts of small integers.
    if (const auto* lit = dyn_cast<IntegerLiteral>(e)) {
      uint64_t v = lit->getValue().getZExtValue();
      if (v == 1) return intern("legacy", e, "the legacy default stream");
      if (v == 2) return intern("per-thread", e, "the per-thread default stream");
    }
    std::string path;
    if (decl_path(e, path)) {
      const KeyId stream = intern("s" + path, e);
      // A member its class creates non-blocking (ApiModel): as if created
      // so here, unless this function creates it otherwise.
      if (const auto* me = dyn_cast<MemberExpr>(e))
        if (model_.member_stream_non_blocking(dyn_cast<FieldDecl>(me->getMemberDecl())))
          created_streams_.try_emplace(stream, true);
      return stream;
    }
    return profile_key(e, 's');
  }

  KeyId event_key(const Expr* e) {
    if (!e) return kNoKey;
    e = strip(e);
    if (const auto* call = dyn_cast<CallExpr>(e)) {
      auto it = inlined_returns_.find(call);
      if (it != inlined_returns_.end()) return it->second.second;
    }
    std::string path;
    if (decl_path(e, path)) return intern("e" + path, e);
    return profile_key(e, 'e');
  }

  // --- PyTorch's current stream ---------------------------------------------

  KeyId ambient_current_stream() {
    return intern_with_display("current", KeyInfo{"the current stream", true});
  }

  // The stream a CUDAStreamGuard declared in `s` (or a reset_stream call)
  // makes current, or kNoKey.
  KeyId guard_stream(const Stmt* s) {
    if (const auto* ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl* d : llvm::reverse(ds->decls())) {
        const auto* vd = dyn_cast<VarDecl>(d);
        if (!vd || torch_type(vd->getType()) != TorchApi::kStreamGuardType || !vd->getInit())
          continue;
        const auto* ctor = dyn_cast<CXXConstructExpr>(strip_cleanups(vd->getInit()));
        if (ctor && ctor->getNumArgs() >= 1) return stream_key(ctor->getArg(0));
      }
      return kNoKey;
    }
    if (const auto* e = dyn_cast<Expr>(s))
      if (const auto* mc = dyn_cast<CXXMemberCallExpr>(strip_cleanups(e)))
        if (const CXXMethodDecl* md = mc->getMethodDecl();
            md && md->getIdentifier() && md->getName() == "reset_stream" &&
            torch_api(md->getParent()) == TorchApi::kStreamGuardType && mc->getNumArgs() >= 1)
          return stream_key(mc->getArg(0));
    return kNoKey;
  }

  static const Expr* strip_cleanups(const Expr* e) {
    if (const auto* c = dyn_cast<ExprWithCleanups>(e)) return c->getSubExpr();
    return e;
  }

  // The current stream where `at` runs: the stream of the innermost
  // CUDAStreamGuard declared before it in an enclosing block (guards are
  // scoped, so this is lexical), else the current stream the function
  // started with.
  KeyId current_stream_at(const Stmt* at) {
    KeyId found = kNoKey;
    each_enclosing(at, [&](const DynTypedNode& parent, const DynTypedNode& node) {
      const auto* cs = parent.get<CompoundStmt>();
      if (!cs) return false;
      const Stmt* child = node.get<Stmt>();
      bool before = false;
      for (const Stmt* sibling : llvm::reverse(cs->body())) {
        if (sibling == child) {
          before = true;
          continue;
        }
        if (!before) continue;
        if (found = guard_stream(sibling); found != kNoKey) return true;
      }
      return false;
    });
    return found != kNoKey ? found : ambient_current_stream();
  }

  // Calls `visit(parent, child)` for each node enclosing `at` in its
  // function (or lambda), innermost first, until it returns true.
  template <typename F>
  void each_enclosing(const Stmt* at, F&& visit) {
    DynTypedNode node = DynTypedNode::create(*at);
    for (int depth = 0; depth < 256; ++depth) {
      DynTypedNodeList parents = ctx_.getParents(node);
      if (parents.empty()) return;
      const DynTypedNode& parent = parents[0];
      if (parent.get<FunctionDecl>() || parent.get<LambdaExpr>()) return;
      if (visit(parent, node)) return;
      node = parent;
    }
  }

  // A local stream that only ever names what it was initialized with
  // (`auto stream = at::cuda::getCurrentCUDAStream();`,
  // `cudaStream_t raw = compute.stream();`): the same stream as its
  // initializer. Written or address-taken later, it is its own name.
  const VarDecl* torch_stream_alias(const Expr* e) {
    const auto* dre = dyn_cast<DeclRefExpr>(e);
    const auto* vd = dre ? dyn_cast<VarDecl>(dre->getDecl()) : nullptr;
    if (!vd || !vd->isLocalVarDecl() || vd->getType()->isReferenceType() || !vd->getInit())
      return nullptr;
    auto it = stream_aliases_.find(vd);
    if (it != stream_aliases_.end()) return it->second ? vd : nullptr;
    stream_aliases_[vd] = false;  // guards `auto s = s2; auto s2 = s;` style recursion
    bool alias = false;
    const Expr* init = strip(vd->getInit());
    if (const auto* call = dyn_cast<CallExpr>(init)) {
      TorchApi api = torch_api(call->getDirectCallee());
      alias = is_stream_type(vd->getType()) &&
              (api == TorchApi::kCurrentStream || api == TorchApi::kStreamValue);
    } else if (torch_type(vd->getType()) == TorchApi::kStreamType) {
      std::string path;
      alias = decl_path(init, path);  // a copy of another CUDAStream
    }
    if (alias)
      if (const auto* fn = dyn_cast_or_null<FunctionDecl>(vd->getParentFunctionOrMethod()))
        alias = !writes_var(fn->getBody(), vd);
    stream_aliases_[vd] = alias;
    return alias ? vd : nullptr;
  }

  static bool writes_var(const Stmt* s, const VarDecl* vd) {
    if (!s) return false;
    auto names = [&](const Expr* e) {
      const auto* d = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
      return d && d->getDecl() == vd;
    };
    if (const auto* bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp() && names(bo->getLHS()))
      return true;
    if (const auto* uo = dyn_cast<UnaryOperator>(s); uo && uo->getOpcode() == UO_AddrOf && names(uo->getSubExpr()))
      return true;
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(s);
        op && op->isAssignmentOp() && op->getNumArgs() >= 1 && names(op->getArg(0)))
      return true;
    for (const Stmt* child : s->children())
      if (writes_var(child, vd)) return true;
    return false;
  }

  // The stream a call enqueues on: its stream argument, or for PyTorch calls
  // without one (raw_alloc, factories, event.record()), the current stream.
  KeyId call_stream(const CallExpr* call) {
    KeyId stream = stream_arg(call);
    if (stream != kNoKey) return stream;
    TorchApi api = torch_api(call->getDirectCallee());
    if (api == TorchApi::kAllocOnCurrent || api == TorchApi::kEventRecord)
      return current_stream_at(call);
    return kNoKey;
  }

  // A named at::Tensor (`t`, `std::move(t)`, `this->t`): its block now has
  // another owner this analysis does not count references for.
  KeyId named_tensor(const Expr* e) {
    e = strip(e);
    if (is_std_move(e)) e = strip(cast<CallExpr>(e)->getArg(0));
    if (torch_type(e->getType()) != TorchApi::kTensorType) return kNoKey;
    std::string path;
    if (!decl_path(e, path)) return kNoKey;
    return buffer_key(e);
  }

  // --- sites ----------------------------------------------------------------

  SiteId site(SourceLocation loc, bool is_destructor = false) {
    out_->sites.push_back(SiteInfo{loc, is_destructor});
    return static_cast<SiteId>(out_->sites.size() - 1);
  }

  void emit(Op op) {
    if ((op.kind == OpKind::kUse || op.kind == OpKind::kWrite || op.kind == OpKind::kHandleUse) &&
        op.capture == 0 && (host_ == kNoKey || op.stream != host_))  // a handle use's stream is kNoKey
      op.capture = capture_at(out_->sites[op.site].loc);
    // Guards matter only to the host's accesses: judged device work and host waits.
    const bool host_relevant = (op.host_judged && (op.kind == OpKind::kUse || op.kind == OpKind::kWrite ||
                                                   op.kind == OpKind::kHandleUse)) ||
                               op.kind == OpKind::kStreamSync || op.kind == OpKind::kEventSync ||
                               op.kind == OpKind::kDeviceSync;
    if (!pinned_.empty() && host_relevant && op.guard == 0 && current_stmt_) op.guard = guard_of(current_stmt_);
    current_->ops.push_back(op);
  }

  // The variables of the `if` conditions `at` is made under, as a set of
  // OpGraph::guard_sets (an inlined helper's ops take their call's).
  std::uint32_t guard_of(const Stmt* at) {
    auto cached = guards_.find(at);
    if (cached != guards_.end()) return cached->second;
    std::vector<std::uintptr_t> vars;
    each_enclosing(at, [&](const DynTypedNode& parent, const DynTypedNode& node) {
      if (const auto* is = parent.get<IfStmt>(); is && node.get<Stmt>() != is->getCond())
        collect_vars(is->getCond(), vars);
      return false;
    });
    llvm::sort(vars);
    vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
    std::uint32_t id = 0;
    if (!vars.empty()) {
      auto& sets = out_->graph.guard_sets;
      auto same = std::find(sets.begin(), sets.end(), vars);
      id = static_cast<std::uint32_t>(same - sets.begin());
      if (same == sets.end()) sets.push_back(std::move(vars));
    }
    guards_[at] = id;
    return id;
  }

  static void collect_vars(const Stmt* s, std::vector<std::uintptr_t>& out) {
    if (!s) return;
    if (const auto* ref = dyn_cast<DeclRefExpr>(s))
      if (isa<VarDecl>(ref->getDecl())) out.push_back(reinterpret_cast<std::uintptr_t>(ref->getDecl()));
    for (const Stmt* child : s->children()) collect_vars(child, out);
  }

  // --- stream captures ----------------------------------------------------------

  // A stream capture's begin or end call.
  struct CaptureMark {
    SourceLocation at;
    const CallExpr* call;
    bool begin;
  };

  // One walk over the function's CFG elements before its ops are made:
  // the captures' begins and ends, the memory it pins, and the lvalues its
  // host code writes or takes the address of (find_host_memory).
  void find_captures_and_host_memory(const CFG& cfg) {
    std::vector<CaptureMark> marks;
    for (const CFGBlock* block : cfg)
      for (const CFGElement& el : *block)
        if (auto stmt = el.getAs<CFGStmt>()) {
          if (const auto* call = dyn_cast<CallExpr>(stmt->getStmt())) note_capture_mark(call, marks);
          find_host_memory(stmt->getStmt());
        }
    pair_captures(marks);
  }

  void note_capture_mark(const CallExpr* call, std::vector<CaptureMark>& marks) {
    const FunctionDecl* fd = call->getDirectCallee();
    if (!fd || !fd->getIdentifier() || call->getNumArgs() == 0) return;
    const StringRef name = fd->getName();
    const SourceLocation at = ctx_.getSourceManager().getExpansionLoc(call->getBeginLoc());
    if (name.starts_with("cudaStreamBeginCapture") || name.starts_with("cuStreamBeginCapture"))
      marks.push_back({at, call, true});
    else if (name == "cudaStreamEndCapture" || name == "cuStreamEndCapture")
      marks.push_back({at, call, false});
  }

  // The source ranges between each stream capture's begin and the end of
  // the same stream's capture in the function, in source order: the work
  // enqueued there is captured. Captures nest (a conditional node's body
  // captured inside the graph that holds it): the innermost one counts.
  void pair_captures(std::vector<CaptureMark>& marks) {
    const SourceManager& sm = ctx_.getSourceManager();
    std::sort(marks.begin(), marks.end(),
              [&](const CaptureMark& a, const CaptureMark& b) { return sm.isBeforeInTranslationUnit(a.at, b.at); });
    std::map<std::string, CaptureMark> open;  // by the stream's text
    for (const CaptureMark& m : marks) {
      const std::string stream = source_text(m.call->getArg(0));
      if (m.begin) {
        open.try_emplace(stream, m);
        continue;
      }
      auto it = open.find(stream);
      if (it == open.end()) continue;
      captures_.push_back({it->second.at, m.at, reinterpret_cast<std::uintptr_t>(it->second.call)});
      open.erase(it);
    }
    for (const auto& [stream, m] : open)
      captures_.push_back({m.at, SourceLocation(), reinterpret_cast<std::uintptr_t>(m.call)});
  }

  std::uintptr_t capture_at(SourceLocation loc) const {
    if (captures_.empty() || loc.isInvalid()) return 0;
    const SourceManager& sm = ctx_.getSourceManager();
    loc = sm.getExpansionLoc(loc);
    const CaptureRange* inner = nullptr;
    for (const CaptureRange& r : captures_)
      if (sm.isBeforeInTranslationUnit(r.begin, loc) &&
          (r.end.isInvalid() || sm.isBeforeInTranslationUnit(loc, r.end)) &&
          (inner == nullptr || sm.isBeforeInTranslationUnit(inner->begin, r.begin)))
        inner = &r;
    return inner ? inner->id : 0;
  }

  // --- the host's accesses of pinned memory ---------------------------------

  // Only memory the function pins (itself, or through a helper it calls) is
  // judged: a copy into pageable memory returns once it has landed, and one
  // from it once the memory is staged, so the host may touch pageable
  // memory at once.
  void find_host_memory(const Stmt* s) {
    if (const auto* bo = dyn_cast<BinaryOperator>(s); bo && bo->isAssignmentOp()) {
      written_lvalues_.insert(accessed_memory(bo->getLHS()));
    } else if (const auto* uo = dyn_cast<UnaryOperator>(s)) {
      if (uo->isIncrementDecrementOp()) written_lvalues_.insert(accessed_memory(uo->getSubExpr()));
      if (uo->getOpcode() == UO_AddrOf) address_taken_.insert(accessed_memory(uo->getSubExpr()));
    } else if (const auto* op = dyn_cast<CXXOperatorCallExpr>(s); op && op->isAssignmentOp()) {
      written_lvalues_.insert(accessed_memory(op->getArg(0)));
    } else if (const auto* call = dyn_cast<CallExpr>(s)) {
      note_pinning(call);
    }
  }

  // The subscript, dereference or `->` through which an lvalue reaches
  // memory: `h[i].x` -> `h[i]`.
  static const Expr* accessed_memory(const Expr* e) {
    for (;;) {
      e = e->IgnoreParenImpCasts();
      const auto* me = dyn_cast<MemberExpr>(e);
      if (!me || me->isArrow()) return e;
      e = me->getBase();
    }
  }

  // What a call pins: the memory of `&h` given to cudaMallocHost and its
  // kin, `h` given to cudaHostRegister, or either given to a function of
  // the program whose body pins it (ApiModel::pins_through_param).
  void note_pinning(const CallExpr* call) {
    const FunctionDecl* fd = call->getDirectCallee();
    if (!fd || call->getNumArgs() == 0) return;
    auto pin = [&](const Expr* arg, ApiModel::Pins pins) {
      if (pins == ApiModel::Pins::kNothing) return;
      if (pins == ApiModel::Pins::kPointee) {
        const auto* uo = dyn_cast<UnaryOperator>(strip(arg));
        if (!uo || uo->getOpcode() != UO_AddrOf) return;
        arg = uo->getSubExpr();
      }
      if (KeyId k = buffer_key(arg); k != kNoKey) pinned_.insert(k);
    };
    if (const ApiModel::Pins pins = pinning_of(fd); pins != ApiModel::Pins::kNothing) return pin(call->getArg(0), pins);
    const unsigned first = object_arg_count(call);
    for (unsigned i = first; i < call->getNumArgs(); ++i)
      pin(call->getArg(i), model_.pins_through_param(fd, i - first));
  }

  KeyId host_key() {
    if (host_ == kNoKey) host_ = intern_with_display("host", KeyInfo{"the host", false, true});
    return host_;
  }

  // `h[i]`, `*h`, `h->field` on pinned `h`: a read, or a write where it is
  // assigned to or incremented (`&h[i]` touches nothing).
  void visit_host_access(const Stmt* s) {
    const Expr* pointer = nullptr;
    if (const auto* sub = dyn_cast<ArraySubscriptExpr>(s))
      pointer = sub->getBase();
    else if (const auto* uo = dyn_cast<UnaryOperator>(s); uo && uo->getOpcode() == UO_Deref)
      pointer = uo->getSubExpr();
    else if (const auto* me = dyn_cast<MemberExpr>(s); me && me->isArrow() && !isa<CXXMethodDecl>(me->getMemberDecl()))
      pointer = me->getBase();
    const auto* access = cast<Expr>(s);
    if (!pointer || !pointer->getType()->isPointerType() || address_taken_.contains(access)) return;
    // A volatile access (`while (*(volatile int*)done == 0) {}`) polls
    // memory a kernel shares with the host on purpose.
    if (access->getType().isVolatileQualified()) return;
    const KeyId k = buffer_key(pointer);
    if (k == kNoKey || !pinned_.contains(k)) return;
    const OpKind kind = written_lvalues_.contains(access) ? OpKind::kWrite : OpKind::kUse;
    emit(Op{kind, k, host_key(), kNoKey, kNoKey, site(access->getExprLoc())});
  }

  // A host function given pinned memory (a checker, memcmp, memcpy): what
  // its body, or its name, says it does with the argument. A function
  // whose effect is unknown is not taken to touch the memory.
  void visit_host_call(const CallExpr* call) {
    const FunctionDecl* fd = call->getDirectCallee();
    const unsigned first = object_arg_count(call);
    for (unsigned i = first; i < call->getNumArgs(); ++i) {
      const Expr* arg = call->getArg(i);
      if (!strip(arg)->getType()->isPointerType()) continue;
      const KeyId k = buffer_key(arg);
      if (k == kNoKey || !pinned_.contains(k)) continue;
      const ParamEffect effect = model_.param_effects().effect_of_argument(fd, i - first);
      const bool writes = is_write(effect);
      if (effect != ParamEffect::kRead && !writes) continue;
      Op op{writes ? OpKind::kWrite : OpKind::kUse, k, host_key(), kNoKey, kNoKey, site(call->getBeginLoc())};
      op.partial = partial_pointer(arg) || effect == ParamEffect::kWritePart;
      emit(op);
    }
  }

  // --- arguments --------------------------------------------------------------

  QualType param_type(const FunctionDecl* fd, unsigned i, const Expr* arg) {
    if (fd && i < fd->getNumParams()) return fd->getParamDecl(i)->getType();
    return arg->getType();
  }

  // A member operator call (`f(s)` on a lambda, `a = b`) passes the object as
  // its first argument (also to a static operator()); the parameters start
  // after it, unless the object is the explicit first parameter.
  static unsigned object_arg_count(const CallExpr* call) {
    const auto* md = dyn_cast_or_null<CXXMethodDecl>(call->getDirectCallee());
    return isa<CXXOperatorCallExpr>(call) && md && !md->isExplicitObjectMemberFunction() ? 1 : 0;
  }

  const Expr* first_arg_of(const CallExpr* call, bool (*pred)(QualType)) {
    const FunctionDecl* fd = call->getDirectCallee();
    unsigned first = object_arg_count(call);
    for (unsigned i = first; i < call->getNumArgs(); ++i) {
      const Expr* arg = call->getArg(i);
      if (pred(param_type(fd, i - first, arg)) || pred(strip(arg)->getType())) return arg;
    }
    return nullptr;
  }

  bool buffer_like(QualType t) {
    if (is_stream_type(t) || is_event_type(t)) return false;
    QualType nonref = t.getNonReferenceType();
    if (nonref->isPointerType()) return !nonref->isFunctionPointerType();
    if (is_device_ptr_integer(nonref)) return true;
    return model_.destructor_frees(nonref->getAsCXXRecordDecl());
  }

  // The buffers a call passes: its buffer-typed arguments, or else the object
  // a member function is called on.
  std::vector<KeyId> buffer_args(const CallExpr* call, bool all) {
    std::vector<KeyId> keys;
    const FunctionDecl* fd = call->getDirectCallee();
    const unsigned first = object_arg_count(call);
    for (unsigned i = first; i < call->getNumArgs(); ++i) {
      const Expr* arg = call->getArg(i);
      // recordStream(t.storage().data_ptr(), s): the DataPtr names the tensor.
      if (!buffer_like(param_type(fd, i - first, arg)) && !buffer_like(strip(arg)->getType()) &&
          torch_type(param_type(fd, i - first, arg)) != TorchApi::kDataPtrType)
        continue;
      KeyId k = buffer_key(arg);
      if (k == kNoKey) continue;
      keys.push_back(k);
      if (!all) return keys;
    }
    if (keys.empty())
      if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call))
        if (KeyId k = buffer_key(mc->getImplicitObjectArgument()); k != kNoKey) keys.push_back(k);
    return keys;
  }

  // --- statements -------------------------------------------------------------

  void visit(const Stmt* s) {
    if (!pinned_.empty()) visit_host_access(s);
    if (const auto* launch = dyn_cast<CUDAKernelCallExpr>(s)) return visit_launch(launch);
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(s)) {
      if (op->getOperator() == OO_Equal && op->getNumArgs() == 2)
        return visit_assign(op->getArg(0), op->getArg(1), /*class_assign=*/true, op->getOperatorLoc());
      // A lambda (or another function object) called: `consume(buf)`,
      // `[&] { ... }()`, `f(s)` in a helper the lambda was passed to.
      if (op->getOperator() == OO_Call) return visit_call(op);
      return;
    }
    if (const auto* call = dyn_cast<CallExpr>(s)) return visit_call(call);
    if (const auto* ctor = dyn_cast<CXXConstructExpr>(s)) {
      // A copy of a named tensor (into a container, a member, a by-value
      // argument, a return value) is another reference to its block: its
      // destructor no longer frees it, so the analysis stops following it.
      if (ctor->getNumArgs() == 1 && ctor->getConstructor()->isCopyOrMoveConstructor() &&
          torch_type(ctor->getType()) == TorchApi::kTensorType)
        if (KeyId k = named_tensor(ctor->getArg(0)); k != kNoKey)
          emit(Op{OpKind::kKill, k, kNoKey, kNoKey, kNoKey, site(ctor->getBeginLoc())});
      return;
    }
    if (const auto* ret = dyn_cast<ReturnStmt>(s)) {
      if (const Expr* v = ret->getRetValue()) {
        if (is_event_type(v->getType()))
          out_->returned_event = event_key(v);
        else if (buffer_like(v->getType())) {
          // `return pool.allocate(n, s);` returns a fresh allocation.
          KeyId fresh = intern_with_display("bret", KeyInfo{"'" + source_text(v) + "'", false});
          out_->returned_buffer =
              visit_allocating_init(fresh, v, v->getBeginLoc()) ? fresh : buffer_key(v);
          // A returned tensor lives on in the caller.
          if (KeyId k = named_tensor(v); k != kNoKey)
            emit(Op{OpKind::kKill, k, kNoKey, kNoKey, kNoKey, site(v->getBeginLoc())});
        }
      }
      return;
    }
    if (const auto* bo = dyn_cast<BinaryOperator>(s)) {
      if (bo->getOpcode() == BO_Assign)
        visit_assign(bo->getLHS(), bo->getRHS(), /*class_assign=*/false, bo->getOperatorLoc());
      return;
    }
    if (const auto* ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl* d : ds->decls())
        if (const auto* vd = dyn_cast<VarDecl>(d)) visit_var(vd);
      return;
    }
  }

  void visit_launch(const CUDAKernelCallExpr* launch) {
    KeyId stream = intern("legacy", launch, "the legacy default stream");
    if (const CallExpr* config = launch->getConfig(); config && config->getNumArgs() >= 4)
      stream = stream_key(config->getArg(3));
    const std::vector<const Expr*> args(launch->arg_begin(), launch->arg_end());
    emit_kernel_arguments(launch->getDirectCallee(), args, stream, site(launch->getBeginLoc()));
  }

  // A launch of `kernel` (null: not known) on `stream` passing `args` (an
  // entry null where the argument is not known): each buffer argument is a
  // use, or a write where the kernel's body, when the translation unit has
  // it, writes through that parameter.
  void emit_kernel_arguments(const FunctionDecl* kernel, const std::vector<const Expr*>& args,
                             KeyId stream, SiteId at) {
    const std::vector<ParamEffect>& effects = model_.param_effects().effects_of(kernel);
    for (unsigned i = 0; i < args.size(); ++i) {
      const Expr* arg = args[i];
      if (!arg) continue;
      if (!buffer_like(param_type(kernel, i, arg)) && !buffer_like(strip(arg)->getType())) continue;
      if (KeyId k = buffer_key(arg); k != kNoKey) {
        const ParamEffect effect = i < effects.size() ? effects[i] : ParamEffect::kUnknown;
        Op op{is_write(effect) ? OpKind::kWrite : OpKind::kUse, k, stream, kNoKey, kNoKey, at};
        op.partial = partial_pointer(arg) || effect == ParamEffect::kWritePart;
        op.host_judged = is_write(effect) && !model_.param_effects().shared_with_host(kernel, i);
        emit(op);
      }
    }
  }

  KeyId stream_arg(const CallExpr* call) {
    const Expr* arg = first_arg_of(call, is_stream_type);
    return arg ? stream_key(arg) : kNoKey;
  }

  KeyId event_arg(const CallExpr* call) {
    const Expr* arg = first_arg_of(call, is_event_type);
    return arg ? event_key(arg) : kNoKey;
  }

  // event.record(stream), event.block(stream): the object is the event.
  KeyId event_or_object(const CallExpr* call) {
    KeyId event = event_arg(call);
    if (event == kNoKey)
      if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call))
        event = event_key(mc->getImplicitObjectArgument());
    return event;
  }

  void visit_call(const CallExpr* call) {
    const FunctionDecl* fd = call->getDirectCallee();
    ApiRole role = model_.role_of(fd);
    if (role == ApiRole::kNone) {
      if (!pinned_.empty()) visit_host_call(call);
      if (inline_call(call)) return;
      unbind_handles_passed(call);
      // An opaque function outside PyTorch given a tensor may keep a
      // reference to it (push_back, a member): the block may outlive the name.
      if (fd && !in_namespace(fd, "at") && !in_namespace(fd, "c10") && !in_namespace(fd, "torch"))
        for (const Expr* arg : call->arguments())
          if (KeyId k = named_tensor(arg); k != kNoKey)
            emit(Op{OpKind::kKill, k, kNoKey, kNoKey, kNoKey, site(call->getBeginLoc())});
      return;
    }
    SourceLocation loc = static_cast<const Stmt*>(call)->getBeginLoc();
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) loc = mc->getExprLoc();
    switch (role) {
      case ApiRole::kNone:
        return;
      case ApiRole::kAlloc: {
        if (fd->getReturnType()->isPointerType() || buffer_like(fd->getReturnType()))
          return;  // the assignment handles it
        // Out-argument form: alloc(&p, bytes, stream).
        for (const Expr* arg : call->arguments()) {
          const auto* uo = dyn_cast<UnaryOperator>(strip(arg));
          if (!uo || uo->getOpcode() != UO_AddrOf) continue;
          KeyId buf = buffer_key(uo->getSubExpr());
          if (buf == kNoKey) continue;
          emit(Op{OpKind::kAlloc, buf, stream_arg(call), kNoKey, kNoKey, site(loc)});
          return;
        }
        return;
      }
      case ApiRole::kFree: {
        std::vector<KeyId> bufs = buffer_args(call, /*all=*/false);
        if (bufs.empty()) return;
        emit(Op{OpKind::kFree, bufs[0], stream_arg(call), kNoKey, kNoKey, site(loc)});
        return;
      }
      case ApiRole::kSyncFree: {
        SiteId at = site(loc);
        emit(Op{OpKind::kDeviceSync, kNoKey, kNoKey, kNoKey, kNoKey, at});
        for (KeyId b : buffer_args(call, false)) emit(Op{OpKind::kKill, b, kNoKey, kNoKey, kNoKey, at});
        return;
      }
      case ApiRole::kUse: {
        KeyId stream = stream_arg(call);
        if (stream == kNoKey) return;
        SiteId at = site(loc);
        const bool writes_first = writes_first_argument(fd);
        const bool copy = writes_first || cublas_async_copy(fd);
        // kNoKey is DenseSet's empty key: never inserted.
        llvm::DenseSet<KeyId> written;
        auto write = [&](const Expr* arg) {
          if (KeyId k = buffer_key(arg); k != kNoKey) written.insert(k);
        };
        if (writes_first && call->getNumArgs() > 0) write(call->getArg(0));
        // cublasLtMatmul(..., D, ..., workspace, size, stream) and
        // ncclAllReduce(send, recv, ..., comm, stream): their outputs.
        if (writes_declared_outputs(fd))
          for (unsigned i = 0; i < call->getNumArgs(); ++i)
            if (library_writes(fd, i)) write(call->getArg(i));
        llvm::DenseSet<KeyId> partial;
        for (const Expr* arg : call->arguments())
          if (partial_pointer(arg))
            if (KeyId k = buffer_key(arg); k != kNoKey) partial.insert(k);
        for (KeyId b : buffer_args(call, /*all=*/true)) {
          Op op{written.contains(b) ? OpKind::kWrite : OpKind::kUse, b, stream, kNoKey, kNoKey, at};
          op.partial = partial.contains(b);
          op.host_judged = copy || written.contains(b);
          emit(op);
        }
        return;
      }
      case ApiRole::kRecord: {
        KeyId stream = call_stream(call);
        if (stream == kNoKey) stream = intern("legacy", call, "the legacy default stream");
        emit(Op{OpKind::kRecord, kNoKey, stream, event_or_object(call), kNoKey, site(loc)});
        return;
      }
      case ApiRole::kWait:
        emit(Op{OpKind::kWait, kNoKey, stream_arg(call), event_or_object(call), kNoKey, site(loc)});
        return;
      case ApiRole::kStreamSync: {
        KeyId stream = stream_arg(call);
        if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call); mc && stream == kNoKey)
          stream = stream_key(mc->getImplicitObjectArgument());  // stream.synchronize()
        emit(Op{OpKind::kStreamSync, kNoKey, stream, kNoKey, kNoKey, site(loc)});
        return;
      }
      case ApiRole::kEventSync:
        emit(Op{OpKind::kEventSync, kNoKey, kNoKey, event_or_object(call), kNoKey, site(loc)});
        return;
      case ApiRole::kDeviceSync:
        emit(Op{OpKind::kDeviceSync, kNoKey, kNoKey, kNoKey, kNoKey, site(loc)});
        return;
      case ApiRole::kHostMayWait:
        if (!pinned_.empty()) emit(Op{OpKind::kHostMayWait, kNoKey, kNoKey, kNoKey, kNoKey, site(loc)});
        return;
      case ApiRole::kRecordStream: {
        KeyId stream = stream_arg(call);
        std::vector<KeyId> bufs = buffer_args(call, false);
        if (stream == kNoKey || bufs.empty()) return;
        emit(Op{OpKind::kRecordStream, bufs[0], stream, kNoKey, kNoKey, site(loc)});
        return;
      }
      case ApiRole::kStreamCreate:
        note_stream_creation(call);
        return;
      case ApiRole::kLaunchApi:
        visit_launch_api(call, site(loc));
        return;
      // A stream memory operation's word is the event it signals through:
      // a wait for it is taken as a wait for the last write to it (its
      // values are not compared).
      case ApiRole::kWriteValue:
        if (call->getNumArgs() >= 2)
          emit(Op{OpKind::kRecord, kNoKey, stream_key(call->getArg(0)), event_key(call->getArg(1)),
                  kNoKey, site(loc)});
        return;
      case ApiRole::kWaitValue:
        if (call->getNumArgs() >= 2)
          emit(Op{OpKind::kWait, kNoKey, stream_key(call->getArg(0)), event_key(call->getArg(1)),
                  kNoKey, site(loc)});
        return;
      case ApiRole::kBindHandle:
        if (call->getNumArgs() >= 2)
          emit(Op{OpKind::kBindHandle, kNoKey, stream_key(call->getArg(1)), kNoKey,
                  handle_key(call->getArg(0)), site(loc)});
        return;
      case ApiRole::kHandleUse:
        visit_handle_use(call, site(loc));
        return;
      case ApiRole::kCreateHandle:
        if (const auto* uo = dyn_cast<UnaryOperator>(strip(call->getArg(0))); uo && uo->getOpcode() == UO_AddrOf)
          if (KeyId handle = handle_key(uo->getSubExpr()); handle != kNoKey)
            emit(Op{OpKind::kBindHandle, kNoKey, intern("legacy", call, "the legacy default stream"), kNoKey,
                    handle, site(loc)});
        return;
    }
  }

  // --- launches through the API -----------------------------------------------

  // cudaLaunchKernel((void*)k, grid, block, args, shmem, stream) and
  // cudaLaunchCooperativeKernel: `args` an array of the arguments'
  // addresses made here (`void* args[] = {&d_a, &n};`); cuLaunchKernel(f,
  // gx, gy, gz, bx, by, bz, shmem, stream, args, extra) and
  // cuLaunchCooperativeKernel the same with a CUfunction; cudaLaunchKernelEx
  // (C++: `cudaLaunchKernelEx(&config, k, a, b)`) takes the arguments
  // themselves and its stream from the config's `stream` field. A kernel
  // whose body this unit has says which parameters it writes through.
  void visit_launch_api(const CallExpr* call, SiteId at) {
    const FunctionDecl* fd = call->getDirectCallee();
    llvm::StringRef name = fd->getName();
    for (llvm::StringRef suffix : {"_ptsz", "_v2"}) name.consume_back(suffix);
    const bool driver = name.starts_with("cu") && !name.starts_with("cuda");
    const FunctionDecl* kernel = nullptr;
    std::vector<const Expr*> args;
    KeyId stream = kNoKey;
    if (name == "cudaLaunchKernelEx") {
      if (call->getNumArgs() < 2) return;
      kernel = function_named(call->getArg(1));
      for (unsigned i = 2; i < call->getNumArgs(); ++i) args.push_back(call->getArg(i));
      const Expr* from = config_stream(call->getArg(0));
      stream = from ? stream_key(from) : kNoKey;
    } else {
      const unsigned args_at = driver ? 9 : 3, stream_at = driver ? 8 : 5;
      if (call->getNumArgs() <= std::max(args_at, stream_at)) return;
      if (!driver) kernel = function_named(call->getArg(0));
      stream = stream_key(call->getArg(stream_at));
      if (!argument_addresses(call->getArg(args_at), &args)) return;
    }
    if (stream != kNoKey) emit_kernel_arguments(kernel, args, stream, at);
  }

  // `(void*)kernel`, `reinterpret_cast<const void*>(&kernel)`: the kernel.
  static const FunctionDecl* function_named(const Expr* e) {
    e = e ? e->IgnoreParenCasts() : nullptr;
    if (const auto* uo = dyn_cast_or_null<UnaryOperator>(e); uo && uo->getOpcode() == UO_AddrOf)
      e = uo->getSubExpr()->IgnoreParenCasts();
    const auto* ref = dyn_cast_or_null<DeclRefExpr>(e);
    return ref ? dyn_cast<FunctionDecl>(ref->getDecl()) : nullptr;
  }

  // The arguments an argument-address array made here holds, in order:
  // `void* args[] = {&d_a, (void*)&d_b, &n};` gives d_a, d_b, n. False
  // where the array is not such a local (its entries are then unknown).
  bool argument_addresses(const Expr* e, std::vector<const Expr*>* out) {
    const auto* ref = dyn_cast_or_null<DeclRefExpr>(strip(e));
    const auto* vd = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
    const auto* list = vd && vd->isLocalVarDecl() && vd->getInit()
                           ? dyn_cast<InitListExpr>(vd->getInit()->IgnoreImplicit())
                           : nullptr;
    if (!list) return false;
    for (const Expr* entry : list->inits()) {
      const auto* addr = dyn_cast<UnaryOperator>(entry->IgnoreParenCasts());
      out->push_back(addr && addr->getOpcode() == UO_AddrOf ? addr->getSubExpr() : nullptr);
    }
    return true;
  }

  // A launch config's stream: `&config` of a local whose `stream` field the
  // function sets once (`config.stream = s;`) or initializes by name or
  // position (`cudaLaunchConfig_t config = {grid, block, 0, s};`).
  const Expr* config_stream(const Expr* e) {
    e = strip(e);
    if (const auto* uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_AddrOf)
      e = strip(uo->getSubExpr());
    const auto* ref = dyn_cast<DeclRefExpr>(e);
    const auto* config = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
    if (!config || !config->isLocalVarDecl()) return nullptr;
    const RecordDecl* record = config->getType()->getAsRecordDecl();
    if (!record) return nullptr;
    const Expr* found = nullptr;
    if (const auto* list = config->getInit() ? dyn_cast<InitListExpr>(config->getInit()->IgnoreImplicit())
                                             : nullptr) {
      unsigned index = 0;
      for (const FieldDecl* field : record->fields()) {
        if (field->getName() == "stream" && index < list->getNumInits() &&
            !isa<ImplicitValueInitExpr>(list->getInit(index)))
          found = list->getInit(index);
        ++index;
      }
    }
    unsigned assignments = 0;
    std::function<void(const Stmt*)> walk = [&](const Stmt* s) {
      if (!s) return;
      if (const auto* bo = dyn_cast<BinaryOperator>(s); bo && bo->getOpcode() == BO_Assign)
        if (const auto* me = dyn_cast<MemberExpr>(bo->getLHS()->IgnoreParenImpCasts()))
          if (const auto* base = dyn_cast<DeclRefExpr>(me->getBase()->IgnoreParenImpCasts());
              base && base->getDecl() == config && me->getMemberDecl()->getName() == "stream") {
            ++assignments;
            found = bo->getRHS();
          }
      for (const Stmt* child : s->children()) walk(child);
    };
    walk(body_);
    return assignments <= 1 ? found : nullptr;
  }

  // --- library handles --------------------------------------------------------

  KeyId handle_key(const Expr* e) {
    std::string path;
    if (decl_path(e, path)) return intern("h" + path, e);
    return kNoKey;
  }

  // A member handle the class always binds to one member stream
  // (ApiModel::member_handle_stream) is bound to it when the function
  // starts; a binding the function makes itself comes later and wins.
  void note_member_handle(const Expr* handle_expr, KeyId handle) {
    // Only in the function analyzed: an inlined helper runs on what its
    // caller bound.
    if (!analyzed_) return;
    const FieldDecl* field = this_member(handle_expr);
    const FieldDecl* stream = field ? model_.member_handle_stream(field) : nullptr;
    if (!stream || !entry_bindings_.insert(handle).second) return;
    const std::string id =
        "sthis.f" + llvm::utohexstr(reinterpret_cast<uintptr_t>(stream->getCanonicalDecl()));
    const KeyId stream_key = intern_with_display(id, KeyInfo{"'" + stream->getNameAsString() + "'", false});
    Op bind{OpKind::kBindHandle, kNoKey, stream_key, kNoKey, handle, site(handle_expr->getBeginLoc())};
    auto& entry = out_->graph.blocks[out_->graph.entry].ops;
    entry.insert(entry.begin(), bind);
  }

  // A library handle given to a function this analysis does not follow
  // (by value or by address) may be bound to another stream there: its
  // binding is no longer known.
  void unbind_handles_passed(const CallExpr* call) {
    for (const Expr* arg : call->arguments()) {
      const Expr* e = strip(arg);
      if (const auto* uo = dyn_cast<UnaryOperator>(e); uo && uo->getOpcode() == UO_AddrOf) e = uo->getSubExpr();
      if (!library_handle_type(e->getType())) continue;
      if (KeyId handle = handle_key(e); handle != kNoKey)
        emit(Op{OpKind::kBindHandle, kNoKey, kNoKey, kNoKey, handle, site(call->getBeginLoc())});
    }
  }

  // A handle PyTorch hands out bound to the current stream
  // (at::cuda::getCurrentCUDABlasHandle()): that stream, else kNoKey.
  KeyId stream_of_handle_getter(const Expr* e) {
    const auto* call = dyn_cast_or_null<CallExpr>(strip(e));
    if (!call || torch_api(call->getDirectCallee()) != TorchApi::kHandleOnCurrent) return kNoKey;
    return current_stream_at(call);
  }

  // cublasSgemm(handle, ..., d_A, ..., d_C, ...): each buffer argument after
  // the handle is used on the handle's stream. Descriptors and plans
  // (pointers to a library's opaque structs) are not buffers.
  void visit_handle_use(const CallExpr* call, SiteId at) {
    if (call->getNumArgs() < 2) return;
    const KeyId current = stream_of_handle_getter(call->getArg(0));
    const KeyId handle = current == kNoKey ? handle_key(call->getArg(0)) : kNoKey;
    if (current == kNoKey && handle == kNoKey) return;
    if (handle != kNoKey) note_member_handle(call->getArg(0), handle);
    const FunctionDecl* fd = call->getDirectCallee();
    // One op per buffer, a write where any of its arguments is written
    // (an in-place transform passes one buffer as input and output).
    std::vector<Op> ops;
    for (unsigned i = 1; i < call->getNumArgs(); ++i) {
      const Expr* arg = call->getArg(i);
      const QualType t = param_type(fd, i, arg).getNonReferenceType();
      if (!buffer_like(t) && !buffer_like(strip(arg)->getType())) continue;
      if (t->isPointerType() && t->getPointeeType()->isIncompleteType()) continue;
      const KeyId k = buffer_key(arg);
      if (k == kNoKey) continue;
      const bool writes = library_writes(fd, i);
      auto same = std::find_if(ops.begin(), ops.end(), [&](const Op& o) { return o.buffer == k; });
      if (same != ops.end()) {
        same->write |= writes;
        same->host_judged |= writes;
        same->partial &= partial_pointer(arg);
        continue;
      }
      Op op{current != kNoKey ? OpKind::kUse : OpKind::kHandleUse, k, current, kNoKey, handle, at};
      op.partial = partial_pointer(arg);
      op.write = writes;
      op.host_judged = writes;
      ops.push_back(op);
    }
    for (Op& op : ops) {
      if (op.kind == OpKind::kUse && op.write) op.kind = OpKind::kWrite;
      emit(op);
    }
    // A result written to a host variable (`cublasSdot(h, n, x, 1, y, 1,
    // &r)`, cuBLAS's host pointer mode) is there when the call returns:
    // the host waited for the handle's stream.
    for (unsigned i = 1; i < call->getNumArgs(); ++i) {
      const auto* uo = dyn_cast<UnaryOperator>(strip(call->getArg(i)));
      const auto* ref = uo && uo->getOpcode() == UO_AddrOf ? dyn_cast<DeclRefExpr>(strip(uo->getSubExpr())) : nullptr;
      const auto* vd = ref ? dyn_cast<VarDecl>(ref->getDecl()) : nullptr;
      if (vd && vd->getType()->isArithmeticType() && library_writes(fd, i)) {
        emit(Op{OpKind::kHostMayWait, kNoKey, kNoKey, kNoKey, kNoKey, at});
        break;
      }
    }
  }

  // cudaStreamCreate(&s), cudaStreamCreateWithFlags(&s, flags),
  // cudaStreamCreateWithPriority(&s, flags, priority), cuStreamCreate(&s,
  // flags), cuStreamCreateWithPriority(&s, flags, priority): s is
  // non-blocking when the flags are a constant with cudaStreamNonBlocking
  // (CU_STREAM_NON_BLOCKING) set, at every creation of s in the function.
  void note_stream_creation(const CallExpr* call) {
    if (call->getNumArgs() == 0) return;
    const auto* uo = dyn_cast<UnaryOperator>(strip(call->getArg(0)));
    if (!uo || uo->getOpcode() != UO_AddrOf) return;
    KeyId stream = stream_key(uo->getSubExpr());
    if (stream == kNoKey) return;
    const bool non_blocking = creates_non_blocking(call, ctx_);
    auto [it, inserted] = created_streams_.try_emplace(stream, non_blocking);
    if (!inserted) it->second = it->second && non_blocking;
  }

  // If `init` creates a new allocation, emits it for `dst` and returns true.
  bool visit_allocating_init(KeyId dst, const Expr* init, SourceLocation loc) {
    const Expr* e = strip(init);
    if (const auto* call = dyn_cast<CallExpr>(e)) {
      const FunctionDecl* fd = call->getDirectCallee();
      if (model_.role_of(fd) == ApiRole::kAlloc &&
          (fd->getReturnType()->isPointerType() || buffer_like(fd->getReturnType()))) {
        emit(Op{OpKind::kAlloc, dst, call_stream(call), kNoKey, kNoKey, site(loc)});
        return true;
      }
    }
    if (const auto* ctor = dyn_cast<CXXConstructExpr>(e)) {
      if (model_.constructor_allocates(ctor->getConstructor())) {
        KeyId stream = kNoKey;
        const CXXConstructorDecl* cd = ctor->getConstructor();
        for (unsigned i = 0; i < ctor->getNumArgs(); ++i) {
          const Expr* arg = ctor->getArg(i);
          QualType t = i < cd->getNumParams() ? cd->getParamDecl(i)->getType() : arg->getType();
          if (is_stream_type(t)) {
            stream = stream_key(arg);
            break;
          }
        }
        emit(Op{OpKind::kAlloc, dst, stream, kNoKey, kNoKey, site(loc)});
        return true;
      }
      // Copy/move construction: name the source.
      if (ctor->getNumArgs() == 1 && ctor->getConstructor()->isCopyOrMoveConstructor())
        return false;
    }
    return false;
  }

  void bind(KeyId dst, QualType type, const Expr* init, SourceLocation loc, bool class_assign) {
    if (dst == kNoKey) return;
    SiteId at = site(loc);
    if (class_assign && model_.destructor_frees(type->getAsCXXRecordDecl()))
      emit(Op{OpKind::kFree, dst, kNoKey, kNoKey, kNoKey, at});  // assignment drops the old buffer
    if (!init) {
      emit(Op{OpKind::kKill, dst, kNoKey, kNoKey, kNoKey, at});
      return;
    }
    if (visit_allocating_init(dst, init, loc)) return;
    const Expr* src_expr = strip(init);
    if (const auto* ctor = dyn_cast<CXXConstructExpr>(src_expr);
        ctor && ctor->getNumArgs() == 1 && ctor->getConstructor()->isCopyOrMoveConstructor())
      src_expr = strip(ctor->getArg(0));
    KeyId src = buffer_key(src_expr);
    if (src == kNoKey) {
      emit(Op{OpKind::kKill, dst, kNoKey, kNoKey, kNoKey, at});
      return;
    }
    if (torch_type(type) == TorchApi::kTensorType) {
      // Tensors are reference counted: after `b = a` neither name's
      // destructor is known to free the block, so neither is followed.
      emit(Op{OpKind::kKill, src, kNoKey, kNoKey, kNoKey, at});
      emit(Op{OpKind::kKill, dst, kNoKey, kNoKey, kNoKey, at});
      return;
    }
    emit(Op{OpKind::kCopy, dst, kNoKey, kNoKey, src, at});
    // A moved-from owner no longer frees anything.
    if (is_std_move(src_expr) && type->getAsCXXRecordDecl())
      emit(Op{OpKind::kKill, src, kNoKey, kNoKey, kNoKey, at});
  }

  void bind_event(KeyId dst, const Expr* init, SourceLocation loc) {
    if (dst == kNoKey) return;
    KeyId src = init ? event_key(init) : kNoKey;
    emit(Op{OpKind::kEventCopy, kNoKey, kNoKey, dst, src, site(loc)});
  }

  void visit_assign(const Expr* lhs, const Expr* rhs, bool class_assign, SourceLocation loc) {
    QualType t = lhs->getType().getNonReferenceType();
    if (is_event_type(t)) return bind_event(event_key(lhs), rhs, loc);
    if (!buffer_like(t)) return;
    std::string path;
    if (!decl_path(lhs, path) && !isa<ArraySubscriptExpr>(strip(lhs))) return;
    bind(buffer_key(lhs), t, rhs, loc, class_assign);
  }

  void visit_var(const VarDecl* vd) {
    QualType t = vd->getType().getNonReferenceType();
    if (vd->getType()->isReferenceType()) return;  // an alias, not a new name
    if (is_event_type(t)) {
      if (vd->hasInit()) bind_event(var_key(vd, 'e'), vd->getInit(), vd->getLocation());
      return;
    }
    // cublasHandle_t h = at::cuda::getCurrentCUDABlasHandle(): bound to the
    // stream current here.
    if (const KeyId stream = stream_of_handle_getter(vd->getInit()); stream != kNoKey) {
      emit(Op{OpKind::kBindHandle, kNoKey, stream, kNoKey, var_key(vd, 'h'), site(vd->getLocation())});
      return;
    }
    if (!buffer_like(t)) return;
    bind(var_key(vd, 'b'), t, vd->getInit(), vd->getLocation(), /*class_assign=*/false);
  }

  KeyId var_key(const VarDecl* vd, char kind) {
    std::string id = std::string(1, kind) + "v" +
                     llvm::utohexstr(reinterpret_cast<uintptr_t>(vd->getCanonicalDecl()));
    auto it = key_ids_.find(id);
    if (it != key_ids_.end()) return it->second;
    return intern_with_display(id, KeyInfo{"'" + vd->getNameAsString() + "'", false});
  }

  void visit_destructor(const VarDecl* vd, const Stmt* trigger) {
    if (!vd || !model_.destructor_frees(vd->getType()->getAsCXXRecordDecl())) return;
    SourceLocation loc = vd->getLocation();
    if (const auto* cs = dyn_cast_or_null<CompoundStmt>(trigger))
      loc = cs->getRBracLoc();
    else if (trigger)
      loc = trigger->getBeginLoc();
    emit(Op{OpKind::kFree, var_key(vd, 'b'), kNoKey, kNoKey, kNoKey, site(loc, true)});
  }

  // --- inlining helpers ------------------------------------------------------

  static std::string decl_prefix(const ValueDecl* d) {
    return "v" + llvm::utohexstr(reinterpret_cast<uintptr_t>(d->getCanonicalDecl()));
  }

  // Rewrites one of the helper's keys into the caller's terms: the helper's
  // parameters (and `this`) become the call's arguments; its locals stay.
  KeyId map_key(const InlineSummary& sum, KeyId k, const FunctionDecl* def, const CallExpr* call) {
    if (k == kNoKey) return kNoKey;
    const std::string& id = sum.key_ids[k];
    const KeyInfo& info = sum.keys[k];
    char kind = id[0];
    llvm::StringRef rest = llvm::StringRef(id).drop_front();

    auto rebase = [&](const Expr* arg, llvm::StringRef prefix, llvm::StringRef shown_name) -> KeyId {
      llvm::StringRef suffix = rest.drop_front(prefix.size());
      // A local alias passed in names its buffer, as it does at the call.
      if (kind == 'b' && suffix.empty())
        if (const Alias* alias = alias_of(arg)) return alias->target;
      std::string path;
      if (arg && decl_path(arg, path)) {
        std::string shown = source_text(arg);
        llvm::StringRef callee_shown = llvm::StringRef(info.display).drop_front().drop_back();
        if (shown_name == "this") {
          callee_shown.consume_front("this->");
          if (!suffix.empty()) shown += "." + callee_shown.str();
        } else if (callee_shown.consume_front(shown_name)) {
          shown += callee_shown.str();
        }
        return intern_with_display(std::string(1, kind) + path + suffix.str(),
                                   KeyInfo{"'" + shown + "'", false});
      }
      if (!suffix.empty() || !arg) return kNoKey;
      if (kind == 'b') return buffer_key(arg);
      if (kind == 's') return stream_key(arg);
      if (kind == 'h') return handle_key(arg);
      return event_key(arg);
    };

    auto rooted_at = [&](llvm::StringRef prefix) {
      return rest.starts_with(prefix) &&
             (rest.size() == prefix.size() || rest[prefix.size()] == '.' || rest[prefix.size()] == '[');
    };

    // The helper's current stream is the one current at the call.
    if (id == "current") return current_stream_at(call);
    const auto* member_call = dyn_cast<CXXMemberCallExpr>(call);
    const unsigned first = object_arg_count(call);
    for (unsigned i = 0; i < def->getNumParams() && i + first < call->getNumArgs(); ++i) {
      const ParmVarDecl* p = def->getParamDecl(i);
      std::string prefix = decl_prefix(p);
      if (rooted_at(prefix)) return rebase(call->getArg(i + first), prefix, p->getName());
    }
    const CXXRecordDecl* lambda = lambda_of(def);
    if (lambda) {
      // An init-capture (`[b = buf]`) names what its initializer names. The
      // other captures are the enclosing function's own variables already.
      for (const LambdaCapture& c : lambda->captures()) {
        if (!c.capturesVariable()) continue;
        const auto* vd = dyn_cast<VarDecl>(c.getCapturedVar());
        if (!vd || !vd->isInitCapture() || !vd->getInit()) continue;
        std::string prefix = decl_prefix(vd);
        if (rooted_at(prefix)) return rebase(vd->getInit(), prefix, vd->getName());
      }
    }
    if (rest.starts_with("this")) {
      // A lambda's `this` is the enclosing function's, captured; a function
      // without a `this` of its own has such keys only from a lambda passed
      // to it.
      const auto* method = dyn_cast<CXXMethodDecl>(def);
      if (lambda || !method || !method->isImplicitObjectMemberFunction())
        return intern_with_display(id, info);
      const Expr* object = nullptr;
      if (member_call)
        object = member_call->getImplicitObjectArgument();
      else if (first == 1)
        object = call->getArg(0);  // a function object's operator()
      if (!object) return kNoKey;
      if (isa<CXXThisExpr>(strip(object))) return intern_with_display(id, info);
      return rebase(object, "this", "this");
    }
    return intern_with_display(id, info);  // a helper local, a global, or a lambda's capture
  }

  // The lambda whose call operator `def` is (a generic lambda's too), or null.
  static const CXXRecordDecl* lambda_of(const FunctionDecl* def) {
    const auto* method = dyn_cast<CXXMethodDecl>(def);
    return method && method->getParent()->isLambda() ? method->getParent() : nullptr;
  }

  // Whether one of a helper's keys is rooted at a variable of another
  // function: a lambda's capture (`[&]`, `[=]`, `[buf]`) of a local of the
  // function it is written in, also once the lambda is inlined into a helper
  // it was passed to.
  static bool names_outer_variable(const InlineSummary& sum, KeyId k, const FunctionDecl* def) {
    llvm::StringRef root = key_root(sum.key_ids[k]);
    auto it = sum.root_vars.find(root.str());
    if (it == sum.root_vars.end() || !it->second->isLocalVarDeclOrParm()) return false;
    const auto* owner = dyn_cast_or_null<FunctionDecl>(it->second->getParentFunctionOrMethod());
    return owner && owner->getCanonicalDecl() != def->getCanonicalDecl();
  }

  // Whether the call was inlined (a helper with nothing to inline counts).
  bool inline_call(const CallExpr* call) {
    if (isa<CUDAKernelCallExpr>(call)) return false;
    // Of the operators, only a call of a lambda or another function object.
    if (const auto* op = dyn_cast<CXXOperatorCallExpr>(call); op && op->getOperator() != OO_Call)
      return false;
    const FunctionDecl* def = model_.inlinable_definition(call->getDirectCallee());
    if (!def) return false;
    const InlineSummary* sum = model_.summary_of(ctx_, def);
    if (!sum || sum->ops.size() > kMaxInlinedOps) return false;
    if (sum->ops.empty()) return true;
    for (const auto& [root, var] : sum->root_vars) out_->root_vars.try_emplace(root, var);

    std::string ret_id = llvm::utohexstr(reinterpret_cast<uintptr_t>(call));
    KeyId ret_buffer = kNoKey, ret_event = kNoKey;
    if (sum->returned_buffer != kNoKey)
      ret_buffer = intern_with_display("br" + ret_id, KeyInfo{"'" + source_text(call) + "'", false});
    if (sum->returned_event != kNoKey)
      ret_event = intern_with_display("er" + ret_id, KeyInfo{"'" + source_text(call) + "'", false});
    inlined_returns_[call] = {ret_buffer, ret_event};

    // Through Stmt: CallExpr's own getBeginLoc starts at the callee, which
    // for `consume(buf)` is the operator() after the lambda's name.
    SourceLocation loc = static_cast<const Stmt*>(call)->getBeginLoc();
    if (const auto* mc = dyn_cast<CXXMemberCallExpr>(call)) loc = mc->getExprLoc();
    // A helper handed a pointer offset into a buffer may touch only a part
    // of it: its uses and writes are taken as partial, whichever parameter.
    const bool offset_arg = std::any_of(call->arg_begin(), call->arg_end(),
                                        [](const Expr* arg) { return offset_pointer(arg); });
    for (const Op& in : sum->ops) {
      Op op = in;
      op.site = site(loc);
      op.guard = 0;  // the helper's own sets; the call's guards are taken at emit()
      if (offset_arg && (op.kind == OpKind::kUse || op.kind == OpKind::kWrite)) op.partial = true;
      bool lost = false;
      auto map = [&](KeyId& k) {
        if (k == kNoKey) return;
        k = map_key(*sum, k, def, call);
        if (k == kNoKey) lost = true;
      };
      map(op.buffer);
      // A helper that frees its own local buffer is reported in the helper;
      // at the call site that buffer just stops existing. A lambda's capture
      // is not its own: the free is the enclosing function's.
      if (op.kind == OpKind::kFree && op.buffer != kNoKey &&
          out_->key_ids[op.buffer] == sum->key_ids[in.buffer] &&
          !names_outer_variable(*sum, in.buffer, def)) {
        op.kind = OpKind::kKill;
        op.stream = kNoKey;
      }
      map(op.stream);
      map(op.event);
      map(op.source);
      // A copy from something untracked still ends what the target named.
      bool copy = op.kind == OpKind::kCopy || op.kind == OpKind::kEventCopy;
      if (lost && (!copy || (op.kind == OpKind::kCopy && op.buffer == kNoKey) ||
                   (op.kind == OpKind::kEventCopy && op.event == kNoKey)))
        continue;
      emit(op);
    }
    // The value the helper returns, under the caller's temporary name.
    if (ret_buffer != kNoKey) {
      KeyId src = map_key(*sum, sum->returned_buffer, def, call);
      emit(Op{OpKind::kCopy, ret_buffer, kNoKey, kNoKey, src, site(loc)});
    }
    if (ret_event != kNoKey) {
      KeyId src = map_key(*sum, sum->returned_event, def, call);
      emit(Op{OpKind::kEventCopy, kNoKey, kNoKey, ret_event, src, site(loc)});
    }
    return true;
  }

  ASTContext& ctx_;
  ApiModel& model_;
  const Stmt* body_;
  LoopRanges loops_;
  llvm::DenseMap<const VarDecl*, Alias> aliases_;
  llvm::DenseSet<KeyId> entry_bindings_;  // member handles bound at entry (note_member_handle)
  bool analyzed_ = false;                 // the function analyzed, not a helper's summary
  llvm::DenseMap<const CallExpr*, std::pair<KeyId, KeyId>> inlined_returns_;
  llvm::DenseMap<const VarDecl*, bool> stream_aliases_;
  std::unique_ptr<FunctionOps> out_;
  OpBlock* current_ = nullptr;
  struct CaptureRange {
    SourceLocation begin, end;  // end invalid: the capture does not end in the function
    std::uintptr_t id;
  };
  std::vector<CaptureRange> captures_;  // pair_captures
  llvm::StringMap<KeyId> key_ids_;
  // find_host_memory: the buffers the function pins, and the lvalues its
  // host code writes or takes the address of.
  llvm::DenseSet<KeyId> pinned_;
  llvm::DenseSet<const Expr*> written_lvalues_;
  llvm::DenseSet<const Expr*> address_taken_;
  KeyId host_ = kNoKey;
  const Stmt* current_stmt_ = nullptr;  // the CFG element being visited
  llvm::DenseMap<const Stmt*, std::uint32_t> guards_;
  // The streams the function creates: true while every creation of the
  // stream made it non-blocking (note_stream_creation).
  std::map<KeyId, bool> created_streams_;
};

}  // namespace

std::unique_ptr<FunctionOps> build_function_ops(ASTContext& ctx, ApiModel& model, const CFG& cfg,
                                                const Stmt* body, bool split_range_loops) {
  return Builder(ctx, model, body).build(cfg, split_range_loops);
}

llvm::StringRef key_root(llvm::StringRef key_id) {
  const llvm::StringRef path = key_id.drop_front();
  return path.take_front(path.find_first_of(".["));
}

const InlineSummary* ApiModel::summary_of(ASTContext& ctx, const FunctionDecl* def) {
  auto it = summaries_.find(def);
  if (it != summaries_.end()) return it->second.get();  // null while being built: recursion
  if (inline_depth_ >= kMaxInlineDepth) return nullptr;
  summaries_[def] = nullptr;

  CFG::BuildOptions options;
  options.AddImplicitDtors = true;
  options.setAllAlwaysAdd();
  std::unique_ptr<CFG> cfg = CFG::buildCFG(def, def->getBody(), &ctx, options);
  if (!cfg) return nullptr;
  ++inline_depth_;
  // A helper's loops are not split: its ops are taken in one straight line.
  std::unique_ptr<FunctionOps> ops =
      build_function_ops(ctx, *this, *cfg, def->getBody(), /*split_range_loops=*/false);
  --inline_depth_;

  // Straight-line order: reverse post-order of the CFG from its entry.
  std::vector<unsigned> order;
  std::vector<char> state(ops->graph.blocks.size(), 0);
  std::vector<std::pair<unsigned, std::size_t>> stack{{ops->graph.entry, 0}};
  state[ops->graph.entry] = 1;
  while (!stack.empty()) {
    auto& [b, next] = stack.back();
    const auto& succs = ops->graph.blocks[b].succs;
    if (next < succs.size()) {
      unsigned s = succs[next++];
      if (!state[s]) {
        state[s] = 1;
        stack.push_back({s, 0});
      }
      continue;
    }
    order.push_back(b);
    stack.pop_back();
  }
  auto summary = std::make_unique<InlineSummary>();
  for (auto b = order.rbegin(); b != order.rend(); ++b)
    for (const Op& op : ops->graph.blocks[*b].ops) summary->ops.push_back(op);
  summary->keys = std::move(ops->keys);
  summary->key_ids = std::move(ops->key_ids);
  summary->root_vars = std::move(ops->root_vars);
  summary->returned_buffer = ops->returned_buffer;
  summary->returned_event = ops->returned_event;
  const InlineSummary* result = summary.get();
  summaries_[def] = std::move(summary);
  return result;
}

}  // namespace xsc::lint
