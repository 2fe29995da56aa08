"""The differential check: a program compiled by numpile must do what NumPy eager does, call after call.

A program is `def f(x, y, n)` (x and y float64 arrays of one shape, n a small int) written in the
namespace of PRELUDE: NumPy, scipy, a global G, a buffer _buf it prints to and three helpers it may
call. `check_program` runs the original and its compiled form on separate copies of the same
arguments over six calls: new values, another n, a changed global, another shape, x and y one
array. Compared after each: the result (structure, types, dtypes, shapes, values), the arguments
afterwards (in-place updates), which results are the arguments themselves, what was printed, and
the type of any exception raised. A difference is a `Mismatch`.

The helpers live in PRELUDE's source rather than in this module because numpile never inlines
its own (library) code; written into the program's namespace they are user code, as in a real
program, and a regression file carries them literally.
"""

from __future__ import annotations

import itertools
import linecache
import warnings
from dataclasses import dataclass

import numpy as np

import numpile
from numpile.testing.compare import assert_same

IMPORTS = """\
import io
import math

import numpy as np
import scipy.special
"""

PRELUDE = '''\
G = 0.75                # a global the program reads; check_program changes it from call 4 on
_buf = io.StringIO()    # what the program prints


def _mix(u, v):
    return np.sin(u) * 0.5 + v


def _branchy(u, v):
    # a data-dependent jump inside a callee; decided with a margin, as numpile promises sums within
    # reassociation error (its order is NumPy's for C-ordered data only): `_branchy(x, x[::-1])`
    # compared two means of the same elements, whose last bits decided the branch
    if u.mean() > v.mean() + 1e-9:
        return u - v
    return np.cos(u + v)


def _noisy(u, buf):
    print("noisy", u.shape, file=buf)   # a break inside a callee
    return u * 1.5
'''


class Mismatch(AssertionError):
    """The compiled program did something NumPy eager did not."""


@dataclass(frozen=True)
class Inputs:
    """The arguments of a program's six calls: shapes, the two values of n, the memory layout of
    x and y ("C", "T" transposed views, "rev" negative strides) and the seed of their values."""

    shape: tuple
    other: tuple       # the shape of call 5
    n1: int
    n2: int            # the n of call 3
    layout: str
    seed: int


_PREFIX = "<numpile-fuzz-program-"
_names = itertools.count()


def make_function(source: str):
    """The program `f` of `source`, executed after PRELUDE in a namespace of its own, under a file
    name of its own with linecache lines, so graph-break reports can quote it (the lines of the
    programs before it are dropped: a run of thousands would keep them all)."""
    text = IMPORTS + PRELUDE + source
    for name in [n for n in linecache.cache if n.startswith(_PREFIX)]:
        del linecache.cache[name]
    filename = f"{_PREFIX}{next(_names)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace: dict = {}
    exec(compile(text, filename, "exec"), namespace)
    return namespace["f"]


def check_program(f, inputs: Inputs, backend):
    """Compile `f` afresh with `backend` and run it against itself uncompiled over six calls;
    raises Mismatch at the first difference. Returns the compiled function. The safety net is off
    meanwhile: every call runs the compiled code."""
    numpile.reset()
    ns = f.__globals__
    compiled = numpile.compile(f, backend=backend)
    net, numpile.config.safety_net = numpile.config.safety_net, False
    rng = np.random.default_rng(inputs.seed)
    shape, layout, n1 = inputs.shape, inputs.layout, inputs.n1
    calls = [  # label, shape, layout, whether y is x, n, G
        ("call 1", shape, layout, False, n1, 0.75),
        ("call 2 (new values)", shape, layout, False, n1, 0.75),
        (f"call 3 (n={inputs.n2})", shape, layout, False, inputs.n2, 0.75),
        ("call 4 (G changed)", shape, layout, False, n1, -0.5),
        (f"call 5 (shape {inputs.other})", inputs.other, "C", False, n1, -0.5),
        ("call 6 (y is x)", shape, "C", True, n1, -0.5),
    ]
    try:
        for label, shp, lay, same, n, g in calls:
            ns["G"] = g
            compare(compiled, f, ns["_buf"], make_args(rng, shp, lay, same), n, label)
    finally:
        ns["G"] = 0.75
        numpile.config.safety_net = net
    return compiled


def make_args(rng, shape, layout: str, same: bool):
    """A function making fresh copies of one pair of random arguments (never zeros) in `layout`;
    with `same`, x and y are one array."""
    bases = [rng.standard_normal(shape[::-1] if layout == "T" else shape) + 0.1 for _ in range(1 if same else 2)]

    def build():
        arrays = []
        for b in bases:
            b = b.copy()
            arrays.append(b.T if layout == "T" else b[(slice(None, None, -1),) * b.ndim] if layout == "rev" else b)
        return arrays[0], arrays[-1]
    return build


def compare(compiled, f, buf, build, n: int, label: str) -> None:
    """Run `f` and `compiled` on copies of the same arguments; Mismatch if anything differs."""
    ex, ey = build()
    cx, cy = build()
    want, want_error, want_out = _run(f, ex, ey, n, buf)
    got, got_error, got_out = _run(compiled, cx, cy, n, buf)
    if type(got_error) is not type(want_error):
        raise Mismatch(f"{label}: compiled {_outcome(got_error)}, NumPy eager {_outcome(want_error)}") from got_error
    try:
        assert_same(got, want, f"{label}: result")
        assert_same(cx, ex, f"{label}: x afterwards")
        assert_same(cy, ey, f"{label}: y afterwards")
    except AssertionError as e:
        raise Mismatch(str(e)) from None
    if got_out != want_out:
        raise Mismatch(f"{label}: printed {got_out!r}, NumPy eager printed {want_out!r}")
    g, w = alias_pattern(got, (cx, cy)), alias_pattern(want, (ex, ey))
    if g != w:
        raise Mismatch(f"{label}: aliasing of results (is an argument, shares memory with, is another result): "
                       f"{g}, NumPy eager {w}")


def _run(fn, x, y, n, buf):
    """(result, exception, printed text) of fn(x, y, n); warnings of invalid values are not compared."""
    buf.seek(0), buf.truncate()
    result = error = None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            result = fn(x, y, n)
        except Exception as e:
            error = e
    return result, error, buf.getvalue()


def _outcome(error) -> str:
    return "returned" if error is None else f"raised {type(error).__name__}: {error}"


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def alias_pattern(result, args) -> list:
    """For each returned array: which arguments it is, which it shares memory with, which other
    results are the same object."""
    leaves = [v for v in _leaves(result) if isinstance(v, np.ndarray)]
    return [([i for i, a in enumerate(args) if v is a],
             [i for i, a in enumerate(args) if np.shares_memory(v, a)],
             [j for j, w in enumerate(leaves) if v is w])
            for v in leaves]
