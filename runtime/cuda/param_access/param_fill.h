// Kernel parameters filled only in part, and the words of PyTorch kernels'
// parameters that are only read (kernel_operand_reads, below).
//
// Some kernels take a struct by value holding a fixed-size table of
// pointers of which each launch fills only the first entries; the rest keep
// whatever the host's stack held there, often a pointer an earlier call
// left, into memory that is still live. PyTorch's are:
//   - cat (CatArrInputTensorMetadata<T, IndexType, n, stride_size>): the
//     kernel reads input[blockIdx.y], so entries [0, gridDim.y);
//   - foreach and fused-optimizer kernels (TensorListMetadata<n>,
//     TensorListScalarListMetadata<S, n>, FusedOptimizerTensorListMetadata<n>):
//     block b works on tensor block_to_tensor[b], numbered from 0 up, so the
//     entries up to the last block's tensor;
//   - _foreach_norm's last kernel (TensorListAddresses): it writes
//     addresses[blockIdx.x], so entries [0, gridDim.x);
//   - reductions (ReduceOp): its two offset calculators, which hold no
//     pointer and are filled only below their dims, are skipped, and dst[1]
//     is read only when noutputs is 2;
//   - the non-contiguous elementwise path's lambda (elementwise_kernel's
//     closure, from gpu_kernel_impl_nocast and gpu_kernel_impl): its
//     captured OffsetCalculator, first, holds no pointer and is filled
//     below its dims only; skipped where the launch's bytes read as one;
//   - at::cuda::detail::TensorInfo (index, scatter, gather, sort kernels):
//     its data pointer only, sizes[] and strides[] being set only below
//     dims; cat's TensorSizeStride and an OffsetCalculator passed by value
//     (cross, glu_backward, multi-output elementwise kernels), no pointer
//     at all.
// A stale word taken for a use would be reported against whatever another
// stream does with that memory: a race the program does not have. For these
// parameters a launch's scan reads only the entries the launch filled.
//
// Pure: the layouts come from the mangled name's template arguments
// (LLVM's Itanium demangler) and are checked against the parameter's size
// as cuFuncGetParamInfo gives it; a name or a size that does not match
// (another PyTorch's layout) leaves the whole parameter scanned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "runtime/cuda/param_access/param_access.h"

