// Parameters filled in part (param_fill.h): PyTorch's by-value tables of
// pointers, of which a launch fills only the first entries. The mangled
// names are the host compiler's for kernels declared as PyTorch declares
// them (nvcc gives device kernels the same names, but for the anonymous
// namespace's, which one test spells nvcc's way); the structs below lay
// their members out as PyTorch's do, so that the sizes the layouts compute
// are checked against the compiler's.
#include "runtime/cuda/param_access/param_fill.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "runtime/cuda/param_access/param_access.h"
#include "runtime/cuda/param_scan.h"

namespace xsc::rt {
namespace {

// at::native::(anonymous)::CatArrInputTensorMetadata<T, unsigned, 128, 1>
struct CatMeta128 {
  const void* input[128];
  unsigned offset[128], dim_size[128], elements[128];
  bool contiguous[128];
  unsigned size_stride[1][8];
};
// ... <float, unsigned, 64, 64>
struct CatMeta64 {
  const void* input[64];
  unsigned offset[64], dim_size[64], elements[64];
  bool contiguous[64];
  unsigned size_stride[64][8];
};
// TensorListMetadata<4>
struct TensorList4 {
  const void* addresses[4][36];
  std::int64_t numel[36];
  unsigned char block_to_tensor[320];
  int block_to_chunk[320];
  int start_tensor;
};
// TensorListMetadata<1>, <2> and <3>
struct TensorList1 {
  const void* addresses[1][110];
  std::int64_t numel[110];
  unsigned char block_to_tensor[320];
  int block_to_chunk[320];
  int start_tensor;
};
struct TensorList2 {
  const void* addresses[2][64];
  std::int64_t numel[64];
  unsigned char block_to_tensor[320];
  int block_to_chunk[320];
  int start_tensor;
};
struct TensorList3 {
  const void* addresses[3][48];
  std::int64_t numel[48];
  unsigned char block_to_tensor[320];
  int block_to_chunk[320];
  int start_tensor;
};
// FusedOptimizerTensorListMetadata<4>
struct FusedList4 {
  const void* addresses[4][36];
  std::int64_t numel[36];
  const void* state_steps[36];
  unsigned char block_to_tensor[320];
  int block_to_chunk[320];
  int start_tensor;
};
// TensorListScalarListMetadata<float, 1>
struct ScalarList1 {
  const void* addresses[1][96];
  std::int64_t numel[96];
  float scalars[96];
  unsigned char block_to_tensor[320];
  int block_to_chunk[320];
};
// TensorListScalarListMetadata<c10::complex<double>, 2>
struct alignas(16) ComplexDouble {
  double re, im;
};
struct ComplexScalarList2 {
  const void* addresses[2][60];
  std::int64_t numel[60];
  ComplexDouble scalars[60];
  unsigned char block_to_tensor[320];
  int block_to_chunk[320];
};
// ReduceOp<float, SumOps<float>, unsigned, float, 4, 4>, as
// ATen/native/cuda/Reduce.cuh and ATen/cuda/detail/OffsetCalculator.cuh
// declare it: an empty SumOps, the identity, a ReduceConfig and two offset
// calculators over IntDivider<unsigned int>, then the tail.
struct SumOpsFloat {};
struct ReduceConfigMirror {
  int element_size_bytes, num_inputs, num_outputs, step_input, step_output, ctas_per_output;
  int input_mult[3], output_mult[2];
  int block_width, block_height, num_threads;
  bool vectorize_input;
  int output_vec_size;
};
struct IntDividerU32 {
  unsigned divisor, m1, shift;
};
template <int N, class Divider, class Index>
struct OffsetCalculatorMirror {
  int dims;
  Divider sizes[25];
  Index strides[25][N];
};
template <class Divider, class Index>
struct ReduceOpMirror {
  SumOpsFloat ops;
  float ident;
  ReduceConfigMirror config;
  OffsetCalculatorMirror<1, Divider, Index> input_calc;
  OffsetCalculatorMirror<2, Divider, Index> output_calc;
  const void* src;
  const char* dst[2];
  void* acc_buf;
  void* cta_buf;
  int* semaphores;
  std::int64_t base_idx;
  bool accumulate, final_output;
  int noutputs;
};
using ReduceOpFloat = ReduceOpMirror<IntDividerU32, unsigned>;
// The same over 64-bit indices (IntDivider<uint64_t>: the divisor alone).
struct IntDividerU64 {
  std::uint64_t divisor;
};
using ReduceOpFloat64 = ReduceOpMirror<IntDividerU64, std::uint64_t>;
static_assert(sizeof(ReduceOpFloat) == 1048, "torch 2.11's cubins give reduce_kernel<..., "
                                             "ReduceOp<float, SumOps<float>, unsigned, ...>> 1048");

// CatArrayBatchedCopy_vectorized<OpaqueType<4u>, unsigned, 1, 128, 1, 16,
// 4>(char*, CatArrInputTensorMetadata<...>, TensorSizeStride<unsigned, 4u>,
// int, unsigned)
const char* const kCatVectorized =
    "_ZN2at6native12_GLOBAL__N_130CatArrayBatchedCopy_vectorizedINS1_10OpaqueTypeILj4EEEjLi1ELi128E"
    "Li1ELi16ELi4EEEvPcNS1_25CatArrInputTensorMetadataIT_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS8_"
    "Lj4EEEiS8_";
// The same in nvcc's spelling of the anonymous namespace.
const char* const kCatVectorizedNvcc =
    "_ZN2at6native36_GLOBAL__N__57d2e45f_4_k_cu_05d7363a30CatArrayBatchedCopy_vectorizedINS1_"
    "10OpaqueTypeILj4EEEjLi1ELi128ELi1ELi16ELi4EEEvPcNS1_25CatArrInputTensorMetadataIT_T0_XT2_"
    "EXT3_EEENS1_16TensorSizeStrideIS8_Lj4EEEiS8_";
// CatArrayBatchedCopy<float, unsigned, 2, 64, 64>(float*, ...)
const char* const kCatStrided =
    "_ZN2at6native12_GLOBAL__N_119CatArrayBatchedCopyIfjLi2ELi64ELi64EEEvPT_NS1_"
    "25CatArrInputTensorMetadataIS3_T0_XT2_EXT3_EEENS1_16TensorSizeStrideIS6_Lj4EEEiS6_";
// multi_tensor_apply_kernel<TensorListMetadata<4>, AddFunctor<float>, float,
// double>(T, U, ArgTypes...)
const char* const kForeach4 =
    "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi4EEENS1_"
    "10AddFunctorIfEEJfdEEEvT_T0_DpT1_";
const char* const kFused4 =
    "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_32FusedOptimizerTensorListMetadata"
    "ILi4EEENS1_10AddFunctorIfEEJddEEEvT_T0_DpT1_";
const char* const kScalarList1 =
    "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_28TensorListScalarListMetadataIfLi1"
    "EEENS1_10AddFunctorIfEEJEEEvT_T0_DpT1_";
const char* const kComplexScalarList2 =
    "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_28TensorListScalarListMetadataIN3c10"
    "7complexIdEELi2EEENS1_10AddFunctorIfEEJEEEvT_T0_DpT1_";
// reduce_kernel<512, 1, ReduceOp<float, SumOps<float>, unsigned, float, 4, 4>>(R)
const char* const kReduceFloat =
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_6SumOpsIfEEjfLi4ELi4EEEEEvT1_";
// ... over c10::complex<double>: the tail may be padded, so no rule.
// The same over 64-bit indices (ReduceOp<float, SumOps<float>, unsigned long, float, 4, 4>).
const char* const kReduceFloat64 =
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_6SumOpsIfEEmfLi4ELi4EEEEEvT1_";
const char* const kReduceComplexDouble =
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIN3c107complexIdEENS0_6SumOpsIS5_EEjS5_Li4"
    "ELi4EEEEEvT1_";

// lpnorm_cleanup<float, NormType::L2, float>(out_t*, const out_opmath_t*,
// const out_opmath_t*, TensorListAddresses, int, bool, bool), the last
// kernel of _foreach_norm; TensorListAddresses holds 3200 pointers in
// CUDA 13 builds.
const char* const kNormCleanup =
    "_ZN2at6native12_GLOBAL__N_114lpnorm_cleanupIfLNS0_8NormTypeE1EffEEvPT1_PKT2_S8_NS0_"
    "19TensorListAddressesEibb";

// indexSelectLargeIndex<float, IndexType, long, 2, 2, -2, true>(
// TensorInfo<T, IndexType> dst, TensorInfo<const T, IndexType> src,
// TensorInfo<const IndicesType, IndexType> indices, int, int, IndexType,
// IndexType, int64_t), with a 32-bit and a 64-bit IndexType.
const char* const kIndexSelect32 =
    "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIfjlLi2ELi2ELin2ELb1EEEvNS_4cuda6detail"
    "10TensorInfoIT_T0_EENS5_IKS6_S7_EENS5_IKT1_S7_EEiiS7_S7_l";
const char* const kIndexSelect64 =
    "_ZN2at6native12_GLOBAL__N_121indexSelectLargeIndexIfmlLi2ELi2ELin2ELb1EEEvNS_4cuda6detail"
    "10TensorInfoIT_T0_EENS5_IKS6_S7_EENS5_IKT1_S7_EEiiS7_S7_l";

// at::cuda::detail::TensorInfo<T, IndexType>
template <class IndexType>
struct TensorInfoOf {
  void* data;
  IndexType sizes[25], strides[25];
  int dims;
};

class ParamFillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernel_param_access_available())
      GTEST_SKIP() << "built without LLVM's demangler (llvm-22-dev)";
  }
};

