"""Nested loops whose ranges follow enclosing indices, in both directions, with branches on the
indices and element and slice reads that are valid only where the loops run or the branch lets
them (loop_ranges.py: ranges narrowed to where an inner loop runs and where a branch's side runs),
differentially against NumPy on fresh random inputs, on "eager" and "llvm", with static and
dynamic sizes."""

import itertools

import numpy as np
import pytest

import numpile
from numpile import cache

OUTER = ["range(n)", "range(n - 1, -1, -1)", "range(1, n - 1)"]
INNER = ["range(i)", "range(i + 1, n)", "range(i, -1, -1)", "range(n - 1, i, -1)", "range(i - 1, n - 1)"]
TESTS = ["j < i - 1", "i < j - 1", "j + 1 < n - 1"]
# what the side reads: an element two past the loop's edge on one side, a slice whose length
# is positive only under the test (a max of it raises on an empty one)
READS = ["A[i, j] += A[j, i] * 0.5 + A[i, j - 1]",
         "A[i, j] += A[i, j + 1:].max() if j + 1 < n else 1.0",
         "A[i, j] = A[min(i, j), max(i, j)] - 0.25"]


def program(outer, inner, test, read):
    source = (f"def f(A):\n    n = A.shape[0]\n    for i in {outer}:\n        for j in {inner}:\n"
              f"            if {test}:\n                {read}\n            else:\n                A[i, j] -= 1.0\n"
              f"    return A\n")
    namespace = {"np": np}
    exec(compile(source, f"<{outer} {inner} {test}>", "exec"), namespace)
    return namespace["f"], source


CASES = [(o, i, t, r) for (o, i), t, r in itertools.product(itertools.product(OUTER, INNER), TESTS, READS)]


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("case", CASES[::5] if len(CASES) > 60 else CASES, ids=lambda c: " / ".join(c[:3]))
def test_nested_ranges_and_branches_on_indices_as_numpy(case, backend):
    fn, source = program(*case)
    rng = np.random.default_rng()
    compiled = numpile.compile(fn, backend=backend)
    for n in (int(rng.integers(5, 9)), int(rng.integers(9, 13))):   # the second call: sizes made dynamic
        A = rng.standard_normal((n, n))
        try:
            expected = fn(A.copy())
        except (IndexError, ValueError) as e:
            with pytest.raises(type(e)):
                compiled(A.copy())
            continue
        got = compiled(A.copy())
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=source)


def clamp(i, offset, maxval):   # pythran's tests/cases/deuxd_convolution.py, as written
    j = max(0, i + offset)
    return min(j, maxval)


def clamped_convolution(x, weights):
    sx, sw = x.shape, weights.shape
    result = np.zeros_like(x)
    for i in range(sx[0]):
        for j in range(sx[1]):
            for ii in range(sw[0]):
                for jj in range(sw[1]):
                    idx = clamp(i, ii - sw[0] // 2, sw[0]), clamp(j, jj - sw[0] // 2, sw[0])
                    result[i, j] += x[idx] * weights[ii, jj]
    return result


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_clamped_indices_keep_loops_after_sizes_become_symbols(backend):
    """`x[min(max(0, i + ii - 2), 5)]` is in bounds at every index where x has more than 5 rows:
    a bound of an index over the loops is an expression of sizes, decided by a guard on them (the
    loops unrolled once x's sizes were symbols, and the function ran as Python)."""
    rng = np.random.default_rng()
    compiled = numpile.compile(clamped_convolution, backend=backend)
    entries = []

    def record(cf, event):
        if cf.root is compiled:
            entries.append(event.entry)
    cache.add_listener(record)
    try:
        for n in (int(rng.integers(8, 12)), int(rng.integers(12, 16)), int(rng.integers(16, 20))):
            x, w = rng.standard_normal((n, n)), rng.standard_normal((5, 5))
            got, want = compiled(x, w), clamped_convolution(x, w)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    finally:
        cache.remove_listener(record)
    # the first shape, then one dynamic entry for the others: each one graph of loops, no break
    assert len(entries) == 2 and all(e.graph_break is None for e in entries), [e.graph_break for e in entries]
