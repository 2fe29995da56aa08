"""The soak: many threads in two processes calling many compiled functions for minutes, every
result checked against NumPy; no crash, no deadlock, no mismatch, memory that levels off.

    python -m numpile.fuzz --soak 10 --backend llvm

`soak` starts two worker processes at once sharing one fresh disk cache directory (so they write
and read the same entries at the same time), each running `threads` threads until the time is
spent. A thread calls, in a loop, one of the shared compiled functions of PROGRAMS (pointwise
work, reductions, a loop, a graph break, a branch on array data, an update in place) on arrays of
a random shape (1-d or 2-d, now and then one large enough to split over a backend's threads) and
dtype: every function recompiles, goes dynamic and reaches its cache size limit. Every 25th call
it compiles a fresh copy of a program (a new code object: new resume functions, new entries),
calls it twice and drops it; every 20 seconds one thread of each worker calls numpile.reset().

A worker stops with a traceback of every thread when no call has finished for WATCHDOG seconds
(a deadlock), and reports its counts as JSON: calls, compiles (graph breaks among them), fresh
functions, resets, cache size limits reached (a function again after each reset), mismatches (the first few, with their
program, shape and dtype), unexpected warnings, the resident size at a quarter of the run and at
its end, its peak, and its curve (a sample every tenth of the run). Memory is bounded when the end is within a quarter (plus 64 MB) of the
resident size at a quarter of the run, once imports, kernels and caches are in place.
"""

from __future__ import annotations

import faulthandler
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..testing import assert_same_result

PROGRAMS = {
    "pointwise": "def f(x, y):\n    return np.sin(x) * 2 + y * y\n",
    "reduce": "def f(x, y):\n    z = x * y\n    return z - z.sum(axis=-1, keepdims=True), (x + y).max()\n",
    "loop": "def f(x, y):\n    for i in range(3):\n        x = x * 0.5 + y\n    return x\n",
    "break": "def f(x, y):\n    z = np.exp(-(x * x))\n    print(end='')\n    return z + y\n",
    "branch": "def f(x, y):\n    if x.sum() > 0:\n        return x - y\n    return x * y\n",
    "update": "def f(x, y):\n    x = x.copy()\n    x[1:] += y[:-1]\n    return x\n",
}
DTYPES = ("float64", "float32", "int64", "int32")
FRESH_EVERY = 25        # calls of a thread between two fresh functions
RESET_SECONDS = 20      # between two numpile.reset() of a worker (a quarter of a shorter run)
WATCHDOG = 120          # seconds without a finished call that make a deadlock
KEPT_MISMATCHES = 10
CURVE_POINTS = 10      # samples of the resident size over a run
# a worker's config.cache_size_limit: its functions see 4 dtypes in 1-d and 2-d shapes, which
# reached the default 8 seldom enough that a 24-second run on a loaded machine saw no limit
CACHE_LIMIT = 4


def made(name: str):
    """A new function object, with a code object of its own, of PROGRAMS[name]."""
    namespace = {"np": np}
    exec(compile(PROGRAMS[name], f"<soak {name}>", "exec"), namespace)
    return namespace["f"]


def inputs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    dtype = np.dtype(DTYPES[rng.integers(len(DTYPES))])
    draw = rng.integers(20)
    shape = (50_000,) if draw == 0 else (int(rng.integers(1, 50)),) if draw < 12 else \
        (int(rng.integers(1, 12)), int(rng.integers(1, 12)))
    if dtype.kind == "f":
        return tuple(rng.standard_normal(shape).astype(dtype) for _ in range(2))
    return tuple(rng.integers(-4, 5, shape).astype(dtype) for _ in range(2))


