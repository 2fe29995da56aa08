"""Loop nests whose outermost iterations are independent run on a libgomp team (nest.py's
`_Nest.independent`, team.render_range), differentially against plain Python over NumPy on fresh
random inputs: which nests split and which do not (a row read by another iteration, a scatter
through data, a carried scalar), ranges going down, a negative start (run on one thread), and
NumPy's IndexError raised from a thread's part."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import numpile
from numpile_llvm import team
from numpile_llvm.nests import nest

pytestmark = pytest.mark.skipif(not team.available(), reason="libgomp is not loadable here")
CROWDED = team.crowded   # before a fixture replaces it
THREADS = 4   # more than this machine may have: the split is the same, the team shares the cores


@pytest.fixture
def nests(monkeypatch):
    """The nests compiled while the test runs, on a team of THREADS, splitting any range after the
    first call (which runs alone, timing its iterations: team.py's [Note: split ranges])."""
    monkeypatch.setattr(numpile.config, "loop_capture_min", 1)
    monkeypatch.setattr(team, "threads", lambda: THREADS)
    monkeypatch.setattr(team, "SPLIT_MIN_TICKS", 0)
    monkeypatch.setattr(team, "crowded", lambda: False)   # split however busy the test machine is
    monkeypatch.setattr(team._USABLE, "value", 1)
    made = []

    class Recorded(nest.NativeNest):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)
    monkeypatch.setattr(nest, "NativeNest", Recorded)
    return made


def newton_roots(c, tol):
    # square roots of every element by Newton's method, until it settles: a while loop per element
    out = np.zeros_like(c)
    for i in range(c.shape[0]):
        for j in range(c.shape[1]):
            x, k = c[i, j] + 1.0, 0
            while abs(x * x - c[i, j]) > tol and k < 60:
                x = 0.5 * (x + c[i, j] / x)
                k += 1
            out[i, j] = x
    return out


def csr_rows(indptr, indices, data, x):
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s
    return y


def row_recurrence(A):
    for i in range(A.shape[0]):
        for j in range(1, A.shape[1]):
            A[i, j] = A[i, j - 1] * 0.5 + A[i, j]
    return A


def columns_going_down(A):
    for j in range(A.shape[1] - 1, -1, -1):
        for i in range(1, A.shape[0]):
            if A[i - 1, j] > A[i, j]:
                A[i, j] = A[i - 1, j]
    return A


def rows_depend_on_the_last(A):
    for i in range(1, A.shape[0]):
        for j in range(A.shape[1]):
            A[i, j] += A[i - 1, j] * 0.5
    return A


def histogram_rows(idx, bins):
    h = np.zeros(bins, dtype=np.int64)
    for i in range(idx.shape[0]):
        for j in range(idx.shape[1]):
            h[idx[i, j]] += 1
    return h


def carried_total(A):
    s = 0.0
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s += A[i, j] * A[i, j]
    return s


def from_the_end(A):
    for i in range(-A.shape[0], A.shape[0]):   # each row twice (a negative index counts from the end)
        for j in range(1, A.shape[1]):
            A[i, j] = np.sin(A[i, j - 1]) + A[i, j] * (i + 0.5)
    return A


def covariance(data):   # NPBench's (PolyBench's): iteration i writes column i and row i from i on
    M = data.shape[1]
    cov = np.zeros((M, M))
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / (data.shape[0] - 1.0)
    return cov


def correlation(data):   # NPBench's: from the index plus one
    M = data.shape[1]
    corr = np.eye(M)
    for i in range(M - 1):
        corr[i + 1:M, i] = corr[i, i + 1:M] = data[:, i] @ data[:, i + 1:M]
    return corr


def column_before_the_row(data):   # row i from i on, column i from 0: column i meets row j < i at (j, i)
    M = data.shape[1]
    out = np.zeros((M, M))
    for i in range(M):
        out[:, i] = data[0, i]
        out[i, i:M] = data[1, i:M] * 2.0
    return out


def _inputs(name: str):
    n, m = int(rng.integers(9, 40)), int(rng.integers(5, 30))
    A = rng.standard_normal((n, m))
    if name == "newton_roots":
        return np.abs(A) * 10, 1e-9
    if name == "csr_rows":
        counts = rng.integers(0, 6, n)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return indptr, rng.integers(0, m, indptr[-1]), rng.standard_normal(indptr[-1]), rng.standard_normal(m)
    if name == "histogram_rows":
        return rng.integers(0, 7, (n, m)), 7
    return (A,)


