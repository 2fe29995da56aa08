"""The kernel corpus (issue 16): scientific NumPy programs compiled by numpile and by Numba, against NumPy.

    python benchmarks/corpus.py [--size small|large] [--only NAME ...] [--no-numba] [--limit SECONDS]

The kernels (benchmarks/corpus/: PolyBench's linear-algebra, solver, data-mining, medley and stencil
kernels in NumPy, physics time steppers, deep-learning inference) are written as NumPy users write
them, with loops over time steps, rows and pivots. Each runs in one process: eagerly in NumPy,
compiled by numpile (backend "llvm", the object-code cache empty at the start) and as the loop
version written for it, compiled by Numba (`@njit`, one thread). Per kernel: the graphs, breaks and
ops (in all graphs: an unrolled loop repeats its body's) that `numpile.explain` reports; whether
numpile's and Numba's results match NumPy's (the returned values and every argument afterwards:
kernels update their inputs in place, so every call gets fresh copies); the median time of each
(three rounds, the tools taking turns) and its speed-up over NumPy; first-call times (numpile's
trace and compile, Numba's compile). A tool that fails, or whose first call takes more than
--limit seconds, says so in its cell and the run goes on. The geometric means are over the
kernels every tool shown ran correctly. (The functions of tests/corpus that numpile captures whole,
timed against NumPy: benchmarks/tests_corpus.py.)
"""


from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import math
import platform
import signal
import statistics
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from host import cpu_name

import numpile

KERNELS_DIR = Path(__file__).resolve().parent / "corpus"


