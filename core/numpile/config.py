"""numpile's settings. Change them as attributes: `numpile.config.cache_size_limit = 16`."""

from __future__ import annotations

import os
from pathlib import Path

suppress_errors: bool = False
"""A failing backend falls back to eager (one warning per function) instead of raising."""
cache_size_limit: int = 8
"""Compiled entries kept per function; past it the function runs eagerly, with one warning."""
automatic_dynamic_shapes: bool = True
"""A dimension that changed between compiles becomes symbolic in the next compile."""
automatic_dynamic_scalars: bool = True
"""A Python float or int argument whose value changed between compiles becomes a graph input in the
next compile, instead of a constant guarded by value (one entry per value); an int only where
Python arithmetic uses it (see tracer/python_scalars.py)."""
unroll_limit: int = 256
"""Loops over known iterables are unrolled up to this many iterations, then break the graph."""
loop_capture_min: int = 4
"""A `for` loop over a range of at least this many iterations is captured as a loop node (its body
traced once, with a symbolic index) on a backend that runs loops; shorter ones, and loops the
capture cannot take, are unrolled. None: never captured."""
loop_unroll_ops: int = 16
"""A loop that unrolled would add at most this many ops to the graph (iterations times the body's
ops) is unrolled after all: its kernels fuse with their neighbours, with no loop to run. Kept low:
each kernel an unrolled loop leaves costs LLVM 50-100 ms to compile (max-pool's inner loop of 12
iterations unrolled was 24 kernels and 2.2 s)."""
top_level_conds: bool = False
"""An `if` (or `and`/`or`, `x if c else y`) on a graph value outside any loop is captured as a cond
node, both sides traced and only the taken one run, instead of breaking the graph there. In loop
bodies it always is. Off by default: at top level a break costs one resume per call, not one per
element, and code written for torch.compile expects the break (the tutorial's `bar` gives three
graphs, `fullgraph=True` raises there)."""
safety_net: bool = True
"""After an entry's first calls, time it against the function run as Python on alternate calls;
an entry more than `safety_net_margin` slower runs as Python from then on, said once under the
`perf` log (safety_net.py). Off: the compiled code always runs (benchmarks time the compiler so)."""
safety_net_margin: float = 0.1
"""How much slower than Python (a fraction) an entry may run before the safety net drops it."""
cache_dir: Path = Path(os.environ.get("NUMPILE_CACHE_DIR", Path.home() / ".cache" / "numpile"))
"""On-disk cache of compiled artifacts (safe to delete)."""
default_backends: dict = {"cpu": ["llvm", "eager"], "cuda": ["triton", "eager"], "dask": ["dask"]}
"""The backends tried, in order, when numpile.compile is given none: by the device of the inputs
("dask": a call with a Dask array)."""
