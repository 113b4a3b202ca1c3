"""Prints the sources CuPy compiles for a few of its own kernels (a ufunc
with an array and a scalar, a fill, a reduction, an ElementwiseKernel) and
what the CuPy observer declares of each (kernel_declarations), so that the
parser can be checked against the installed CuPy's generated code.

    python3 test/gpu/probes/cupy_sources.py"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                "python", "xstream_check", "autoload"))
import cupy as cp  # noqa: E402
import cupy.cuda.compiler as compiler  # noqa: E402
import xstream_check_cupy as observer  # noqa: E402

sources = []
inner = compiler._compile_module_with_cache


def recording(source, *args, **kwargs):
    sources.append(source)
    return inner(source, *args, **kwargs)


compiler._compile_module_with_cache = recording
x = cp.arange(1000, dtype=cp.float32)
y = x * 2
z = y + 0
y.fill(3)
s = x.sum()
k = cp.ElementwiseKernel("T a", "T b", "b = a * a", "probe_square")
k(x, y)
cp.cuda.Device().synchronize()
print("cupy", cp.__version__, "sources:", len(sources))
for source in sources:
    declared = observer.kernel_declarations(source)
    print("=" * 20, declared)
    body = source[source.find('extern "C"'):]
    print(body[:1500])
