"""Loaded at Python's start-up in programs run by `xstream-check run` (which
puts this directory first on PYTHONPATH): tells the runtime of the memory
pools it cannot see through CUDA, CuPy's (xstream_check_cupy.py), once the
program imports them. Does nothing more in a process without the runtime.

Python imports one module named sitecustomize; the one this shadows (the
distribution's or the user's) is run after this one, as if it were first.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _run_shadowed_sitecustomize():
    import importlib.machinery
    import importlib.util
    others = [entry for entry in sys.path
              if os.path.abspath(entry or os.curdir) != _HERE]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", others)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


sys.path.insert(0, _HERE)
try:
    import xstream_check_cupy
finally:
    sys.path.remove(_HERE)
xstream_check_cupy.watch_import()
_run_shadowed_sitecustomize()