std::vector<ParamFill> fills_of(const char* name, std::vector<std::uint32_t> sizes) {
  std::vector<ParamFill> out;
  EXPECT_TRUE(kernel_param_fills(name, sizes.data(), sizes.size(), &out)) << name;
  return out;
}

// The byte offsets a scan of `param` reads.
template <class T>
std::vector<std::uint32_t> scanned(const ParamFill& fill, const T& param, LaunchGrid grid) {
  std::vector<std::uint32_t> at;
  for_each_scanned_word(&fill, reinterpret_cast<const unsigned char*>(&param), sizeof param, 0,
                        grid, [&](std::uint32_t a) { at.push_back(a); });
  return at;
}

std::uint32_t u32(std::size_t n) { return static_cast<std::uint32_t>(n); }

TEST_F(ParamFillTest, CatReadsTheEntriesOfItsGridsY) {
  const std::vector<ParamFill> fills = fills_of(kCatVectorized, {8, u32(sizeof(CatMeta128)), 32, 4, 4});
  ASSERT_EQ(fills.size(), 5u);
  EXPECT_EQ(fills[0].kind, ParamFill::Kind::kWhole);
  ASSERT_EQ(fills[1].kind, ParamFill::Kind::kGridYEntries);
  EXPECT_EQ(fills[3].kind, ParamFill::Kind::kWhole);

  CatMeta128 meta;
  std::memset(&meta, 0x5a, sizeof meta);  // the stale stack a launch leaves
  EXPECT_EQ(scanned(fills[1], meta, {160, 2, 1}), (std::vector<std::uint32_t>{0, 8}));
  EXPECT_EQ(scanned(fills[1], meta, {160, 1, 1}), (std::vector<std::uint32_t>{0}));
  // Without a grid, or with one past the table: the whole table.
  EXPECT_EQ(scanned(fills[1], meta, {}).size(), 128u);
  EXPECT_EQ(scanned(fills[1], meta, {160, 300, 1}).size(), 128u);
}

TEST_F(ParamFillTest, NvccsAnonymousNamespaceAndTheStridedKernel) {
  EXPECT_EQ(fills_of(kCatVectorizedNvcc, {8, u32(sizeof(CatMeta128)), 32, 4, 4})[1].kind,
            ParamFill::Kind::kGridYEntries);
  const std::vector<ParamFill> fills = fills_of(kCatStrided, {8, u32(sizeof(CatMeta64)), 32, 4, 4});
  ASSERT_EQ(fills[1].kind, ParamFill::Kind::kGridYEntries);
  EXPECT_EQ(fills[1].table_capacity[0], 64u);
}

TEST_F(ParamFillTest, ALayoutOfAnotherSizeIsScannedWhole) {
  std::vector<ParamFill> out;
  const std::uint32_t sizes[] = {8, u32(sizeof(CatMeta128)) + 8, 40, 4, 4};
  EXPECT_FALSE(kernel_param_fills(kCatVectorized, sizes, 5, &out));
  EXPECT_TRUE(out.empty());
  // Only the metadata's size is off: the output's sizes still match.
  const std::uint32_t meta_off[] = {8, u32(sizeof(CatMeta128)) + 8, 32, 4, 4};
  ASSERT_TRUE(kernel_param_fills(kCatVectorized, meta_off, 5, &out));
  EXPECT_EQ(out[1].kind, ParamFill::Kind::kWhole);
  const std::uint32_t list_sizes[] = {u32(sizeof(TensorList4)) - 8, 1, 4, 8};
  EXPECT_FALSE(kernel_param_fills(kForeach4, list_sizes, 4, &out));
  // A parameter count other than the layout's.
  EXPECT_FALSE(kernel_param_fills(kCatVectorized, sizes, 4, &out));
}

