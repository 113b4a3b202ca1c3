// Which kernel parameters a mangled name declares as pointers to const.
// Every name below is one nvcc 13.0 gave a kernel (read from the cubin's
// symbol table); the comment is the kernel's declaration.
#include "runtime/cuda/param_access/param_access.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "runtime/cuda/param_scan.h"

namespace xsc::rt {
namespace {

constexpr ParamAccess R = ParamAccess::kRead;
constexpr ParamAccess U = ParamAccess::kUnknown;

std::vector<ParamAccess> access_of(const std::string& name) {
  std::vector<ParamAccess> out;
  EXPECT_TRUE(kernel_param_access(name, &out)) << name;
  return out;
}

class ParamAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernel_param_access_available())
      GTEST_SKIP() << "built without LLVM's demangler (llvm-22-dev)";
  }
};

TEST_F(ParamAccessTest, PointerToConstIsARead) {
  // reduce(const float* in, float* out, int n)
  EXPECT_EQ(access_of("_Z6reducePKfPfi"), (std::vector{R, U, U}));
  // void_ptrs(const void* src, void* dst, size_t n)
  EXPECT_EQ(access_of("_Z9void_ptrsPKvPvm"), (std::vector{R, U, U}));
  // cv(const volatile int* flag, volatile int* out)
  EXPECT_EQ(access_of("_Z2cvPVKiPVi"), (std::vector{R, U}));
}

TEST_F(ParamAccessTest, RestrictDoesNotChangeTheSignature) {
  // restrict_params(const float* __restrict__ in, float* __restrict__ out,
  //                 const int* __restrict__ idx): the parameters' own
  // qualifiers are not part of the function type.
  EXPECT_EQ(access_of("_Z15restrict_paramsPKfPfPKi"), (std::vector{R, U, R}));
}

TEST_F(ParamAccessTest, SubstitutionsStandForEarlierTypes) {
  // same_type_twice(const float* a, const float* b, float* c, float* d):
  // b is S0_ (PKf), d is S1_ (Pf).
  EXPECT_EQ(access_of("_Z15same_type_twicePKfS0_PfS1_"), (std::vector{R, R, U, U}));
  // const_struct_ptr(const Params* p, ns::Pair* pairs, const ns::Pair* cpairs)
  EXPECT_EQ(access_of("_Z16const_struct_ptrPK6ParamsPN2ns4PairEPKS3_"),
            (std::vector{R, U, R}));
}

TEST_F(ParamAccessTest, TemplateParametersAreResolved) {
  // template <typename T> scale(const T* in, T* out, T factor), T = float
  EXPECT_EQ(access_of("_Z5scaleIfEvPKT_PS0_S0_"), (std::vector{R, U, U}));
  // through_param<const float*>(T in, float* out)
  EXPECT_EQ(access_of("_Z13through_paramIPKfEvT_Pf"), (std::vector{R, U}));
  // through_param<float* const>(T in, float* out): the pointer is const,
  // what it points to is not.
  EXPECT_EQ(access_of("_Z13through_paramIKPfEvT_S0_"), (std::vector{U, U}));
  // at::native::gather_kernel<float, long>(scalar_t* __restrict__ out,
  //   const scalar_t* __restrict__ src, const index_t* idx, index_t n)
  EXPECT_EQ(access_of("_ZN2at6native13gather_kernelIflEEvPT_PKS2_PKT0_S6_"),
            (std::vector{U, R, R, U}));
}

TEST_F(ParamAccessTest, PointersToPointers) {
  // ptr_to_ptrs(const float* const* tables, float** outs, const float** ins):
  // only the first one's array of pointers is const.
  EXPECT_EQ(access_of("_Z11ptr_to_ptrsPKPKfPPfPS0_"), (std::vector{R, U, U}));
}

TEST_F(ParamAccessTest, FunctionPointerParameters) {
  // fn_ptr(void (*cb)(const float*, int), const float* x): the callback's
  // own parameter list is not the kernel's.
  EXPECT_EQ(access_of("_Z6fn_ptrPFvPKfiES0_"), (std::vector{U, R}));
}

TEST_F(ParamAccessTest, StructsAndFunctorsStayUnknown) {
  // by_struct(Params p), whose members are pointers
  EXPECT_EQ(access_of("_Z9by_struct6Params"), (std::vector{U}));
  // functor_kernel<4, Add>(int n, F f, const float* x)
  EXPECT_EQ(access_of("_Z14functor_kernelILi4E3AddEviT0_PKf"), (std::vector{U, U, R}));
  // PyTorch's form: vectorized_elementwise_kernel<4, lambda,
  // cuda::std::array<char*, 2>>(int N, func_t f, array_t data), the lambda
  // (with its own parameter list) in the template arguments.
  EXPECT_EQ(access_of("_ZN2at6native29vectorized_elementwise_kernelILi4EZ2govEUlfE_N4cuda3std3__"
                      "45arrayIPcLm2EEEEEviT0_T1_"),
            (std::vector{U, U, U}));
}

