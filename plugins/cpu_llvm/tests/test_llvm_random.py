"""Random draws native on llvm (numpile_llvm/randoms.py): a loop with draws per element is one
native function (no kernel left to NumPy, as `perf` would say), and its values are the eager
backend's (numpile's stream is the same on every backend)."""

import numpy as np
import pytest

import numpile


def walk(x, rng):
    """A random walk with a Metropolis-style acceptance: draws in a loop carried through a branch."""
    position = 0.0
    for i in range(x.shape[0]):
        step = rng.normal(0.0, 0.5)
        if rng.random() < 0.9:
            position += step
        x[i] = position + rng.integers(0, 3) + np.random.uniform(-1.0, 1.0) + np.random.randint(2)
    return x


def grid(x):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            x[i, j] = np.random.standard_normal() * np.random.random()
    return x


@pytest.mark.parametrize("fn, make", [
    (walk, lambda: (np.zeros(300), np.random.default_rng(4))),
    (grid, lambda: (np.zeros((20, 30)),)),
], ids=["walk", "grid"])
def test_a_loop_of_draws_is_one_native_function_with_the_eager_values(fn, make, capsys):
    results = []
    for backend in ("eager", "llvm"):
        numpile.set_logs(perf=True)
        try:
            np.random.seed(9)
            results.append(numpile.compile(fn, backend=backend)(*make()))
        finally:
            numpile.set_logs()
    said = capsys.readouterr().err
    assert "a loop of element code is one native function" in said, said
    assert "runs with NumPy" not in said, said
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12, atol=1e-12)