TEST_F(ParamFillTest, ForeachReadsTheTensorsItsBlocksName) {
  const std::vector<ParamFill> fills = fills_of(kForeach4, {u32(sizeof(TensorList4)), 1, 4, 8});
  ASSERT_EQ(fills.size(), 4u);
  ASSERT_EQ(fills[0].kind, ParamFill::Kind::kBlockTensors);
  EXPECT_EQ(fills[1].kind, ParamFill::Kind::kWhole);

  TensorList4 meta;
  std::memset(&meta, 0x5a, sizeof meta);
  // Three tensors, the second of three chunks: five blocks.
  const unsigned char blocks[] = {0, 1, 1, 1, 2};
  std::memcpy(meta.block_to_tensor, blocks, sizeof blocks);
  std::set<std::uint32_t> expect;
  for (std::uint32_t d = 0; d < 4; ++d)
    for (std::uint32_t t = 0; t < 3; ++t)
      expect.insert(u32(reinterpret_cast<const char*>(&meta.addresses[d][t]) -
                        reinterpret_cast<const char*>(&meta)));
  const std::vector<std::uint32_t> at = scanned(fills[0], meta, {5, 1, 1});
  EXPECT_EQ(std::set<std::uint32_t>(at.begin(), at.end()), expect);
  EXPECT_EQ(at.size(), 12u);
  // The grid says how many blocks: with two, only the first two tensors.
  EXPECT_EQ(scanned(fills[0], meta, {2, 1, 1}).size(), 8u);
  // No grid, or more blocks than the table has: every entry.
  EXPECT_EQ(scanned(fills[0], meta, {}).size(), 4u * 36);
  EXPECT_EQ(scanned(fills[0], meta, {321, 1, 1}).size(), 4u * 36);
  // A tensor number past the table (not this layout after all): every entry.
  meta.block_to_tensor[4] = 200;
  EXPECT_EQ(scanned(fills[0], meta, {5, 1, 1}).size(), 4u * 36);
}

TEST_F(ParamFillTest, FusedOptimizerAlsoReadsItsStateSteps) {
  const std::vector<ParamFill> fills = fills_of(kFused4, {u32(sizeof(FusedList4)), 1, 8, 8});
  ASSERT_EQ(fills[0].kind, ParamFill::Kind::kBlockTensors);
  FusedList4 meta;
  std::memset(&meta, 0x5a, sizeof meta);
  meta.block_to_tensor[0] = 0;
  meta.block_to_tensor[1] = 1;
  const std::vector<std::uint32_t> at = scanned(fills[0], meta, {2, 1, 1});
  EXPECT_EQ(at.size(), 4u * 2 + 2);
  const auto steps = u32(reinterpret_cast<const char*>(&meta.state_steps[1]) -
                         reinterpret_cast<const char*>(&meta));
  EXPECT_NE(std::find(at.begin(), at.end(), steps), at.end());
}

TEST_F(ParamFillTest, ScalarListLayouts) {
  const std::vector<ParamFill> floats = fills_of(kScalarList1, {u32(sizeof(ScalarList1)), 1});
  ASSERT_EQ(floats[0].kind, ParamFill::Kind::kBlockTensors);
  EXPECT_EQ(floats[0].count_at, offsetof(ScalarList1, block_to_tensor));
  const std::vector<ParamFill> complex =
      fills_of(kComplexScalarList2, {u32(sizeof(ComplexScalarList2)), 1});
  ASSERT_EQ(complex[0].kind, ParamFill::Kind::kBlockTensors);
  EXPECT_EQ(complex[0].count_at, offsetof(ComplexScalarList2, block_to_tensor));
  EXPECT_EQ(complex[0].table_capacity[0], 60u);
}

TEST_F(ParamFillTest, TensorInfoHoldsOnePointer) {
  using Info32 = TensorInfoOf<std::uint32_t>;
  using Info64 = TensorInfoOf<std::uint64_t>;
  const auto s32 = u32(sizeof(Info32));
  const std::vector<ParamFill> fills = fills_of(kIndexSelect32, {s32, s32, s32, 4, 4, 4, 4, 8});
  ASSERT_EQ(fills.size(), 8u);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(fills[i].kind, ParamFill::Kind::kFixedEntries) << i;
  EXPECT_EQ(fills[3].kind, ParamFill::Kind::kWhole);
  Info32 info;
  std::memset(&info, 0x5a, sizeof info);  // sizes and strides past dims: stale
  info.dims = 2;
  EXPECT_EQ(scanned(fills[0], info, {}), (std::vector<std::uint32_t>{0}));
  const auto s64 = u32(sizeof(Info64));
  EXPECT_EQ(fills_of(kIndexSelect64, {s64, s64, s64, 4, 4, 8, 8, 8})[1].kind,
            ParamFill::Kind::kFixedEntries);
  // The 64-bit layout's size with the 32-bit name: scanned whole.
  std::vector<ParamFill> out;
  const std::uint32_t wrong[] = {s64, s64, s64, 4, 4, 4, 4, 8};
  EXPECT_FALSE(kernel_param_fills(kIndexSelect32, wrong, 8, &out));
}

TEST_F(ParamFillTest, CatsOutputSizesHoldNoPointer) {
  const std::vector<ParamFill> fills = fills_of(kCatVectorized, {8, u32(sizeof(CatMeta128)), 32, 4, 4});
  ASSERT_EQ(fills[2].kind, ParamFill::Kind::kFixedEntries);
  unsigned char sizes_strides[32];
  std::memset(sizes_strides, 0x5a, sizeof sizes_strides);
  EXPECT_TRUE(scanned(fills[2], sizes_strides, {}).empty());
}

TEST_F(ParamFillTest, NormCleanupWritesTheEntriesOfItsGridsX) {
  struct Addresses {
    const void* addresses[3200];
  };
  const std::vector<ParamFill> fills =
      fills_of(kNormCleanup, {8, 8, 8, u32(sizeof(Addresses)), 4, 1, 1});
  ASSERT_EQ(fills.size(), 7u);
  ASSERT_EQ(fills[3].kind, ParamFill::Kind::kGridXEntries);
  EXPECT_EQ(fills[0].kind, ParamFill::Kind::kWhole);
  static Addresses addresses;
  std::memset(&addresses, 0x5a, sizeof addresses);
  EXPECT_EQ(scanned(fills[3], addresses, {3, 1, 1}), (std::vector<std::uint32_t>{0, 8, 16}));
  EXPECT_EQ(scanned(fills[3], addresses, {}).size(), 3200u);
}

TEST_F(ParamFillTest, ReductionsSkipASecondOutputTheyDoNotHave) {
  const std::vector<ParamFill> fills = fills_of(kReduceFloat, {u32(sizeof(ReduceOpFloat))});
  ASSERT_EQ(fills[0].kind, ParamFill::Kind::kReduction);
  EXPECT_EQ(fills[0].skip_at, offsetof(ReduceOpFloat, dst) + 8);
  EXPECT_EQ(fills[0].count_at, offsetof(ReduceOpFloat, noutputs));
  ReduceOpFloat op;
  std::memset(&op, 0x5a, sizeof op);
  op.accumulate = false;
  op.final_output = true;
  op.noutputs = 1;
  const std::uint32_t dst1 = u32(offsetof(ReduceOpFloat, dst) + 8);
  std::vector<std::uint32_t> at = scanned(fills[0], op, {});
  EXPECT_EQ(std::find(at.begin(), at.end(), dst1), at.end());
  EXPECT_NE(std::find(at.begin(), at.end(), dst1 - 8), at.end());  // dst[0]
  op.noutputs = 2;
  at = scanned(fills[0], op, {});
  EXPECT_NE(std::find(at.begin(), at.end(), dst1), at.end());
  // Bytes that are not this tail's: every word.
  op.noutputs = 1;
  std::memset(&op.accumulate, 7, 1);
  EXPECT_EQ(scanned(fills[0], op, {}).size(), sizeof op / 8);

  std::vector<ParamFill> out;
  const std::uint32_t size = sizeof(ReduceOpFloat);
  EXPECT_FALSE(kernel_param_fills(kReduceComplexDouble, &size, 1, &out));
}

