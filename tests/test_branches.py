"""Branches on data in loop bodies (tracer/control/branches.py: cond nodes) and loop nests of element code
(numpile_llvm/nests/nest.py), differentially against NumPy on fresh random inputs: values, dtypes,
Python types, in-place updates, graph and break counts."""

import numpy as np
import pytest

import numpile

BACKENDS = ["eager", "llvm"]


def clip_in_place(x, t):
    for i in range(x.shape[0]):
        if x[i] > t:
            x[i] = t
    return x


def signed_sum(x):
    s = x[0] * 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = s + x[i]
        else:
            s = s - 2.0 * x[i]
    return s


def ternary(x):
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] if x[i] > 0 else -0.5 * x[i]
    return out


def both_conditions(x, y):
    count = 0
    for i in range(x.shape[0]):
        if x[i] > 0 and y[i] < 0.5:
            count = count + 1
    return count


def either_value(x, y):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] > 0.5 or y[i] > 0.5
    return out


def with_continue(x):
    total = x[0] * 0
    for i in range(x.shape[0]):
        if x[i] < 0:
            continue
        total = total + x[i] * x[i]
    return total


def nested(x):
    out = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        if x[i] > 0:
            if x[i] > 1:
                out[i] = 2
            else:
                out[i] = 1
        elif x[i] < -1:
            out[i] = -2
    return out


def _pick(a, b):
    if a > b:
        return a - b
    return b - a


def inlined_returns(x, y):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = _pick(x[i], y[i])
    return out


def floyd(D):
    n = D.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if D[i, k] + D[k, j] < D[i, j]:
                    D[i, j] = D[i, k] + D[k, j]
    return D


def crc16(data):
    crc = 0xFFFF
    for b in data:
        crc ^= int(b)
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xA001
            else:
                crc >>= 1
    return crc


def bins(x, n):
    counts = np.zeros(n, dtype=np.int64)
    for v in x:
        k = int(v * n)
        if k >= n:
            k = n - 1
        counts[k] += 1
    return counts


def uint8_wraps(a):
    for i in range(a.shape[0]):
        if a[i] > 100:
            a[i] = a[i] + a[i]   # uint8 arithmetic wraps, as NumPy's does
    return a


def gauss_seidel(A):
    for i in range(1, A.shape[0] - 1):
        for j in range(1, A.shape[1] - 1):
            A[i, j] = (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1] + A[i, j]) / 5.0
    return A


def _match(a, b):
    if a + b == 3:
        return 1
    return 0


def nussinov(seq):
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(table[i, j - 1], table[i + 1, j])
            if i < j - 1:
                best = max(best, table[i + 1, j - 1] + _match(seq[i], seq[j]))
            for k in range(i + 1, j):
                best = max(best, table[i, k] + table[k + 1, j])
            table[i, j] = best
    return table


def nussinov_slices(seq):
    # PolyBench's: the slices' max is valid only where the branch's test holds (i < j - 1)
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(table[i, j - 1], table[i + 1, j])
            if i < j - 1:
                best = max(best, table[i + 1, j - 1] + (seq[i] + seq[j] == 3))
                best = max(best, (table[i, i + 1:j] + table[i + 2:j + 1, j]).max())
            table[i, j] = best
    return table


def downwards(A):
    # an inner loop going down to 0: its range is not empty for any i (none of i's range is cut off)
    for i in range(A.shape[0]):
        for j in range(i, -1, -1):
            if j < 1:
                A[i, j] += 1.0
            else:
                A[i, j] -= A[j - 1, i]
    return A


def running_extremes(x):
    lo, hi = x[0], x[0]
    for i in range(x.shape[0]):
        lo = min(lo, x[i])
        hi = max(x[i], hi, x[0])
    return lo, hi


def escape_counts(xs, ys, maxiter):
    counts = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for i in range(ys.shape[0]):
        for j in range(xs.shape[0]):
            x, y, k = 0.0, 0.0, 0
            while x * x + y * y <= 4.0 and k < maxiter:
                x, y = x * x - y * y + xs[j], 2.0 * x * y + ys[i]
                k += 1
            counts[i, j] = k
    return counts


