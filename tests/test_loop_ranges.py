"""Nested loops whose ranges follow enclosing indices, in both directions, with branches on the
indices and element and slice reads that are valid only where the loops run or the branch lets
them (loop_ranges.py: ranges narrowed to where an inner loop runs and where a branch's side runs),
differentially against NumPy on fresh random inputs, on "eager" and "llvm", with static and
dynamic sizes."""

import itertools

import numpy as np
import pytest

import numpile

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