// The offset calculators are skipped whole, and nothing else is: every word
// from the start up to the calculators (ops, identity, config) and every
// pointer of the tail is read.
template <class Op>
void expect_calculators_skipped(const std::vector<ParamFill>& fills) {
  ASSERT_EQ(fills.size(), 1u);
  ASSERT_EQ(fills[0].kind, ParamFill::Kind::kReduction);
  Op op;
  std::memset(&op, 0x5a, sizeof op);
  op.accumulate = false;
  op.final_output = false;
  op.noutputs = 2;
  std::vector<std::uint32_t> at;
  for_each_scanned_word(&fills[0], reinterpret_cast<const unsigned char*>(&op), u32(sizeof op),
                        0, LaunchGrid{}, [&](std::uint32_t w) { at.push_back(w); });
  const std::uint32_t calc_begin = u32(offsetof(Op, input_calc));
  const std::uint32_t calc_end = u32(offsetof(Op, output_calc) + sizeof op.output_calc);
  for (std::uint32_t w = 0; w + 8 <= sizeof op; w += 8) {
    const bool inside = w >= calc_begin && w + 8 <= calc_end;
    const bool read = std::find(at.begin(), at.end(), w) != at.end();
    if (inside) {
      EXPECT_FALSE(read) << "word " << w << " of the calculators";
    }
    // Words before the calculators and from src on are read; one word may
    // straddle the config's end and the calculators' start.
    if (w + 8 <= calc_begin || w >= offsetof(Op, src)) {
      EXPECT_TRUE(read) << "word " << w << " outside the calculators";
    }
  }
  EXPECT_LE(at.size(), sizeof op / 8 - (calc_end - calc_begin) / 8 + 1);
}

TEST_F(ParamFillTest, ReductionsSkipTheirOffsetCalculators) {
  expect_calculators_skipped<ReduceOpFloat>(fills_of(kReduceFloat, {u32(sizeof(ReduceOpFloat))}));
  expect_calculators_skipped<ReduceOpFloat64>(
      fills_of(kReduceFloat64, {u32(sizeof(ReduceOpFloat64))}));
  // A size too small for the calculators is not this layout.
  std::vector<ParamFill> out;
  const std::uint32_t small = 544;
  EXPECT_FALSE(kernel_param_fills(kReduceFloat, &small, 1, &out));
}

// glu_backward_kernel<float, OffsetCalculator<3, unsigned, false>>(int,
// float*, const float*, const float*, OffsetCalculator<...>, long, long)
const char* const kGluBackward =
    "_ZN2at6native19glu_backward_kernelIf16OffsetCalculatorILi3EjLb0EEEEviPT_PKS4_S7_T0_ll";

TEST_F(ParamFillTest, OffsetCalculatorsPassedByValueHoldNoPointer) {
  using Calculator = OffsetCalculatorMirror<3, IntDividerU32, unsigned>;
  static_assert(sizeof(Calculator) == 604, "torch 2.11's cubins give glu_backward_kernel 604");
  const std::vector<ParamFill> fills = fills_of(kGluBackward, {4, 8, 8, 8, 604, 8, 8});
  ASSERT_EQ(fills.size(), 7u);
  EXPECT_EQ(fills[1].kind, ParamFill::Kind::kWhole);
  ASSERT_EQ(fills[4].kind, ParamFill::Kind::kFixedEntries);
  Calculator calc;
  std::memset(&calc, 0x5a, sizeof calc);
  EXPECT_TRUE(scanned(fills[4], calc, {}).empty());
  // Another size is another layout: scanned whole.
  const std::uint32_t other[] = {4, 8, 8, 8, 600, 8, 8};
  std::vector<ParamFill> out;
  EXPECT_FALSE(kernel_param_fills(kGluBackward, other, 7, &out));
}

// The lambda TensorIterator's non-contiguous elementwise path launches:
// elementwise_kernel<128, vt, gpu_kernel_impl_nocast<F>(...)::{lambda(int)}>
// (int, closure) and the same from gpu_kernel_impl<F> (operands of other
// dtypes), its captures laid out as the mirrors below.
// ... over direct_copy_kernel_cuda's lambda(float): two operands.
const char* const kClosureCopy =
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy"
    "_kernel_cudaERNS_18TensorIteratorBaseEENKUlvE_clEvENKUlvE_clEvEUlfE_EEvS4_RKT_EUliE_EEviT1_";
// ... over a named functor (AbsFunctor): its arity is not in the name.
const char* const kClosureFunctor =
    "_ZN2at6native18elementwise_kernelILi128ELi2EZNS0_22gpu_kernel_impl_nocastINS0_10AbsFunctorEEEv"
    "RNS_18TensorIteratorBaseERKT_EUliE_EEviT1_";
// gpu_kernel_impl's, over a lambda(float, float): three operands, and their
// dtypes captured after the functor.
const char* const kClosureCasting =
    "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_15gpu_kernel_implIZNS0_10add_kernelERNS_18"
    "TensorIteratorBaseEEUlffE_EEvS4_RKT_EUliE_EEviT1_";
// ... over a lambda local to a function template (masked_scale_kernel<
// unsigned char, short, float>, its lambda(short, unsigned char) capturing
// the float scale): the demangler takes the closure parameter's type for
// that template's float, so the closure is read from the kernel's own
// template arguments.
const char* const kClosureInTemplate =
    "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastIZNS0_19masked_scale"
    "_kernelIhsfEEvRNS_18TensorIteratorBaseET1_EUlshE_EEvS5_RKT_EUliE_EEviS6_";
// Another function's lambda(int): captures this file does not know.
const char* const kClosureElsewhere =
    "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_17index_kernel_implIZNS0_10add_kernelERNS_18"
    "TensorIteratorBaseEEUlffE0_EEvS4_RKT_EUliE_EEviT1_";

struct EmptyFunctor {};
template <int N, class F>
struct NocastClosure {
  OffsetCalculatorMirror<N, IntDividerU32, unsigned> offset_calc;
  std::array<char*, N> data;
  F f;
};
template <int N, class F>
struct CastingClosure {
  OffsetCalculatorMirror<N, IntDividerU32, unsigned> offset_calc;
  std::array<char*, N> data;
  F f;
  std::array<std::uint8_t, N> dtypes;
};

// IntegerDivider.cuh's IntDivider<unsigned int>(d).
IntDividerU32 divider(unsigned d) {
  IntDividerU32 out{d, 0, 0};
  while ((1u << out.shift) < d) ++out.shift;
  out.m1 = static_cast<unsigned>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << out.shift) - d)) / d + 1);
  return out;
}

