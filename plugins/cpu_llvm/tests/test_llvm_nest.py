"""Loop nests of element code compiled whole (numpile_llvm/nests/nest.py, nestcall.py), differentially
against plain Python over NumPy on fresh random inputs: the nest is really the one native function
(counted), arrays of every layout (the contiguous body and the general one), carried scalars of
each dtype handed back with NumPy's type, NumPy's IndexError for indices out of range, negative
indices from the end, Python ints past int64, empty loops, and arguments afterwards."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import numpile
from numpile_llvm.nests import nestcall

rng = np.random.default_rng()


@pytest.fixture
def nests(monkeypatch):
    """The nests compiled while the test runs (each one's runner made once); loops of any length kept
    as loops (a short one would be unrolled, and the random sizes are short at times)."""
    monkeypatch.setattr(numpile.config, "loop_capture_min", 1)
    monkeypatch.setattr(numpile.config, "loop_unroll_ops", 0)
    made = []
    runner = nestcall.runner

    def counted(*args):
        made.append(args)
        return runner(*args)
    monkeypatch.setattr(nestcall, "runner", counted)
    return made


def same(got, want):
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, tuple):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same(g, w)
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
    else:
        assert got == want


def check(fn, *args, calls: int = 3, make=None):
    """fn compiled on llvm against fn in Python, on fresh arguments each call (make(): given as they
    are, views with their strides) or copies of args: results and every argument afterwards the same."""
    compiled = numpile.compile(fn, backend="llvm")
    for _ in range(calls):
        given = make() if make else args
        mine = list(given) if make else [a.copy() if isinstance(a, np.ndarray) else a for a in given]
        theirs = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in given]
        with warnings.catch_warnings():   # the llvm graph failing and running as Python is a failure here
            warnings.filterwarnings("error", message=".*backend 'llvm'", category=RuntimeWarning)
            got = compiled(*mine)
        same(got, fn(*theirs))
        for m, t in zip(mine, theirs):
            if isinstance(t, np.ndarray):
                same(m, t)


# -- layouts: the contiguous body and the general one ----------------------------------------------
def smooth_rows(A):
    n, m = A.shape
    for i in range(1, n - 1):
        for j in range(1, m - 1):
            A[i, j] = (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1] + A[i, j]) / 5.0


def scaled_sum(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i] * w[i]
    return s


@pytest.mark.parametrize("layout", ["C", "F", "strided", "reversed"])
def test_array_of_each_layout_updated_in_place(nests, layout):
    def make():
        base = rng.random((13, 22))
        return ({"C": base, "F": np.asfortranarray(base), "strided": base[::2, ::3],
                 "reversed": base[::-1, ::-1]}[layout],)
    check(smooth_rows, calls=3, make=make)
    assert nests


def test_free_arrays_of_mixed_layouts(nests):
    def make():
        n = int(rng.integers(3, 30))
        return rng.random(2 * n)[::2], rng.standard_normal(n)
    check(scaled_sum, make=make)
    assert nests


def test_layouts_alternating_call_by_call(nests):
    compiled = numpile.compile(smooth_rows, backend="llvm")
    for k in range(6):
        base = rng.random((10, 12))
        A = base if k % 2 else base.T
        want = A.copy(order="K")
        compiled(A)
        smooth_rows(want)
        same(A, want)


# -- carried scalars of each type ----------------------------------------------------------------
def total_of(x):
    s = x[0] * 0
    for i in range(x.shape[0]):
        s = s + x[i]
    return s


def any_above(x, t):
    found = False
    for i in range(x.shape[0]):
        if x[i] > t:
            found = True
    return found


def count_and_sum(x):
    count = 0
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            count = count + 1
            s = s + x[i]
    return count, s


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64])
def test_carried_numpy_scalar_of_each_dtype(nests, dtype):
    def make():
        n = int(rng.integers(2, 40))
        if np.dtype(dtype).kind == "f":
            return (rng.standard_normal(n).astype(dtype),)
        info = np.iinfo(dtype)
        return (rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True),)   # wraps as NumPy's do
    with np.errstate(over="ignore"):
        check(total_of, make=make)
    assert nests


def test_carried_python_bool_int_and_float(nests):
    # at least config.loop_capture_min elements on the first call: a shorter loop is unrolled, not a nest
    check(any_above, make=lambda: (rng.random(int(rng.integers(5, 30))), 0.8))
    check(count_and_sum, make=lambda: (rng.standard_normal(int(rng.integers(5, 30))),))
    assert len(nests) >= 2


# -- indices ---------------------------------------------------------------------------------------
def from_the_end(x):
    out = np.zeros_like(x)
    n = x.shape[0]
    for i in range(n):
        out[i] = x[-1 - i] + x[i - n]
    return out


def one_past(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i + 1]
    return s


def by_index_array(x, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        s = s + x[idx[i]]
    return s


def test_negative_indices_count_from_the_end(nests):
    check(from_the_end, make=lambda: (rng.standard_normal(int(rng.integers(1, 30))),))
    assert nests


def test_index_out_of_range_raises_numpys_index_error():
    compiled = numpile.compile(one_past, backend="llvm")
    for _ in range(2):
        x = rng.random(int(rng.integers(1, 20)))
        with pytest.raises(IndexError):
            one_past(x.copy())
        with pytest.raises(IndexError):
            compiled(x)


@pytest.mark.parametrize("worst", [-1, 0, 1])
def test_indices_read_from_an_array(worst):
    compiled = numpile.compile(by_index_array, backend="llvm")
    x = rng.random(17)
    idx = rng.integers(-17, 17, 40)
    same(compiled(x, idx), by_index_array(x, idx))
    idx[int(rng.integers(0, 40))] = {-1: -18, 0: 16, 1: 17}[worst]
    if worst:
        with pytest.raises(IndexError):
            compiled(x, idx)
    else:
        same(compiled(x, idx), by_index_array(x, idx))


# -- Python ints and empty loops ------------------------------------------------------------------
def powers(x):
    t = 1
    for i in range(x.shape[0]):
        t = t * 3 + int(x[i])
    return t


def shifted_sum(x, start):
    t = start
    for i in range(x.shape[0]):
        t = t + int(x[i])
    return t


def test_python_int_past_int64_is_exact():
    compiled = numpile.compile(powers, backend="llvm")
    for n in (5, 39, 41, 60):   # 3 ** 40 > 2 ** 63
        x = rng.integers(0, 9, n)
        same(compiled(x), powers(x))


@pytest.mark.parametrize("start", [7, 2**63 - 3, -(2**63) + 2, 2**70])
def test_python_int_near_and_past_int64_carried_in(start):
    compiled = numpile.compile(shifted_sum, backend="llvm")
    for sign in (1, -1):
        x = sign * rng.integers(0, 9, 8)
        same(compiled(x, start), shifted_sum(x, start))


def test_empty_loops_hand_back_initial_values(nests):
    check(count_and_sum, np.zeros(0))
    check(total_of, np.array([2.5]))
    check(smooth_rows, rng.random((2, 7)))


# -- loop ranges: constants in the nest, or known only when it runs ----------------------------------
def around_zero(x):
    s = 0.0
    for i in range(-x.shape[0], x.shape[0]):
        s = s + x[i] * (i + 0.5)
    return s


def test_range_through_negative_indices(nests):
    check(around_zero, make=lambda: (rng.standard_normal(int(rng.integers(1, 30))),))
    assert nests


@pytest.mark.parametrize("fn", [from_the_end, around_zero, total_of])
def test_range_of_each_length_call_by_call(nests, fn):
    compiled = numpile.compile(fn, backend="llvm", dynamic=True)
    for n in (1, 7, 30, 2):
        x = rng.standard_normal(n)
        same(compiled(x.copy()), fn(x.copy()))
    assert nests


# -- carried arrays updated in place where nothing else sees them --------------------------------------
def total_then_scan(x):
    a = x * 2.0              # a kernel's fresh array: the nest may update it, but its sum is read too
    total = a.sum()
    for i in range(1, a.shape[0]):
        a[i] = a[i] + a[i - 1]
    return total, a


def scans(x, steps):
    a = x.copy()             # a copy, then nests (the first step peeled) handing it on
    b = a[::2]
    for _ in range(steps):
        for i in range(1, a.shape[0]):
            a[i] = a[i] * 0.5 + a[i - 1]
    return a, b


def scan_of_argument(x):
    for i in range(1, x.shape[0]):
        x[i] = x[i] + x[i - 1]
    return x


@pytest.mark.parametrize("fn, make", [
    (total_then_scan, lambda: (rng.standard_normal(int(rng.integers(2, 30))),)),
    (scans, lambda: (rng.standard_normal(int(rng.integers(2, 30))), 3)),
    (scan_of_argument, lambda: (rng.standard_normal(int(rng.integers(2, 30))),)),
])
def test_carried_arrays_updated_in_place_only_where_nothing_else_sees_them(nests, fn, make):
    check(fn, make=make)
    assert nests


def test_argument_unchanged_where_the_nest_stops():
    def scan_then_bad_index(x, k):
        for i in range(1, x.shape[0]):
            x[i] = x[i] + x[i - 1] + x[k * i]   # out of range from i = 2 for k = n // 2 + 1
        return x
    compiled = numpile.compile(scan_then_bad_index, backend="llvm")
    x = rng.standard_normal(9)
    with pytest.raises(IndexError):
        scan_then_bad_index(x.copy(), 5)
    before = x.copy()
    with pytest.raises(IndexError):
        compiled(x, 5)
    want = before.copy()
    with pytest.raises(IndexError):
        scan_then_bad_index(want, 5)
    same(x, want)   # NumPy's partial updates, as Python leaves them


def test_owned_only_where_made_fresh_and_read_by_no_other_step():
    from types import SimpleNamespace

    from numpile.lowering import BufferArg, Extern, Kernel, Program
    from numpile.lowering.ir import Buffer, Load, Stage
    from numpile_llvm.nests.nest import owned_carried

    f8 = np.dtype(np.float64)

    body = SimpleNamespace(inputs=[SimpleNamespace(dtype=np.dtype(np.int64))] + [SimpleNamespace(dtype=f8)] * 3)

    def program(after: bool, returned: bool, a_dtype=f8):
        make = Kernel("k0", (4,), [Stage((), Load("x", (), f8), output="a")])
        loop = Extern("loop", (body, 0, 4, 1, (BufferArg("a"), BufferArg("x")), (BufferArg("y"),)), {}, ("l0", "l1"))
        read = Kernel("k1", (4,), [Stage((), Load("a", (), f8), output="z")])
        buffers = {n: Buffer(n, (4,), a_dtype if n == "a" else f8, "temp") for n in ("x", "y", "a", "l0", "l1", "z")}
        return Program(buffers, ["x", "y"], [make, loop] + ([read] if after else []),
                       ["l0", "a" if returned else "z"])
    assert owned_carried(program(False, False), 1, {"a", "z"}) == (True, False)   # x: an input, not fresh
    assert owned_carried(program(True, False), 1, {"a", "z"}) == (False, False)   # a read after the loop
    assert owned_carried(program(False, True), 1, {"a", "z"}) == (False, False)   # a returned
    assert owned_carried(program(False, False), 1, {"z"}) == (False, False)       # a not made fresh
    assert owned_carried(program(False, False, np.dtype(np.float32)), 1, {"a", "z"}) == (False, False)   # another dtype


# -- vectorised loops with masked last iterations (tail folded) -------------------------------------
def shortest_paths(D):
    n = D.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if D[i, k] + D[k, j] < D[i, j]:
                    D[i, j] = D[i, k] + D[k, j]


def clip_and_count(x, y, t):
    count = 0
    for i in range(x.shape[0]):
        if x[i] > t:
            y[i] = t
            count = count + 1
    return count


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.int32, np.float32])
def test_vectorised_nest_of_every_length(nests, dtype):
    def make():
        n = int(rng.integers(1, 40))
        D = (rng.random((n, n)) * 100).astype(dtype)
        D[rng.random((n, n)) < 0.6] = 10**6
        return (D,)
    check(shortest_paths, calls=6, make=make)
    check(clip_and_count, calls=6, make=lambda: (rng.random(int(rng.integers(1, 70))),
                                                 rng.random(int(rng.integers(70, 80))).astype(dtype), 0.6))
    assert nests


def int_parts(x):
    t = 0
    for i in range(x.shape[0]):
        t = t ^ int(x[i])
    return t


@pytest.mark.parametrize("edge", [None, -2.0**63, 2.0**63, -2.0**62, np.nan, np.inf, -np.inf, 1e30])
def test_int_of_a_float_at_and_past_int64(edge):
    compiled = numpile.compile(int_parts, backend="llvm")
    x = rng.standard_normal(12) * 1e6
    same(compiled(x.copy()), int_parts(x.copy()))
    if edge is not None:
        x[int(rng.integers(0, 12))] = edge
        try:
            want = int_parts(x.copy())
        except (ValueError, OverflowError) as e:
            with pytest.raises(type(e)):
                compiled(x)
        else:
            same(compiled(x), want)


def test_threads_running_one_nest_at_once_each_get_their_own_values():
    import sys
    import threading
    compiled = numpile.compile(count_and_sum, backend="llvm")
    inputs = [rng.standard_normal(25) for _ in range(8)]
    compiled(inputs[0])
    wrong = []

    def work(x):
        want = count_and_sum(x)
        for _ in range(300):
            got = compiled(x)
            if got != want:
                wrong.append((got, want))
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads as often as CPython will
    try:
        threads = [threading.Thread(target=work, args=(x,)) for x in inputs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert not wrong


def counts_of(values, bins):
    hist = np.zeros(bins, dtype=np.int64)   # np.zeros's array: the nest updates it in place
    for v in values:
        k = int(v * bins)
        hist[k] += 1
    return hist


def test_array_made_by_np_zeros_updated_in_place(nests):
    check(counts_of, make=lambda: (rng.random(int(rng.integers(1, 200))), int(rng.integers(1, 9))))
    assert nests


def count_then_scale(x):
    count = 0
    for i in range(x.shape[0]):
        if x[i] > 0:
            count = count + 1
    m = 0
    for i in range(x.shape[0]):   # a second nest taking the first's Python int
        if x[i] * count > 1.0:
            m = m + 1
    return x * count, m, count + 1   # kernels taking it


def test_python_scalars_a_nest_hands_to_other_steps(nests):
    check(count_then_scale, make=lambda: (rng.standard_normal(int(rng.integers(1, 40))),))
    assert len(nests) >= 2


# -- slices reduced in the nest: max, min, integer sums, products of vectors ----------------------
def best_split(t):
    # PolyBench's nussinov step: the best of the sums of a row's and a column's pieces
    n = t.shape[0]
    out = np.zeros(n, dtype=t.dtype)
    for i in range(n - 2):
        for j in range(i + 2, n):
            out[i] += (t[i, i + 1:j] + t[i + 2:j + 1, j]).max() - t[j, :i + 1].min()
    return out


def triangular_solve(L, b):
    x = np.zeros_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def counts_in_windows(flags, k):
    out = np.zeros(flags.shape[0], dtype=np.int64)
    for i in range(flags.shape[0]):
        out[i] = flags[:i + 1].sum() + (flags[i:] > 0).sum() * k
    return out


def block_sums(a):
    out = np.zeros((a.shape[0] - 1, a.shape[1] - 1), dtype=np.int64)
    for i in range(a.shape[0] - 1):
        for j in range(a.shape[1] - 1):
            out[i, j] = a[i:i + 2, j:j + 2].sum() + np.dot(a[i, :j + 1], a[i + 1, :j + 1])
    return out


def from_negative_bounds(x):
    out = np.zeros(x.shape[0])
    for i in range(1, x.shape[0]):
        out[i] = x[-i:].max() + x[:-i].min() + x[i - 100:i + 100].max()
    return out


def test_slices_reduced_in_the_nest(nests):
    n = int(rng.integers(6, 14))
    check(best_split, rng.integers(-50, 50, (n, n)))
    check(best_split, rng.standard_normal((n, n)))
    L, b = np.tril(rng.random((n, n))) + np.eye(n), rng.standard_normal(n)
    # a product adds in order (NumPy's is BLAS's: equal within rounding)
    np.testing.assert_allclose(numpile.compile(triangular_solve, backend="llvm")(L, b), triangular_solve(L, b), rtol=1e-12)
    check(counts_in_windows, rng.random(n) < 0.5, 3)
    check(block_sums, rng.integers(-9, 9, (n, n + 2)).astype(np.int32))
    check(from_negative_bounds, rng.standard_normal(n))
    assert len(nests) >= 6 and all("loop" not in str(type(n)) for n in nests)


def test_a_nan_in_a_slice_gives_nan(nests):
    x = rng.standard_normal(9)
    x[4] = np.nan
    check(from_negative_bounds, x)
    assert nests


def test_max_of_an_empty_slice_raises_numpys_error(nests):
    def empty_window(x, k):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = x[i:i + k].max()
        return out
    x = rng.standard_normal(7)
    compiled = numpile.compile(empty_window, backend="llvm")
    same(compiled(x, 2), empty_window(x, 2))
    with pytest.raises(ValueError, match="zero-size array"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        compiled(x, 0)


def test_slice_used_after_its_array_changed_is_not_a_nest(nests):
    def stale(x):
        out = np.zeros(x.shape[0])
        for i in range(1, x.shape[0]):
            s = x[:i]
            x[0] = x[0] + 1.0
            out[i] = s.max()   # reads x[0] as updated (a view)
        return out
    check(stale, rng.standard_normal(8))


# -- slices stored in the nest ---------------------------------------------------------------------
def two_sweeps(A, B, steps):
    for _ in range(steps):
        B[1:-1] = (A[:-2] + A[1:-1] + A[2:]) / 3.0
        A[1:-1] = (B[:-2] + B[1:-1] + B[2:]) / 3.0
    return A, B


def rows_then_points(A):
    # a slice update reading the row ahead (in order: stored as it goes), then a sweep along it
    for i in range(1, A.shape[0] - 1):
        A[i, 1:-1] = A[i - 1, :-2] + A[i, 1:-1] + A[i, 2:] + A[i + 1, 1:-1]
        for j in range(1, A.shape[1] - 1):
            A[i, j] = (A[i, j] + A[i, j - 1]) / 5.0
    return A


def columns(p, u):
    for j in range(1, p.shape[1]):
        p[1:-1, j] = -0.5 / (0.25 * p[1:-1, j - 1] + 2.0) + u[j, 1:-1]
    return p


def shift_register(buf, x):
    out = np.zeros(x.shape[0])
    for t in range(x.shape[0]):
        buf[1:] = buf[:-1]             # reads what it stores next: NumPy copies first (a stack buffer)
        buf[0] = x[t]
        out[t] = buf[-1] * 0.5 + buf[1:3].max()
    return out


def blocks_and_flags(A, flags):
    for i in range(A.shape[0] - 1):
        A[i:i + 2, 1:3] = A[i:i + 2, :2] * 0.5 + i   # two rows, read at other columns (no overlap)
        flags[i, :] = A[i, :] > 0.5
        flags[i + 1, 1:] = True
    return A, flags


def test_slices_stored_in_the_nest(nests):
    n = int(rng.integers(8, 20))
    check(two_sweeps, rng.random(n), rng.random(n), 5)
    check(rows_then_points, rng.random((n, n + 3)))
    check(columns, rng.random((n, n)), rng.random((n, n)))
    check(shift_register, rng.random(6), rng.standard_normal(n))
    check(blocks_and_flags, rng.random((n, 4)), np.zeros((n, 4), dtype=bool))
    assert len(nests) >= 5


def laplace_sweeps(u, n):   # certik/laplace_test's numpy sweep: a value of 98 x 100 read where it is stored
    for _ in range(n):
        u[1:-1] = u[2:] + u[:-2]
    return u


def test_a_stored_slice_past_the_stack_buffer_goes_through_the_heap(nests, monkeypatch):
    from numpile_llvm.nests import slice_stores
    monkeypatch.setattr(slice_stores, "SCRATCH_BYTES", 16)   # two elements
    x, buf = rng.standard_normal(9), rng.random(6)
    mine, theirs = buf.copy(), buf.copy()
    compiled = numpile.compile(shift_register, backend="llvm")
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no stop: the frame is not run as Python
        got = compiled(mine, x)
        same(got, shift_register(theirs, x))
        same(mine, theirs)
        u = rng.random((100, 100))
        mine, theirs = u.copy(), u.copy()
        same(numpile.compile(laplace_sweeps, backend="llvm")(mine, 10), laplace_sweeps(theirs, 10))
        same(mine, theirs)


def pooled(x, size):
    out = np.empty((x.shape[0], x.shape[1], x.shape[2] // size, x.shape[3] // size), dtype=x.dtype)
    for i in range(x.shape[2] // size):
        for j in range(x.shape[3] // size):
            out[:, :, i, j] = x[:, :, i * size:(i + 1) * size, j * size:(j + 1) * size].max(axis=(2, 3))
    return out


def row_counts(a):
    out = np.zeros((a.shape[0], a.shape[1]), dtype=np.int64)
    for k in range(a.shape[2]):
        out[:, 1] += (a[:, :, k:] > 0).sum(axis=-1).min(axis=1) + a[:, :, :k + 1].sum(axis=(1, 2))
    return out


def test_slices_reduced_along_axes_in_the_nest(nests):
    check(pooled, rng.standard_normal((2, 3, 8, 6)), 2)
    check(pooled, rng.integers(-99, 99, (1, 2, 9, 9)).astype(np.int16), 3)
    check(row_counts, rng.integers(-5, 5, (3, 4, 6)))
    assert len(nests) >= 3


def test_numba_in_the_same_process_leaves_the_errors_raised_right():
    # Numba shares the process's LLVM and registers PyExc_RuntimeError and the like as the exception
    # objects; a nest's entry, which loads the C variable, crashed raising it after Numba compiled
    pytest.importorskip("numba")
    script = textwrap.dedent("""
        import numba, numpy as np, numpile
        @numba.njit
        def picky(a, i):
            if i > 2:
                raise RuntimeError("no")
            return a[i]
        picky(np.ones(3), 1)
        def shift_register(buf, x):
            out = np.zeros(x.shape[0])
            for t in range(x.shape[0]):
                buf[1:] = buf[:-1]
                buf[0] = x[t]
                out[t] = buf[t]   # past buf's end at t = 5: the nest stops (IndexError), Python raises
            return out
        numpile.config.loop_capture_min = 1
        x, buf = np.arange(7.0), np.ones(5)
        try:
            numpile.compile(shift_register, backend="llvm")(buf.copy(), x)
        except IndexError as e:
            print(str(e) == "index 5 is out of bounds for axis 0 with size 5")
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.split() == ["True"], (out.returncode, out.stderr[-2000:])


def levinson(r):
    # PolyBench's durbin: a reversed slice in a product, and a store reading the stored array reversed
    y = np.empty_like(r)
    y[0] = -r[0]
    beta, alpha = 1.0, -r[0]
    for k in range(1, r.shape[0]):
        beta = (1 - alpha * alpha) * beta
        alpha = -(r[k] + r[k - 1::-1] @ y[:k]) / beta
        y[:k] += alpha * y[k - 1::-1]
        y[k] = alpha
    return y


def stepped(x, out):
    for i in range(1, x.shape[0]):
        out[i, ::2] = x[i - 1::-1].max() + x[::3].min() * i
        out[i, -1:0:-2] = x[i - 1::-1].min() - x[::-3].max()
        out[i - 1, 5:1:-1] = out[i, 1:5] * 0.5 + x[i - 1::-1].max()
    return out


def test_slices_with_steps_in_the_nest(nests):
    n = int(rng.integers(8, 16))
    r = rng.random(n) * 0.1
    np.testing.assert_allclose(numpile.compile(levinson, backend="llvm")(r), levinson(r), rtol=1e-10)
    check(stepped, rng.standard_normal(n), np.zeros((n, 7)))
    assert len(nests) >= 2


def row_extremes(x):
    out = np.zeros(x.shape[0], dtype=x.dtype)
    for i, row in enumerate(x):      # x[i] of a matrix: its row x[i, :]
        out[i] = row.max() - row[::2].min()
    return out


def test_rows_indexed_by_one_item_are_slices(nests):
    check(row_extremes, make=lambda: (rng.integers(-50, 50, size=(7, 5)),))
    assert len(nests) == 1


def levinson_flipped(r):
    y = np.empty_like(r)
    a, b = -r[0], 1.0
    y[0] = -r[0]
    for k in range(1, r.shape[0]):
        b *= 1.0 - a * a
        a = -(r[k] + np.dot(np.flip(r[:k]), y[:k])) / b
        y[:k] += a * np.flip(y[:k])      # reads what it writes: through a buffer
        y[k] = a
    return y


def flipped_rows(x):
    out = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        out[i] = np.flip(x[i - 1]) * 2 + np.flip(x[i, ::2], axis=0).max()
    return out


def test_flips_of_slices(nests):
    r = rng.random(int(rng.integers(8, 16))) * 0.1   # the recursion is well conditioned on these
    np.testing.assert_allclose(numpile.compile(levinson_flipped, backend="llvm")(r), levinson_flipped(r), rtol=1e-10)
    check(flipped_rows, make=lambda: (rng.integers(-9, 9, size=(6, 4)),))
    assert len(nests) == 2


def rows_shifted_in_place(x):
    for i in range(x.shape[0]):
        row = x[i]
        x[i, 1:] = row[:-1] + 1               # reads one behind what it stores: NumPy reads first
        x[i, :-1] = np.flip(row)[1:] * 2      # reads it reversed
    return x


def test_slices_of_rows_stored_over_themselves(nests):
    check(rows_shifted_in_place, make=lambda: (rng.integers(-9, 9, size=(5, 6)),))
    assert len(nests) == 1


def crc_of_bytes(data, poly=0x8408):
    crc = 0xFFFF
    for b in data:                      # a Python int meets each uint8 element
        cur = 0xFF & b
        for _ in range(0, 8):
            if (crc & 0x0001) ^ (cur & 0x0001):
                crc = (crc >> 1) ^ poly
            else:
                crc >>= 1
            cur >>= 1
    crc = ~crc & 0xFFFF
    return (crc << 8) | ((crc >> 8) & 0xFF)


def python_int_into_small_ints(x, k):
    total = np.zeros((), dtype=x.dtype)
    for i in range(x.shape[0]):
        total = total + (x[i] ^ (k - i))      # NEP 50: the Python int must fit x's dtype
    return total


def test_python_ints_meeting_small_numpy_ints(nests):
    check(crc_of_bytes, make=lambda: (rng.integers(0, 256, 64).astype(np.uint8),))
    assert nests    # the byte loop (its first iteration peeled: crc becomes a graph value there)
    for dtype in (np.uint8, np.int16, np.uint64):
        x = rng.integers(0, 100, 10).astype(dtype)
        check(python_int_into_small_ints, x, 50)
    with pytest.raises(OverflowError):            # k - i goes negative for a uint8: NumPy raises
        numpile.compile(python_int_into_small_ints, backend="llvm")(rng.integers(0, 100, 10).astype(np.uint8), 5)


def nearest_symbol(E, symbols):
    out = np.zeros(len(E), dtype=symbols.dtype)
    for i in range(len(E)):
        out[i] = symbols[np.argmin(np.abs(E[i] - symbols) ** 2)]   # a whole array in element code
    return out


def best_of_rows(x):
    out = np.zeros((x.shape[0], 3), dtype=np.int64)
    for i in range(x.shape[0] - 1):
        out[i, 0] = x[i].argmax()
        out[i, 1] = np.argmin(x[i, ::-1])
        out[i, 2] = np.argmax(x[i:i + 2])      # flat, over two rows
    return out


def test_argmin_argmax_of_slices(nests):
    check(nearest_symbol, make=lambda: (rng.standard_normal(30), rng.standard_normal(7)))
    for dtype in (np.float64, np.int32, np.uint8):
        x = rng.integers(0, 5, size=(6, 4)).astype(dtype)     # ties: the first of equals wins
        check(best_of_rows, x)
    x = rng.standard_normal((6, 4))
    x[2, 1] = x[2, 3] = x[4, 0] = np.nan                    # NaN wins, its first
    check(best_of_rows, x)
    assert len(nests) == 5


def empty_argmax(x, k):
    out = 0
    for i in range(x.shape[0]):
        out += np.argmax(x[i, k:])
    return out


def test_argmax_of_an_empty_slice_raises_numpys_error():
    x = rng.standard_normal((4, 3))
    with pytest.raises(ValueError, match="empty sequence"):
        numpile.compile(empty_argmax, backend="llvm")(x, 3)


def csr_times(indptr, indices, data, x):
    y = np.empty(indptr.size - 1, data.dtype)
    for i in range(indptr.size - 1):
        cols = indices[indptr[i]:indptr[i + 1]]       # bounds read from an array: one length for both
        vals = data[indptr[i]:indptr[i + 1]]
        y[i] = vals @ x[cols]                         # a gather by a slice of positions
    return y


def random_csr(rows: int, columns: int, negative: bool = False):
    counts = rng.integers(0, 5, rows)                 # empty rows too
    indptr = np.concatenate(([0], np.cumsum(counts)))
    indices = rng.integers(-columns if negative else 0, columns, indptr[-1])
    return indptr, indices, rng.standard_normal(indptr[-1]), rng.standard_normal(columns)


def test_rows_of_a_sparse_matrix_gathered_by_slices(nests):
    compiled = numpile.compile(csr_times, backend="llvm")
    for negative in (False, True, True):             # NumPy's negative positions too
        args = random_csr(12, 7, negative)
        got = compiled(*args)
        assert got.dtype == np.float64 and got.shape == (12,)
        np.testing.assert_allclose(got, csr_times(*args), rtol=1e-13, atol=1e-13)   # a dot's order is BLAS's in NumPy
    assert len(nests) == 1
    indptr, indices, data, x = random_csr(6, 5)
    indices[-1] = 5                                                      # out of bounds: NumPy's IndexError
    with pytest.raises(IndexError):
        numpile.compile(csr_times, backend="llvm")(indptr, indices, data, x)


def float_sums_of_slices(x, out):
    for i in range(x.shape[0]):
        out[i, 0] = x[i, :].sum()                      # a row: NumPy's pairwise order, to the bit
        out[i, 1] = (x[i, ::2] * 0.5).sum()
        out[i, 2] = x[i, i:i + 9].sum()                # a window clamped at the end: at most 9
        out[i, 3] = x[i, i:i + 5].mean()               # NumPy's sum over the count (empty: NaN)
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32])
def test_float_sums_of_short_slices_are_numpys_to_the_bit(nests, dtype):
    out = np.float64 if dtype == np.int32 else dtype   # an int's mean is a float64
    for n in (1, 5, 8, 9, 16, 23, 64, 100, 128):       # under 8 one by one, else eight partial sums
        x = (rng.standard_normal((6, n)) * 10.0 ** rng.uniform(-3, 3, (6, n))).astype(dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # NumPy's mean of an empty window
            check(float_sums_of_slices, x, np.zeros((6, 4), out), calls=1)
    assert nests


def rows_matching(db, mask=(1, 0, 1)):
    out = np.zeros(db.shape[0], dtype=bool)
    for idx, line in enumerate(db):
        head, rest = line[0], line[1:]
        if (mask == np.bitwise_and(mask, rest)).all():     # a constant tuple against a row's slice
            if head == 1:
                out[idx] = 1
    return out


def any_all_of_rows(x):
    out = np.zeros((x.shape[0], 3), dtype=bool)
    for i in range(x.shape[0]):
        out[i, 0] = (x[i] > 0).all()
        out[i, 1] = np.any(x[i, ::2] > 1.0)
        out[i, 2] = x[i, i:].all()                          # empty for the last rows past the width: True
    return out


def test_constant_tuples_and_any_all_of_slices(nests):
    check(rows_matching, make=lambda: (rng.integers(0, 2, size=(40, 4)).astype(bool),))
    check(any_all_of_rows, make=lambda: (rng.standard_normal((8, 5)) + 0.5,))
    assert len(nests) == 2


def small_products(G, H, out):
    for i in range(G.shape[0]):
        for j in range(H.shape[0]):
            GH = G[i] @ H[j]                         # (3, 3) @ (3, 3)
            out[i, j] += GH @ H[j, 0] @ G[i, :, 1]    # matrix @ vector, then vector @ vector
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_small_matrix_products_in_a_nest(nests, dtype):
    def make():
        G = rng.standard_normal((4, 3, 3)).astype(dtype) + (1j * rng.standard_normal((4, 3, 3)) if dtype == np.complex128 else 0)
        H = rng.standard_normal((5, 3, 3)).astype(dtype)
        return G, H, np.zeros((4, 5), dtype)
    compiled = numpile.compile(small_products, backend="llvm")
    for _ in range(2):
        G, H, out = make()
        got, want = compiled(G, H, out.copy()), small_products(G, H, out.copy())
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)   # a product's order is BLAS's in NumPy
    assert nests


