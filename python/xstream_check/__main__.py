"""python -m xstream_check run|replay|merge ... : the xstream-check command
installed with this package. `python -m xstream_check lint FILES` is the
Python check (python -m xstream_check.lint)."""
from ._native import main

raise SystemExit(main())
