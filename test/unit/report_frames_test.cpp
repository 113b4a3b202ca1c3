// Which frame of a stack locates a report: the user's, past the CUDA
// runtime, the driver, nvcc's launch stubs, xstream-check's annotations and
// its own runtime, and PyTorch's Python call machinery, also when the
// symbolizer splits a pc into its inlined calls.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "checker/report/report.h"

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

// Python frames: a file and a line, no module.
Frame py(std::string fn, std::string file, std::uint32_t line) {
  Frame f;
  f.function = std::move(fn);
  f.file = std::move(file);
  f.line = line;
  return f;
}

// A native frame without symbols: only its module and offset.
Frame bare(std::string module, std::uint64_t pc) {
  Frame f;
  f.module = std::move(module);
  f.pc = pc;
  return f;
}

// A kernel launched inside cuBLAS, as the runtime records it: libcublas's
// frames have no symbols, then the runtime's interposed entry point (and the
// template inlined into it, with the runtime's source file), then the
// program. SUMMARY names the program's line, never runtime/libs/cublas/cublas.cpp.
TEST(ReportFramesTest, RuntimeFramesOfTheCheckerAreSkipped) {
  Frame interpose = frame("interpose<cublasStatus_t (*)(cublasContext*, ...)>",
                          "/work/main/runtime/cublas.cpp", 194, 0x1234);
  interpose.module = "/opt/xsc/lib/libxstream_check.so";
  Frame entry = frame("cublasSgemm_v2", "/work/main/runtime/cublas.cpp", 230, 0x1234);
  entry.module = "/opt/xsc/lib/libxstream_check.so";
  const std::vector<Frame> frames = {
      bare("/usr/lib/libcublas.so.13", 0x9f00),
      interpose,
      entry,
      frame("main", "/src/app.cu", 44, 0x80),
  };
  const std::vector<std::string_view> roles = frame_roles(frames);
  EXPECT_EQ(roles[0], "");
  EXPECT_EQ(roles[1], kOwnFrameRole);
  EXPECT_EQ(roles[2], kOwnFrameRole);
  EXPECT_EQ(roles[3], "");
  EXPECT_EQ(locating_frame(frames), 3u);
  EXPECT_EQ(site_text(frames), "/src/app.cu:44 in main");
}

// The PyTorch adapter's library, and a checker function known by its
// namespace when a producer left the module out, are the checker's too.
TEST(ReportFramesTest, AdapterAndNamespaceFramesAreTheCheckers) {
  Frame adapter = bare("/venv/lib/python3.12/site-packages/xstream_check/lib/libxstream_torch.so", 0x40);
  adapter.function = "xsc::torch_adapter::launch_stack()";
  EXPECT_EQ(frame_role(adapter), kOwnFrameRole);
  EXPECT_EQ(frame_role(py("xsc::rt::on_kernel_launch(unsigned long)", "launch.cpp", 300)), kOwnFrameRole);
  // A user's function merely named like one is not.
  EXPECT_EQ(frame_role(frame("xscale::run()", "/src/xsc/run.cpp", 3, 0x40)), "");
}

// Without the user's frames symbolized, the innermost frame outside the
// checker keeps naming its binary and offset, as before.
TEST(ReportFramesTest, UnsymbolizedFramesStillNameBinaryAndOffset) {
  Frame entry = frame("cublasSgemm_v2", "/work/main/runtime/cublas.cpp", 230, 0x1234);
  entry.module = "/opt/xsc/lib/libxstream_check.so";
  const std::vector<Frame> frames = {entry, bare("/bin/app", 0x1a2b)};
  EXPECT_EQ(locating_frame(frames), 1u);
  EXPECT_EQ(site_text(frames), "(/bin/app+0x1a2b)");
}

// Nothing but the checker's own frames: no frame names the site.
TEST(ReportFramesTest, OnlyTheCheckersFramesLocateNothing) {
  Frame entry = frame("cublasSgemm_v2", "/work/main/runtime/cublas.cpp", 230, 0x1234);
  entry.module = "/opt/xsc/lib/libxstream_check.so";
  const std::vector<Frame> frames = {entry};
  EXPECT_EQ(locating_frame(frames), frames.size());
  EXPECT_EQ(site_text(frames), "<unknown>");
  EXPECT_EQ(site_text({}), "<unknown>");
}

// A use made in a module's forward, called through nn.Module's __call__
// machinery from the training loop: the forward is the site, not
// Module._call_impl.
TEST(ReportFramesTest, TorchModuleCallMachineryIsSkipped) {
  const std::string torch = "/venv/lib/python3.12/site-packages/torch/";
  const std::vector<Frame> frames = {
      py("Module._call_impl", torch + "nn/modules/module.py", 1784),
      py("Module._wrapped_call_impl", torch + "nn/modules/module.py", 1773),
      py("Block.forward", "/src/model.py", 40),
      py("train", "/src/train.py", 12),
  };
  const std::vector<std::string_view> roles = frame_roles(frames);
  EXPECT_EQ(roles[0], kTorchMachineryRole);
  EXPECT_EQ(roles[1], kTorchMachineryRole);
  EXPECT_EQ(roles[2], "");
  EXPECT_EQ(locating_frame(frames), 2u);
  EXPECT_EQ(site_text(frames), "/src/model.py:40 in Block.forward");
}

