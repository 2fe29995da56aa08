"""NPBench's NumPy programs called with CuPy arrays, as a new GPU user would (issue 30): CuPy eager (the
`_numpy.py` kernel as written, on CuPy arrays) against numpile (default backend: "triton" for CuPy
inputs) and NPBench's own JAX ports under `jax.jit`, on the same card.

    python benchmarks/gpu_npbench.py --root DIR [--size S|M|L|paper] [--only NAME ...] [--repeat N] [--limit S]

NPBench (github.com/spcl/npbench, BSD 3-clause licence) is not part of this repository: give a checkout
as --root. Per program: the data is made as NPBench makes it (benchmarks/npbench.py's `kernel`), its
arrays moved to the device; CuPy eager is the kernel called on them (where it raises, the program is
listed apart with the reason), numpile is `numpile.compile(kernel)` called on them, JAX is the
program's `_jax.py` port as NPBench's jax framework runs it (x64 on, arrays made by `jnp.array`, the
port's own `jax.jit`, `jax.block_until_ready`). Each is checked against NumPy's results: CuPy eager and
numpile on the returned values and every argument afterwards (npbench.py's check: the runner's
tolerance, else NPBench's validation of that program), JAX as NPBench validates it (the values it
returns against NumPy's returned values and `output_args`, pairwise, as NPBench zips them: a port that returns its values in
another order than `output_args` lists them fails there too). Every call gets fresh device copies of the
array arguments. Columns: correct?, the first call (numpile's trace and compile, JAX's trace and
compile; numpile's object-code cache empty at the start), the median of --repeat device-synchronised
calls, and the speed-up over CuPy eager. A program stops at --limit seconds (its unfinished cells say
so). The geometric means are over the programs each tool ran correctly, and over those all three did.

Without CuPy (`--arrays numpy`, for trying the script on a machine without a GPU, e.g. under
TRITON_INTERPRET=1 with `--backend triton`) the arrays stay NumPy arrays and "CuPy eager" is NumPy.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")   # JAX shares the card with CuPy

import numpy as np

import npbench
from external import runner

import numpile


# -- where the arrays live ----------------------------------------------------------------------------
class Arrays:
    """The array module the programs are called with: moving values there and back, and waiting for
    its queued work."""

    def __init__(self, kind: str):
        self.kind = kind
        self.xp = __import__("cupy") if kind == "cupy" else np

    def card(self) -> str:
        if self.kind != "cupy":
            return f"no GPU: NumPy arrays ({platform.processor() or platform.machine()})"
        cp = self.xp
        return f"{cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cp.__version__}"

    def to_device(self, value):
        if isinstance(value, np.ndarray):
            return self.xp.asarray(value) if self.kind == "cupy" else value.copy()
        return value

    def fresh(self, template: list) -> list:
        """Copies of the array arguments (the programs update some in place), made on the device."""
        return [a.copy() if isinstance(a, self.xp.ndarray) else a for a in template]

    def to_host(self, value):
        if isinstance(value, (tuple, list)):
            return type(value)(self.to_host(v) for v in value)
        if self.kind == "cupy" and isinstance(value, self.xp.ndarray):
            return self.xp.asnumpy(value)
        return value

    def synchronize(self) -> None:
        if self.kind == "cupy":
            self.xp.cuda.Device().synchronize()


class Jax:
    """NPBench's jax framework: x64 on, array arguments made by `jnp.array`, the port called as its
    module defines it (with its own `jax.jit`), the result waited for with `jax.block_until_ready`."""

    def __init__(self):
        import jax
        jax.config.update("jax_enable_x64", True)
        self.jax, self.jnp = jax, jax.numpy

    def port(self, root: Path, info: dict):
        folder = root / "npbench" / "benchmarks" / info["relative_path"]
        path = folder / f"{info['module_name']}_jax.py"
        if not path.exists():
            return None
        return getattr(npbench.load_module(path, f"npbench_jax_{info['short_name']}"), info["func_name"])

    def arguments(self, args: list) -> list:
        return [self.jnp.array(a) if isinstance(a, np.ndarray) else a for a in args]

    def call(self, fn, args):
        return self.jax.block_until_ready(fn(*args))


# -- one program ------------------------------------------------------------------------------------
@dataclass
class Tool:
    """What one tool did with one program."""
    first: float | None = None
    times: list = field(default_factory=list)
    error: str | None = None          # why there is no result, or where it differs from NumPy's
    correct: bool = False

    @property
    def seconds(self) -> float | None:
        return statistics.median(self.times) if self.times else None


@dataclass
class Row:
    name: str
    cupy: Tool
    numpile: Tool
    jax: Tool | None


def first_call(tool: Tool, call, check) -> object:
    """The first call, timed to its end on the device; its result checked (`check(result)`: where it
    differs from NumPy's, or None)."""
    try:
        start = time.perf_counter()
        result = call()
        tool.first = time.perf_counter() - start
    except runner.OverTime:
        tool.error = "first call over the time limit"
        raise
    except Exception as e:
        tool.error = runner.short(e)
        print(f"  {''.join(traceback.format_exception(e, limit=-4))[-1500:]}", file=sys.stderr, flush=True)
        return None
    tool.error = check(result)
    tool.correct = tool.error is None
    return result


def timed(tool: Tool, call, prepare, repeat: int, budget: float) -> None:
    """Up to `repeat` calls, each on fresh arguments (`prepare()`, not timed) and waited for, within
    `budget` seconds."""
    start = time.perf_counter()
    try:
        while len(tool.times) < repeat and (not tool.times or time.perf_counter() - start < budget):
            args = prepare()
            t0 = time.perf_counter()
            call(args)
            tool.times.append(time.perf_counter() - t0)
    except runner.OverTime:
        tool.error = tool.error or f"timed calls cut off after {len(tool.times)}"
        raise
    except Exception as e:
        tool.error = tool.error or runner.short(e)


def run_program(row: Row, info: dict, options, arrays: Arrays, jax: Jax | None) -> None:
    """Fills `row`; a stage cut off by the time limit ends the program (runner.OverTime)."""
    kernel = npbench.kernel(options.root, info, options.size)
    numpy_args = kernel.fresh()
    want = (kernel.fn(*numpy_args), numpy_args)
    template = [arrays.to_device(a) for a in kernel.args]
    arrays.synchronize()

    def on(fn):   # a call on fresh device arguments, waited for; its results and arguments on the host
        def call(args=None):
            args = arrays.fresh(template) if args is None else args
            result = fn(*args)
            arrays.synchronize()
            return result, args
        return call

    def check(result):
        return kernel.check(arrays.to_host(result), want)

    deadline = time.perf_counter() + options.limit
    left = lambda: max(deadline - time.perf_counter(), 0.1)   # noqa: E731
    with runner.time_limit(left()):
        first_call(row.cupy, on(kernel.fn), check)
        if row.cupy.first is None:      # CuPy eager cannot run the program as written: not compared
            return
        compiled = numpile.compile(kernel.fn, **({"backend": options.backend} if options.backend else {}))
        first_call(row.numpile, on(compiled), check)
    try:
        port = jax.port(options.root, info) if jax else None
    except Exception as e:
        row.jax, port = Tool(error=f"the port does not load: {runner.short(e)}"), None
    if port is not None:
        row.jax = Tool()
        jax_args = jax.arguments(list(kernel.args))
        expected = list(want[0]) if isinstance(want[0], (tuple, list)) else [] if want[0] is None else [want[0]]
        arg_names = info["input_args"]
        expected += [want[1][arg_names.index(a)] for a in info.get("output_args", [])]
        close = npbench.validates(info)

        def jax_check(result):   # NPBench's validation: NumPy's values against the port's and its
            values = list(result) if isinstance(result, (tuple, list)) else [] if result is None else [result]
            values += [jax_args[arg_names.index(a)] for a in info.get("output_args", [])]   # output_args, in order
            bad = [i for i, (w, v) in enumerate(zip(expected, values)) if not close(np.asarray(v), w)]
            return f"value {bad[0]} differs" if bad else None
        with runner.time_limit(left()):
            first_call(row.jax, lambda: jax.call(port, jax_args), jax_check)
    budget = max(left() / 4, 0.5)
    with runner.time_limit(left()):
        timed(row.cupy, on(kernel.fn), lambda: arrays.fresh(template), options.repeat, budget)
        if row.numpile.first is not None:
            timed(row.numpile, on(compiled), lambda: arrays.fresh(template), options.repeat, budget)
        if row.jax is not None and row.jax.first is not None:
            timed(row.jax, lambda args: jax.call(port, args), lambda: jax_args, options.repeat, budget)


# -- the table --------------------------------------------------------------------------------------
def ms(t: float | None) -> str:
    return "" if t is None else f"{t * 1e3:.3f}"


def verdict(tool: Tool | None) -> str:
    if tool is None:
        return "no port"
    return "yes" if tool.correct else "WRONG" if tool.first is not None else "fails"


def ratio(row: Row, tool: Tool | None) -> str:
    if tool is None or not tool.seconds or not row.cupy.seconds:
        return ""
    return f"{row.cupy.seconds / tool.seconds:.2f}x"


def report(rows: list, card: str) -> None:
    compared = [r for r in rows if r.cupy.first is not None]
    print(f"\n| program | CuPy eager | numpile | JAX | numpile 1st s | JAX 1st s | CuPy ms | numpile ms | JAX ms "
          f"| numpile vs CuPy | JAX vs CuPy |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in compared:
        first = lambda t: "" if t is None or t.first is None else f"{t.first:.2f}"   # noqa: E731
        print(f"| {r.name} | {verdict(r.cupy)} | {verdict(r.numpile)} | {verdict(r.jax)} | {first(r.numpile)} "
              f"| {first(r.jax)} | {ms(r.cupy.seconds)} | {ms(r.numpile.seconds)} | {ms(r.jax and r.jax.seconds)} "
              f"| {ratio(r, r.numpile)} | {ratio(r, r.jax)} |")
    good = lambda t: t is not None and t.correct and t.seconds   # noqa: E731
    speed = lambda r, t: r.cupy.seconds / t.seconds   # noqa: E731
    geomean = runner.geomean
    print(f"\ncard: {card}")
    tools = (("numpile", lambda r: r.numpile),) + ((("JAX", lambda r: r.jax),) if any(r.jax for r in rows) else ())
    for name, pick in tools:
        ran = [r for r in compared if good(pick(r))]
        print(f"{name}: {len(ran)} of {len(compared)} correct, geometric mean "
              f"{geomean(speed(r, pick(r)) for r in ran):.2f}x CuPy eager, below 0.95x: "
              f"{sum(speed(r, pick(r)) < 0.95 for r in ran)}; first calls median "
              f"{statistics.median([pick(r).first for r in ran]) if ran else float('nan'):.2f} s")
    both = [r for r in compared if good(r.numpile) and good(r.jax)]
    print(f"over the {len(both)} programs both ran correctly: numpile "
          f"{geomean(speed(r, r.numpile) for r in both):.2f}x, JAX {geomean(speed(r, r.jax) for r in both):.2f}x "
          f"CuPy eager; numpile ahead of JAX on {sum(r.numpile.seconds < r.jax.seconds for r in both)}")
    notes = [f"- {r.name}: {name}: {t.error}" for r in compared
             for name, t in (("numpile", r.numpile), ("JAX", r.jax), ("CuPy eager", r.cupy)) if t and t.error]
    if notes:
        print("\nnotes:", *notes, sep="\n")
    apart = [f"- {r.name}: {r.cupy.error}" for r in rows if r.cupy.first is None]
    if apart:
        print(f"\nCuPy eager fails ({len(apart)} programs, not compared):", *apart, sep="\n")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, required=True, help="a checkout of github.com/spcl/npbench")
    parser.add_argument("--size", default="S", help="NPBench's size preset (S, M, L, paper)")
    parser.add_argument("--only", nargs="*", help="program short names to run")
    parser.add_argument("--repeat", type=int, default=10, help="timed calls per tool")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds a program may take in all")
    parser.add_argument("--arrays", choices=["cupy", "numpy"], default="cupy")
    parser.add_argument("--backend", help="numpile's backend (default: numpile's choice for the arrays)")
    parser.add_argument("--no-jax", action="store_true", help="leave JAX out")
    options = parser.parse_args(argv)
    arrays = Arrays(options.arrays)
    jax = None if options.no_jax else Jax()
    numpile.config.cache_dir = Path(tempfile.mkdtemp(prefix="numpile-gpu-npbench-"))   # first calls compile
    infos = [json.loads(p.read_text())["benchmark"] for p in sorted((options.root / "bench_info").glob("*.json"))]
    card = arrays.card()
    print(f"# NPBench ({options.root}), size {options.size}, on {card}: numpile {numpile.__version__} "
          f"(backend {options.backend or 'default'}), {'JAX ' + jax.jax.__version__ if jax else 'no JAX'}, "
          f"NumPy {np.__version__}, Python {platform.python_version()}", flush=True)
    rows = []
    for info in infos:
        if options.only and info["short_name"] not in options.only:
            continue
        start = time.perf_counter()
        rows.append(r := Row(info["short_name"], Tool(), Tool(), None))
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                run_program(r, info, options, arrays, jax)
            except runner.OverTime:     # the rest of the program's cells stay empty
                for tool in (r.cupy, r.numpile, r.jax):
                    if tool is not None and tool.first is None and tool.error is None:
                        tool.error = f"not run: the program's {options.limit:g} s were over"
        print(f"{r.name}: {time.perf_counter() - start:.1f} s; CuPy {verdict(r.cupy)} {ms(r.cupy.seconds)} ms, numpile "
              f"{verdict(r.numpile)} {ms(r.numpile.seconds)} ms, JAX {verdict(r.jax)} {ms(r.jax and r.jax.seconds)} ms"
              f"{'; ' + r.numpile.error if r.numpile.error else ''}", file=sys.stderr, flush=True)
        numpile.reset()
    report(rows, card)


if __name__ == "__main__":
    main()
