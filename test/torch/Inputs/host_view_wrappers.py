"""Runs the PyTorch adapter's host-view wrappers (the Python source in
runtime/torch/host_views.cpp) over a stand-in torch module and a stand-in
adapter library (fake_view_adapter.c): the wrappers return what the
originals return, raise what they raise, keep their names, and tell the
adapter which bytes each call viewed, once per outermost call.

  host_view_wrappers.py HOST_VIEWS_CPP FAKE_ADAPTER_SO
"""
import ctypes
import sys
import types

source_path, adapter_path = sys.argv[1], sys.argv[2]
text = open(source_path).read()
source = text[text.index('R"PY(') + len('R"PY('):text.index(')PY"')]

fake = ctypes.CDLL(adapter_path)
fake.fake_last_addr.restype = ctypes.c_uint64
fake.fake_last_size.restype = ctypes.c_uint64

STRIDED = object()


class TensorBase:
    """Enough of torch._C.TensorBase for the wrappers."""

    def __init__(self, ptr, numel, element_size=4, contiguous=True, cpu=True):
        self.ptr, self.n, self.esize, self.contig, self.is_cpu = ptr, numel, element_size, contiguous, cpu
        self.layout = STRIDED

    def numel(self):
        return self.n

    def element_size(self):
        return self.esize

    def is_contiguous(self):
        return self.contig

    def data_ptr(self):
        return self.ptr

    def numpy(self, *, force=False):
        """numpy docs"""
        if self.n < 0:
            raise ValueError("no numpy for you")
        return ("array of", self, force)

    def tolist(self):
        return [1.0] * self.n

    def __dlpack__(self, *, stream=-1, max_version=None):
        return ("capsule", self, stream, max_version)


class Tensor(TensorBase):
    def __array__(self, dtype=None):
        # torch/_tensor.py's: a Python method that calls self.numpy().
        return self.numpy() if dtype is None else ("astype", self.numpy(), dtype)


def from_numpy(array):
    return array["tensor"]


torch = types.ModuleType("torch")
torch.Tensor = Tensor
torch.strided = STRIDED
torch.from_numpy = from_numpy
torch._C = types.SimpleNamespace(_has_torch_function_unary=lambda t: getattr(t, "torch_function", False))
sys.modules["torch"] = torch

originals = {name: getattr(Tensor, name) for name in ("numpy", "__array__", "tolist", "__dlpack__")}
exec(compile(source, "<host_views>", "exec"), {"_xsc_adapter_path": adapter_path})
# Twice: the second install must not wrap the wrappers.
exec(compile(source, "<host_views>", "exec"), {"_xsc_adapter_path": adapter_path})

failures = 0


def check(name, ok):
    global failures
    print(("PASS " if ok else "FAIL ") + name)
    failures += 0 if ok else 1


def report():
    return (fake.fake_reports(), fake.fake_last_addr(), fake.fake_last_size(), fake.fake_last_what())


for name, original in originals.items():
    wrapped = getattr(Tensor, name)
    check("%s wrapped once" % name, getattr(wrapped, "_xsc_original", None) is original)
    check("%s keeps its name" % name, wrapped.__name__ == original.__name__ and wrapped.__doc__ == original.__doc__)
check("from_numpy wrapped", getattr(torch.from_numpy, "_xsc_original", None) is from_numpy)

t = Tensor(0x1000, 256)
fake.fake_reset()
result = t.numpy(force=True)
check("numpy result", result == ("array of", t, True))
check("numpy reported", report() == (1, 0x1000, 1024, 0))

fake.fake_reset()
result = t.__array__()
check("__array__ result", result == ("array of", t, False))
check("__array__ reported once, as itself", report() == (1, 0x1000, 1024, 1))
check("__array__ inner numpy followed", fake.fake_enters() == 2 and fake.fake_leaves() == 2)
check("depth back to zero", fake.fake_depth() == 0)

fake.fake_reset()
check("tolist result", t.tolist() == [1.0] * 256)
check("tolist reported", report() == (1, 0x1000, 1024, 2))

fake.fake_reset()
check("__dlpack__ result", t.__dlpack__(stream=None, max_version=(1, 0)) == ("capsule", t, None, (1, 0)))
check("__dlpack__ reported", report() == (1, 0x1000, 1024, 3))

fake.fake_reset()
made = Tensor(0x8000, 10, element_size=8)
check("from_numpy result", torch.from_numpy({"tensor": made}) is made)
check("from_numpy reports its result", report() == (1, 0x8000, 80, 4))

# A strided view: only its first element is certainly viewed.
fake.fake_reset()
Tensor(0x2000, 64, contiguous=False).numpy()
check("strided view: first element", report() == (1, 0x2000, 4, 0))

# No bytes, not on the CPU, a subclass with its own __torch_function__:
# followed (enter and leave) but nothing reported.
for label, tensor in (("empty", Tensor(0x3000, 0)), ("device", Tensor(0x4000, 8, cpu=False))):
    fake.fake_reset()
    tensor.numpy()
    check("%s: nothing reported" % label, fake.fake_reports() == 0 and fake.fake_leaves() == 1)
fake.fake_reset()
sub = Tensor(0x5000, 8)
sub.torch_function = True
sub.numpy()
check("__torch_function__ subclass: nothing reported", fake.fake_reports() == 0 and fake.fake_depth() == 0)

# The original's exception goes through unchanged; the call is closed.
fake.fake_reset()
bad = Tensor(0x6000, -1)
try:
    bad.numpy()
    check("exception raised", False)
except ValueError as e:
    check("exception raised", str(e) == "no numpy for you" and e.__class__ is ValueError)
check("exception: nothing reported, depth closed", fake.fake_reports() == 0 and fake.fake_depth() == 0
      and fake.fake_leaves() == 1)
# A TypeError from bad arguments, as numpy's __array__(copy=...) probing sees it.
fake.fake_reset()
try:
    t.__array__(copy=False)
    check("bad keyword raises TypeError", False)
except TypeError as e:
    check("bad keyword raises TypeError", "copy" in str(e))
check("bad keyword: depth closed", fake.fake_depth() == 0)

# Before the process has pinned memory the adapter answers 0: the original
# is called and nothing else happens.
fake.fake_set_pinned(0)
fake.fake_reset()
check("no pinned memory: result", t.numpy() == ("array of", t, False))
check("no pinned memory: one call only", fake.fake_enters() == 0 and fake.fake_leaves() == 0)

print("%d failure(s)" % failures)
sys.exit(1 if failures else 0)