namespace xsc::rt {

// A launch's grid, as the launch call gives it; x == 0 when unknown.
struct LaunchGrid {
  std::uint32_t x = 0, y = 0, z = 0;
};

// Which 8-byte words of one parameter a scan reads.
struct ParamFill {
  enum class Kind : std::uint8_t {
    kWhole,         // every word
    kFixedEntries,  // the tables' entries, all of them (no table: no word)
    kGridYEntries,  // table entries [0, grid.y)
    kGridXEntries,  // table entries [0, grid.x)
    kBlockTensors,  // table entries [0, block_to_tensor[grid.x - 1] + 1),
                    // block_to_tensor being the bytes at `count_at`
    kReduction,     // every word but those wholly inside [skip_begin,
                    // skip_end), and but the one at `skip_at` unless the
                    // int at `count_at` (ReduceOp::noutputs) is 2
    kLeadingOffsetCalculator,  // every word at or past skip_end, and those
                               // before it too unless the bytes there read
                               // as an OffsetCalculator<N, uint32_t>
                               // (offset_calculator_at)
  };
  static constexpr std::size_t kMaxTables = 6;
  Kind kind = Kind::kWhole;
  std::uint8_t tables = 0;
  std::uint32_t table_at[kMaxTables] = {};        // byte offset of each table of pointers
  std::uint32_t table_capacity[kMaxTables] = {};  // its entries
  std::uint32_t count_at = 0;
  std::uint32_t count_capacity = 0;  // kBlockTensors: entries of block_to_tensor
  std::uint32_t skip_at = 0;
  std::uint32_t skip_begin = 0, skip_end = 0;  // kReduction: no pointer in between
  std::uint32_t size = 0;  // the parameter's size the layout was checked against
};

// Per declared parameter (packs expanded), given each one's size in
// `sizes` (cuFuncGetParamInfo's order): kWhole for all but the recognized
// ones. False (and `out` empty) when no parameter is filled in part, the
// name does not parse, or its parameter count is not `count`.
bool kernel_param_fills(std::string_view mangled_name, const std::uint32_t* sizes,
                        std::size_t count, std::vector<ParamFill>* out);

// The words of a parameter that the kernel only reads through, where the
// mangled name says which they are (kernel_operand_reads):
//   - operand arrays: TensorIterator's single-output elementwise kernels
//     (vectorized_elementwise_kernel, unrolled_elementwise_kernel) take
//     their tensors' data pointers as one array of char*, sized by the
//     operands and every entry set, the output first and the inputs after
//     it: the bytes from 8 on;
//   - a gather's input and indices: vectorized_gather_kernel(char* out,
//     char* inp, index_t* idx, ...), which index_select and embedding run
//     on contiguous tensors: parameters 1 and 2;
//   - a reduction's input: ReduceOp's `const void* src`, the first word of
//     its tail (ReduceOp's layout, as its fill reads it);
//   - the inputs of the kernels that take at::cuda::detail::TensorInfo
//     (indexing, dropout, sort): a TensorInfo<const T, I>'s `data`, its
//     first word, a pointer to const T;
//   - cat's inputs: CatArrInputTensorMetadata's `const T* input[n]`, its
//     first 8n bytes. Only the entries the launch filled are inputs (its
//     fill, kGridYEntries); kernel_param_layout labels the table only when
//     it is asked for the fills, with which a scan skips the others;
//   - a foreach kernel's input lists: the address tables of the lists its
//     functor only loads, told by the functor's trailing <depth,
//     r_args_depth, res_arg_index> (lists [1, depth) of an in-place one,
//     those before the output of an out-of-place one, the one list of
//     _foreach_norm's and _foreach_max's). As for cat, only with the fills
//     (kBlockTensors).
// Per declared parameter, the bytes [begin, end) whose words are such
// reads; an empty span for the others. False (and `out` empty) when the
// kernel has no such parameter or its parameter count is not `count`.
struct ReadSpan {
  std::uint32_t begin = 0, end = 0;
  bool contains(std::uint32_t at) const { return at >= begin && at < end; }
  friend bool operator==(const ReadSpan& a, const ReadSpan& b) {
    return a.begin == b.begin && a.end == b.end;
  }
};
bool kernel_operand_reads(std::string_view mangled_name, const std::uint32_t* sizes,
                          std::size_t count, std::vector<ReadSpan>* reads);

// kernel_param_access (param_access.h) and, when `fills` or `reads` is
// given, kernel_param_fills and kernel_operand_reads from one parse of the
// name: the runtime asks all three of every kernel it describes. Each comes
// out as its own call gives it.
void kernel_param_layout(std::string_view mangled_name, const std::uint32_t* sizes,
                         std::size_t count, std::vector<ParamAccess>* access,
                         std::vector<ParamFill>* fills,
                         std::vector<ReadSpan>* reads = nullptr);

// The number of table entries a launch filled.
inline std::uint32_t filled_entries(const ParamFill& fill, const unsigned char* param,
                                    const LaunchGrid& grid, std::uint32_t capacity) {
  std::uint32_t count = capacity;
  if (fill.kind == ParamFill::Kind::kGridYEntries) {
    if (grid.x != 0 && grid.y < capacity) count = grid.y;
  } else if (fill.kind == ParamFill::Kind::kGridXEntries) {
    if (grid.x != 0 && grid.x < capacity) count = grid.x;
  } else if (fill.kind == ParamFill::Kind::kBlockTensors) {
    // A launch of the layout has at most as many blocks as block_to_tensor
    // has entries; a grid past it says the bytes are not that layout.
    if (grid.x != 0 && grid.x <= fill.count_capacity)
      count = std::uint32_t{param[fill.count_at + grid.x - 1]} + 1;
    if (count > capacity) count = capacity;
  }
  return count;
}

// Whether `param` starts with a set OffsetCalculator<N, uint32_t>: its int
// dims in [1, 25] and, below dims, IntDivider<unsigned int>s (divisor, m1,
// shift) as IntegerDivider.cuh's constructor computes them: shift the
// least with 2^shift >= divisor, m1 = 2^32 (2^shift - divisor) / divisor
// + 1. Other bytes seldom pass: a pointer's low half is no dims, and one
// word in 2^32 or so passes as an m1 by chance. Bytes that do not pass
// are scanned whole.
inline bool offset_calculator_at(const unsigned char* param, std::uint32_t size) {
  constexpr std::uint32_t kMaxDims = 25;
  std::int32_t dims = 0;
  if (size < 4 + 12 * kMaxDims) return false;
  std::memcpy(&dims, param, sizeof dims);
  if (dims < 1 || dims > static_cast<std::int32_t>(kMaxDims)) return false;
  for (std::int32_t i = 0; i < dims; ++i) {
    std::uint32_t divisor = 0, m1 = 0, shift = 0;
    std::memcpy(&divisor, param + 4 + 12 * i, 4);
    std::memcpy(&m1, param + 8 + 12 * i, 4);
    std::memcpy(&shift, param + 12 + 12 * i, 4);
    if (divisor < 1 || divisor > 0x7fffffffu || shift > 31) return false;
    std::uint32_t least = 0;
    while ((1u << least) < divisor) ++least;
    if (shift != least) return false;
    const std::uint64_t magic =
        ((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - divisor)) / divisor + 1;
    if (magic != m1) return false;
  }
  return true;
}

// Calls visit(at) for each byte offset `at` of `param` (`size` bytes, the
// parameter's bytes) whose word a scan reads; `first` is the first offset
// of the kWhole walk (the parameter's start may not be 8-byte aligned in
// the argument buffer).
template <class Visit>
void for_each_scanned_word(const ParamFill* fill, const unsigned char* param, std::uint32_t size,
                           std::uint32_t first, const LaunchGrid& grid, Visit&& visit) {
  if (fill == nullptr || fill->kind == ParamFill::Kind::kWhole || fill->size != size ||
      first != 0) {
    for (std::uint32_t at = first; at + 8 <= size; at += 8) visit(at);
    return;
  }
  if (fill->kind == ParamFill::Kind::kReduction) {
    // ReduceOp's tail: ..., int64_t base_idx; bool accumulate; bool
    // final_output; int noutputs. Bools that are not 0 or 1, or a count
    // other than 1 or 2, say the bytes are not that layout: all words.
    std::int32_t outputs = 0;
    std::memcpy(&outputs, param + fill->count_at, sizeof outputs);
    const unsigned char accumulate = param[fill->count_at - 4];
    const unsigned char final_output = param[fill->count_at - 3];
    const bool layout = (outputs == 1 || outputs == 2) && accumulate <= 1 && final_output <= 1;
    for (std::uint32_t at = 0; at + 8 <= size; at += 8) {
      if (layout && at >= fill->skip_begin && at + 8 <= fill->skip_end) continue;
      if (layout && outputs == 1 && at == fill->skip_at) continue;
      visit(at);
    }
    return;
  }
  if (fill->kind == ParamFill::Kind::kLeadingOffsetCalculator) {
    const bool layout = offset_calculator_at(param, size);
    for (std::uint32_t at = 0; at + 8 <= size; at += 8) {
      if (layout && at + 8 <= fill->skip_end) continue;
      visit(at);
    }
    return;
  }
  for (std::size_t t = 0; t < fill->tables; ++t) {
    const std::uint32_t count = filled_entries(*fill, param, grid, fill->table_capacity[t]);
    for (std::uint32_t e = 0; e < count; ++e) {
      const std::uint32_t at = fill->table_at[t] + 8 * e;
      if (at + 8 <= size) visit(at);
    }
  }
}

}  // namespace xsc::rt
