"""CuPy's kernels as the runtime sees them, through the stand-in CuPy
(test/wheel/plugin/cupy_standin/), its stand-in compiler, CUPTI
(cupy_kernels_helper.c) and libcuda: an ElementwiseKernel-like kernel
`cupy_scale` (reads x through a const CArray, writes y at every index) and a
reduction-like `cupy_sum` (reads its input through a const CArray) on two
streams, P and C.

    python3 cupy_kernels.py HELPER.so MODE

ready            P writes y, C reads y with no wait: a use before ready
ready-wait       C waits for P first (correct)
overwrite        C reads w, then P writes w without waiting for C: a write
                 after read
overwrite-wait   P waits for C first (correct)
dense-read       P writes a dense 2-D view of a buffer, column-major; C reads
                 its second element unordered: a use before ready
strided-read     P writes every other element; C reads an element between
                 them unordered (correct: those bytes are not written)
packed           ready, its launches through cudaLaunchKernel's packed buffer
undeclared       ready, with the kernels never compiled through CuPy's
                 compiler: nothing says which parameter is written, and
                 nothing is reported
"""
import ctypes
import struct
import sys

import cupy
import cupy.cuda.compiler as compiler

SCALE, SUM = 0xf00100, 0xf00200
CARRAY1 = 32   # CArray<float, 1>: data, size, shape[1], strides[1]
CARRAY2 = 48   # CArray<float, 2>
INDEXER1 = 24  # CIndexer<1>: size, shape[1], index[1]

SOURCE = '''
typedef float T;
extern "C" __global__ void cupy_scale(const CArray<float, 1, 1, 1> _raw_x,
                                      CArray<float, %(ndim)d, 0, 0> _raw_y, CIndexer<1, 1> _ind) {
  CUPY_FOR(i, _ind.size()) {
    _ind.set(i);
    const T &x = _raw_x[_ind.get()];
    T &y = _raw_y[_ind.get()];
    y = x * 2;
  }
}
extern "C" __global__ void cupy_sum(const CArray<float, 1, 1, 1> _raw_in0, float* out) {
  out[0] = _raw_in0[0];
}
'''

helper = ctypes.CDLL(sys.argv[1])
MODE = sys.argv[2]
helper.helper_make_stream.argtypes = [ctypes.c_size_t]
helper.helper_define.argtypes = [ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t,
                                 ctypes.POINTER(ctypes.c_size_t)]
helper.helper_launch.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
helper.helper_launch_packed.argtypes = [ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p),
                                        ctypes.c_size_t, ctypes.c_size_t]
helper.helper_order.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
helper.helper_make_stream(0x5a0000)
helper.helper_make_stream(0x5b0000)
P = cupy.cuda.Stream(0x5a0000)
C = cupy.cuda.Stream(0x5b0000)
Y_NDIM = 2 if MODE == "dense-read" else 1
SIZES = {SCALE: [CARRAY1, CARRAY1 if Y_NDIM == 1 else CARRAY2, INDEXER1], SUM: [CARRAY1, 8]}
_kept = []  # argument bytes stay alive past each launch


def define(handle, name):
    sizes = SIZES[handle]
    helper.helper_define(handle, name, len(sizes), (ctypes.c_size_t * len(sizes))(*sizes))


def carray(ptr, shape, strides):
    size = 1
    for extent in shape:
        size *= extent
    return struct.pack("<%dq" % (2 + 2 * len(shape)), ptr, size, *shape, *strides)


def launch(handle, stream, *params):
    if MODE == "packed":
        buffer, at = b"", 0
        for raw in params:  # at the stand-in libcuda's offsets: natural alignment
            at = (at + len(raw) - 1) // len(raw) * len(raw)
            buffer = buffer.ljust(at, b"\0") + raw
            at += len(raw)
        buffer = buffer.ljust((len(buffer) + 7) // 8 * 8, b"\0")
        words = (ctypes.c_void_p * (len(buffer) // 8)).from_buffer_copy(buffer)
        _kept.append(words)
        helper.helper_launch_packed(handle, words, len(words), stream.ptr)
        return
    held = [ctypes.create_string_buffer(raw, len(raw)) for raw in params]
    _kept.append(held)
    pointers = (ctypes.c_void_p * len(held))(*[ctypes.addressof(b) for b in held])
    helper.helper_launch(handle, pointers, stream.ptr)


def scale(x, y, stream, shape=(1024,), strides=(4,)):
    launch(SCALE, stream, carray(x.data.ptr, (1024,), (4,)), carray(y.data.ptr, shape, strides),
           struct.pack("<3q", 1024, 1024, 0))


def total(a, out, stream, offset=0):
    launch(SUM, stream, carray(a.data.ptr + offset, (1024,), (4,)),
           struct.pack("<Q", out.data.ptr))


def main():
    define(SCALE, b"cupy_scale")
    define(SUM, b"cupy_sum")
    compiler.functions.update(cupy_scale=SCALE, cupy_sum=SUM)
    if MODE != "undeclared":
        # What CuPy does before a kernel's first launch (core.compile_with_cache).
        compiler._compile_module_with_cache(SOURCE % {"ndim": Y_NDIM})
    with P:
        x = cupy.empty(4096)
        y = cupy.empty(8192)
    with C:
        out = cupy.empty(512)
    if MODE in ("ready", "ready-wait", "packed", "undeclared"):
        scale(x, y, P)  # xsc: write
        if MODE == "ready-wait":
            helper.helper_order(C.ptr, P.ptr)
        total(y, out, C)  # xsc: read
    elif MODE in ("overwrite", "overwrite-wait"):
        total(y, out, C)  # xsc: earlier read
        if MODE == "overwrite-wait":
            helper.helper_order(P.ptr, C.ptr)
        scale(x, y, P)  # xsc: overwrite
    elif MODE == "dense-read":
        scale(x, y, P, shape=(32, 32), strides=(4, 128))  # xsc: dense write
        total(y, out, C, offset=4)  # xsc: dense read
    elif MODE == "strided-read":
        scale(x, y, P, shape=(1024,), strides=(8,))
        total(y, out, C, offset=4)
    print("declared:", sorted(n for n in ("cupy_scale", "cupy_sum")
                              if any(n in s for s in compiler.compiled)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
