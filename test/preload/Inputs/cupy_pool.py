"""The seed's bug through CuPy's pool (the stand-in in
test/wheel/plugin/cupy_standin/): an array allocated on stream P is read by
a "kernel" on stream C, dropped, and its block handed out again on P, where
the next "kernel" writes it.

    python3 cupy_pool.py buggy|same-stream

buggy: nothing orders P after C's read before the drop. same-stream: C
never touches the array. Kernels are xsc_annotate_use calls (no device)."""
import ctypes
import sys

import cupy

P = cupy.cuda.Stream(0x1000)
C = cupy.cuda.Stream(0x2000)


def kernel(array, stream, write):
    """A stand-in kernel: tells the runtime, when it is loaded, that work on
    `stream` reads or writes the whole array."""
    try:
        use = ctypes.CDLL(None).xsc_annotate_use
    except AttributeError:
        return
    use.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int]
    use(array.data.ptr, array.nbytes, stream.ptr, 1 if write else 0)


def make_batch():
    with P:
        batch = cupy.empty(4096)  # xsc: alloc
    kernel(batch, P, write=True)
    return batch


def main(mode):
    wrapped = cupy.cuda._allocator != cupy.cuda._pool.malloc
    print("observer imported:", "xstream_check_cupy" in sys.modules)
    print("allocator wrapped:", wrapped)
    batch = make_batch()  # xsc: make
    first = batch.data.ptr
    if mode == "buggy":
        kernel(batch, C, write=False)
    del batch  # xsc: free
    with P:
        scratch = cupy.empty(4096)  # xsc: again
    kernel(scratch, P, write=True)
    print("block handed out again:", scratch.data.ptr == first)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))  # xsc: main