def insertion_sort(a):
    a = a.copy()
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


def halvings(x):
    steps = np.zeros(x.shape[0], dtype=np.int64)
    for i in range(x.shape[0]):
        v = x[i]
        while True:            # a break on data: the while loop's flag
            if v < 1.0:
                break
            v = v / 2.0
            steps[i] += 1
    return steps


def _inputs(rng, name):
    n = int(rng.integers(5, 40))
    x, y = rng.standard_normal(n) * 2, rng.random(n)
    return {
        "clip_in_place": (x, 0.5), "signed_sum": (x,), "ternary": (x,), "both_conditions": (x, y),
        "either_value": (rng.random(n), y), "with_continue": (x,), "nested": (x,), "inlined_returns": (x, y),
        "floyd": (rng.random((7, 7)) * 10,), "crc16": (rng.integers(0, 256, n, dtype=np.uint8),),
        "bins": (np.append(rng.random(n), 1.0), 6), "uint8_wraps": (rng.integers(0, 256, n, dtype=np.uint8),),
        "gauss_seidel": (rng.random((9, 8)),), "nussinov": (rng.integers(0, 4, n // 2 + 3),),
        "running_extremes": (np.where(rng.random(n) < 0.2, np.nan, x),),
        "escape_counts": (np.linspace(-2, 1, n // 3 + 2), rng.random(4) - 0.5, 25), "insertion_sort": (x,),
        "halvings": (np.abs(x) * 10,), "nussinov_slices": (rng.integers(0, 4, n // 2 + 3),),
        "downwards": (rng.random((n // 4 + 3, n // 4 + 3)),),
    }[name]


PROGRAMS = [clip_in_place, signed_sum, ternary, both_conditions, either_value, with_continue, nested,
            inlined_returns, floyd, crc16, bins, uint8_wraps, gauss_seidel, running_extremes, escape_counts,
            insertion_sort, halvings, nussinov, nussinov_slices, downwards]


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _same(expected, got):
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, tuple):
        for e, g in zip(expected, got):
            _same(e, g)
        return
    if isinstance(expected, np.ndarray) or isinstance(expected, np.generic):
        assert got.dtype == expected.dtype and np.shape(got) == np.shape(expected)
        np.testing.assert_array_equal(got, expected)   # NaN where NumPy has NaN
    else:
        assert got == expected


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_captured_whole_and_same_as_numpy(fn, backend):
    rng = np.random.default_rng()
    compiled = numpile.compile(fn, backend=backend, fullgraph=True)
    for _ in range(3):   # fresh inputs each call: one compiled entry serves them
        args = _inputs(rng, fn.__name__)
        expected_args, got_args = _copies(args), _copies(args)
        expected = fn(*expected_args)
        got = compiled(*got_args)
        _same(expected, got)
        for e, g in zip(expected_args, got_args):   # in-place updates, exactly where NumPy makes them
            if isinstance(e, np.ndarray):
                np.testing.assert_array_equal(g, e)


class Recording(numpile.Backend):
    name = "recording-conds"
    supports_dynamic_shapes = supports_loops = supports_conditionals = True

    def __init__(self):
        self.graphs = []

    def compile(self, graph, example_inputs, options):
        self.graphs.append(graph)
        return graph.compile_python()


def test_a_side_knows_its_test_on_loop_indices():
    backend = Recording()
    compiled = numpile.compile(nussinov_slices, backend=backend, fullgraph=True)
    (seq,) = _inputs(np.random.default_rng(), "nussinov_slices")
    _same(nussinov_slices(seq), compiled(seq))
    text = backend.graphs[0].tabular()
    assert "where -s0 + s1 - 2 >= 0:" in text and "where s0 - s1 + 1 >= 0:" in text   # j >= i + 2, else j <= i + 1


def test_branch_is_a_cond_node_and_explained():
    rng = np.random.default_rng(1)
    report = numpile.explain(clip_in_place)(rng.standard_normal(12), 0.5)
    assert report.graph_count == 1 and report.graph_break_count == 0
    body = report.graphs[0].loops()[0].args[0]
    assert [n.target for n in body.calls if n.target == "cond"] == ["cond"]
    assert "then of cond" in str(report.graphs[0]) and "else of cond" in str(report.graphs[0])


def test_untaken_side_does_not_run():
    def guarded(x, k):
        out = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            if x[i] > 0:
                out[i] = 1.0 / x[i]    # the untaken side would divide by zero
        return out
    x = np.array([0.0, 2.0, -1.0, 0.0, 4.0, 0.5])
    for backend in BACKENDS:
        with np.errstate(divide="raise"):
            np.testing.assert_array_equal(numpile.compile(guarded, backend=backend)(x.copy(), 1), guarded(x, 1))


def test_type_that_depends_on_the_branch_breaks_and_stays_right():
    def unstable(x):
        s = 0.0                       # a Python float, or a NumPy float64 once a positive is added
        for i in range(x.shape[0]):
            if x[i] > 0:
                s = s + x[i]
        return s
    for x in (np.array([-1.0, -2.0, -3.0, -4.0, -5.0]), np.array([-1.0, 2.0, -3.0, 4.0, 5.0])):
        for backend in BACKENDS:
            got = numpile.compile(unstable, backend=backend)(x)
            assert type(got) is type(unstable(x)) and got == unstable(x)


def test_index_out_of_range_raises_numpys_error():
    def shifted(x, k):
        out = np.zeros(x.shape[0], dtype=np.int64)
        for i in range(x.shape[0]):
            if x[i] > 0:
                out[i] = x[x[i] + k]
        return out
    x = np.array([1, 0, 2, 3, 0, 1], dtype=np.int64)
    for backend in BACKENDS:
        compiled = numpile.compile(shifted, backend=backend)
        np.testing.assert_array_equal(compiled(x, 1), shifted(x, 1))
        with pytest.raises(IndexError):
            compiled(x, 3)


def test_int_of_nan_raises_as_python():
    def truncs(x):
        out = np.zeros(x.shape[0], dtype=np.int64)
        for i in range(x.shape[0]):
            out[i] = int(x[i])
        return out
    x = np.array([1.5, -2.5, 3.9, 7.0, 0.1])
    for backend in BACKENDS:
        compiled = numpile.compile(truncs, backend=backend)
        np.testing.assert_array_equal(compiled(x), truncs(x))
        with pytest.raises(ValueError):
            compiled(np.array([1.5, np.nan, 3.0, 4.0, 5.0]))


def test_branch_binding_an_existing_array_keeps_its_identity():
    # the local is one of the caller's arrays after the branch: updates through it reach that array
    def pick_and_update(x, y, z):
        for i in range(x.shape[0]):
            if x[i] > 0:
                w = y
            else:
                w = z
            w[i] = -1.0
        return w
    rng = np.random.default_rng()
    for backend in BACKENDS:
        x, y, z = rng.standard_normal(6), rng.random(6), rng.random(6)
        expected_args, got_args = _copies((x, y, z)), _copies((x, y, z))
        expected = pick_and_update(*expected_args)
        got = numpile.compile(pick_and_update, backend=backend)(*got_args)
        np.testing.assert_array_equal(got, expected)
        for e, g in zip(expected_args, got_args):
            np.testing.assert_array_equal(g, e)
        assert (got is got_args[1]) == (expected is expected_args[1])


def test_fuzz_program_returning_an_argument_bound_in_a_branch():
    # found by CI's random programs (y is x): the branch bound x to the argument y, returned as is
    def f(x, y, n):
        for k0 in range(n):
            x[k0 % len(x)] = x[k0 % len(x)] * 0.5 + k0
            x = (x * 0.5)
            if (x + np.ones_like(x) * 0.5).sum() > 0:
                x = y
            else:
                x = x
        return x
    for backend in BACKENDS:
        a = np.array([0.75])
        b = np.array([0.75])
        got, expected = numpile.compile(f, backend=backend)(b, b, 1), f(a, a, 1)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(b, a)
        assert (got is b) == (expected is a)