TEST_F(ParamAccessTest, AnonymousNamespace) {
  // namespace { hidden(const double* x) }
  EXPECT_EQ(access_of("_ZN36_GLOBAL__N__57d2e45f_4_k_cu_05d7363a6hiddenEPKd"), (std::vector{R}));
}

TEST_F(ParamAccessTest, ParameterPacksAreExpanded) {
  // variadic<const float*, float*, int>(Ts... args)
  EXPECT_EQ(access_of("_Z8variadicIJPKfPfiEEvDpT_"), (std::vector{R, U, U}));
  // variadic_const<float, int>(const Ts*... args)
  EXPECT_EQ(access_of("_Z14variadic_constIJfiEEvDpPKT_"), (std::vector{R, R}));
}

TEST_F(ParamAccessTest, NoParameters) { EXPECT_EQ(access_of("_Z4spinv"), (std::vector<ParamAccess>{})); }

TEST(ParamAccess, NothingIsKnownWithoutAMangledSignature) {
  std::vector<ParamAccess> out{R};
  EXPECT_FALSE(kernel_param_access("c_kernel", &out));  // extern "C"
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(kernel_param_access("", &out));
  EXPECT_FALSE(kernel_param_access("_Z", &out));
  EXPECT_FALSE(kernel_param_access("_Z6reducePKfP", &out));  // truncated
  EXPECT_FALSE(kernel_param_access("_Z3fooPK", &out));
  EXPECT_TRUE(out.empty());
  // A variable, not a function.
  EXPECT_FALSE(kernel_param_access("_ZN2ns5tableE", &out));
}

TEST(ParamScanIndexed, WordsCarryTheirParameter) {
  // kernel(int n, const float* in, float* out) with a struct holding two
  // pointers as a fourth parameter.
  int n = 3;
  std::uint64_t in = 0x7f0000001000, out = 0x7f0000002000;
  struct {
    std::uint64_t a, b;
  } pair{0x7f0000003000, 0x7f0000004000};
  void* params[] = {&n, &in, &out, &pair};
  const ParamSlot slots[] = {{0, 4}, {8, 8}, {16, 8}, {24, 16}};
  std::vector<std::pair<std::uint64_t, std::size_t>> seen;
  scan_kernel_params_indexed(params, slots, 4, AddressWindow(0, kAnyAddressHigh),
                             [&](std::uint64_t w, std::size_t i, std::uint32_t) {
                               seen.emplace_back(w, i);
                             });
  using P = std::pair<std::uint64_t, std::size_t>;
  EXPECT_EQ(seen, (std::vector<P>{{in, 1}, {out, 2}, {pair.a, 3}, {pair.b, 3}}));
}

TEST(ParamScanIndexed, PackedBufferWordsMapToTheirSlot) {
  const ParamSlot slots[] = {{0, 4}, {8, 8}, {16, 8}, {24, 16}};
  EXPECT_EQ(slot_of_word(slots, 4, 0), 4u);  // the int's slot is 4 bytes
  EXPECT_EQ(slot_of_word(slots, 4, 8), 1u);
  EXPECT_EQ(slot_of_word(slots, 4, 16), 2u);
  EXPECT_EQ(slot_of_word(slots, 4, 24), 3u);
  EXPECT_EQ(slot_of_word(slots, 4, 32), 3u);
  EXPECT_EQ(slot_of_word(slots, 4, 40), 4u);  // past the end
  EXPECT_EQ(slot_of_word(nullptr, 0, 8), 0u);  // no layout

  unsigned char buffer[40] = {};
  const std::uint64_t in = 0x7f0000001000, out = 0x7f0000002000;
  std::memcpy(buffer + 8, &in, 8);
  std::memcpy(buffer + 16, &out, 8);
  std::vector<std::pair<std::uint64_t, std::size_t>> seen;
  scan_packed_buffer_indexed(buffer, sizeof buffer, slots, 4, AddressWindow(0, kAnyAddressHigh),
                             [&](std::uint64_t w, std::size_t i, std::uint32_t) {
                               seen.emplace_back(w, i);
                             });
  using P = std::pair<std::uint64_t, std::size_t>;
  EXPECT_EQ(seen, (std::vector<P>{{in, 1}, {out, 2}}));
}

}  // namespace
}  // namespace xsc::rt