// A launch's closure: dims set, the rest of the calculator holding the
// host stack's words (`stale` repeated), the operands after it.
template <class Closure>
Closure closure_with(int dims, std::uint64_t stale) {
  Closure c;
  for (std::size_t at = 0; at + 8 <= sizeof c; at += 8)
    std::memcpy(reinterpret_cast<unsigned char*>(&c) + at, &stale, 8);
  c.offset_calc.dims = dims;
  const unsigned sizes[] = {7, 64, 1, 3};
  for (int i = 0; i < dims; ++i) {
    c.offset_calc.sizes[i] = divider(sizes[i % 4]);
    for (auto& stride : c.offset_calc.strides[i]) stride = 4u << i;
  }
  for (std::size_t i = 0; i < c.data.size(); ++i)
    c.data[i] = reinterpret_cast<char*>(0x7f0000010000 + 0x10000 * i);
  return c;
}

template <class Closure>
std::vector<std::uint64_t> words_scanned(const ParamFill& fill, const Closure& c) {
  std::vector<std::uint64_t> words;
  for (std::uint32_t at : scanned(fill, c, {})) {
    std::uint64_t w = 0;
    std::memcpy(&w, reinterpret_cast<const unsigned char*>(&c) + at, 8);
    words.push_back(w);
  }
  return words;
}

TEST_F(ParamFillTest, ElementwiseClosuresSkipTheirOffsetCalculator) {
  using Copy = NocastClosure<2, EmptyFunctor>;
  static_assert(sizeof(Copy) == 528, "two operands: calculator 504, data 16, functor");
  for (const char* name : {kClosureCopy, kClosureFunctor}) {
    const std::vector<ParamFill> fills = fills_of(name, {4, u32(sizeof(Copy))});
    ASSERT_EQ(fills.size(), 2u) << name;
    EXPECT_EQ(fills[0].kind, ParamFill::Kind::kWhole);
    ASSERT_EQ(fills[1].kind, ParamFill::Kind::kLeadingOffsetCalculator) << name;
    EXPECT_EQ(fills[1].skip_end, 504u);
    // Set below dims 2, the rest a stale pointer: the operands alone.
    const Copy c = closure_with<Copy>(2, 0x7f00000f0000);
    std::vector<std::uint64_t> words = words_scanned(fills[1], c);
    ASSERT_GE(words.size(), 2u);
    EXPECT_EQ(words[0], 0x7f0000010000u);
    EXPECT_EQ(words[1], 0x7f0000020000u);
    for (std::size_t i = 2; i < words.size(); ++i) EXPECT_NE(words[i], 0x7f0000010000u);
    // Every dims up to 25.
    for (int dims = 1; dims <= 25; ++dims)
      EXPECT_EQ(words_scanned(fills[1], closure_with<Copy>(dims, 0x7f00000f0000)).front(),
                0x7f0000010000u) << dims;
  }
  using Add = CastingClosure<3, EmptyFunctor>;
  const std::vector<ParamFill> casting = fills_of(kClosureCasting, {4, u32(sizeof(Add))});
  ASSERT_EQ(casting[1].kind, ParamFill::Kind::kLeadingOffsetCalculator);
  EXPECT_EQ(casting[1].skip_end, 608u);
  const std::vector<std::uint64_t> words = words_scanned(casting[1], closure_with<Add>(3, 0x7f00000f0000));
  // The first words read are the operands (the functor's and dtypes'
  // bytes after them are read too).
  ASSERT_GE(words.size(), 3u);
  EXPECT_EQ(words[0], 0x7f0000010000u);
  EXPECT_EQ(words[2], 0x7f0000030000u);
  EXPECT_EQ(words.size(), (sizeof(Add) - 608) / 8);
}

TEST_F(ParamFillTest, AClosureWhoseBytesAreNoCalculatorIsScannedWhole) {
  using Copy = NocastClosure<2, EmptyFunctor>;
  const ParamFill fill = fills_of(kClosureCopy, {4, u32(sizeof(Copy))})[1];
  const std::size_t whole = sizeof(Copy) / 8;
  // dims out of range, or a divider that is not IntDivider's: the words
  // before the operands may be anything, so they are all read.
  for (int dims : {0, 26, -1})
    EXPECT_EQ(words_scanned(fill, closure_with<Copy>(dims, 0x7f00000f0000)).size(), whole);
  Copy wrong_m1 = closure_with<Copy>(2, 0x7f00000f0000);
  wrong_m1.offset_calc.sizes[1].m1 += 1;
  EXPECT_EQ(words_scanned(fill, wrong_m1).size(), whole);
  Copy wrong_shift = closure_with<Copy>(2, 0x7f00000f0000);
  wrong_shift.offset_calc.sizes[0].shift += 1;
  EXPECT_EQ(words_scanned(fill, wrong_shift).size(), whole);
  // Captures laid out otherwise (the operands first): dims is a pointer's
  // low half.
  Copy swapped = closure_with<Copy>(2, 0x7f00000f0000);
  const std::uint64_t pointer = 0x7f0000010010;
  std::memcpy(&swapped, &pointer, 8);
  EXPECT_EQ(words_scanned(fill, swapped).size(), whole);
}

TEST_F(ParamFillTest, OnlyTheElementwisePathsClosures) {
  using Copy = NocastClosure<2, EmptyFunctor>;
  using Add = CastingClosure<3, EmptyFunctor>;
  std::vector<ParamFill> out;
  const std::uint32_t add[] = {4, u32(sizeof(Add))};
  EXPECT_FALSE(kernel_param_fills(kClosureElsewhere, add, 2, &out));
  // A lambda(float)'s two operands do not fit one operand's size; a named
  // functor's count is not told by a size with room for a functor of a
  // calculator row's bytes, while a lambda's is known whatever it captures.
  const std::uint32_t one[] = {4, u32(sizeof(NocastClosure<1, EmptyFunctor>))};
  EXPECT_FALSE(kernel_param_fills(kClosureCopy, one, 2, &out));
  const std::uint32_t big[] = {4, u32(sizeof(Copy)) + 96};
  EXPECT_FALSE(kernel_param_fills(kClosureFunctor, big, 2, &out));
  ASSERT_TRUE(kernel_param_fills(kClosureCopy, big, 2, &out));
  EXPECT_EQ(out[1].skip_end, 504u);
  const std::uint32_t small[] = {4, 412};  // less than one operand's captures
  EXPECT_FALSE(kernel_param_fills(kClosureFunctor, small, 2, &out));
  // A lambda local to a function template: three operands.
  const std::uint32_t scaled[] = {4, u32(sizeof(NocastClosure<3, float>))};
  ASSERT_TRUE(kernel_param_fills(kClosureInTemplate, scaled, 2, &out));
  EXPECT_EQ(out[1].kind, ParamFill::Kind::kLeadingOffsetCalculator);
  EXPECT_EQ(out[1].skip_end, 608u);
  // A functor's count is the one the size allows: three operands.
  const std::uint32_t functor3[] = {4, u32(sizeof(NocastClosure<3, EmptyFunctor>))};
  ASSERT_TRUE(kernel_param_fills(kClosureFunctor, functor3, 2, &out));
  EXPECT_EQ(out[1].skip_end, 608u);
}

