"""cupy.cuda, as far as the stand-in goes (see ../__init__.py)."""
import threading

_local = threading.local()


class Stream:
    def __init__(self, ptr):
        self.ptr = ptr

    def __enter__(self):
        self._previous = get_current_stream()
        _local.stream = self
        return self

    def __exit__(self, *exc):
        _local.stream = self._previous


def get_current_stream():
    return getattr(_local, "stream", None) or Stream(0)


class BaseMemory:
    def __init__(self, ptr, size):
        self.ptr = ptr
        self.size = size


class PooledMemory(BaseMemory):
    def __init__(self, ptr, size, stream, pool):
        super().__init__(ptr, size)
        self._stream = stream
        self._pool = pool

    def __del__(self):
        self._pool.free(self.ptr, self.size, self._stream)


class UnownedMemory(BaseMemory):
    def __init__(self, ptr, size, owner, device_id=-1):
        super().__init__(ptr, size)
        self._owner = owner
        self.device_id = device_id


class MemoryPointer:
    def __init__(self, mem, offset):
        self.mem = mem
        self.ptr = mem.ptr + offset
        self.device_id = 0


class MemoryPool:
    """Blocks of 512-byte multiples; a freed one goes back to its stream's
    arena and is handed out again first."""

    def __init__(self):
        self._next = 0x7a0000000000
        self._arenas = {}

    def malloc(self, size):
        size = (size + 511) // 512 * 512
        stream = get_current_stream().ptr
        arena = self._arenas.setdefault(stream, [])
        for i, (ptr, block_size) in enumerate(arena):
            if block_size == size:
                del arena[i]
                break
        else:
            ptr = self._next
            self._next += size
        return MemoryPointer(PooledMemory(ptr, size, stream, self), 0)

    def free(self, ptr, size, stream):
        self._arenas.setdefault(stream, []).append((ptr, size))


_pool = MemoryPool()
_allocator = _pool.malloc


def get_allocator():
    return _allocator


def set_allocator(allocator):
    global _allocator
    _allocator = allocator


def alloc(size):
    return _allocator(size)


# A CuPy too old or too new for the observer: no get_allocator.
if __import__("os").environ.get("CUPY_STANDIN_WITHOUT_GET_ALLOCATOR"):
    del get_allocator
