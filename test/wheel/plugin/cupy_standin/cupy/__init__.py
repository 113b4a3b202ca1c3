"""A stand-in for the part of CuPy that xstream-check's CuPy observer uses
(test/preload/cupy-pool.test, test/wheel/plugin): a pool that hands a freed
block out again on the stream it was allocated on, arrays over its
pointers, streams as raw handles. No device: the fixture tells the runtime of its "kernels" through
xsc_annotate_use."""
from . import cuda


class ndarray:
    def __init__(self, nbytes):
        self.data = cuda.alloc(nbytes)
        self.nbytes = nbytes


def empty(nbytes):
    return ndarray(nbytes)
