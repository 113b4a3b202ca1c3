"""CuPy's memory pool, told to xstream-check's runtime.

CuPy's pool (cupy.cuda.MemoryPool) carves arrays out of memory it took
with cudaMalloc and keeps. A freed array's block goes back to the arena of
the stream that was current at its allocation, and the next allocation on
that stream may get it at once, with no CUDA call the runtime could see. So
a block freed while another stream still reads it, then handed out again,
looks to the runtime like one long-lived cudaMalloc chunk: the bug this
checker exists for goes unseen.

install(cupy) wraps CuPy's current allocator: each block it hands out is
reported as a caching allocation on the current stream, and its return to
the pool as a caching free on that stream, at the Python line that dropped
the last reference (`del x`, a rebinding, the end of a function). The
wrapper hands the program a MemoryPointer over an UnownedMemory whose owner
holds the pool's own pointer, so the block goes back to the pool exactly
when it did before, right after the free is reported.

The runtime is reached through its host API table (xsc_runtime_host_api,
runtime/include/xstream_check/host_api.h). Without the runtime in the
process install() does nothing. Where PyTorch's adapter is not loaded,
install() also loads libxstream_python.so from beside the runtime, so that
CuPy's kernel launches are named by their Python lines, as PyTorch's are. A program that sets an allocator of its
own afterwards (cupy.cuda.set_allocator) replaces the wrapper, and its
blocks are then not observed.

install(cupy) also wraps CuPy's compiler (cupy.cuda.compiler.
_compile_module_with_cache, through which every kernel CuPy builds at run
time goes, disk-cache hits included) and tells the runtime what each
compiled `extern "C"` kernel's source declares of its parameters
(kernel_declarations below): which it only reads (`const CArray<...>`
inputs, `const T*`), and which array outputs an ElementwiseKernel writes
whole. A launch of such a kernel then feeds its outputs' bytes as known
writes, so that a read on another stream before the write lands, or a
write over another stream's pending read, is reported as it is for a copy.
"""
import os
import re
import sys
import threading

# host_api.h's enums.
_ALLOC_CACHING = 1
_FREE_CACHING = 1
# The frames of a stack kept per allocation or free: the user's, first.
_MAX_FRAMES = 16


def _host_api_types():
    """ctypes' views of host_api.h's frame and of the head of its table, as
    far as this module reads it (version 1 on: the table only grows at its
    end). Made at the first install(): ctypes is imported only then."""
    import ctypes

    class Frame(ctypes.Structure):
        _fields_ = [("function", ctypes.c_char_p), ("file", ctypes.c_char_p),
                    ("line", ctypes.c_uint32)]

    intern_frames = ctypes.CFUNCTYPE(ctypes.c_uint32, ctypes.POINTER(Frame), ctypes.c_size_t)
    alloc = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                             ctypes.c_int, ctypes.c_uint32)
    free = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_int, ctypes.c_int,
                            ctypes.c_uint32)

    class KernelParam(ctypes.Structure):
        _fields_ = [("access", ctypes.c_int32), ("itemsize", ctypes.c_uint32),
                    ("ndim", ctypes.c_uint32)]

    kernel_params = ctypes.CFUNCTYPE(None, ctypes.c_uint64, ctypes.POINTER(KernelParam),
                                     ctypes.c_size_t)
    # The entries between free and kernel_params, which this module does
    # not call (host_api.h).
    unused = [("unused%d" % i, ctypes.c_void_p) for i in range(18)]

    class HostApi(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32),
                    ("intern_frames", intern_frames),
                    ("intern_deferred", ctypes.c_void_p),
                    ("alloc", alloc),
                    ("free", free)] + unused + [("kernel_params", kernel_params)]

    HostApi.KernelParam = KernelParam
    return ctypes, Frame, HostApi


def host_api():
    """ctypes, the runtime's host API table and ctypes' frame type, or None
    when libxstream_check.so is not loaded in this process or is not
    checking."""
    ctypes, frame, table_type = _host_api_types()
    try:
        lookup = ctypes.CDLL(None).xsc_runtime_host_api
    except (AttributeError, OSError):
        return None
    lookup.restype = ctypes.POINTER(table_type)
    lookup.argtypes = []
    table = lookup()
    return (ctypes, table.contents, frame) if table else None