def covariance_as_written(M, data):
    cov = np.zeros((M, M), dtype=data.dtype)
    for i in range(M):
        cov[i:M, i] = cov[i, i:M] = data[:, i] @ data[:, i:M] / 3
    return cov


def vector_times_rows(x, A, out):
    for i in range(out.shape[0]):
        out[i, i:] = x[i] @ A[:, i:]
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_vector_matrix_products_in_a_nest(nests, dtype):
    """`v @ m` in a loop: m's rows added into a stack buffer (NPBench's covariance as written), a
    result longer than the buffer computed column by column, each the sums NumPy's are."""
    def draw(shape):
        return rng.integers(-9, 9, size=shape).astype(dtype) if dtype == np.int64 else rng.standard_normal(shape).astype(dtype)
    tolerance = {np.float64: 1e-12, np.float32: 1e-4}.get(dtype, 0)
    for M, N in ((1, 3), (9, 7), (40, 31)):
        data = draw((N, M))
        got, want = numpile.compile(covariance_as_written, backend="llvm")(M, data), covariance_as_written(M, data)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    long = 8192 + 40    # past the buffer: a column at a time
    x, A = draw((3, 5)), draw((5, long))
    got = numpile.compile(vector_times_rows, backend="llvm")(x, A, np.zeros((3, long), dtype))
    want = vector_times_rows(x, A, np.zeros((3, long), dtype))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance)
    assert len(nests) >= 2


