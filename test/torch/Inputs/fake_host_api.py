"""A stand-in for libxstream_check.so's host API (version 4, or 6), in ctypes.

Loads the PyTorch adapter without the runtime, so the adapter's operator
writes can be driven on a machine without a GPU: with
XSC_TORCH_OP_DEVICE=cpu the adapter follows CPU tensors as it follows CUDA
ones (on stream 0), and `install_operators()` installs the interception
without CUDA; with version 6 the runtime's pinned-memory hook can be
called by hand. Used by test/torch/Inputs/op_writes_cpu.py,
test/torch/Inputs/pinned_pending_cpu.py, test/torch/Inputs/python_stacks_cpu.py,
test/torch/Inputs/writer_kernels_train.py, bench/torch_op_hook.py and
bench/pinned_hook_toggle.py.
"""
import ctypes
import threading

U64, U32, INT = ctypes.c_uint64, ctypes.c_uint32, ctypes.c_int


class Frame(ctypes.Structure):
    _fields_ = [("function", ctypes.c_char_p), ("file", ctypes.c_char_p), ("line", ctypes.c_uint32)]


class DeferredStack(ctypes.Structure):
    _fields_ = [("context", ctypes.c_void_p), ("resolve", ctypes.c_void_p),
                ("release", ctypes.c_void_p)]


class OperatorWrite(ctypes.Structure):
    _fields_ = [("addr", U64), ("size", U64)]


INTERN = ctypes.CFUNCTYPE(U32, ctypes.POINTER(Frame), ctypes.c_size_t)
DEFER = ctypes.CFUNCTYPE(U32, DeferredStack)
ALLOC = ctypes.CFUNCTYPE(None, U64, U64, U64, INT, U32)
FREE = ctypes.CFUNCTYPE(None, U64, U64, INT, INT, U32)
FREE_COMPLETED = ctypes.CFUNCTYPE(None, U64, U32)
USE = ctypes.CFUNCTYPE(None, U64, U64, U64, INT, ctypes.c_char_p, U32)
NOTICE = ctypes.CFUNCTYPE(None, ctypes.c_char_p)
COLLECTIVE = ctypes.CFUNCTYPE(None, U64, U64, U64, INT, ctypes.c_char_p, U32)
HOOK = ctypes.CFUNCTYPE(U32)
SET_HOOK = ctypes.CFUNCTYPE(None, HOOK)
WANTED = ctypes.CFUNCTYPE(INT)
MARK = ctypes.CFUNCTYPE(U64)
SINCE = ctypes.CFUNCTYPE(INT, U64, U64)
OPERATOR_WRITES = ctypes.CFUNCTYPE(None, ctypes.c_char_p, U64, U64, ctypes.POINTER(OperatorWrite),
                                   ctypes.c_size_t)
PINNED_SEEN = ctypes.CFUNCTYPE(INT)
HOST_ACCESS = ctypes.CFUNCTYPE(None, U64, U64, INT, ctypes.c_char_p, U32)
VOID_HOOK = ctypes.CFUNCTYPE(None)
SET_VOID_HOOK = ctypes.CFUNCTYPE(None, VOID_HOOK)
BACKWARD_STACK = ctypes.CFUNCTYPE(U32, ctypes.c_char_p, U32)
PARTS_TIMED = ctypes.CFUNCTYPE(INT)
PART_ENTER = ctypes.CFUNCTYPE(INT, INT)
PART_LEAVE = ctypes.CFUNCTYPE(None, INT)
PENDING_HOOK = ctypes.CFUNCTYPE(None, INT)
SET_PENDING_HOOK = ctypes.CFUNCTYPE(None, PENDING_HOOK)