// One parse gives what the two calls give apart.
TEST_F(ParamFillTest, OneParseGivesAccessAndFillsAlike) {
  struct Case {
    const char* name;
    std::vector<std::uint32_t> sizes;
  };
  const Case cases[] = {
      {kGluBackward, {4, 8, 8, 8, 604, 8, 8}},
      {kCatVectorized, {8, u32(sizeof(CatMeta128)), 32, 4, 4}},
      {kReduceFloat, {u32(sizeof(ReduceOpFloat))}},
      {"_Z6reducePKfPfi", {8, 8, 4}},
      {"c_reduce", {8, 8, 4}},
      {kClosureCopy, {4, 528}},
  };
  for (const Case& c : cases) {
    std::vector<ParamAccess> access, expected_access;
    std::vector<ParamFill> fills, expected_fills;
    kernel_param_access(c.name, &expected_access);
    kernel_param_fills(c.name, c.sizes.data(), c.sizes.size(), &expected_fills);
    kernel_param_layout(c.name, c.sizes.data(), c.sizes.size(), &access, &fills);
    EXPECT_EQ(access, expected_access) << c.name;
    ASSERT_EQ(fills.size(), expected_fills.size()) << c.name;
    for (std::size_t i = 0; i < fills.size(); ++i) {
      EXPECT_EQ(fills[i].kind, expected_fills[i].kind) << c.name;
      EXPECT_EQ(fills[i].size, expected_fills[i].size) << c.name;
    }
    kernel_param_layout(c.name, c.sizes.data(), c.sizes.size(), &access, nullptr);
    EXPECT_EQ(access, expected_access) << c.name;
  }
  std::vector<ParamAccess> access;
  std::vector<ParamFill> fills;
  kernel_param_layout(kGluBackward, nullptr, 0, &access, &fills);  // another count
  EXPECT_EQ(access.size(), 7u);
  EXPECT_TRUE(fills.empty());
}

TEST_F(ParamFillTest, OnlyPyTorchsTypes) {
  std::vector<ParamFill> out;
  // The same names outside at::native are someone else's.
  const std::uint32_t sizes[] = {u32(sizeof(TensorList4)), 1, 4, 8};
  EXPECT_FALSE(kernel_param_fills(
      "_ZN2my12_GLOBAL__N_125multi_tensor_apply_kernelINS0_18TensorListMetadataILi4EEENS0_"
      "10AddFunctorIfEEJfdEEEvT_T0_DpT1_",
      sizes, 4, &out));
  const std::uint32_t one[] = {8, 8, 4};
  EXPECT_FALSE(kernel_param_fills("_Z6reducePKfPfi", one, 3, &out));
  EXPECT_FALSE(kernel_param_fills("c_kernel", one, 0, &out));
  EXPECT_TRUE(out.empty());
}

TEST_F(ParamFillTest, TheScanOfALaunchSkipsStaleEntries) {
  // The cat kernel's arguments as a launch passes them: output, metadata
  // with two inputs filled and a stale pointer in the third entry.
  const std::vector<ParamFill> fills = fills_of(kCatVectorized, {8, u32(sizeof(CatMeta128)), 32, 4, 4});
  std::uint64_t output = 0x7f0000010000;
  CatMeta128 meta;
  std::memset(&meta, 0, sizeof meta);
  meta.input[0] = reinterpret_cast<const void*>(0x7f0000020000);
  meta.input[1] = reinterpret_cast<const void*>(0x7f0000030000);
  meta.input[2] = reinterpret_cast<const void*>(0x7f0000040000);  // stale
  unsigned char os[32] = {};
  int dim = 0;
  unsigned trailing = 1;
  void* params[] = {&output, &meta, os, &dim, &trailing};
  const ParamSlot slots[] = {{0, 8}, {8, u32(sizeof meta)}, {8 + u32(sizeof meta), 32},
                             {40 + u32(sizeof meta), 4}, {44 + u32(sizeof meta), 4}};
  std::vector<std::uint64_t> seen;
  scan_kernel_params_indexed(
      params, slots, 5, AddressWindow(0, kAnyAddressHigh),
      [&](std::uint64_t w, std::size_t, std::uint32_t) { seen.push_back(w); }, fills.data(),
      LaunchGrid{160, 2, 1});
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0x7f0000010000, 0x7f0000020000, 0x7f0000030000}));

  // The same arguments packed into one buffer (cuLaunchKernel's `extra`).
  std::vector<unsigned char> buffer(48 + sizeof meta);
  std::memcpy(buffer.data(), &output, 8);
  std::memcpy(buffer.data() + 8, &meta, sizeof meta);
  seen.clear();
  scan_packed_buffer_indexed(
      buffer.data(), buffer.size(), slots, 5, AddressWindow(0, kAnyAddressHigh),
      [&](std::uint64_t w, std::size_t, std::uint32_t) { seen.push_back(w); }, fills.data(),
      LaunchGrid{160, 2, 1});
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{0x7f0000010000, 0x7f0000020000, 0x7f0000030000}));
  // Without the fills, the stale entry is taken too.
  seen.clear();
  scan_kernel_params_indexed(params, slots, 5, AddressWindow(0, kAnyAddressHigh),
                             [&](std::uint64_t w, std::size_t, std::uint32_t) {
                               seen.push_back(w);
                             });
  EXPECT_EQ(seen.size(), 4u);
}

// TensorIterator's single-output elementwise kernels: their operand array's
// inputs (every entry after the first, the output) are reads. Names as
// nvcc and g++ mangle them.
TEST(OperandReads, ElementwiseKernelsReadTheirInputs) {
  if (!kernel_param_access_available()) GTEST_SKIP() << "built without LLVM's demangler";
  std::vector<ReadSpan> reads;
  // vectorized_elementwise_kernel<4, MulFunctor, std::array<char*, 2>>(int, MulFunctor, std::array<char*, 2>)
  const std::uint32_t vectorized[] = {4, 1, 16};
  ASSERT_TRUE(kernel_operand_reads(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10MulFunctorESt5arrayIPcLm2EEEEviT0_T1_",
      vectorized, 3, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{}, {}, {8, 16}}));
  // unrolled_elementwise_kernel<MulFunctor, std::array<char*, 3>, 4, Calc, Calc, Ld, St>
  const std::uint32_t unrolled[] = {4, 1, 24, 1, 1, 1, 1};
  ASSERT_TRUE(kernel_operand_reads(
      "_ZN2at6native27unrolled_elementwise_kernelINS0_10MulFunctorESt5arrayIPcLm3EELi4ENS0_"
      "4CalcES6_NS0_2LdENS0_2StEEEviT_T0_T2_T3_T4_T5_",
      unrolled, 7, &reads));
  EXPECT_EQ(reads[2], (ReadSpan{8, 24}));
  // at::detail::Array<char*, 2> (older PyTorch) in the unrolled kernel.
  const std::uint32_t older[] = {4, 1, 16, 1, 1, 1, 1};
  ASSERT_TRUE(kernel_operand_reads(
      "_ZN2at6native27unrolled_elementwise_kernelINS0_10MulFunctorENS0_6detail5ArrayIPcLi2EEELi4ENS0_"
      "4CalcES7_NS0_2LdENS0_2StEEEviT_T0_T2_T3_T4_T5_",
      older, 7, &reads));
  EXPECT_EQ(reads[2], (ReadSpan{8, 16}));
}