def dots_of_rows(L, x, stride):
    out = np.zeros(L.shape[0], dtype=L.dtype)
    for i in range(L.shape[0]):
        out[i] = L[i, :i] @ x[:i] + np.dot(L[::stride, i], x[:L[::stride, i].shape[0]])
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_dot_products_in_a_nest_add_side_by_side(nests, dtype, capsys):
    """A dot of float slices in a loop adds in an order the vectoriser picks, as BLAS's does (one
    add after another ran NPBench's trisolv at the adder's latency): the sums NumPy's are within
    rounding, for every length about the vector widths (tails of each size), rows and columns."""
    tolerance = {np.float64: 1e-12, np.float32: 2e-5}[dtype]
    numpile.set_logs(output_code=True)
    try:
        for n, stride in ((1, 1), (37, 2), (70, 3)):
            L, x = rng.standard_normal((n, n)).astype(dtype), rng.standard_normal(n).astype(dtype)
            got, want = numpile.compile(dots_of_rows, backend="llvm")(L, x, stride), dots_of_rows(L, x, stride)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=tolerance, atol=tolerance * n)
    finally:
        numpile.set_logs(output_code=False)
    assert nests and "@llvm.vector.reduce.fadd" in capsys.readouterr().err


def sieve(N):   # scipy-lectures' sieve of Eratosthenes: a slice step the loop's index gives
    mask = np.ones([N], dtype=bool)
    mask[:2] = False
    for j in range(2, int(np.sqrt(N)) + 1):
        if mask[j]:
            mask[j * j::j] = False
    return np.nonzero(mask)[0]


