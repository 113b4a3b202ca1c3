// Kernel parameters filled in part, from mangled names (param_fill.h).
//
// Each layout below is PyTorch's, written out from its declaration
// (ATen/native/cuda/Shape.cu, MultiTensorApply.cuh, ForeachReduceOp.cu,
// Reduce.cuh, ATen/cuda/detail/TensorInfo.cuh), and accepted only where the
// size it computes is the parameter's size (ReduceOp, read from its end,
// only where its alignment cannot pad that end).
// test/torch/param-fill-layouts.test holds them against an installed
// PyTorch's kernels.
#include "runtime/cuda/param_access/param_fill.h"

#if XSC_HAVE_LLVM_DEMANGLE

#include <charconv>
#include <string_view>

#include "runtime/cuda/param_access/demangled_params.h"

namespace xsc::rt {
namespace {

namespace itd = demangled::itd;
using demangled::Node;

constexpr std::uint32_t align_up(std::uint32_t n, std::uint32_t a) { return (n + a - 1) / a * a; }

// A class: its base name, whether it is declared in at::native (or a
// namespace inside it) or in at::cuda::detail, and its template arguments
// (none for a class that is no template's specialization).
struct Specialization {
  std::string_view name;
  bool in_at_native = false;
  bool in_at_cuda_detail = false;
  bool at_global_scope = false;
  itd::NodeArray args;
};

// The components of a qualified name, outermost first ("at", "native",
// "(anonymous namespace)", "TensorListMetadata").
void components(const Node* n, std::vector<std::string_view>* out, int depth = 0) {
  n = demangled::resolved(n);
  if (n == nullptr || depth > demangled::kMaxDepth) return;
  if (n->getKind() == Node::KNestedName) {
    static_cast<const itd::NestedName*>(n)->match([&](const Node* qual, const Node* name) {
      components(qual, out, depth + 1);
      components(name, out, depth + 1);
    });
    return;
  }
  out->push_back(n->getBaseName());
}

// A class named by `type`: a template's specialization (with its
// arguments) or a plain class (none).
bool specialization(const Node* type, Specialization* out) {
  unsigned quals = 0;
  const Node* n = demangled::strip_qualifiers(type, &quals);
  if (n == nullptr) return false;
  const Node* name = n;
  const Node* args = nullptr;
  if (n->getKind() == Node::KNameWithTemplateArgs) {
    static_cast<const itd::NameWithTemplateArgs*>(n)->match(
        [&](const Node* nm, const Node* ta) { name = nm, args = ta; });
    args = demangled::resolved(args);
    if (name == nullptr || args == nullptr || args->getKind() != Node::KTemplateArgs) return false;
  } else if (n->getKind() != Node::KNestedName) {
    return false;
  }
  std::vector<std::string_view> parts;
  components(name, &parts);
  if (parts.empty()) return false;
  out->name = parts.back();
  out->in_at_native = parts.size() >= 3 && parts[0] == "at" && parts[1] == "native";
  out->in_at_cuda_detail =
      parts.size() == 4 && parts[0] == "at" && parts[1] == "cuda" && parts[2] == "detail";
  out->at_global_scope = parts.size() == 1;
  out->args = itd::NodeArray();
  if (args != nullptr)
    static_cast<const itd::TemplateArgs*>(args)->match(
        [&](itd::NodeArray params, const Node*) { out->args = params; });
  return true;
}

// An integer template argument's value, when `n` is one.
bool integer_arg(const Node* n, std::uint32_t* value) {
  n = demangled::resolved(n);
  if (n == nullptr || n->getKind() != Node::KIntegerLiteral) return false;
  std::string_view digits;
  static_cast<const itd::IntegerLiteral*>(n)->match(
      [&](std::string_view, std::string_view v) { digits = v; });
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

// Size and alignment of the scalar types these layouts are instantiated
// with; 0 for any other.
struct ScalarType {
  std::uint32_t size = 0;
  std::uint32_t align = 0;
};
ScalarType scalar_type(const Node* n) {
  unsigned quals = 0;
  n = demangled::strip_qualifiers(n, &quals);
  if (n == nullptr) return {};
  if (n->getKind() == Node::KNameType) {
    const std::string_view name = n->getBaseName();
    struct Builtin {
      std::string_view name;
      std::uint32_t size;
    };
    static constexpr Builtin kBuiltins[] = {
        {"bool", 1},          {"char", 1},          {"signed char", 1},
        {"unsigned char", 1}, {"short", 2},         {"unsigned short", 2},
        {"int", 4},           {"unsigned int", 4},  {"float", 4},
        {"long", 8},          {"unsigned long", 8}, {"long long", 8},
        {"unsigned long long", 8}, {"double", 8},
    };
    for (const Builtin& b : kBuiltins)
      if (b.name == name) return {b.size, b.size};
    return {};
  }
  if (n->getKind() == Node::KNameWithTemplateArgs) {
    // c10::complex<float>, c10::complex<double>: two of the value type,
    // aligned to their size (c10::complex is alignas(sizeof(T) * 2)).
    Specialization s;
    if (specialization(n, &s) && s.name == "complex" && s.args.size() == 1) {
      const ScalarType value = scalar_type(s.args[0]);
      if (value.size == 4 || value.size == 8) return {2 * value.size, 2 * value.size};
    }
    return {};
  }
  std::vector<std::string_view> parts;
  components(n, &parts);
  if (parts.size() == 2 && parts[0] == "c10" && (parts[1] == "Half" || parts[1] == "BFloat16"))
    return {2, 2};
  return {};
}

// CatArrInputTensorMetadata<T, IndexType, n, stride_size>:
//   const T* input[n]; IndexType offset[n], dimSize[n], nElements[n];
//   bool isContiguous[n];
//   TensorSizeStride<IndexType, 4> tensorStride[stride_size];
// (TensorSizeStride: IndexType tensorSize[4], tensorStride[4].)
bool cat_inputs(const Specialization& s, std::uint32_t size, ParamFill* fill) {
  std::uint32_t n = 0, strides = 0;
  if (s.args.size() != 4 || !integer_arg(s.args[2], &n) || !integer_arg(s.args[3], &strides) ||
      n == 0 || n > 4096 || strides > 4096)
    return false;
  const ScalarType index = scalar_type(s.args[1]);
  if (index.size != 4 && index.size != 8) return false;
  std::uint32_t at = 8 * n + 3 * n * index.size + n;
  at = align_up(at, index.size) + strides * 8 * index.size;
  if (align_up(at, 8) != size) return false;
  fill->kind = ParamFill::Kind::kGridYEntries;
  fill->tables = 1;
  fill->table_at[0] = 0;
  fill->table_capacity[0] = n;
  return true;
}

// MultiTensorApply.cuh's tables: depth_to_max_tensors,
// depth_to_max_tensors_scalarlist (and its complex<double> variant for
// depths 1 and 2), depth_to_max_blocks.
constexpr std::uint32_t kMaxTensors[5] = {110, 64, 48, 36, 30};
constexpr std::uint32_t kMaxTensorsScalarList[5] = {96, 64, 48, 36, 30};
constexpr std::uint32_t kMaxTensorsComplexDoubleScalarList[2] = {72, 60};
constexpr std::uint32_t kMaxBlocks = 320;

// The n of a TensorListMetadata<n>, TensorListScalarListMetadata<S, n> or
// FusedOptimizerTensorListMetadata<n>: its last template argument (0 when
// it is not an integer).
std::uint32_t tensor_list_depth(const Specialization& s) {
  std::uint32_t n = 0;
  return !s.args.empty() && integer_arg(s.args[s.args.size() - 1], &n) ? n : 0;
}

// TensorListMetadata<n>:
//   const void* addresses[n][M]; int64_t numel_for_tensor[M];
//   unsigned char block_to_tensor[320]; int block_to_chunk[320];
//   int start_tensor_this_launch;
// FusedOptimizerTensorListMetadata<n> has
//   const void* state_steps_addresses[M_scalarlist] after numel_for_tensor;
// TensorListScalarListMetadata<S, n> has M_scalarlist tensors, S
//   scalar_vals[M] after numel_for_tensor, and no start_tensor_this_launch.
bool tensor_lists(const Specialization& s, std::uint32_t size, ParamFill* fill) {
  const bool scalars = s.name == "TensorListScalarListMetadata";
  const bool fused = s.name == "FusedOptimizerTensorListMetadata";
  const std::uint32_t n = tensor_list_depth(s);
  if (s.args.size() != (scalars ? 2u : 1u) || n < 1 || n > 5) return false;
  ScalarType scalar{};
  std::uint32_t tensors = kMaxTensors[n - 1];
  if (scalars) {
    scalar = scalar_type(s.args[0]);
    if (scalar.size == 0) return false;
    tensors = scalar.size == 16 && n <= 2 ? kMaxTensorsComplexDoubleScalarList[n - 1]
                                          : kMaxTensorsScalarList[n - 1];
  }
  std::uint32_t at = 8 * n * tensors + 8 * tensors;  // addresses, numel_for_tensor
  fill->tables = 0;
  for (std::uint32_t d = 0; d < n; ++d) {
    fill->table_at[fill->tables] = 8 * d * tensors;
    fill->table_capacity[fill->tables++] = tensors;
  }
  if (fused) {
    fill->table_at[fill->tables] = at;
    fill->table_capacity[fill->tables++] = kMaxTensorsScalarList[n - 1];
    at += 8 * kMaxTensorsScalarList[n - 1];
  }
  if (scalars) at = align_up(at, scalar.align) + tensors * scalar.size;
  const std::uint32_t block_to_tensor = at;
  at = align_up(at + kMaxBlocks, 4) + 4 * kMaxBlocks;
  if (!scalars) at += 4;
  if (align_up(at, scalars && scalar.align > 8 ? scalar.align : 8) != size) return false;
  fill->kind = ParamFill::Kind::kBlockTensors;
  fill->count_at = block_to_tensor;
  fill->count_capacity = kMaxBlocks;
  return true;
}

// TensorListAddresses: const void* addresses[MAX_TENSORS_PER_KERNEL], 400
// or (CUDA 13 builds) 3200 of them; _foreach_norm's lpnorm_cleanup writes
// the norm of tensor blockIdx.x through addresses[blockIdx.x].
bool tensor_addresses(const Specialization& s, std::uint32_t size, ParamFill* fill) {
  if (!s.args.empty() || size == 0 || size % 8 != 0 || size > 32768) return false;
  fill->kind = ParamFill::Kind::kGridXEntries;
  fill->tables = 1;
  fill->table_at[0] = 0;
  fill->table_capacity[0] = size / 8;
  return true;
}

// at::cuda::detail::TensorInfo<T, IndexType>:
//   T* data; IndexType sizes[25]; IndexType strides[25]; int dims;
// The constructor sets sizes and strides below dims only; only data is a
// pointer.
bool tensor_info(const Specialization& s, std::uint32_t size, ParamFill* fill) {
  if (s.args.size() != 2) return false;
  const ScalarType index = scalar_type(s.args[1]);
  if (index.size != 4 && index.size != 8) return false;
  if (align_up(8 + 2 * 25 * index.size + 4, 8) != size) return false;
  fill->kind = ParamFill::Kind::kFixedEntries;
  fill->tables = 1;
  fill->table_at[0] = 0;
  fill->table_capacity[0] = 1;
  return true;
}

// TensorSizeStride<IndexType, MaxDims>: IndexType tensorSize[MaxDims],
// tensorStride[MaxDims], set below the tensor's dimensions only; no
// pointer.
bool size_stride(const Specialization& s, std::uint32_t size, ParamFill* fill) {
  std::uint32_t dims = 0;
  if (s.args.size() != 2 || !integer_arg(s.args[1], &dims) || dims == 0 || dims > 64)
    return false;
  const ScalarType index = scalar_type(s.args[0]);
  if (index.size != 4 && index.size != 8) return false;
  if (2 * dims * index.size != size) return false;
  fill->kind = ParamFill::Kind::kFixedEntries;
  fill->tables = 0;
  return true;
}

// ReduceOp<scalar_t, ops_t, index_t, ...> is
//   ops_t ops; arg_t ident; ReduceConfig config;
//   OffsetCalculator<1, index_t> input_calc;
//   OffsetCalculator<2, index_t> output_calc;
//   const void* src; const char* dst[2]; void* acc_buf; void* cta_buf;
//   int* semaphores; int64_t base_idx; bool accumulate; bool final_output;
//   int noutputs;
// Its constructor sets dst[1] only for a second output, and an
// OffsetCalculator<N, index_t> (int dims; IntDivider<index_t>
// sizes_[MAX_DIMS]; index_t strides_[MAX_DIMS][N]) is filled below dims
// only, and holds no pointer anyway. Read from the end, which holds while
// the struct's alignment is 8: a complex<double> (alignas 16) anywhere in
// its arguments could pad the tail, so those keep every word.
constexpr std::uint32_t kReduceTail = 64;   // src .. noutputs
constexpr std::uint32_t kReduceConfig = 64;  // ReduceConfig: 15 ints and a bool
constexpr std::uint32_t kMaxDims = 25;       // ATen/cuda/detail/OffsetCalculator.cuh (CUDA)

// OffsetCalculator<NARGS, index_t, signed_strides> (at global scope):
//   int dims; IntDivider<index_t> sizes_[MAX_DIMS];
//   stride_t strides_[MAX_DIMS][max(NARGS, 1)];
// IntDivider<unsigned int> holds divisor, m1 and shift; any other
// IntDivider<T> the divisor alone (and dims is then padded to 8). Its size,
// and its alignment; false for another index type.
bool offset_calculator_size(std::uint32_t index_size, std::uint32_t nargs, std::uint32_t* bytes,
                            std::uint32_t* align) {
  const std::uint32_t slots = nargs == 0 ? 1 : nargs;
  if (index_size == 4) {
    *bytes = 4 + 12 * kMaxDims + 4 * kMaxDims * slots;
    *align = 4;
    return true;
  }
  if (index_size == 8) {
    *bytes = 8 + 8 * kMaxDims + 8 * kMaxDims * slots;
    *align = 8;
    return true;
  }
  return false;
}

// The bytes of OffsetCalculator<1> and <2> together, and their alignment.
bool offset_calculators(std::uint32_t index_size, std::uint32_t* bytes, std::uint32_t* align) {
  std::uint32_t input = 0, output = 0;
  if (!offset_calculator_size(index_size, 1, &input, align) ||
      !offset_calculator_size(index_size, 2, &output, align))
    return false;
  *bytes = input + output;
  return true;
}

// An OffsetCalculator passed by value (cross, glu_backward, multi-output
// elementwise and distribution kernels): filled below dims only, and no
// pointer anywhere: no word.
bool offset_calculator(const Specialization& s, std::uint32_t size, ParamFill* fill) {
  std::uint32_t nargs = 0, bytes = 0, align = 0;
  if (s.args.size() != 3 || !integer_arg(s.args[0], &nargs) || nargs > 64 ||
      !offset_calculator_size(scalar_type(s.args[1]).size, nargs, &bytes, &align) ||
      bytes != size)
    return false;
  fill->kind = ParamFill::Kind::kFixedEntries;
  fill->tables = 0;
  return true;
}

bool mentions_16_byte_alignment(const itd::NodeArray& args, int depth = 0) {
  if (depth > 8) return true;
  for (const Node* arg : args) {
    if (scalar_type(arg).align > 8) return true;
    Specialization inner;
    if (specialization(arg, &inner) && mentions_16_byte_alignment(inner.args, depth + 1))
      return true;
  }
  return false;
}

bool reduction(const Specialization& s, std::uint32_t size, ParamFill* fill) {
  if (s.args.size() < 3 || size % 8 != 0 || mentions_16_byte_alignment(s.args)) return false;
  std::uint32_t calculators = 0, align = 0;
  if (!offset_calculators(scalar_type(s.args[2]).size, &calculators, &align)) return false;
  if (size < kReduceTail + calculators + kReduceConfig) return false;
  fill->kind = ParamFill::Kind::kReduction;
  fill->count_at = size - 4;
  fill->skip_at = size - 48;
  // The calculators end at src, or 4 bytes before it when they end off an
  // 8-byte boundary: either way the words from (end - calculators) rounded
  // down to 8 up to src hold the calculators, and at most ReduceConfig's
  // last int besides, no pointer.
  fill->skip_end = size - kReduceTail;
  fill->skip_begin = (fill->skip_end - calculators - (align == 4 ? 4 : 0)) & ~7u;
  return true;
}

// The fill of a parameter of `type`, `size` bytes, where its layout is one
// this file knows; `seen`, when given, receives the type's specialization.
bool recognize(const Node* type, std::uint32_t size, ParamFill* fill,
               Specialization* seen = nullptr) {
  Specialization local;
  Specialization& s = seen != nullptr ? *seen : local;
  if (type == nullptr || !specialization(type, &s)) return false;
  fill->size = size;
  if (s.in_at_cuda_detail && s.name == "TensorInfo") return tensor_info(s, size, fill);
  if (s.at_global_scope && s.name == "OffsetCalculator") return offset_calculator(s, size, fill);
  if (!s.in_at_native) return false;
  if (s.name == "TensorSizeStride") return size_stride(s, size, fill);
  if (s.name == "CatArrInputTensorMetadata") return cat_inputs(s, size, fill);
  if (s.name == "TensorListMetadata" || s.name == "TensorListScalarListMetadata" ||
      s.name == "FusedOptimizerTensorListMetadata")
    return tensor_lists(s, size, fill);
  if (s.name == "TensorListAddresses") return tensor_addresses(s, size, fill);
  if (s.name == "ReduceOp") return reduction(s, size, fill);
  return false;
}

// The name of the kernel `name` (a function's, with its template
// arguments) when it is declared in at::native itself; empty otherwise.
std::string_view native_kernel(const Node* name) {
  name = demangled::resolved(name);
  if (name != nullptr && name->getKind() == Node::KNameWithTemplateArgs)
    static_cast<const itd::NameWithTemplateArgs*>(name)->match(
        [&](const Node* nm, const Node*) { name = nm; });
  std::vector<std::string_view> parts;
  components(name, &parts);
  if (parts.size() != 3 || parts[0] != "at" || parts[1] != "native") return {};
  return parts[2];
}

// The closure type a lambda's mangling names (`{lambda(int)#1}`), with the
// function it is local to; null when `type` is no local lambda.
const itd::ClosureTypeName* local_lambda(const Node* type, const itd::FunctionEncoding** in) {
  unsigned quals = 0;
  const Node* n = demangled::strip_qualifiers(type, &quals);
  if (n == nullptr || n->getKind() != Node::KLocalName) return nullptr;
  const Node* encoding = nullptr;
  const Node* entity = nullptr;
  static_cast<const itd::LocalName*>(n)->match([&](const Node* e, const Node* x) {
    encoding = demangled::resolved(e);
    entity = demangled::resolved(x);
  });
  if (encoding == nullptr || entity == nullptr || encoding->getKind() != Node::KFunctionEncoding ||
      entity->getKind() != Node::KClosureTypeName)
    return nullptr;
  if (in != nullptr) *in = static_cast<const itd::FunctionEncoding*>(encoding);
  return static_cast<const itd::ClosureTypeName*>(entity);
}

itd::NodeArray lambda_params(const itd::ClosureTypeName* lambda) {
  itd::NodeArray params;
  lambda->match([&](itd::NodeArray, const Node*, itd::NodeArray p, const Node*, std::string_view) {
    params = p;
  });
  return params;
}

// The lambda TensorIterator's non-contiguous elementwise path hands
// elementwise_kernel<nt, vt, func_t>(int N, func_t f) (CUDALoops.cuh's
// gpu_kernel_impl_nocast<func_t> and, for operands of other dtypes,
// gpu_kernel_impl<func_t>, each a [=](int idx) lambda). It captures, in
// the order its body first names them,
//   OffsetCalculator<ntensors> offset_calc; std::array<char*, ntensors>
//   data; func_t f; (gpu_kernel_impl: std::array<ScalarType, ntensors>
//   dtypes;)
// ntensors being func_t's arity + 1. The calculator is filled below its
// dims only and holds no pointer: what the host's stack held past dims
// reaches the kernel (a pointer into a live block, taken for a use, is
// reported against whatever another stream does with it). Its words are
// skipped where the launch's bytes show a calculator there (the fill is
// checked per launch: for_each_scanned_word). ntensors is the lambda
// func_t's parameter count plus one where func_t is a lambda (whose own
// captures may take any size: the sparse kernels' take hundreds of bytes);
// for a named functor, the one count whose captures fit the parameter's
// size with less than a calculator row's bytes (kMaxFunctorBytes) left
// for f.
constexpr std::uint32_t kMaxFunctorBytes = 96;

bool elementwise_closure(std::string_view kernel, const Node* name, std::size_t i,
                         std::uint32_t size, ParamFill* fill) {
  if (kernel != "elementwise_kernel" || i != 1) return false;
  // The closure is the kernel's third template argument, read there: the
  // parameter's own type is a reference to it (T1_), which the demangler
  // resolves against the last template argument list it parsed, a nested
  // function template's when the functor is a lambda inside one
  // (masked_scale_kernel<unsigned char, c10::BFloat16, float>'s).
  Specialization kernel_template;
  if (!specialization(name, &kernel_template) || kernel_template.args.size() != 3) return false;
  const Node* type = kernel_template.args[2];
  const itd::FunctionEncoding* function = nullptr;
  const itd::ClosureTypeName* lambda = local_lambda(type, &function);
  if (lambda == nullptr) return false;
  const itd::NodeArray params = lambda_params(lambda);
  const Node* index = params.size() == 1 ? demangled::resolved(params[0]) : nullptr;
  if (index == nullptr || index->getKind() != Node::KNameType || index->getBaseName() != "int")
    return false;
  const std::string_view impl = native_kernel(function->getName());
  const bool casts = impl == "gpu_kernel_impl";
  if (!casts && impl != "gpu_kernel_impl_nocast") return false;
  Specialization impl_template;
  if (!specialization(function->getName(), &impl_template) || impl_template.args.size() != 1)
    return false;
  std::uint32_t arity = 0;
  bool arity_known = false;
  if (const itd::ClosureTypeName* f = local_lambda(impl_template.args[0], nullptr)) {
    arity = static_cast<std::uint32_t>(lambda_params(f).size());
    arity_known = true;
  }
  std::uint32_t found = 0, calculator_end = 0;
  for (std::uint32_t n = 1; n <= 16; ++n) {
    if (arity_known && n != arity + 1) continue;
    std::uint32_t calculator = 0, align = 0;
    offset_calculator_size(4, n, &calculator, &align);
    const std::uint32_t data_at = align_up(calculator, 8);
    const std::uint32_t captures = data_at + 8 * n + (casts ? n : 0);
    if (captures > size || (!arity_known && size - captures >= kMaxFunctorBytes)) continue;
    ++found;
    calculator_end = data_at;
  }
  if (found != 1) return false;
  fill->size = size;
  fill->kind = ParamFill::Kind::kLeadingOffsetCalculator;
  fill->skip_end = calculator_end;
  return true;
}

// TensorIterator's elementwise kernels with a single output: Loops.cuh's
// vectorized_elementwise_kernel and unrolled_elementwise_kernel.
bool single_output_elementwise_kernel(std::string_view kernel) {
  return kernel == "vectorized_elementwise_kernel" || kernel == "unrolled_elementwise_kernel";
}

// IndexKernelUtils.cu's vectorized_gather_kernel(char* out, char* inp,
// index_t* idx, ...), which index_select and embedding run on contiguous
// tensors: parameters 1 and 2 are read through, 8-byte pointers.
bool gather_input(std::string_view kernel, std::size_t i, const Node* type,
                  std::uint32_t size) {
  if (kernel != "vectorized_gather_kernel" || (i != 1 && i != 2) || size != 8) return false;
  unsigned quals = 0;
  return demangled::as_pointer(type, &quals) != nullptr;
}

// Whether `type`, `size` bytes, is an array of N char pointers
// (std::array<char*, N>, at::detail::Array<char*, N>), N >= 2.
bool operand_pointers(const Node* type, std::uint32_t size) {
  Specialization s;
  if (type == nullptr || !specialization(type, &s) || s.args.size() != 2 ||
      (s.name != "array" && s.name != "Array"))
    return false;
  std::uint32_t n = 0;
  if (!integer_arg(s.args[1], &n) || n < 2 || n > 64 || size != 8 * n) return false;
  unsigned quals = 0;
  const itd::PointerType* pointer = demangled::as_pointer(s.args[0], &quals);
  if (pointer == nullptr) return false;
  const Node* pointee = demangled::resolved(pointer->getPointee());
  return pointee != nullptr && pointee->getKind() == Node::KNameType &&
         pointee->getBaseName() == "char";
}

// The tensor lists a foreach kernel only reads, as the bytes of its
// metadata's address tables: multi_tensor_apply_kernel(T tensorListMeta,
// U callable, ...) hands `callable` the lists, and ForeachFunctors.cuh's
// functors (BinaryOpListAlphaFunctor, PointwiseOpScalarFunctor,
// TernaryOpListFunctor, ZeroFunctor, CopyFunctor, ...) end their template
// arguments with <depth, r_args_depth, res_arg_index>: they load the first
// r_args_depth lists and store into list res_arg_index. In place
// (res_arg_index 0, r_args_depth == depth: `_foreach_add_(xs, ys)`) list 0
// is read and written, and lists [1, depth) are only read; out of place
// (res_arg_index == depth - 1 == r_args_depth: `_foreach_add(xs, ys)`) the
// lists before the output are only read. _foreach_norm's and
// _foreach_max's functors (LpNormFunctor, LpMaxFunctor: <..., 1, 1, 0>)
// reduce each tensor of their list into a buffer passed apart, and store
// into no list: theirs is only read. Any other shape (a functor that loads
// fewer lists than it is handed, fused optimizers' functors, whose template
// arguments say nothing of this and which may store into every list)
// labels nothing. `lists` is the metadata's fill (tensor_lists()), `depth`
// its n.
bool foreach_inputs(const Node* functor, const ParamFill& lists, std::uint32_t depth,
                    ReadSpan* out) {
  Specialization f;
  std::uint32_t d = 0, loaded = 0, result = 0;
  if (functor == nullptr || !specialization(functor, &f) || !f.in_at_native ||
      f.args.size() < 3 || !integer_arg(f.args[f.args.size() - 3], &d) ||
      !integer_arg(f.args[f.args.size() - 2], &loaded) ||
      !integer_arg(f.args[f.args.size() - 1], &result) || d != depth || lists.tables < depth)
    return false;
  std::uint32_t first = 0, end = 0;  // the lists only read: [first, end)
  if (f.name == "LpNormFunctor" || f.name == "LpMaxFunctor") {
    first = 0, end = d;
  } else if (result == 0 && loaded == d) {
    first = 1, end = d;
  } else if (result + 1 == d && loaded == result) {
    first = 0, end = result;
  }
  if (first >= end) return false;
  const std::uint32_t last = end - 1;
  *out = ReadSpan{lists.table_at[first], lists.table_at[last] + 8 * lists.table_capacity[last]};
  return true;
}

// The fills of parsed parameters; false (and `out` empty) when none is
// filled in part or their count is not `count`.
bool fills_of(const Node* name, const std::vector<demangled::Param>& params,
              const std::uint32_t* sizes, std::size_t count, std::vector<ParamFill>* out) {
  out->clear();
  if (params.size() != count) return false;
  const std::string_view kernel = native_kernel(name);
  std::vector<ParamFill> fills(count);
  bool any = false;
  for (std::size_t i = 0; i < count; ++i) {
    ParamFill fill;
    if (recognize(params[i].type, sizes[i], &fill) ||
        elementwise_closure(kernel, name, i, sizes[i], &fill)) {
      fills[i] = fill;
      any = true;
    }
  }
  if (any) *out = std::move(fills);
  return any;
}

// Whether `type` is const-qualified at its top (`float const`).
bool const_qualified(const Node* type) {
  unsigned quals = 0;
  demangled::strip_qualifiers(type, &quals);
  return (quals & itd::QualConst) != 0;
}

// The words only read through: a single-output elementwise kernel's
// operand array from byte 8 on (its inputs); a gather kernel's input and
// indices; a ReduceOp's `src`, the first word of its tail (kReduceTail
// bytes from its end), wherever reduction() accepts its layout; a
// TensorInfo<const T, I>'s `data`, its first word, wherever tensor_info()
// accepts its layout; and with `filled_only` (the scan reads a table's
// filled entries alone), a CatArrInputTensorMetadata's input table,
// wherever cat_inputs() accepts its layout, and the address tables of the
// lists a foreach kernel only reads (foreach_inputs()), wherever
// tensor_lists() accepts its metadata. False (and `out` empty) when
// there is no such parameter or the parameter count is not `count`.
bool operand_reads_of(const Node* name, const std::vector<demangled::Param>& params,
                      const std::uint32_t* sizes, std::size_t count, bool filled_only,
                      std::vector<ReadSpan>* out) {
  out->clear();
  if (params.size() != count) return false;
  const std::string_view kernel = native_kernel(name);
  const bool elementwise = single_output_elementwise_kernel(kernel);
  std::vector<ReadSpan> reads(count);
  bool any = false;
  for (std::size_t i = 0; i < count; ++i) {
    const Node* type = params[i].type;
    if (type == nullptr) continue;
    Specialization s;
    ParamFill layout;
    // The layouts are the fills' own (recognize()), so a read is labelled
    // only where the fill rule accepts the parameter.
    if (elementwise && operand_pointers(type, sizes[i])) {
      reads[i] = ReadSpan{8, sizes[i]};
    } else if (gather_input(kernel, i, type, sizes[i])) {
      reads[i] = ReadSpan{0, 8};
    } else if (!recognize(type, sizes[i], &layout, &s)) {
      continue;
    } else if (layout.kind == ParamFill::Kind::kReduction) {
      reads[i] = ReadSpan{sizes[i] - kReduceTail, sizes[i] - kReduceTail + 8};
    } else if (s.name == "TensorInfo" && const_qualified(s.args[0])) {
      reads[i] = ReadSpan{0, 8};
    } else if (filled_only && s.name == "CatArrInputTensorMetadata") {
      // input[0, gridDim.y) are the operator's inputs; the entries past
      // them hold what the host's stack left, and only a scan that skips
      // them may call the table a read.
      reads[i] = ReadSpan{0, 8 * layout.table_capacity[0]};
    } else if (filled_only && layout.kind == ParamFill::Kind::kBlockTensors &&
               i + 1 < count &&
               foreach_inputs(params[i + 1].type, layout, tensor_list_depth(s), &reads[i])) {
      // The same holds of a foreach kernel's lists past the tensors its
      // blocks name: left from an earlier launch, or never set.
    } else {
      continue;
    }
    any = true;
  }
  if (any) *out = std::move(reads);
  return any;
}

}  // namespace

bool kernel_param_fills(std::string_view mangled_name, const std::uint32_t* sizes,
                        std::size_t count, std::vector<ParamFill>* out) {
  out->clear();
  bool any = false;
  demangled::with_function(mangled_name, [&](const Node* name,
                                             const std::vector<demangled::Param>& params) {
    any = fills_of(name, params, sizes, count, out);
  });
  return any;
}

bool kernel_operand_reads(std::string_view mangled_name, const std::uint32_t* sizes,
                          std::size_t count, std::vector<ReadSpan>* reads) {
  reads->clear();
  bool any = false;
  demangled::with_function(mangled_name, [&](const Node* name,
                                             const std::vector<demangled::Param>& params) {
    any = operand_reads_of(name, params, sizes, count, /*filled_only=*/true, reads);
  });
  return any;
}

void kernel_param_layout(std::string_view mangled_name, const std::uint32_t* sizes,
                         std::size_t count, std::vector<ParamAccess>* access,
                         std::vector<ParamFill>* fills, std::vector<ReadSpan>* reads) {
  access->clear();
  if (fills != nullptr) fills->clear();
  if (reads != nullptr) reads->clear();
  demangled::with_function(mangled_name, [&](const Node* name,
                                             const std::vector<demangled::Param>& params) {
    for (const demangled::Param& param : params) access->push_back(demangled::access_of(param));
    if (fills != nullptr) fills_of(name, params, sizes, count, fills);
    if (reads != nullptr)
      operand_reads_of(name, params, sizes, count, /*filled_only=*/fills != nullptr, reads);
  });
}

}  // namespace xsc::rt

#else  // !XSC_HAVE_LLVM_DEMANGLE

namespace xsc::rt {

bool kernel_param_fills(std::string_view, const std::uint32_t*, std::size_t,
                        std::vector<ParamFill>* out) {
  out->clear();
  return false;
}

bool kernel_operand_reads(std::string_view, const std::uint32_t*, std::size_t,
                          std::vector<ReadSpan>* reads) {
  reads->clear();
  return false;
}

void kernel_param_layout(std::string_view, const std::uint32_t*, std::size_t,
                         std::vector<ParamAccess>* access, std::vector<ParamFill>* fills,
                         std::vector<ReadSpan>* reads) {
  access->clear();
  if (fills != nullptr) fills->clear();
  if (reads != nullptr) reads->clear();
}

}  // namespace xsc::rt

#endif
