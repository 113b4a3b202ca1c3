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
"""
import os
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

    class HostApi(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32),
                    ("intern_frames", intern_frames),
                    ("intern_deferred", ctypes.c_void_p),
                    ("alloc", alloc),
                    ("free", free)]

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
    return True
