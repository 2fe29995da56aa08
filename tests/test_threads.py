"""Threads: many threads compiling and calling many compiled functions at once get NumPy's results.

The work runs in a child process, so that a crash (two threads inside LLVM at once segfaulted)
fails this test instead of ending the suite. Each backend of this repository is tried.
"""

import os
import subprocess
import sys
import textwrap

import pytest

import numpile

SCRIPT = textwrap.dedent("""
    import sys, threading
    import numpy as np, numpile

    backend, rounds = sys.argv[1], int(sys.argv[2])

    def make(k):
        def f(x, y):
            z = np.sin(x) * k + y ** 2
            return z - z.sum(axis=-1, keepdims=True), (x * y).max()
        return f

    def expected(k, x, y):
        z = np.sin(x) * k + y ** 2
        return z - z.sum(axis=-1, keepdims=True), (x * y).max()

    failures = []

    def work(funcs, t, barrier):
        rng = np.random.default_rng(t)
        barrier.wait()                       # every thread starts compiling at once
        for i in range(10):
            k = (t + i) % len(funcs)
            f, k = funcs[k]
            rows = (3 + (t * 7 + i) % 9) if i % 4 else 40000   # large ones split over the kernel pool
            x = rng.standard_normal((rows, 5)).astype(np.float32 if t % 2 else np.float64)
            y = rng.standard_normal((rows, 5)).astype(x.dtype)
            got, want = f(x, y), expected(k, x, y)
            for g, w in zip(got, want):
                if type(g) is not type(w) or g.dtype != w.dtype or np.shape(g) != np.shape(w) \\
                        or not np.allclose(g, w, rtol=1e-5, atol=1e-4):
                    failures.append((t, i, k, x.shape, x.dtype))

    for r in range(rounds):
        numpile.reset()
        funcs = [(numpile.compile(make(k), backend=backend), k) for k in range(6)]
        one = [(numpile.compile(make(3), backend=backend), 3)] * 6      # eight threads, one function
        for table in (funcs, one):
            barrier = threading.Barrier(8)
            threads = [threading.Thread(target=work, args=(table, t, barrier)) for t in range(8)]
            for th in threads:
                th.start()
            for th in threads:
                th.join()
    print("failures", failures)
    sys.exit(1 if failures else 0)
""")


@pytest.mark.parametrize("backend", ["eager", "debug", "llvm"])
def test_threads_compile_and_hit_at_once(backend, tmp_path):
    if backend not in numpile.list_backends(available_only=True):
        pytest.skip(f"backend {backend!r} is not installed here")
    env = {**os.environ, "NUMPILE_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-c", SCRIPT, backend, "4"], capture_output=True, text=True,
                         timeout=600, env=env)
    assert run.returncode == 0, f"exit {run.returncode} (a negative exit is a signal: -11 a segfault)\n" \
                                f"{run.stdout[-2000:]}\n{run.stderr[-4000:]}"
    assert "failures []" in run.stdout