TEST(OperandReads, OnlyTheseKernelsAndOnlyArraysOfCharPointers) {
  if (!kernel_param_access_available()) GTEST_SKIP() << "built without LLVM's demangler";
  std::vector<ReadSpan> reads;
  const std::uint32_t sizes[] = {4, 1, 16};
  // Another kernel with the same array: its entries' roles are unknown.
  EXPECT_FALSE(kernel_operand_reads(
      "_ZN2at6native12other_kernelINS0_10MulFunctorESt5arrayIPcLm2EEEEviT_T0_", sizes, 3, &reads));
  EXPECT_TRUE(reads.empty());
  // An array of int pointers, a one-entry array (the output alone), and a
  // size that is not the array's.
  EXPECT_FALSE(kernel_operand_reads(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10MulFunctorESt5arrayIPiLm2EEEEviT0_T1_",
      sizes, 3, &reads));
  const std::uint32_t one[] = {4, 1, 8};
  EXPECT_FALSE(kernel_operand_reads(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10MulFunctorESt5arrayIPcLm1EEEEviT0_T1_",
      one, 3, &reads));
  const std::uint32_t wrong[] = {4, 1, 24};
  EXPECT_FALSE(kernel_operand_reads(
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10MulFunctorESt5arrayIPcLm2EEEEviT0_T1_",
      wrong, 3, &reads));
  EXPECT_FALSE(kernel_operand_reads("cupy_add", sizes, 3, &reads));
}

// A reduction reads its input through ReduceOp's src, the first word of
// the struct's tail, at the offset the mirror of torch 2.11's layout puts
// it; no other word of the struct is a read.
TEST(OperandReads, AReductionReadsItsSource) {
  if (!kernel_param_access_available()) GTEST_SKIP() << "built without LLVM's demangler";
  std::vector<ReadSpan> reads;
  const std::uint32_t size = sizeof(ReduceOpFloat);
  const auto src = static_cast<std::uint32_t>(offsetof(ReduceOpFloat, src));
  ASSERT_TRUE(kernel_operand_reads(kReduceFloat, &size, 1, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{src, src + 8}}));
  const std::uint32_t size64 = sizeof(ReduceOpFloat64);
  const auto src64 = static_cast<std::uint32_t>(offsetof(ReduceOpFloat64, src));
  ASSERT_TRUE(kernel_operand_reads(kReduceFloat64, &size64, 1, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{src64, src64 + 8}}));
  // Where the fill has no rule, neither is src known: a complex<double>
  // may pad the tail, and a size that is not the layout's says it is not.
  const std::uint32_t complex_size = 1072;
  EXPECT_FALSE(kernel_operand_reads(kReduceComplexDouble, &complex_size, 1, &reads));
  EXPECT_TRUE(reads.empty());
  const std::uint32_t small = 64;
  EXPECT_FALSE(kernel_operand_reads(kReduceFloat, &small, 1, &reads));
}

// TensorInfo<const T, I> holds a pointer to const T first: index_select's
// src and indices are read, its dst (TensorInfo<T, I>) is not; sizes and
// strides are never taken for a read.
TEST(OperandReads, ATensorInfoOfConstReadsItsData) {
  if (!kernel_param_access_available()) GTEST_SKIP() << "built without LLVM's demangler";
  std::vector<ReadSpan> reads;
  const auto s32 = static_cast<std::uint32_t>(sizeof(TensorInfoOf<std::uint32_t>));
  const std::uint32_t sizes[] = {s32, s32, s32, 4, 4, 4, 4, 8};
  ASSERT_TRUE(kernel_operand_reads(kIndexSelect32, sizes, 8, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{}, {0, 8}, {0, 8}, {}, {}, {}, {}, {}}));
  const auto s64 = static_cast<std::uint32_t>(sizeof(TensorInfoOf<std::uint64_t>));
  const std::uint32_t sizes64[] = {s64, s64, s64, 4, 4, 8, 8, 8};
  ASSERT_TRUE(kernel_operand_reads(kIndexSelect64, sizes64, 8, &reads));
  EXPECT_EQ(reads[1], (ReadSpan{0, 8}));
  EXPECT_EQ(reads[0], ReadSpan{});
  // A size that is not the layout's: nothing known.
  const std::uint32_t wrong[] = {s64, s64, s64, 4, 4, 4, 4, 8};
  EXPECT_FALSE(kernel_operand_reads(kIndexSelect32, wrong, 8, &reads));
}

// cat reads input[0, gridDim.y) of its CatArrInputTensorMetadata, the
// table its fill narrows a scan to: the table is labelled read only where
// the scan honours the fill (kernel_param_layout asked for the fills), since
// the entries past the launch's are stale.
TEST(OperandReads, ACatReadsItsFilledInputs) {
  if (!kernel_param_access_available()) GTEST_SKIP() << "built without LLVM's demangler";
  std::vector<ReadSpan> reads;
  const std::uint32_t sizes[] = {8, u32(sizeof(CatMeta128)), 32, 4, 4};
  ASSERT_TRUE(kernel_operand_reads(kCatVectorized, sizes, 5, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{}, {0, 8 * 128}, {}, {}, {}}));
  const std::uint32_t strided[] = {8, u32(sizeof(CatMeta64)), 32, 4, 4};
  ASSERT_TRUE(kernel_operand_reads(kCatStrided, strided, 5, &reads));
  EXPECT_EQ(reads[1], (ReadSpan{0, 8 * 64}));
  std::vector<ParamAccess> access;
  std::vector<ParamFill> fills;
  kernel_param_layout(kCatVectorized, sizes, 5, &access, &fills, &reads);
  EXPECT_EQ(reads[1], (ReadSpan{0, 8 * 128}));
  // Every word scanned (param_fills=0): the stale entries too, so no read.
  kernel_param_layout(kCatVectorized, sizes, 5, &access, nullptr, &reads);
  EXPECT_TRUE(reads.empty());
  // A size that is not the layout's: nothing known.
  const std::uint32_t wrong[] = {8, u32(sizeof(CatMeta128)) + 8, 32, 4, 4};
  EXPECT_FALSE(kernel_operand_reads(kCatVectorized, wrong, 5, &reads));
}