def strided_updates(x, first, last):   # steps the loop's index gives, in a branch as the sieve's
    for k in range(first, last):
        if x[k] < 10.0:
            x[k * k::k] = 0.5 * k   # (a value of the slice's shape would need its length when traced)
    return x


def test_slices_with_a_step_computed_in_the_nest(nests):
    check(sieve, 10_000)
    check(strided_updates, rng.standard_normal(50), 1, 9)
    assert len(nests) >= 2


@pytest.mark.parametrize("first", [-4, 0])
def test_a_computed_step_that_is_not_positive_is_numpys(first, nests):
    """A negative step stops the nest and the frame runs as Python (NumPy's downward slice); 0
    raises NumPy's ValueError."""
    x = rng.standard_normal(20)
    compiled = numpile.compile(strided_updates, backend="llvm")
    if first == 0:
        with pytest.raises(ValueError) as want:
            strided_updates(x.copy(), first, 3)
        with pytest.raises(ValueError) as got, warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            compiled(x.copy(), first, 3)
        assert str(got.value) == str(want.value)
        return
    mine, theirs = x.copy(), x.copy()
    with pytest.warns(RuntimeWarning, match="step"):
        same(compiled(mine, first, -1), strided_updates(theirs, first, -1))
    same(mine, theirs)
