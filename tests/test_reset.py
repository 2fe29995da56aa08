"""numpile.reset() frees what numpile holds for compiled functions, and a program that keeps
making and dropping compiled functions (a notebook, a fuzzer, a server) stays flat without it.

The measurements run in a child process of their own (tracemalloc and RSS of a process that did
nothing else): 10,000 distinct functions with graph breaks, loops and recompiles, compiled,
called, checked against NumPy and dropped, in rounds; then one function past its cache size
limit with ever new shapes. On llvm the same with fewer functions, whose machine code must be
unloaded with them (and by reset()), also while other threads run kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

WORKLOAD = textwrap.dedent('''
    import gc, json, sys, tracemalloc
    import numpy as np
    import numpile
    from numpile.testing import assert_same

    BACKEND, ROUNDS, SIZE, BODIES = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

    KINDS = [  # a graph break, a loop, a data-dependent branch (a break) and its resume
        "def f(x, n):\\n    y = x * {k}\\n    print(end='')\\n    return np.sin(y) + {k}\\n",
        "def f(x, n):\\n    y = x * {k}\\n    for i in range(n):\\n        y = y + i\\n    return y\\n",
        "def f(x, n):\\n    y = x - {k}\\n    if y.sum() > 0:\\n        return y * 2\\n    return np.cos(y)\\n",
    ]

    def made(k):
        """Function k: a new code object every time; its constant one of BODIES (a backend that
        compiles the same graph twice may reuse its code: llvm's disk cache)."""
        namespace = {"np": np}
        exec(KINDS[k % len(KINDS)].format(k=k % BODIES), namespace)
        return namespace["f"]

    def call(k, compiled, f):
        for shape in [(3,), (4,)] if k % 2 else [(3,)]:   # every other function recompiles
            x = np.linspace(-1, 1, shape[0]) + k % 5
            assert_same(compiled(x, 2), f(x, 2))

    def rss():
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * 4096

    def loaded():
        """Modules of machine code the llvm backend has in memory (0 on other backends)."""
        if BACKEND != "llvm":
            return 0
        from numpile_llvm import jit
        return jit.loaded()

    def measure():
        """Python's allocated blocks, bytes traced by tracemalloc (0 while off), resident bytes, and
        the modules of machine code loaded."""
        gc.collect()
        return {"blocks": sys.getallocatedblocks(), "traced": tracemalloc.get_traced_memory()[0], "rss": rss(),
                "loaded": loaded()}

    def rounds(start, count, size):
        out = []
        for r in range(count):
            held = []
            for k in range(start + r * size, start + (r + 1) * size):
                f = made(k)
                compiled = numpile.compile(f, backend=BACKEND)
                call(k, compiled, f)
                held.append(compiled)
            point = {}
            if r % 2:   # every other round: reset() while the functions live, then drop them
                point["held"] = measure()
                numpile.reset()
                point["reset"] = measure()
            del held, f, compiled
            point["dropped"] = measure()
            out.append(point)
        return out

    rounds(0, 2, min(SIZE, 500))   # imports, op tables, first compiles
    numpile.reset()
    report = {"start": measure(), "rounds": rounds(10_000, ROUNDS - 3, SIZE)}
    # the last three rounds traced too (tracing makes a call four times slower), the first of them
    # to let tables that grow to the most live entries they held (a set of live functions: 128 KB)
    # be made again while traced: they were the 66 bytes a function between the first two
    tracemalloc.start()
    report["rounds"] += rounds(10_000 + (ROUNDS - 3) * SIZE, 3, SIZE)

    g = numpile.compile(lambda x: x * 2 + 1, backend=BACKEND, dynamic=False)
    for n in range(1, 61):   # a new shape each call: past the limit the function runs eagerly
        x = np.arange(n, dtype=np.float64)
        assert_same(g(x), x * 2 + 1)
        if n == 20:
            report["limit_reached"] = measure()
    report["limit_end"] = measure()
    report["entries"] = len(g.all_entries())
    print(json.dumps(report))
''')


def run_workload(backend: str, rounds: int, size: int, bodies: int, cache_dir) -> dict:
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", WORKLOAD, backend, str(rounds), str(size), str(bodies)],
                          capture_output=True, text=True, timeout=900, env={**os.environ, "NUMPILE_CACHE_DIR": str(cache_dir)})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def check_flat(report: dict, size: int) -> None:
    """Memory after each round, once its functions are dropped, as it was before the rounds:
    fewer Python blocks than one per ten functions, and under 100 traced bytes a function, nothing
    like a code object or a graph (kilobytes; the file name CPython interned for each compiled
    graph was 77 bytes). The resident size of the untraced rounds is compared with the first
    round's (malloc keeps what a round of live functions took); the traced rounds with each other
    (tracemalloc counts what was allocated since it started, such as a table that grew once, and
    its own tables are resident). No machine code stays loaded once its functions are dropped or
    reset."""
    start, rounds = report["start"], report["rounds"]
    functions = size * len(rounds)
    for i, r in enumerate(rounds):
        # and 100 blocks for what starting tracemalloc allocates (a few dozen)
        assert r["dropped"]["blocks"] - start["blocks"] < functions // 10 + 100, (i, r, start)
        assert r["dropped"]["loaded"] == 0 and r.get("reset", r["dropped"])["loaded"] == 0, (i, r)
        if not r["dropped"]["traced"]:   # resident: the first round's high-water mark (malloc keeps it)
            assert r["dropped"]["rss"] - rounds[0]["dropped"]["rss"] < 16 << 20, (i, r, rounds[0])
        if "reset" in r:   # live functions keep their own objects after reset(), not their entries
            held, kept = r["held"]["blocks"] - start["blocks"], r["reset"]["blocks"] - start["blocks"]
            assert kept < 0.2 * held, (i, r, start)
    first, last = (r["dropped"] for r in rounds[-2:])
    # and 16 KB for a table that doubled once between them (its blocks the same: 10.7 KB seen once)
    assert last["traced"] - first["traced"] < 100 * size + (16 << 10), (first, last)
    assert report["entries"] == 8   # config.cache_size_limit
    reached, end = report["limit_reached"], report["limit_end"]
    assert end["blocks"] - reached["blocks"] < 100 and end["traced"] - reached["traced"] < 10_000, (reached, end)


@pytest.mark.slow
def test_ten_thousand_functions_compiled_and_dropped_leave_memory_flat(tmp_path):
    check_flat(run_workload("eager", rounds=5, size=2000, bodies=10**9, cache_dir=tmp_path), 2000)


@pytest.mark.slow
def test_llvm_code_is_unloaded_with_its_functions(tmp_path):
    """Each round loads every module again (from the disk cache after the first) and unloads it:
    machine code and everything around it must not pile up."""
    pytest.importorskip("numpile_llvm")
    report = run_workload("llvm", rounds=5, size=100, bodies=20, cache_dir=tmp_path)
    check_flat(report, 100)
    assert all(r["held"]["loaded"] > 0 for r in report["rounds"] if "held" in r), report["rounds"]


THREADS = textwrap.dedent('''
    import gc, sys, threading
    import numpy as np
    import numpile
    from numpile.testing import assert_same
    from numpile_llvm import jit

    BODIES = [  # a kernel called from Python, a chain of two, a loop nest, a sum split over threads
        "def f(x):\\n    return np.sin(x) * {k} + 1\\n",
        "def f(x):\\n    y = x * {k}\\n    return y - y.max()\\n",
        "def f(x):\\n    t = 0.0\\n    for i in range(x.shape[0]):\\n        t = t + x[i] * {k}\\n    return t\\n",
        "def f(x):\\n    return (x * {k}).sum()\\n",
    ]
    failures, done = [], threading.Event()

    def worker(t):
        rng = np.random.default_rng(t)
        try:
            for i in range(12):
                namespace = {"np": np}
                exec(BODIES[(t + i) % len(BODIES)].format(k=i % 3 + 2), namespace)
                f = namespace["f"]
                compiled = numpile.compile(f, backend="llvm")
                for n in (7, 1 << 18):   # the large one runs split over the kernel threads
                    x = rng.standard_normal(n)
                    assert_same(compiled(x), f(x))
        except BaseException as e:
            failures.append(repr(e))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    resets = 0
    while any(t.is_alive() for t in threads):   # code unloaded under running kernels would crash
        numpile.reset()
        resets += 1
        threads[0].join(0.005)
    for t in threads:
        t.join()
    numpile.reset()
    gc.collect()
    print(resets, jit.loaded(), failures)
''')


@pytest.mark.slow
def test_llvm_code_is_unloaded_while_other_threads_run_kernels(tmp_path):
    """Threads compile, run and drop functions while another resets again and again: no crash
    (the child's exit status), NumPy's results, and no code left loaded at the end."""
    pytest.importorskip("numpile_llvm")
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", THREADS], capture_output=True, text=True,
                          timeout=600, env={**os.environ, "NUMPILE_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    resets, loaded, failures = done.stdout.split(maxsplit=2)
    assert failures.strip() == "[]", failures
    assert int(resets) > 10 and int(loaded) == 0, done.stdout