class _Stacks:
    """Python stacks interned in the runtime's stack depot, by the code
    objects and lines of their frames: a line that allocates in a loop is
    interned once."""

    def __init__(self, api, frame_type, skip_dirs):
        self._api = api
        self._frame = frame_type
        self._skip = tuple(skip_dirs)
        self._known = {}
        self._lock = threading.Lock()

    def here(self, depth):
        """The stack id of the caller `depth` frames up, its frames inside
        the skipped directories (CuPy's own Python, this module) left out
        until the first one outside them; 0 when the runtime has no session
        yet (it then takes the host stack)."""
        try:
            frame = sys._getframe(depth + 1)
        except ValueError:
            return 0
        while frame is not None and frame.f_code.co_filename.startswith(self._skip):
            frame = frame.f_back
        frames = []
        while frame is not None and len(frames) < _MAX_FRAMES:
            frames.append((frame.f_code, frame.f_lineno))
            frame = frame.f_back
        key = tuple(frames)
        stack = self._known.get(key)
        if stack is not None:
            return stack
        array = (self._frame * len(frames))()
        for slot, (code, line) in zip(array, frames):
            # Qualified, as the launch stacks name them (run.<locals>.forward).
            name = getattr(code, "co_qualname", code.co_name)
            slot.function = name.encode("utf-8", "replace")
            slot.file = code.co_filename.encode("utf-8", "replace")
            slot.line = line or 0
        stack = self._api.intern_frames(array, len(frames)) if frames else 0
        if stack:
            with self._lock:
                self._known[key] = stack
        return stack


class _Block:
    """Owns the pool's pointer of one block handed to the program; its
    destruction is the block's return to the pool."""
    __slots__ = ("pointer", "stream", "observer")

    def __init__(self, pointer, stream, observer):
        self.pointer = pointer
        self.stream = stream
        self.observer = observer

    def __del__(self):
        try:
            self.observer.freed(self.pointer.ptr, self.stream)
        except Exception:  # interpreter shutdown: modules half torn down
            pass
        # The pool's pointer goes when this object does: after the free.


class _Observer:
    def __init__(self, cupy, api, frame_type):
        self._api = api
        self._inner = cupy.cuda.get_allocator()
        skip = [os.path.dirname(os.path.abspath(__file__)) + os.sep]
        package = getattr(cupy, "__file__", None)
        if package:
            skip.append(os.path.dirname(os.path.abspath(package)) + os.sep)
        self._stacks = _Stacks(api, frame_type, skip)
        self._memory_pointer = cupy.cuda.MemoryPointer
        self._unowned = cupy.cuda.UnownedMemory
        self._current_stream = cupy.cuda.get_current_stream

    def allocate(self, size):
        pointer = self._inner(size)
        address = pointer.ptr
        if address == 0:
            return pointer  # a zero-byte array: no memory to watch
        # The pool rounds sizes up: the block is what it carved.
        block_size = getattr(pointer.mem, "size", size) - (address - pointer.mem.ptr)
        stream = self._current_stream().ptr
        self._api.alloc(address, block_size, stream, _ALLOC_CACHING, self._stacks.here(1))
        owner = _Block(pointer, stream, self)
        memory = self._unowned(address, block_size, owner, pointer.device_id)
        return self._memory_pointer(memory, 0)

    def freed(self, address, stream):
        # Frame 0 is this method, 1 the block's __del__, 2 where the last
        # reference went.
        self._api.free(address, stream, _FREE_CACHING, 0, self._stacks.here(2))


# host_api.h's XSC_PARAM_* and the version that has kernel_params.
PARAM_UNKNOWN, PARAM_READ, PARAM_WRITES_ARRAY = 0, 1, 2
_KERNEL_PARAMS_VERSION = 7

# Bytes per element of the C types CuPy names its dtypes by.
_ITEMSIZE = {
    "bool": 1, "char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1,
    "short": 2, "unsigned short": 2, "int16_t": 2, "uint16_t": 2, "float16": 2, "half": 2,
    "__half": 2, "bfloat16": 2, "__nv_bfloat16": 2,
    "int": 4, "unsigned int": 4, "int32_t": 4, "uint32_t": 4, "float": 4,
    "long long": 8, "unsigned long long": 8, "int64_t": 8, "uint64_t": 8, "double": 8,
    "complex<float>": 8, "thrust::complex<float>": 8,
    "complex<double>": 16, "thrust::complex<double>": 16,
}

_COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)
_KERNEL = re.compile(r'extern\s+"C"\s+__global__\s+void\s+'
                     r'(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(')
_TYPEDEF = re.compile(r'\btypedef\s+([^;{}]+?)\s+(\w+)\s*;')
_LOOP = re.compile(r'\bCUPY_FOR\s*\(\s*\w+\s*,\s*_ind\s*\.\s*size\s*\(\s*\)\s*\)\s*\{')
_JUMP = re.compile(r'\b(?:return|continue|break|goto|asm)\b|#')


