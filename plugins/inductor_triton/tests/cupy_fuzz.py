"""The random programs of numpile.fuzz on CuPy arrays in every layout, on a real GPU:
`python plugins/inductor_triton/tests/cupy_fuzz.py --minutes N [--log FILE]` (run_on_gpu.sh runs it).

Each program (numpile.fuzz.programs: `def f(x, y, n)`) is compiled once with "triton" and called on
CuPy arguments in each layout of LAYOUTS, then empty and 0-d ones, then with x and y one array; every
call runs three ways on copies of the same values: NumPy eager on NumPy arrays of the same layout
(the oracle), CuPy eager (the function uncompiled on the CuPy arrays), and numpile. numpile must
 - raise only where NumPy or CuPy eager raise (CuPy eager runs less than NumPy: scipy, `.tolist()`),
   and raise where both raise;
 - return NumPy's values, dtypes and shapes, and leave the arguments as NumPy leaves them;
 - where CuPy eager runs: return CuPy arrays where it does, and where it also does what NumPy does
   (not always: see `_agree`), return and print what it does.
A failing call is printed with the program, its layout and seed, and written to --log as JSON lines
(a regression test is written from it by hand: tests/test_triton_layouts.py). Exits 1 on any.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed

import numpile
from numpile.fuzz.check import Inputs, make_function
from numpile.fuzz.programs import programs
from numpile.testing import assert_same


def _each_dim(x, xp, grow, view):
    """x's values in an array `grow` made of them along each dim, read back through `view`."""
    return xp.asarray(grow(x))[view(x.ndim)]


LAYOUTS = {   # name: (host NumPy array, array module) -> an array of its values in that layout
    "C": lambda x, xp: xp.asarray(x),
    "F": lambda x, xp: xp.asfortranarray(xp.asarray(x)),
    "T": lambda x, xp: xp.asarray(np.ascontiguousarray(x.T)).T,
    "rev": lambda x, xp: _each_dim(x[(slice(None, None, -1),) * x.ndim].copy(), xp, lambda h: h,
                                   lambda d: (slice(None, None, -1),) * d),
    "strided": lambda x, xp: _each_dim(x, xp, lambda h: np.repeat(h, 2, -1), lambda d: (Ellipsis, slice(None, None, 2))),
    "offset": lambda x, xp: _each_dim(x, xp, lambda h: np.pad(h, [(1, 0)] * h.ndim), lambda d: (slice(1, None),) * d),
    "broadcast": lambda x, xp: xp.broadcast_to(xp.asarray(x[:1]), x.shape),
}


BATCH = 25   # programs of one hypothesis run


class Failure(Exception):
    """numpile on CuPy arrays did what neither NumPy nor CuPy eager did."""


def _host(value, cupy):
    """value with CuPy arrays as NumPy arrays and NumPy scalars as 0-d arrays (CuPy's reductions give
    0-d arrays where NumPy's give scalars), in the same containers."""
    if isinstance(value, (list, tuple)):
        return type(value)(_host(v, cupy) for v in value)
    if isinstance(value, dict):
        return {k: _host(v, cupy) for k, v in value.items()}
    if isinstance(value, cupy.ndarray):
        return cupy.asnumpy(value)
    return np.asarray(value) if isinstance(value, np.generic) else value


def _kinds(value, cupy):
    """Which leaves of a result are CuPy arrays."""
    if isinstance(value, (list, tuple)):
        return [_kinds(v, cupy) for v in value]
    if isinstance(value, dict):
        return {k: _kinds(v, cupy) for k, v in value.items()}
    return isinstance(value, cupy.ndarray)


def _run(fn, args, n, buf):
    """(result, exception, printed text) of fn(*args, n)."""
    buf.seek(0), buf.truncate()
    result = error = None
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = fn(*args, n)
        except Exception as e:   # noqa: BLE001  compared, not hidden
            error = e
    return result, error, buf.getvalue()


