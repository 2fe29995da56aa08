"""NumPy code written by others, used as written (issue 32): ../shared/corpora/numpy-benchmarks.

    python benchmarks/external.py [--only NAME ...] [--no-numba] [--corpus DIR]

Each file of the corpus (32 kernels of serge-sans-paille/numpy-benchmarks, unmodified, read in
place) carries its own set-up and call as comments (`#setup: ...`, `#run: kernel(args)`). Per
kernel, in one process: the set-up runs once; the call's function runs plain (NumPy), wrapped by
numpile (backend "llvm", the object-code cache empty at the start) and wrapped by `numba.njit`
(which rejects some kernels: the cell says why). Every call gets fresh copies of the arguments;
results and the arguments afterwards are compared with NumPy's (kernels update their inputs). Then
the graphs and breaks `numpile.explain` reports, first-call times and the median time of each tool
(three rounds, the tools taking turns), as in benchmarks/corpus.py, whose runner this reuses.

numpile runs twice: with its safety net off (the compiler's own speed, the column "numpile") and
on (`numpile.config.safety_net`, its default: an entry slower than Python runs as Python after a
few timed calls; the column "net on"). Without the corpus folder (a checkout without ../shared) the run says so and stops.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import importlib.util
import platform
import sys
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from host import cpu_name

import numpile
from numpile import safety_net

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent.parent / "shared" / "corpora" / "numpy-benchmarks"


def load_runner():
    """benchmarks/corpus.py by path: `import corpus` finds the folder benchmarks/corpus first."""
    spec = importlib.util.spec_from_file_location("bench_corpus_runner", HERE / "corpus.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


runner = load_runner()


@dataclass
class Kernel:
    """One file of the corpus: its module, the function the `#run:` line calls and its arguments
    (expressions evaluated in the `#setup:` line's namespace)."""
    name: str
    fn: object
    args: tuple
    check: object = runner.mismatch   # check(got, want): where they differ, or None

    def fresh(self) -> list:
        return copy.deepcopy(list(self.args))


def comment(text: str, key: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith(f"#{key}:"))


def load_kernel(path: Path) -> Kernel:
    text = path.read_text()
    spec = importlib.util.spec_from_file_location(f"numpy_benchmarks_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    namespace: dict = {}
    exec(comment(text, "setup"), namespace)
    call = ast.parse(comment(text, "run"), mode="eval").body
    value = lambda node: eval(compile(ast.Expression(node), str(path), "eval"), namespace)  # noqa: E731
    args = []
    for a in call.args:     # `f(y, *args)` passes the elements of args
        args.extend(value(a.value) if isinstance(a, ast.Starred) else [value(a)])
    return Kernel(path.stem, getattr(module, call.func.id), tuple(args))


@dataclass
class Row:
    kernel: Kernel
    numpy: object
    numpile: object
    net: object                      # numpile with the safety net on
    numba: object
    graphs: object = "-"
    breaks: object = "-"
    notes: tuple = ()


def explain(kernel: Kernel, limit: float) -> tuple:
    try:
        with runner.time_limit(limit):
            report = numpile.explain(kernel.fn)(*kernel.fresh())
    except runner.OverTime:
        return f">{limit:g}s", "-", ()
    except Exception as e:
        return "error", "-", (f"explain: {runner.short(e)}",)
    reasons = tuple(dict.fromkeys(b.reason.splitlines()[0] for b in report.break_reasons))
    return report.graph_count, report.graph_break_count, reasons


def settle(net, kernel: Kernel, limit: float, calls: int = 2 * safety_net.MAX_PAIRS + safety_net.WARMUP) -> None:
    """Calls of numpile with the safety net on until its trials are over (as a user's first calls
    would be), within `limit` seconds: the timed calls show the verdict."""
    if net.first is None:
        return
    with contextlib.suppress(runner.OverTime, Exception), runner.time_limit(limit):
        for _ in range(calls):
            if not net.fn.trials:
                break
            net.fn(*kernel.fresh())


def run_kernel(kernel: Kernel, numba: bool, budget: float, limit: float) -> Row:
    args = kernel.fresh()
    reference = (kernel.fn(*args), args)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = runner.first_call(numpile.compile(kernel.fn, backend="llvm"), kernel.fresh, reference, limit, kernel.check)
        numpile.config.safety_net = True    # read as an entry is made: this one's is on trial
        net = runner.first_call(numpile.compile(kernel.fn, backend="llvm"), kernel.fresh, reference, limit, kernel.check)
        numpile.config.safety_net = False
        settle(net, kernel, limit)
        graphs, breaks, notes = explain(kernel, limit)
        jitted = runner.first_call(sys.modules["numba"].njit(kernel.fn), kernel.fresh, reference, limit, kernel.check) if numba else None
        row = Row(kernel, runner.Outcome(kernel.fn, correct=True), compiled, net, jitted, graphs, breaks, notes)
        runner.time_rounds([row.numpy, *(t for t in (compiled, net, jitted) if t is not None and t.first is not None)],
                           kernel.fresh, budget, limit)
    numpile.reset()
    row.notes += tuple(dict.fromkeys(str(w.message).splitlines()[0] for w in caught if "numpile" in str(w.message)))
    return row


def report(rows: list, numba: bool) -> None:
    seconds, speedup, check = runner.seconds_text, runner.speedup, runner.check
    print("| kernel | graphs | breaks | numpile | Numba | NumPy | numpile speed-up | net on | Numba speed-up "
          "| numpile 1st call | Numba 1st call |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r.kernel.name} | {r.graphs} | {r.breaks} | {check(r.numpile)} | {check(r.numba)} "
              f"| {seconds(r.numpy.seconds)} | {speedup(r, r.numpile)} | {speedup(r, r.net)} | {speedup(r, r.numba)} "
              f"| {seconds(r.numpile.first)} | {seconds(r.numba and r.numba.first)} |")
    geomean = runner.geomean
    ran = [r for r in rows if r.numpile.correct and r.numpile.seconds]
    print(f"\nnumpile: {len(ran)} of {len(rows)} correct, geometric mean over those "
          f"{geomean(r.numpy.seconds / r.numpile.seconds for r in ran):.2f}x NumPy (safety net off)")
    net = [r for r in rows if r.net.correct and r.net.seconds]
    print(f"numpile with the safety net on: {len(net)} of {len(rows)} correct, geometric mean "
          f"{geomean(r.numpy.seconds / r.net.seconds for r in net):.2f}x NumPy, below 0.95x NumPy: "
          f"{sum(r.net.seconds > r.numpy.seconds / 0.95 for r in net)}")
    if numba:
        both = [r for r in ran if r.numba.correct and r.numba.seconds]
        print(f"Numba: compiles and matches {len(both)} of {len(rows)}; over those, numpile "
              f"{geomean(r.numpy.seconds / r.numpile.seconds for r in both):.2f}x and Numba "
              f"{geomean(r.numpy.seconds / r.numba.seconds for r in both):.2f}x NumPy; numpile ahead on "
              f"{sum(r.numpile.seconds < r.numba.seconds for r in both)}")
    slower = [f"{r.kernel.name} {speedup(r, r.numpile)}" for r in ran if r.numpile.seconds > r.numpy.seconds / 0.95]
    print(f"numpile below 0.95x NumPy: {len(slower)} ({', '.join(slower)})")
    print(f"Captured whole (one graph, no break): {sum(r.graphs == 1 and r.breaks == 0 for r in rows)} of {len(rows)}")
    notes = [f"- {r.kernel.name}: {line}" for r in rows
             for line in (*r.notes, *(f"{name}: {o.error}" for name, o in (("numpile", r.numpile), ("net on", r.net),
                                                                            ("Numba", r.numba))
                                      if o is not None and o.error))]
    if notes:
        print("\nBreak reasons (numpile.explain) and notes:", *notes, sep="\n")


def arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options every runner of public code shares (this one, benchmarks/npbench.py)."""
    parser.add_argument("--only", nargs="*", help="kernel names to run")
    parser.add_argument("--no-numba", action="store_true", help="leave Numba out")
    parser.add_argument("--budget", type=float, default=0.3, help="seconds of timed calls per tool and kernel")
    parser.add_argument("--limit", type=float, default=20.0,
                        help="seconds a first call or a timing may take before it is cut off")
    return parser


def run_all(title: str, kernels, args) -> None:
    """Each kernel (name, a function making its Kernel) run with NumPy, numpile and Numba; the table."""
    numba = not args.no_numba
    if numba:
        import numba  # noqa: F401  (a missing Numba stops the run here, not at the first kernel)
    numpile.config.cache_dir = Path(tempfile.mkdtemp(prefix="numpile-external-"))   # first calls compile
    numpile.config.safety_net = False
    print(f"# {title}, as written: numpile {numpile.__version__} (llvm), "
          f"{'Numba ' + sys.modules['numba'].__version__ if numba else 'no Numba'}, NumPy {np.__version__}, "
          f"Python {platform.python_version()}; {cpu_name()}\n", flush=True)
    rows = []
    for name, make in kernels:
        if args.only and name not in args.only:
            continue
        rows.append(run_kernel(make(), numba, args.budget, args.limit))
        print(f"{name}: done", file=sys.stderr, flush=True)
    report(rows, numba)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the numpy-benchmarks folder")
    args = arguments(parser).parse_args(argv)
    if not args.corpus.is_dir():
        print(f"{args.corpus} is not here (it lies beside the project, in ../shared): nothing to run")
        return
    paths = sorted(args.corpus.glob("*.py"))
    run_all(f"numpy-benchmarks ({args.corpus})", [(p.stem, lambda p=p: load_kernel(p)) for p in paths], args)


if __name__ == "__main__":
    main()