def _matching(text, at):
    """The index just past the bracket that closes the one at text[at]."""
    depth = 0
    for i in range(at, len(text)):
        if text[i] in "([{":
            depth += 1
        elif text[i] in ")]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return -1


def _split_top(text, separator, brackets=("([{<", ")]}>")):
    """text split at `separator` outside brackets."""
    opening, closing = brackets
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in opening:
            depth += 1
        elif char in closing:
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]


def _statements(code):
    """code's statements outside braces, parentheses and subscripts (a `<`
    in code is a comparison, not a bracket)."""
    return [" ".join(s.split()) for s in _split_top(code, ";", ("([{", ")]}"))]


def _words(text):
    return " ".join(text.replace("__restrict__", " ").replace("__restrict", " ").split())


def _itemsize(ctype, typedefs):
    for _ in range(8):
        if ctype in _ITEMSIZE:
            return _ITEMSIZE[ctype]
        if ctype not in typedefs:
            return 0
        ctype = typedefs[ctype]
    return 0


def _written_whole(loop, name):
    """Whether an ElementwiseKernel's loop writes output `name` at every
    index: in a statement of its own, it assigns the current element
    (`_raw_name[_ind.get()] = ...`, a ufunc's), or assigns `name` after
    binding it to the current element (`T &name = _raw_name[_ind.get()];`,
    a user's ElementwiseKernel)."""
    element = r'_raw_' + name + r' ?\[ ?_ind ?\. ?get ?\( ?\) ?\]'
    assign = r' ?(?:[-+*/%&|^]|<<|>>)?=(?!=)'
    stores = re.compile(element + assign)
    binding = re.compile(r'(.*)& ?' + name + r' ?= ?' + element)
    assigns = re.compile(r'(?:' + name + assign + r'|' + name + r' ?(?:\+\+|--)|(?:\+\+|--) ?' +
                         name + r'\b)')
    bound = False
    for statement in _statements(loop):
        if stores.match(statement):
            return True
        binds = binding.fullmatch(statement)
        if binds and "const" not in binds.group(1).split():
            bound = True
        elif bound and assigns.match(statement):
            return True
    return False


def _declare(param, body_loop, typedefs):
    """(access, itemsize, ndim) of one declared parameter."""
    text = _words(param)
    array = re.fullmatch(r'(const\s+)?CArray\s*<(.*)>\s*(\w+)', text)
    if array:
        args = _split_top(array.group(2), ",")
        if array.group(1):
            return (PARAM_READ, 0, 0)
        name = array.group(3)
        if (body_loop is None or len(args) < 2 or not args[1].isdigit()
                or not name.startswith("_raw_")):
            return (PARAM_UNKNOWN, 0, 0)
        itemsize = _itemsize(args[0], typedefs)
        if itemsize and _written_whole(body_loop, name[len("_raw_"):]):
            return (PARAM_WRITES_ARRAY, itemsize, int(args[1]))
        return (PARAM_UNKNOWN, 0, 0)
    pointer = re.fullmatch(r'([^*]+)\*\s*(?:const\s*)?\w+', text)
    if pointer and "const" in pointer.group(1).split():
        return (PARAM_READ, 0, 0)
    return (PARAM_UNKNOWN, 0, 0)


def kernel_declarations(source):
    """{kernel name: [(access, itemsize, ndim) per parameter]} for the
    `extern "C"` kernels defined in `source`, each parameter PARAM_READ,
    PARAM_WRITES_ARRAY (an ElementwiseKernel's output CArray, written at
    every index: itemsize and ndim describe it) or PARAM_UNKNOWN. A kernel
    whose every parameter is unknown is left out. A loop that may leave an
    iteration early (return, continue, break, goto), or that holds inline
    assembly or a preprocessor line, writes no output whole."""
    source = _COMMENT.sub(" ", source)
    typedefs = {name: " ".join(ctype.split()) for ctype, name in _TYPEDEF.findall(source)}
    found = {}
    for match in _KERNEL.finditer(source):
        close = _matching(source, match.end() - 1)
        if close < 0:
            continue
        params = _split_top(source[match.end():close - 1], ",")
        body_loop = None
        brace = source.find("{", close)
        body_end = _matching(source, brace) if brace >= 0 else -1
        if body_end > 0 and not source[close:brace].strip():
            body = source[brace:body_end]
            loop = _LOOP.search(body)
            loop_end = _matching(body, loop.end() - 1) if loop else -1
            if loop_end > 0 and any(re.fullmatch(r'CIndexer\s*<.*>\s*_ind', _words(p))
                                    for p in params):
                block = body[loop.end() - 1:loop_end]
                if not _JUMP.search(block):
                    body_loop = block[1:-1]
        declared = [_declare(p, body_loop, typedefs) for p in params if p and p != "void"]
        if any(access != PARAM_UNKNOWN for access, _, _ in declared):
            found[match.group(1)] = declared
    return found