def check_call(compiled, f, cupy, hosts, layout, n, buf) -> None:
    """One call in `layout` (a LAYOUTS name) of hosts (NumPy arrays, one object twice for x is y)."""
    def made(xp):
        made = {}
        return [made.setdefault(id(h), LAYOUTS[layout](h, xp)) for h in hosts]
    np_args, cp_args, nc_args = made(np), made(cupy), made(cupy)
    want, want_error, _ = _run(f, np_args, n, buf)
    eager, eager_error, eager_out = _run(f, cp_args, n, buf)
    got, got_error, got_out = _run(compiled, nc_args, n, buf)
    if layout == "broadcast" and want_error is not None:
        return   # NumPy refuses to write into a broadcast view; CuPy's writes into one race
    if got_error is not None:
        raised = [type(e) for e in (want_error, eager_error) if e is not None]
        if type(got_error) not in raised:
            raise Failure(f"numpile raised {type(got_error).__name__}: {got_error}; NumPy "
                          f"{_outcome(want_error)}, CuPy eager {_outcome(eager_error)}") from got_error
        return
    if want_error is not None and eager_error is not None:
        raise Failure(f"numpile returned; NumPy {_outcome(want_error)}, CuPy eager {_outcome(eager_error)}")
    try:
        if want_error is None:
            assert_same(_host(got, cupy), _host(want, cupy), "result against NumPy")
            for i, (g, w) in enumerate(zip(nc_args, np_args)):
                assert_same(_host(g, cupy), w, f"argument {i} afterwards against NumPy")
        if eager_error is None:
            assert _kinds(got, cupy) == _kinds(eager, cupy), \
                f"CuPy arrays among the results {_kinds(got, cupy)}, CuPy eager {_kinds(eager, cupy)}"
            if want_error is not None or _agree(eager, want, cp_args, np_args, cupy):
                assert_same(_host(got, cupy), _host(eager, cupy), "result against CuPy eager")
                assert got_out == eager_out, f"printed {got_out!r}, CuPy eager {eager_out!r}"
    except AssertionError as e:
        raise Failure(str(e)) from None


def _agree(eager, want, cp_args, np_args, cupy) -> bool:
    """Whether CuPy eager did what NumPy did: where they differ (iterating over a CuPy array gives
    0-d views where NumPy gives scalars, so `for v in x: v *= 2` writes into x) NumPy is the oracle."""
    try:
        assert_same(_host(eager, cupy), _host(want, cupy))
        for e, w in zip(cp_args, np_args):
            assert_same(_host(e, cupy), w)
    except AssertionError:
        return False
    return True


def _outcome(error) -> str:
    return "returned" if error is None else f"raised {type(error).__name__}: {error}"


def calls(inputs: Inputs):
    """(label, layout, shape, x is y) of each call of one program."""
    shape = inputs.shape
    for layout in LAYOUTS:
        yield layout, layout, shape, False
    yield "empty", "C", (0,) + shape[1:], False
    yield "0-d", "C", (), False
    yield "x is y", "T", shape, True


def check_program(source: str, inputs: Inputs, cupy, log) -> int:
    """Every call of one program; returns how many failed."""
    f = make_function(source)
    numpile.reset()
    compiled = numpile.compile(f, backend="triton")
    rng = np.random.default_rng(inputs.seed)
    failed = 0
    for label, layout, shape, same in calls(inputs):
        x = rng.standard_normal(shape) + 0.1
        hosts = [x, x] if same else [x, rng.standard_normal(shape) + 0.1]
        try:
            check_call(compiled, f, cupy, hosts, layout, inputs.n1, f.__globals__["_buf"])
        except Failure as e:
            failed += 1
            log({"call": label, "layout": layout, "shape": shape, "n": inputs.n1, "seed": inputs.seed,
                 "message": str(e)[:2000], "source": source})
    return failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", help="write each failure here as a JSON line")
    args = parser.parse_args(argv)
    import cupy
    numpile.config.safety_net = False
    stop_at = time.monotonic() + args.minutes * 60
    counts = {"programs": 0, "calls": 0, "failed calls": 0}
    out = open(args.log, "w") if args.log else None   # noqa: SIM115  closed below

    def log(record):
        print(f"FAIL {record['call']} (n={record['n']}, seed {record['seed']}): {record['message']}\n"
              f"{record['source']}", flush=True)
        if out:
            out.write(json.dumps(record) + "\n")
            out.flush()

    def batch(batch_seed):
        @hypothesis_seed(batch_seed)
        @settings(max_examples=BATCH, database=None, deadline=None, phases=[Phase.generate],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
        @given(programs())
        def one(program):
            if time.monotonic() > stop_at:
                return
            source, inputs = program
            counts["programs"] += 1
            counts["calls"] += sum(1 for _ in calls(inputs))
            counts["failed calls"] += check_program(source, inputs, cupy, log)
        one()

    while time.monotonic() < stop_at:
        batch(args.seed + counts["programs"])
        print(f"[{args.minutes * 60 - (stop_at - time.monotonic()):.0f} s] {counts}", flush=True)
    if out:
        out.close()
    print(", ".join(f"{v} {k}" for k, v in counts.items()))
    return 1 if counts["failed calls"] else 0


if __name__ == "__main__":
    sys.exit(main())