class HostApi(ctypes.Structure):
    # Mirrors xsc_host_api in runtime/include/xstream_check/host_api.h.
    _fields_ = [("version", U32), ("intern_frames", INTERN), ("intern_deferred", DEFER),
                ("alloc", ALLOC), ("free", FREE), ("free_completed", FREE_COMPLETED),
                ("use", USE), ("notice", NOTICE), ("collective", COLLECTIVE),
                ("set_launch_stack_hook", SET_HOOK), ("operator_access_wanted", WANTED),
                ("enqueue_mark", MARK), ("enqueued_since", SINCE),
                ("operator_writes", OPERATOR_WRITES), ("pinned_memory_seen", PINNED_SEEN),
                ("host_access", HOST_ACCESS), ("set_thread_start_hook", SET_VOID_HOOK),
                ("set_pinned_memory_hook", SET_VOID_HOOK), ("backward_stack", BACKWARD_STACK),
                ("parts_timed", PARTS_TIMED), ("part_enter", PART_ENTER),
                ("part_leave", PART_LEAVE), ("set_pinned_pending_hook", SET_PENDING_HOOK)]


class FakeRuntime:
    """Records the adapter's operator writes as (name, stream, addr, size).

    `record` False keeps the callbacks as cheap as ctypes allows (the
    benchmark's writes then cost a counter increment). With `version` 6 the
    table has the pinned-memory hook that turns off: `pinned_pending_hook`
    is what the adapter registered, and the host accesses it reports while
    that hook is on (as (name, addr, size, access)) are kept in
    `host_accesses`; pinned memory counts as seen. `intern`, when given,
    interns the stacks the adapter names (frames, n) -> id; else every
    stack is 0."""

    def __init__(self, adapter_path, record=True, version=4, intern=None):
        self.writes = []
        self.count = 0
        self.notices = []
        self.host_accesses = []
        self.thread_start_hook = None
        self.pinned_pending_hook = None
        self._record = record
        self._callbacks = [
            INTERN(intern or (lambda frames, n: 0)), DEFER(lambda d: 0), ALLOC(lambda *a: None),
            FREE(lambda *a: None), FREE_COMPLETED(lambda *a: None), USE(lambda *a: None),
            NOTICE(self._notice), COLLECTIVE(lambda *a: None), SET_HOOK(lambda h: None),
            WANTED(lambda: 1), MARK(lambda: 7), SINCE(lambda stream, mark: 1),
            OPERATOR_WRITES(self._operator_writes), PINNED_SEEN(lambda: 1 if version >= 6 else 0),
            HOST_ACCESS(self._host_access), SET_VOID_HOOK(self._set_thread_start_hook),
            SET_VOID_HOOK(lambda h: None), BACKWARD_STACK(lambda node, stack: 0),
            PARTS_TIMED(lambda: 0), PART_ENTER(lambda part: 0), PART_LEAVE(lambda outer: None),
            SET_PENDING_HOOK(self._set_pinned_pending_hook)]
        self.api = HostApi(version, *self._callbacks)
        self.adapter = ctypes.CDLL(adapter_path)
        self.adapter.xsc_torch_attach.argtypes = [ctypes.POINTER(HostApi)]
        self.adapter.xsc_torch_operator_stats.restype = ctypes.c_char_p
        self.attach_result = self.adapter.xsc_torch_attach(ctypes.byref(self.api))

    def _notice(self, message):
        self.notices.append(message.decode())

    def _set_thread_start_hook(self, hook):
        self.thread_start_hook = hook if hook else None

    def _set_pinned_pending_hook(self, hook):
        self.pinned_pending_hook = hook if hook else None

    def _host_access(self, addr, size, access, name, stack):
        self.host_accesses.append((name.decode() if name else "", addr, size, access))

    def _operator_writes(self, name, stream, mark, writes, n):
        self.count += 1
        if self._record:
            for i in range(n):
                self.writes.append((name.decode(), stream, writes[i].addr, writes[i].size))

    def install_operators(self):
        return self.adapter.xsc_torch_install_operators()

    def stats(self):
        return self.adapter.xsc_torch_operator_stats().decode()

    def counters(self):
        """The adapter's stats as {name: value string}."""
        return dict(word.split("=", 1) for word in self.stats().split())

    def start_thread(self, target):
        """A thread started as the preloaded runtime starts one: the
        adapter's thread-start hook runs in it before `target`."""
        def run():
            if self.thread_start_hook is not None:
                self.thread_start_hook()
            target()
        return threading.Thread(target=run)