rng = np.random.default_rng()
SPLIT = [newton_roots, csr_rows, row_recurrence, columns_going_down, covariance, correlation]
ALONE = [rows_depend_on_the_last, histogram_rows, carried_total, column_before_the_row]


def _split(native) -> bool:
    """Whether the nest runs its outermost loop on a team."""
    return "call void @GOMP_parallel" in native.ir


def _run(fn, compiled):
    args = _inputs(fn.__name__)
    expected_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    got_args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    expected = fn(*expected_args)
    got = compiled(*got_args)
    assert type(got) is type(expected)
    # products summed in another order than BLAS's: an element that cancels is off by ulps of the largest
    close = lambda g, e: np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-14 * np.abs(e).max(initial=1.0))   # noqa: E731
    close(got, expected)
    assert np.shape(got) == np.shape(expected) and np.asarray(got).dtype == np.asarray(expected).dtype
    for e, g in zip(expected_args, got_args):
        if isinstance(e, np.ndarray):
            close(g, e)


@pytest.mark.parametrize("fn", SPLIT + ALONE, ids=lambda f: f.__name__)
def test_independent_iterations_run_on_a_team(fn, nests):
    compiled = numpile.compile(fn, backend="llvm")
    for _ in range(5):   # new sizes: a second entry, dynamic; each nest's first run alone, the next ones split
        _run(fn, compiled)
    assert nests, "the loop was not one native nest"
    split = [_split(n) for n in nests]
    assert all(split) if fn in SPLIT else not any(split)


def test_a_crowded_machine_runs_a_split_nest_alone(nests, monkeypatch, tmp_path):
    """More threads runnable than cores: the team's caller would wait for a thread the scheduler
    set aside, so the nest looks (team.crowded) and runs its range alone, with the same results."""
    loadavg = tmp_path / "loadavg"
    monkeypatch.setattr(team, "open", lambda name: open(loadavg), raising=False)
    monkeypatch.setattr(team, "crowded", CROWDED)
    compiled = numpile.compile(row_recurrence, backend="llvm")
    for runnable, usable in ((2 * THREADS, 0), (1, 1), (THREADS + 1, 0)):
        loadavg.write_text(f"6.0 6.0 6.0 {runnable}/300 1")
        monkeypatch.setattr(team, "_crowding", [float("-inf"), None])
        _run(row_recurrence, compiled)
        assert team._USABLE.value == usable
    assert nests and all(_split(n) for n in nests)


def test_a_negative_start_runs_on_one_thread(nests):
    # two iterations update one row, in order: this range is not split (the nest has its team, for
    # ranges whose indices are all 0 or more)
    compiled = numpile.compile(from_the_end, backend="llvm")
    for _ in range(5):
        _run(from_the_end, compiled)
    assert nests and all(_split(n) for n in nests)


def test_an_index_out_of_range_in_a_threads_part_raises_numpys_error(nests):
    def shifted(x, k):
        out = np.zeros((x.shape[0], x.shape[1]))
        for i in range(x.shape[0]):
            for j in range(x.shape[1]):
                out[i, j] = x[i, j] * x[x.shape[0] - 1 - i, j + k]
        return out
    x = rng.standard_normal((40, 6))
    compiled = numpile.compile(shifted, backend="llvm")
    for _ in range(2):
        np.testing.assert_allclose(compiled(x, 0), shifted(x, 0))
    with pytest.raises(IndexError):
        compiled(x, 3)
    assert nests and _split(nests[0])


def test_a_forked_child_runs_a_split_range_alone():
    # libgomp has no fork handler: a child calling the parent's team would wait for ever
    script = inspect.getsource(row_recurrence) + textwrap.dedent("""
        import os, numpy as np, numpile
        from numpile_llvm import team
        team.SPLIT_MIN_TICKS, team.threads, team.crowded = 0, lambda: 4, lambda: False
        def want(A):
            return row_recurrence(A.copy())
        f = numpile.compile(row_recurrence, backend="llvm")
        A = np.random.default_rng(0).random((64, 8))
        for _ in range(3):                       # the first alone, then on the team
            assert np.array_equal(f(A.copy()), want(A))
        pid = os.fork()
        if pid == 0:
            os._exit(0 if np.array_equal(f(A.copy()), want(A)) else 1)
        _, status = os.waitpid(pid, 0)
        print("child", os.waitstatus_to_exitcode(status))
    """)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.split() == ["child", "0"], out.stderr[-2000:]
