// Which frame of a stack locates a report: the user's, past the CUDA
// runtime, the driver, nvcc's launch stubs and xstream-check's annotations,
// also when the symbolizer splits a pc into its inlined calls.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checker/report.h"

namespace xsc {
namespace {

Frame frame(std::string fn, std::string file, std::uint32_t line, std::uint64_t pc) {
  Frame f;
  f.function = std::move(fn);
  f.file = std::move(file);
  f.line = line;
  f.module = "/bin/app";
  f.pc = pc;
  return f;
}

// A launch through the triple-chevron syntax, as libdw gives it: the
// toolkit's helper and nvcc's stub inlined into the kernel's host-side
// function (named as the kernel, at the kernel's line), all at one pc.
TEST(ReportFramesTest, KernelHostFunctionAroundAnInlinedStubIsTheStub) {
  const std::vector<Frame> frames = {
      frame("__cudaLaunchKernel_helper", "/usr/local/cuda/include/crt/device_functions.h", 2963, 0x40),
      frame("__device_stub__Z3sumPKfPf(float const*, float*)", "/tmp/x.cudafe1.stub.c", 13, 0x40),
      frame("sum(float const*, float*)", "/src/app.cu", 44, 0x40),
      frame("main", "/src/app.cu", 90, 0x80),
  };
  const std::vector<std::string_view> roles = frame_roles(frames);
  EXPECT_EQ(roles[0], "kernel launch stub");
  EXPECT_EQ(roles[1], "kernel launch stub");
  EXPECT_EQ(roles[2], "kernel launch stub");
  EXPECT_EQ(roles[3], "");
  EXPECT_EQ(locating_frame(frames), 3u);
}

// The stub called, not inlined: its caller, at another pc, is still the
// kernel's host-side function.
TEST(ReportFramesTest, KernelHostFunctionCallingTheStubIsTheStub) {
  const std::vector<Frame> frames = {
      frame("__cudaLaunchKernel_helper", "/usr/local/cuda/include/crt/device_functions.h", 2963, 0x40),
      frame("__device_stub__Z3sumPKfPf(float const*, float*)", "/tmp/x.cudafe1.stub.c", 13, 0x40),
      frame("(anonymous namespace)::sum(float const*, float*)", "/src/app.cu", 44, 0x58),
      frame("main", "/src/app.cu", 91, 0x80),
  };
  const std::vector<std::string_view> roles = frame_roles(frames);
  EXPECT_EQ(roles[2], "kernel launch stub");
  EXPECT_EQ(roles[3], "");
  EXPECT_EQ(locating_frame(frames), 3u);
}

// A CUDA runtime template inlined into the user's function: the user's
// function, at the same pc, stays the user's.
TEST(ReportFramesTest, UserFunctionAroundAnInlinedRuntimeTemplateIsTheUsers) {
  const std::vector<Frame> frames = {
      frame("cudaMalloc<float>", "/usr/local/cuda/include/cuda_runtime.h", 879, 0x40),
      frame("main", "/src/app.cu", 59, 0x40),
  };
  EXPECT_EQ(frame_roles(frames)[0], "CUDA runtime");
  EXPECT_EQ(frame_roles(frames)[1], "");
  EXPECT_EQ(locating_frame(frames), 1u);
}

TEST(ReportFramesTest, AnnotationFramesAreSkipped) {
  const std::vector<Frame> frames = {
      frame("XSC_ANNOTATE_FREE", "/usr/include/xstream_check/annotations.h", 65, 0x40),
      frame("main", "/src/pool.c", 20, 0x40),
  };
  EXPECT_EQ(frame_roles(frames)[0], "annotation");
  EXPECT_EQ(locating_frame(frames), 1u);
}

}  // namespace
}  // namespace xsc