class _Worker:
    """One process's threads, their counts and its watchdog."""

    def __init__(self, backend: str, seconds: float, threads: int, seed: int):
        import numpile
        from numpile import cache
        self.numpile, self.backend, self.threads, self.seed = numpile, backend, threads, seed
        self.start = time.monotonic()
        self.deadline = self.start + seconds
        self.reset_every = min(RESET_SECONDS, seconds / 4)
        self.counts: Counter = Counter()
        self.lock = threading.Lock()
        self.mismatches: list[dict] = []
        self.warnings: list[str] = []
        self.last_call = time.monotonic()
        numpile.config.cache_size_limit = CACHE_LIMIT
        self.shared = {name: (f, numpile.compile(f, backend=backend)) for name, f in ((n, made(n)) for n in PROGRAMS)}
        cache.add_listener(self._compiled)
        warnings.simplefilter("always")       # every limit reached is counted, after each reset too
        warnings.showwarning = self._warned   # the process's: catch_warnings is not thread-safe

    def _compiled(self, compiled_function, event) -> None:
        with self.lock:
            self.counts["compiles"] += 1
            self.counts["graph_breaks"] += event.entry.graph_break is not None

    def _warned(self, message, category, *args, **kwargs) -> None:
        with self.lock:
            if "cache_size_limit" in str(message):   # expected: the functions are made to reach it
                self.counts["limit_hits"] += 1
            else:
                self.warnings.append(f"{category.__name__}: {message}")

    def run(self) -> dict:
        threads = [threading.Thread(target=self._thread, args=(t,), daemon=True) for t in range(self.threads)]
        for t in threads:
            t.start()
        quarter, curve = None, []   # curve: (seconds, resident bytes) every tenth of the run
        while any(t.is_alive() for t in threads):
            time.sleep(1)
            now = time.monotonic()
            if quarter is None and now - self.start > (self.deadline - self.start) / 4:
                quarter = _rss()
            if now - self.start >= len(curve) * (self.deadline - self.start) / CURVE_POINTS:
                curve.append((round(now - self.start), _rss()))
            if now - self.last_call > WATCHDOG:
                faulthandler.dump_traceback(all_threads=True)
                print(f"soak: no call finished for {WATCHDOG} s: a deadlock", file=sys.stderr, flush=True)
                os._exit(3)
        return {**self.counts, "threads": self.threads, "mismatches": self.mismatches, "warnings": self.warnings,
                "rss_quarter": quarter or _rss(), "rss_end": _rss(), "rss_curve": curve,
                "rss_peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}

    def _thread(self, t: int) -> None:
        rng = np.random.default_rng([self.seed, t])
        names = list(PROGRAMS)
        last_reset = time.monotonic()
        calls = 0
        while time.monotonic() < self.deadline:
            name = names[rng.integers(len(names))]
            calls += 1
            if calls % FRESH_EVERY == 0:
                f = made(name)
                compiled = self.numpile.compile(f, backend=self.backend)
                for _ in range(2):
                    self._check(name, compiled, f, *inputs(rng))
                self._count("fresh_functions")
            else:
                f, compiled = self.shared[name]
                self._check(name, compiled, f, *inputs(rng))
            if t == 0 and time.monotonic() - last_reset > self.reset_every:
                self.numpile.reset()
                last_reset = time.monotonic()
                self._count("resets")

    def _check(self, name: str, compiled, f, x: np.ndarray, y: np.ndarray) -> None:
        want = f(x, y)
        try:
            got = compiled(x, y)
            assert type(got) is type(want) and (type(want) is not tuple or len(got) == len(want)), (got, want)
            for g, w in zip(*((got, want) if type(want) is tuple else ((got,), (want,)))):
                assert_same_result(g, w, "result")   # floats within the conformance suite's tolerance
        except Exception as e:   # a wrong result or an error NumPy did not raise
            with self.lock:
                self.counts["mismatch_count"] += 1
                if len(self.mismatches) < KEPT_MISMATCHES:
                    self.mismatches.append({"program": name, "shape": x.shape, "dtype": x.dtype.name,
                                            "error": f"{type(e).__name__}: {e}"[:500]})
        self._count("calls")
        self.last_call = time.monotonic()

    def _count(self, what: str) -> None:
        with self.lock:
            self.counts[what] += 1


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class SoakReport:
    """The workers' reports, summed, and what went wrong."""

    backend: str
    minutes: float
    workers: list[dict] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)   # crashes, deadlocks, mismatches, warnings, growth

    def total(self, key: str) -> int:
        return sum(w.get(key, 0) for w in self.workers)

    def summary(self) -> str:
        mb = 1 << 20
        memory = ", ".join(f"{w['rss_quarter'] / mb:.0f} -> {w['rss_end'] / mb:.0f} MB (peak {w['rss_peak'] / mb:.0f})"
                           for w in self.workers)
        return (f"soak on {self.backend}, {self.minutes:g} min, {len(self.workers)} processes x "
                f"{self.workers[0]['threads'] if self.workers else 0} threads: {self.total('calls')} calls, "
                f"{self.total('compiles')} compiles ({self.total('graph_breaks')} with a graph break), "
                f"{self.total('fresh_functions')} fresh functions, {self.total('resets')} resets, "
                f"{self.total('limit_hits')} cache size limits reached, {self.total('mismatch_count')} "
                f"mismatches; resident size at a quarter -> end: {memory}; "
                f"{'clean' if not self.failures else f'{len(self.failures)} failures'}")

    def curves(self) -> str:
        """Each worker's resident size over the run, a line each: `seconds:MB` pairs."""
        return "\n".join(f"worker {i} resident MB: " + " ".join(f"{t}s:{rss >> 20}" for t, rss in w["rss_curve"])
                         for i, w in enumerate(self.workers))


def soak(backend: str, minutes: float, *, threads: int = 8, processes: int = 2, seed: int = 0,
         cache_dir: str | None = None) -> SoakReport:
    """Run `processes` workers of `threads` threads on `backend` for `minutes`, sharing one disk
    cache directory (a fresh temporary one unless `cache_dir`), and check what they report."""
    report = SoakReport(backend, minutes)
    with tempfile.TemporaryDirectory(prefix="numpile-soak-") as fresh:
        env = {**os.environ, "NUMPILE_CACHE_DIR": cache_dir or fresh}
        workers = [subprocess.Popen([sys.executable, "-m", "numpile.fuzz.soak", backend, str(minutes * 60),
                                     str(threads), str(seed + i)], env=env, stdout=subprocess.PIPE, text=True)
                   for i in range(processes)]
        for i, w in enumerate(workers):
            try:
                out, _ = w.communicate(timeout=minutes * 60 + WATCHDOG + 300)
            except subprocess.TimeoutExpired:
                w.kill()
                out, _ = w.communicate()
                report.failures.append(f"worker {i} did not finish (its watchdog did not fire either)")
            if w.returncode != 0:
                report.failures.append(f"worker {i} exited with {w.returncode}"
                                       f"{' (a signal: -11 is a segfault)' if w.returncode < 0 else ''}")
                continue
            report.workers.append(json.loads(out.splitlines()[-1]))
    for i, w in enumerate(report.workers):
        report.failures += [f"worker {i}: mismatch {m}" for m in w["mismatches"]]
        report.failures += [f"worker {i}: warning {m}" for m in w["warnings"]]
        if w["rss_end"] > 1.25 * w["rss_quarter"] + (64 << 20):
            report.failures.append(f"worker {i}: resident size grew from {w['rss_quarter'] >> 20} MB at a quarter "
                                   f"of the run to {w['rss_end'] >> 20} MB")
    return report


if __name__ == "__main__":   # a worker: BACKEND SECONDS THREADS SEED; its report on the last line
    backend, seconds, n_threads, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    print(json.dumps(_Worker(backend, seconds, n_threads, seed).run()), flush=True)
