# lit configuration shared by every suite under test/.
import glob
import os
import shutil
import subprocess

import lit.formats
import lit.util

config.name = "xstream-check"
config.test_format = lit.formats.ShTest(not lit.util.which("bash") is None)
config.suffixes = [".test", ".cu", ".cpp", ".py", ".jsonl"]
config.excludes = ["Inputs", "probes", "unit", "tools", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.xsc_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.llvm_tools_dir, config.xsc_bin_dir, config.environment.get("PATH", os.environ.get("PATH", ""))])
for var in ("CUDA_VISIBLE_DEVICES", "HOME", "NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
            "NVSHMEM_DISABLE_NVLS", "LD_LIBRARY_PATH", "PYTHONPATH", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Tests state their own options; never inherit a user's.
config.environment.pop("XSC_OPTIONS", None)

config.substitutions.append(("%xsc", os.path.join(config.xsc_bin_dir, "xstream-check")))
config.substitutions.append(("%autoload_dir",
                             os.path.join(os.path.dirname(config.xsc_lib_dir), "autoload")))
config.substitutions.append(("%libxsc", os.path.join(config.xsc_lib_dir, "libxstream_check.so")))
config.substitutions.append(("%lint", os.path.join(config.xsc_bin_dir, "xstream-lint")))
config.substitutions.append(("%plugin", os.path.join(config.xsc_lib_dir, "libxstream_plugin.so")))
config.substitutions.append(("%tidymodule", os.path.join(config.xsc_lib_dir, "libxstream_tidy.so")))
config.substitutions.append(("%clangxx", config.clangxx))
config.substitutions.append(("%clang_tidy", config.clang_tidy))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%exbin", os.path.join(config.xsc_bin_dir, "examples")))
config.substitutions.append(("%srcroot", config.xsc_src_root))
config.substitutions.append(("%cuda_include", config.cuda_include_dir))
config.substitutions.append(("%param_fill_check",
                             os.path.join(config.xsc_bin_dir, "xsc_param_fill_check")))


def gpu_count():
    """CUDA GPUs usable here: the lines nvidia-smi -L lists (0 without it)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return 0
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return 0
    if out.returncode != 0:
        return 0
    count = sum(1 for line in out.stdout.splitlines() if line.startswith("GPU "))
    # nvidia-smi ignores CUDA_VISIBLE_DEVICES; the tests' processes do not.
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        count = min(count, len([d for d in visible.split(",") if d.strip()]))
    return count


gpus = gpu_count()


def gpu_present():
    return gpus > 0


def python_has(module):
    try:
        out = subprocess.run([config.python_executable, "-c", "import " + module],
                             capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0


def torch_cuda_library():
    """The installed PyTorch's libtorch_cuda.so (its kernels' fat binary), or None."""
    code = ("import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "
            "'lib', 'libtorch_cuda.so'))")
    try:
        out = subprocess.run([config.python_executable, "-c", code],
                             capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    path = out.stdout.strip()
    return path if out.returncode == 0 and os.path.isfile(path) else None


def transformers_version():
    """(major, minor) of the Hugging Face transformers the tests' Python
    imports, or None."""
    try:
        out = subprocess.run([config.python_executable, "-c",
                              "import transformers; print(transformers.__version__)"],
                             capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    # The last line: an import may print notices of its own first.
    lines = out.stdout.strip().splitlines()
    parts = lines[-1].split(".") if lines else []
    if out.returncode != 0 or len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1])


def python_minor_version():
    """'3.12' for the Python the tests run, or None."""
    try:
        out = subprocess.run([config.python_executable, "-c",
                              "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def embeddable_python_config(minor):
    """python3.N-config of a CPython 3.N that a test program can embed (its
    headers and libpython), from PATH or pyenv; None when there is none."""
    candidates = [shutil.which(f"python{minor}-config")]
    candidates += sorted(glob.glob(os.path.join(os.path.expanduser("~"), ".pyenv", "versions",
                                                f"{minor}.*", "bin", f"python{minor}-config")))
    for candidate in candidates:
        if not candidate or not os.access(candidate, os.X_OK):
            continue
        try:
            out = subprocess.run([candidate, "--embed", "--ldflags"], capture_output=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0:
            return candidate
    return None


# The PyTorch adapter's frame readers, checked against an embedded CPython
# of each version they read directly (no GPU or torch needed).
for minor in ("3.11", "3.12", "3.13"):
    python_config = embeddable_python_config(minor)
    if python_config:
        config.available_features.add("python-embed-" + minor)
        config.substitutions.append(("%embed_py" + minor.replace(".", "") + "_config", python_config))

def python_in_executable():
    """A CPython whose interpreter is linked into its executable (not a
    libpython beside it), as Debian's and the venvs made from it are: the
    interpreter's own mutexes are then the executable's calls."""
    for candidate in (os.path.realpath(config.python_executable), "/usr/bin/python3"):
        if not os.access(candidate, os.X_OK):
            continue
        try:
            out = subprocess.run([candidate, "-c", "print(any('libpython' in line for line in "
                                  "open('/proc/self/maps')))"],
                                 capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip() == "False":
            return candidate
    return None


static_python = python_in_executable()
if static_python:
    config.available_features.add("python-in-executable")
    config.substitutions.append(("%static_python", static_python))

if config.have_runtime:
    config.available_features.add("runtime")
if config.have_examples:
    config.available_features.add("examples")
if config.have_runtime and config.have_examples and gpu_present():
    config.available_features.add("cuda-gpu")
    # Multi-rank NCCL needs one GPU per rank: NCCL refuses two ranks on one.
    if gpus >= 2:
        config.available_features.add("multi-gpu")
    # The cuDNN example, built where cuDNN's headers and library were found.
    if getattr(config, "have_cudnn_example", False):
        config.available_features.add("cudnn")
        config.substitutions.append(("%cudnn_libdir", config.cudnn_library_dir))
    # CuPy's programs: the clean corpus's and its memory pool's tests.
    if python_has("cupy"):
        config.available_features.add("cupy")
if config.have_torch and python_has("torch"):
    config.available_features.add("torch")
    # The host-view modes of examples/torch/host_pinned.py that use NumPy.
    if python_has("numpy"):
        config.available_features.add("numpy")
    # A CUDA build of PyTorch: its kernels, whose parameter layouts
    # test/torch/param-fill-layouts.test checks.
    torch_cuda = torch_cuda_library()
    if torch_cuda:
        config.available_features.add("torch-cuda-library")
        config.substitutions.append(("%torch_cuda_library", torch_cuda))
    # timm: its clean-corpus program (test/corpus/timm.test).
    if python_has("timm"):
        config.available_features.add("timm")
    # Hugging Face diffusers: its group offloading's transfer stream, clean
    # (test/corpus/diffusers-group-offload.test) and with one of its host
    # synchronizations removed (test/torch/diffusers-sync-dropped.test).
    if python_has("diffusers.hooks"):
        config.available_features.add("diffusers")
    # torchao: its CPUOffloadOptimizer, clean and with one ordering removed.
    if python_has("torchao.optim"):
        config.available_features.add("torchao")
    # trl: its activation offloading (saved-tensor hooks that move activations
    # to pinned host memory on a stream of their own), clean and with one
    # ordering removed.
    if python_has("trl.models.activation_offloading"):
        config.available_features.add("trl")
    # Hugging Face transformers: the clean corpus's programs, and its
    # offloaded key/value cache, whose prefetch stream waits for the default
    # stream before each prefetch from 5.20 on (before, it never does).
    transformers = transformers_version()
    if transformers is not None:
        config.available_features.add("transformers")
        if transformers >= (5, 20):
            config.available_features.add("transformers-offload-waits")
    # The GPU test of the frame reader expects the device's CPython 3.12.
    if python_minor_version() == "3.12":
        config.available_features.add("python3.12")
if config.have_nccl:
    config.available_features.add("nccl")
# Kernel parameter types from mangled names (LLVM's demangler at build time).
if getattr(config, "have_param_access", False):
    config.available_features.add("param-access")
if config.have_clang_plugin and config.clangxx:
    config.available_features.add("clang-plugin")