class _KernelDeclarations:
    """Wraps CuPy's compiler: each kernel a compiled module defines is
    declared to the runtime by its CUfunction handle, before its first
    launch."""

    def __init__(self, api, param_type, compile_module):
        self._api = api
        self._param = param_type
        self._compile = compile_module

    def __call__(self, source, *args, **kwargs):
        module = self._compile(source, *args, **kwargs)
        try:
            self.declare(module, source)
        except Exception:  # what is declared only adds checks: the program goes on as it was
            pass
        return module

    def declare(self, module, source):
        get_function = getattr(module, "get_function", None)
        if get_function is None or not isinstance(source, str):
            return  # LTO IR bytes, or a module of another kind
        for name, params in kernel_declarations(source).items():
            try:
                handle = get_function(name).ptr
            except Exception:  # not in this module (a template's instance, a failed name)
                continue
            array = (self._param * len(params))()
            for slot, (access, itemsize, ndim) in zip(array, params):
                slot.access, slot.itemsize, slot.ndim = access, itemsize, ndim
            self._api.kernel_params(handle, array, len(params))


def _wrap_compiler(api):
    """Declares the kernels CuPy compiles from here on; False where the
    runtime or CuPy has no place for it."""
    if api.version < _KERNEL_PARAMS_VERSION:
        return False
    import importlib
    try:
        compiler = importlib.import_module("cupy.cuda.compiler")
    except ImportError:
        return False
    inner = getattr(compiler, "_compile_module_with_cache", None)
    if inner is None or isinstance(inner, _KernelDeclarations):
        return False
    compiler._compile_module_with_cache = _KernelDeclarations(api, type(api).KernelParam, inner)
    return True


def _mapped_libraries():
    """Paths of the shared libraries mapped in this process."""
    try:
        with open("/proc/self/maps") as maps:
            return {line.split()[-1] for line in maps if line.rstrip().endswith(".so")}
    except OSError:
        return set()


def _attach_python_stacks(ctypes, api):
    """Launch sites as Python lines: libxstream_python.so, beside the
    runtime, registers its launch stack hook. Not where PyTorch's adapter
    is loaded (it registers its own, which also names the backward pass)."""
    mapped = _mapped_libraries()
    if any(os.path.basename(path) == "libxstream_torch.so" for path in mapped):
        return False
    runtime = [path for path in mapped if os.path.basename(path) == "libxstream_check.so"]
    if not runtime:
        return False
    library = os.path.join(os.path.dirname(runtime[0]), "libxstream_python.so")
    try:
        attach = ctypes.CDLL(library).xsc_python_attach
    except (AttributeError, OSError):
        return False
    attach.argtypes = [ctypes.c_void_p]
    attach.restype = ctypes.c_int
    return attach(ctypes.addressof(api)) == 0


_installed = None


class _AfterImport:
    """A finder that never finds anything itself: when `cupy` is imported it
    lets the other finders find it and, once the module ran, installs the
    observer. It leaves sys.meta_path at that import."""

    def find_spec(self, name, path=None, target=None):
        if name != "cupy":
            return None
        import importlib.util
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run_module = spec.loader.exec_module

        def exec_module(module):
            run_module(module)
            _install_or_tell(module)

        try:
            spec.loader.exec_module = exec_module
        except AttributeError:
            pass
        return spec


def _install_or_tell(cupy):
    try:
        install(cupy)
    except Exception as error:  # an unknown CuPy: checking goes on without its pool
        sys.stderr.write("xstream-check: CuPy's memory pool is not observed (%s: %s)\n"
                         % (type(error).__name__, error))


def watch_import():
    """Installs the observer once the program imports CuPy (at once if it
    did already). Whether the runtime is loaded is asked only then: until
    CuPy comes the watch costs a call per import."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        _install_or_tell(cupy)
    elif not any(isinstance(finder, _AfterImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


def install(cupy):
    """Wraps CuPy's current allocator so that the runtime sees its blocks.
    True when it did (or had already); False without the runtime."""
    global _installed
    if _installed is not None:
        return True
    found = host_api()
    if found is None:
        return False
    ctypes, api, frame_type = found
    observer = _Observer(cupy, api, frame_type)
    cupy.cuda.set_allocator(observer.allocate)
    _installed = observer
    _attach_python_stacks(ctypes, api)
    _wrap_compiler(api)
    return True