def load_kernels() -> list:
    """benchmarks/corpus/'s table, imported by path under a name of its own: `import corpus` would
    find this module or the folder depending on sys.path."""
    spec = importlib.util.spec_from_file_location("numpile_kernel_corpus", KERNELS_DIR / "__init__.py",
                                                  submodule_search_locations=[str(KERNELS_DIR)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module     # the families' relative imports look their package up here
    spec.loader.exec_module(module)
    return module.KERNELS


# -- comparing ---------------------------------------------------------------------------------------
def mismatch(got, want, path="result") -> str | None:
    """Where got differs from want (arrays, scalars, tuples, None), or None when they agree: floats
    within a tolerance of their precision (relative, and absolute against the largest value), the
    rest exactly."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"{path}: {type(got).__name__} instead of {len(want)} values"
        return next((m for i, (g, w) in enumerate(zip(got, want)) if (m := mismatch(g, w, f"{path}[{i}]"))), None)
    if not isinstance(want, (np.ndarray, np.generic)):    # None, and the Python scalars passed in
        return None if got == want else f"{path}: {got!r} != {want!r}"
    want, got = np.asarray(want), np.asarray(got)
    if got.shape != want.shape:
        return f"{path}: shape {got.shape} != {want.shape}"
    if want.dtype.kind in "fc":
        rtol = 1e-4 if np.finfo(want.dtype).bits <= 32 else 1e-8
        scale = float(np.nanmax(np.abs(want))) if want.size else 0.0
        ok = np.allclose(got, want, rtol=rtol, atol=rtol * scale, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    if ok:
        return None
    err = np.nanmax(np.abs(got.astype(float) - want.astype(float))) if want.size else 0.0
    return f"{path}: off by up to {err:.3g}"


# -- running one tool ------------------------------------------------------------------------------
class OverTime(BaseException):
    """Raised into a call that ran past --limit (a BaseException, so no `except Exception` in the
    traced program or in numpile swallows it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Interrupt the block after `seconds` (where the platform has interval timers), and again every
    half second after that: an exception raised where Python ignores it (a `__del__`) is lost."""
    if not hasattr(signal, "setitimer"):
        yield
        return
    def interrupt(signum, frame):
        raise OverTime
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.5)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Outcome:
    """What one tool did with one kernel."""
    fn: object
    first: float | None = None       # the first call (compile included)
    error: str | None = None         # why it has no time, or where its results differ from NumPy's
    correct: bool = False
    times: list = field(default_factory=list)

    @property
    def seconds(self) -> float | None:
        return statistics.median(self.times) if self.times else None


def short(e: BaseException) -> str:
    text = (str(e).splitlines() or [""])[0]
    return f"{type(e).__name__}: {text[:70]}"


def first_call(fn, fresh, reference, limit: float, check=mismatch) -> Outcome:
    """Call fn once, timed (its compile included) and cut off after `limit` seconds; check its
    result and its arguments afterwards against NumPy's (`check(got, want)`: mismatch's rule)."""
    out = Outcome(fn)
    args = fresh()
    try:
        with time_limit(limit):
            t0 = time.perf_counter()
            result = fn(*args)
            out.first = time.perf_counter() - t0
    except OverTime:
        out.error = f"over {limit:g} s"
        return out
    except Exception as e:
        out.error = short(e)
        return out
    out.error = check((result, args), reference)
    out.correct = out.error is None
    return out


def time_rounds(tools: list, fresh, budget: float, limit: float, rounds: int = 3) -> None:
    """Calls of each tool on fresh copies of the arguments, for about budget/rounds seconds a round
    and at least one call, the tools taking turns round by round so that a busy spell of the
    machine falls on all of them."""
    running = list(tools)
    for _ in range(rounds):
        for out in list(running):
            start, calls = time.perf_counter(), 0
            try:
                with time_limit(limit):
                    while calls == 0 or time.perf_counter() - start < budget / rounds:
                        args = fresh()
                        t0 = time.perf_counter()
                        out.fn(*args)
                        out.times.append(time.perf_counter() - t0)
                        calls += 1
            except OverTime:
                out.error = out.error or f"calls over {limit:g} s"
                running.remove(out)
            except Exception as e:
                out.error = out.error or short(e)
                running.remove(out)


# -- one kernel --------------------------------------------------------------------------------------
@dataclass
class Row:
    kernel: object
    numpy: Outcome
    numpile: Outcome
    numba: Outcome | None
    graphs: int | str = "-"
    breaks: int | str = "-"
    ops: int | str = "-"              # ops in all graphs: an unrolled loop repeats its body's
    notes: list = field(default_factory=list)


def explain(kernel, fresh, limit: float) -> tuple:
    """(graphs, breaks, ops, notes) as numpile.explain reports them; on the eager backend, since
    what is captured does not depend on the backend."""
    try:
        with time_limit(limit):
            report = numpile.explain(kernel.numpy)(*fresh())
    except OverTime:
        return (f">{limit:g}s",) * 3 + ([],)
    except Exception as e:
        return ("error",) * 3 + ([f"explain: {short(e)}"],)
    reasons = list(dict.fromkeys(b.reason.splitlines()[0] for b in report.break_reasons))
    return report.graph_count, report.graph_break_count, sum(map(len, report.ops_per_graph)), reasons


def run_kernel(kernel, size: str, numba: bool, budget: float, limit: float) -> Row:
    template = kernel.args(size, np.random.default_rng(0))
    fresh = lambda: copy.deepcopy(template)  # noqa: E731  (the same values each call)
    args = fresh()
    reference = (kernel.numpy(*args), args)
    with warnings.catch_warnings(record=True) as caught:   # numpile's (a cache limit reached) become notes
        warnings.simplefilter("always")
        compiled = first_call(numpile.compile(kernel.numpy, backend="llvm"), fresh, reference, limit)
        graphs, breaks, ops, notes = explain(kernel, fresh, limit)
        # a dispatcher of its own: a loop version that another kernel calls was compiled there already
        loops = first_call(sys.modules["numba"].njit(kernel.loops.py_func), fresh, reference, limit) if numba else None
        row = Row(kernel, Outcome(kernel.numpy, correct=True), compiled, loops, graphs, breaks, ops, notes)
        time_rounds([row.numpy, *(t for t in (compiled, loops) if t is not None and t.first is not None)],
                    fresh, budget, limit)
    numpile.reset()
    row.notes += dict.fromkeys(str(w.message).splitlines()[0] for w in caught if "numpile" in str(w.message))
    return row


# -- the table ---------------------------------------------------------------------------------------
def speedup(row: Row, out: Outcome | None) -> str:
    if out is None:
        return ""
    return f"{row.numpy.seconds / out.seconds:.2f}x" if out.seconds else out.error or ""


def check(out: Outcome | None) -> str:
    if out is None:
        return ""
    return "ok" if out.correct else "wrong" if out.first is not None else "-"


def seconds_text(t: float | None) -> str:
    if t is None:
        return ""
    return f"{t:.2f} s" if t >= 0.1 else f"{t * 1e3:.2f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} µs"


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")


def report(rows: list, numba: bool) -> None:
    print("| kernel | family | graphs | breaks | ops | numpile | Numba | NumPy | numpile speed-up | Numba speed-up "
          "| numpile 1st call | Numba 1st call |")
    print("|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.kernel.name} | {r.kernel.numpy.__module__.rsplit('.', 1)[-1]} | {r.graphs} | {r.breaks} | {r.ops} "
              f"| {check(r.numpile)} | {check(r.numba)} | {seconds_text(r.numpy.seconds)} | {speedup(r, r.numpile)} "
              f"| {speedup(r, r.numba)} | {seconds_text(r.numpile.first)} | {seconds_text(r.numba and r.numba.first)} |")
    tools = {"numpile": lambda r: r.numpile, **({"Numba": lambda r: r.numba} if numba else {})}
    common = [r for r in rows if all(t(r).correct and t(r).seconds for t in tools.values())]
    means = ", ".join(f"{name} {geomean(r.numpy.seconds / t(r).seconds for r in common):.2f}x" for name, t in tools.items())
    print(f"\nGeometric mean speed-up over NumPy, over the {len(common)} kernels every tool ran correctly: {means}")
    for name, t in tools.items():
        ran = [r for r in rows if t(r).correct and t(r).seconds]
        wrong = sum(t(r).first is not None and not t(r).correct for r in rows)
        print(f"{name}: {len(ran)} of {len(rows)} correct ({wrong} wrong, {len(rows) - len(ran) - wrong} without a "
              f"result), geometric mean over those {geomean(r.numpy.seconds / t(r).seconds for r in ran):.2f}x")
    print(f"Captured whole (one graph, no break): {sum(r.graphs == 1 and r.breaks == 0 for r in rows)} of {len(rows)}")
    slower = [r.kernel.name for r in rows if r.numpile.seconds and r.numpile.seconds > r.numpy.seconds]
    print(f"numpile slower than NumPy: {len(slower)} ({', '.join(slower)})")
    print(f"numpile first call under 1 s: {sum(r.numpile.first is not None and r.numpile.first < 1 for r in rows)} "
          f"of {len(rows)}")
    notes = [f"- {r.kernel.name}: {line}" for r in rows
             for line in r.notes + [f"{name}: {t(r).error}" for name, t in tools.items() if t(r).error]]
    if notes:
        print("\nBreak reasons (numpile.explain) and notes:", *notes, sep="\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", choices=["small", "large"], default="small")
    parser.add_argument("--only", nargs="*", help="kernel names to run")
    parser.add_argument("--no-numba", action="store_true", help="leave Numba out")
    parser.add_argument("--budget", type=float, default=0.3, help="seconds of timed calls per tool and kernel")
    parser.add_argument("--limit", type=float, default=10.0,
                        help="seconds a trace, a first call or a timing may take before it is cut off")
    args = parser.parse_args(argv)
    kernels = [k for k in load_kernels() if not args.only or k.name in args.only]
    numba = not args.no_numba and all(hasattr(k.loops, "py_func") for k in kernels)   # py_func: a Numba dispatcher
    numpile.config.cache_dir = Path(tempfile.mkdtemp(prefix="numpile-corpus-"))   # first calls compile
    numpile.config.safety_net = False   # the compiler's own speed
    print(f"# kernel corpus, size {args.size}: numpile {numpile.__version__} (llvm), "
          f"{'Numba ' + sys.modules['numba'].__version__ if numba else 'no Numba'}, NumPy {np.__version__}, "
          f"Python {platform.python_version()}; {cpu_name()}\n", flush=True)
    rows = []
    for kernel in kernels:
        rows.append(run_kernel(kernel, args.size, numba, args.budget, args.limit))
        print(f"{kernel.name}: done", file=sys.stderr, flush=True)
    report(rows, numba)


if __name__ == "__main__":
    main()
