"""The installed C++ programs: where pip put them inside this package, and
how the `xstream-check` console script and `python -m xstream_check` hand
over to the command-line program.

Layout of an installed package (pyproject.toml, CMake's install rules):
    xstream_check/bin/xstream-check       the command (run, replay, merge)
    xstream_check/lib/libxstream_check.so the runtime it preloads
    xstream_check/lib/libxstream_torch.so the PyTorch adapter, if built
    xstream_check/lib/xstream_check/      libdw, libelf, libunwind copies
The command finds the runtime as ../lib/libxstream_check.so from itself.
XSC_PROGRAM and XSC_RUNTIME_LIBRARY name another command and runtime (a
build tree's, with python/ on PYTHONPATH); the command itself honours
XSC_RUNTIME_LIBRARY the same way."""
import os
import sys

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def binary_path():
    return os.environ.get("XSC_PROGRAM") or os.path.join(PACKAGE_DIR, "bin", "xstream-check")


def runtime_library_path():
    return (os.environ.get("XSC_RUNTIME_LIBRARY")
            or os.path.join(PACKAGE_DIR, "lib", "libxstream_check.so"))


def autoload_dir():
    """Python start-up code for checked programs (autoload/sitecustomize.py):
    `xstream-check run` and the pytest plugin put it first on PYTHONPATH."""
    return os.path.join(PACKAGE_DIR, "autoload")


def watch_memory_pools():
    """In a process that has the runtime but did not start through
    autoload/ (LD_PRELOAD set by hand): watches for the memory pools it
    observes (CuPy's) from now on, as its sitecustomize would have."""
    import importlib.util
    if "xstream_check_cupy" in sys.modules:
        module = sys.modules["xstream_check_cupy"]
    else:
        spec = importlib.util.spec_from_file_location(
            "xstream_check_cupy", os.path.join(autoload_dir(), "xstream_check_cupy.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules["xstream_check_cupy"] = module
        spec.loader.exec_module(module)
    module.watch_import()


def build_info():
    """The generated _build_info module, or None outside a pip install (a
    source checkout, where python/ is on the path)."""
    try:
        from . import _build_info
    except ImportError:
        return None
    return _build_info


def version_text():
    info = build_info()
    if info is None:
        return "xstream-check (source checkout: no installed programs)"
    torch = ("PyTorch adapter built against torch %s" % info.TORCH_BUILT_AGAINST
             if info.TORCH_BUILT_AGAINST else "built without the PyTorch adapter")
    return "xstream-check %s (CUDA %s; %s)\n%s" % (
        info.VERSION, info.CUDA_TOOLKIT, torch, PACKAGE_DIR)


def exec_command(args):
    """Replaces this process with the installed xstream-check: signals,
    exit status and the terminal all belong to it, as with the C++ program
    run directly. Never returns."""
    program = binary_path()
    if not os.access(program, os.X_OK):
        sys.stderr.write("xstream-check: the installed program %s is missing; this package "
                         "was not installed by pip (pip install . in the xstream-check source)\n" % program)
        raise SystemExit(2)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(program, [program] + list(args))


def python_script_as_program(args):
    """`run -- train.py ARGS`: a Python script is run by this interpreter
    (the environment's python, the one that has torch), as the user of
    `python -m xstream_check run -- train.py` means."""
    if args[:1] != ["run"] or "--" not in args:
        return args
    at = args.index("--") + 1
    if at < len(args) and args[at].endswith(".py"):
        return args[:at] + [sys.executable] + args[at:]
    return args


def main(argv=None):
    """Entry point of the `xstream-check` console script and of
    `python -m xstream_check`."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["--version"]:
        print(version_text())
        return 0
    if args[:1] == ["lint"]:
        from .lint.cli import main as lint_main
        return lint_main(args[1:])
    exec_command(python_script_as_program(args))