// Hooks, autograd and TorchDynamo forward calls too, also in Debian's
// dist-packages and as paths relative to site-packages.
TEST(ReportFramesTest, TorchHookAutogradAndDynamoFramesAreSkipped) {
  const std::vector<Frame> frames = {
      py("BackwardHook._set_user_hook.<locals>.hook", "/usr/lib/python3/dist-packages/torch/utils/hooks.py", 100),
      py("_engine_run_backward", "torch/autograd/graph.py", 824),
      py("backward", "/venv/lib/python3.11/site-packages/torch/autograd/__init__.py", 353),
      py("_TorchDynamoContext.__call__.<locals>._fn", "/venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py", 655),
      py("step", "/src/train.py", 30),
  };
  const std::vector<std::string_view> roles = frame_roles(frames);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(roles[i], kTorchMachineryRole) << i;
  EXPECT_EQ(locating_frame(frames), 4u);
}

// The user's own code in a directory named torch (outside the installed
// torch package) is the user's; a layer's own forward in the package is
// PyTorch's (the user changes the line that called the layer).
TEST(ReportFramesTest, UserTorchDirectoriesAreNotTorch) {
  EXPECT_EQ(frame_role(py("Module._call_impl", "/home/me/proj/torch/nn/modules/module.py", 5)), "");
  EXPECT_EQ(frame_role(py("hook", "/home/me/torch/utils/hooks.py", 5)), "");
  EXPECT_EQ(frame_role(py("f", "/home/me/mytorch/autograd/x.py", 5)), "");
  EXPECT_EQ(frame_role(py("f", "/srv/site-packages/torchvision/autograd/x.py", 5)), "");
  EXPECT_EQ(frame_role(py("Linear.forward", "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 125)), kTorchMachineryRole);
  // autograd's C++ sources in a native frame are not its Python machinery.
  EXPECT_EQ(frame_role(frame("torch::autograd::Engine::execute", "torch/csrc/autograd/engine.cpp", 1, 0x40)), "");
}

// Every frame machinery: the innermost frame, rather than nothing.
TEST(ReportFramesTest, AllTorchMachineryFallsBackToTheFirstFrame) {
  const std::string torch = "/venv/lib/python3.12/site-packages/torch/";
  const std::vector<Frame> frames = {
      py("Module._call_impl", torch + "nn/modules/module.py", 1784),
      py("Module._wrapped_call_impl", torch + "nn/modules/module.py", 1773),
  };
  EXPECT_EQ(locating_frame(frames), 0u);
  EXPECT_EQ(site_text(frames), torch + "nn/modules/module.py:1784 in Module._call_impl");
}

// The fallback still never names the checker: machinery under the
// checker's frames is named instead.
TEST(ReportFramesTest, FallbackSkipsTheCheckerBeforeTorchMachinery) {
  Frame own = frame("xsc::torch_adapter::python_stack()", "/work/main/runtime/torch/python_stacks.cpp", 90, 0x40);
  own.module = "/opt/xsc/lib/libxstream_torch.so";
  const std::vector<Frame> frames = {
      own,
      py("Module._call_impl", "torch/nn/modules/module.py", 1784),
  };
  EXPECT_EQ(locating_frame(frames), 1u);
}

}  // namespace
}  // namespace xsc

namespace xsc {
namespace {

// A cuBLAS read inside a layer: torch/nn/modules/linear.py and the module
// call machinery are PyTorch's; the model's line that called the layer
// locates the report.
TEST(ReportFramesTest, LayerForwardInTorchLocatesAtTheModelsLine) {
  const std::string torch = "/venv/lib/python3.12/site-packages/torch/";
  const std::vector<Frame> frames = {
      py("Linear.forward", torch + "nn/modules/linear.py", 125),
      py("Module._call_impl", torch + "nn/modules/module.py", 1784),
      py("Module._wrapped_call_impl", torch + "nn/modules/module.py", 1773),
      py("Net.forward", "/src/model.py", 12),
  };
  EXPECT_EQ(locating_frame(frames), 3u);
  EXPECT_EQ(site_text(frames), "/src/model.py:12 in Net.forward");
}

// Work of a backward pass: the node frame, then its forward call.
TEST(ReportFramesTest, AutogradNodeNamesTheForwardLine) {
  Frame node;
  node.function = "NllLossBackward0";
  node.autograd_node = true;
  const std::vector<Frame> frames = {node, py("train", "/src/train.py", 42)};
  EXPECT_EQ(frame_role(frames[0]), kAutogradNodeRole);
  EXPECT_EQ(site_text(frames), "/src/train.py:42 in train (backward of NllLossBackward0)");
}

}  // namespace
}  // namespace xsc
