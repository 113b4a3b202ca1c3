"""The seed's bug through CuPy's pool (the stand-in in
test/wheel/plugin/cupy_standin/) with kernels launched through the stand-in
CUPTI (cupy_launch_helper.c): an array read by a kernel on stream C is
dropped, and its block is handed out again on its allocation stream P,
where the next kernel writes it.

    python3 cupy_launch.py HELPER.so"""
import ctypes
import sys

import cupy

helper = ctypes.CDLL(sys.argv[1])
helper.helper_make_stream.argtypes = [ctypes.c_size_t]
helper.helper_launch.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
helper.helper_make_stream(0x5a0000)
helper.helper_make_stream(0x5b0000)
P = cupy.cuda.Stream(0x5a0000)
C = cupy.cuda.Stream(0x5b0000)


def consume(array):
    helper.helper_launch(array.data.ptr, C.ptr)  # xsc: consumer


def main():
    with P:
        batch = cupy.empty(4096)
    consume(batch)
    del batch  # xsc: free
    with P:
        scratch = cupy.empty(4096)
    helper.helper_launch(scratch.data.ptr, P.ptr)  # xsc: reuse
    print("launched")
    return 0


if __name__ == "__main__":
    sys.exit(main())