// index_select on contiguous tensors: vectorized_gather_kernel<16,
// long>(char* out, char* inp, long* idx, int, long, long, long, long, bool)
// reads inp and idx; out and the scalars are not reads.
TEST(OperandReads, AGatherReadsItsInputAndIndices) {
  if (!kernel_param_access_available()) GTEST_SKIP() << "built without LLVM's demangler";
  const char* const gather = "_ZN2at6native24vectorized_gather_kernelILi16ElEEvPcS2_PT0_illllb";
  std::vector<ReadSpan> reads;
  const std::uint32_t sizes[] = {8, 8, 8, 4, 8, 8, 8, 8, 1};
  ASSERT_TRUE(kernel_operand_reads(gather, sizes, 9, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{}, {0, 8}, {0, 8}, {}, {}, {}, {}, {}, {}}));
  // Another kernel of the same signature says nothing.
  const char* const other = "_ZN2at6native20vectorized_copy_kernILi16ElEEvPcS2_PT0_illllb";
  EXPECT_FALSE(kernel_operand_reads(other, sizes, 9, &reads));
}

// Foreach kernels: multi_tensor_apply_kernel<Metadata, Functor, Args...>,
// the functor's last three template arguments <depth, r_args_depth,
// res_arg_index> telling which lists it only loads.
TEST(OperandReads, AForeachKernelReadsTheListsItOnlyLoads) {
  if (!kernel_param_access_available()) GTEST_SKIP() << "built without LLVM's demangler";
  std::vector<ReadSpan> reads;
  // _foreach_add_(xs, ys): BinaryOpListAlphaFunctor<float, 2, 2, 0>; xs is
  // read and written, ys only read.
  const char* const in_place =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi2EEENS1_"
      "24BinaryOpListAlphaFunctorIfLi2ELi2ELi0EEEJSt4plusIfEfEEEvT_T0_DpT1_";
  const std::uint32_t two[] = {u32(sizeof(TensorList2)), 1, 1, 4};
  ASSERT_TRUE(kernel_operand_reads(in_place, two, 4, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{8 * 64, 8 * 2 * 64}, {}, {}, {}}));
  // _foreach_add(xs, ys): <float, 3, 2, 2>; xs and ys only read, the
  // output list written.
  const char* const out_of_place =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi3EEENS1_"
      "24BinaryOpListAlphaFunctorIfLi3ELi2ELi2EEEJSt4plusIfEfEEEvT_T0_DpT1_";
  const std::uint32_t three[] = {u32(sizeof(TensorList3)), 1, 1, 4};
  ASSERT_TRUE(kernel_operand_reads(out_of_place, three, 4, &reads));
  EXPECT_EQ(reads[0], (ReadSpan{0, 8 * 2 * 48}));
  // _foreach_copy_(dst, src): CopyFunctor<float, float, 2, 1, 1>, its
  // source list first.
  const char* const copy =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi2EEENS1_"
      "11CopyFunctorIffLi2ELi1ELi1EEEJNS1_8IdentityIfEEEEEvT_T0_DpT1_";
  const std::uint32_t copy_sizes[] = {u32(sizeof(TensorList2)), 1, 1};
  ASSERT_TRUE(kernel_operand_reads(copy, copy_sizes, 3, &reads));
  EXPECT_EQ(reads[0], (ReadSpan{0, 8 * 64}));
  // With every word scanned (no fills), no list is a read.
  std::vector<ParamAccess> access;
  std::vector<ParamFill> fills;
  kernel_param_layout(in_place, two, 4, &access, &fills, &reads);
  EXPECT_EQ(reads[0], (ReadSpan{8 * 64, 8 * 2 * 64}));
  kernel_param_layout(in_place, two, 4, &access, nullptr, &reads);
  EXPECT_TRUE(reads.empty());
  // _foreach_zero_: ZeroFunctor<float, 1, 1, 0> only stores.
  const char* const zero =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi1EEENS1_"
      "11ZeroFunctorIfLi1ELi1ELi0EEEJEEEvT_T0_DpT1_";
  const std::uint32_t one[] = {u32(sizeof(TensorList1)), 1};
  EXPECT_FALSE(kernel_operand_reads(zero, one, 2, &reads));
  // _foreach_norm: LpNormFunctor<float, NormType::L2, float, 1, 1, 0>
  // reduces its list into a buffer passed apart: the list is only read.
  const char* const norm =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi1EEENS1_"
      "13LpNormFunctorIfLNS0_8NormTypeE2EfLi1ELi1ELi0EEEJPfiEEEvT_T0_DpT1_";
  const std::uint32_t norm_sizes[] = {u32(sizeof(TensorList1)), 1, 8, 4};
  ASSERT_TRUE(kernel_operand_reads(norm, norm_sizes, 4, &reads));
  EXPECT_EQ(reads, (std::vector<ReadSpan>{{0, 8 * 110}, {}, {}, {}}));
  // A functor without the three (AddFunctor<float>), one whose depth is not
  // the metadata's, one that loads fewer lists than the output's index.
  const std::uint32_t four[] = {u32(sizeof(TensorList4)), 1, 4, 8};
  EXPECT_FALSE(kernel_operand_reads(kForeach4, four, 4, &reads));
  const char* const other_depth =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi2EEENS1_"
      "24BinaryOpListAlphaFunctorIfLi3ELi2ELi2EEEJSt4plusIfEfEEEvT_T0_DpT1_";
  EXPECT_FALSE(kernel_operand_reads(other_depth, two, 4, &reads));
  const char* const loads_fewer =
      "_ZN2at6native12_GLOBAL__N_125multi_tensor_apply_kernelINS1_18TensorListMetadataILi3EEENS1_"
      "24BinaryOpListAlphaFunctorIfLi3ELi1ELi2EEEJSt4plusIfEfEEEvT_T0_DpT1_";
  EXPECT_FALSE(kernel_operand_reads(loads_fewer, three, 4, &reads));
}

TEST(OperandReads, ScansGiveEachWordsOffsetInItsParameter) {
  // The launch path tells an operand array's output from its inputs by
  // the word's offset.
  std::uint64_t out = 0x7f0000001000, in = 0x7f0000002000;
  int n = 4;
  unsigned char functor = 0;
  std::uint64_t operands[2] = {out, in};
  void* params[] = {&n, &functor, operands};
  const ParamSlot slots[] = {{0, 4}, {4, 1}, {8, 16}};
  std::vector<std::pair<std::size_t, std::uint32_t>> seen;
  scan_kernel_params_indexed(params, slots, 3, AddressWindow(0, kAnyAddressHigh),
                             [&](std::uint64_t, std::size_t i, std::uint32_t at) {
                               seen.push_back({i, at});
                             });
  EXPECT_EQ(seen, (std::vector<std::pair<std::size_t, std::uint32_t>>{{2, 0}, {2, 8}}));
  unsigned char buffer[24] = {};
  std::memcpy(buffer + 8, operands, 16);
  seen.clear();
  scan_packed_buffer_indexed(buffer, sizeof buffer, slots, 3, AddressWindow(0, kAnyAddressHigh),
                             [&](std::uint64_t, std::size_t i, std::uint32_t at) {
                               seen.push_back({i, at});
                             });
  EXPECT_EQ(seen, (std::vector<std::pair<std::size_t, std::uint32_t>>{{2, 0}, {2, 8}}));
}

}  // namespace
}  // namespace xsc::rt
