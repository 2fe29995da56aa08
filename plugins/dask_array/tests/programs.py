"""NumPy programs the tests run on Dask arrays: name -> (function, the inputs' (shape, dtype,
chunks)); uneven chunks throughout, and arrays of other chunks broadcast against each other."""

import dask.array as da
import numpy as np

from numpile.testing import assert_same_result


def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)


def broadcast(x, y, z):
    return np.sin(x) * y + np.exp(-z * z) - y / (1 + z * z)


def sq_diff_sum(x, y):
    return ((x - y) ** 2).sum()


def axis_reductions(x):
    return x.sum(axis=0) + x.max(axis=0) - np.abs(x).min(axis=0)


def more_reductions(x, b):
    return (x * 0.1 + 1).prod(axis=1, keepdims=True), b.any(axis=0), b.all(), (x > 0).sum(axis=1)


def int_math(a, b):
    return (a * 3 + b) % 7, (a * b).sum(axis=1), a.max()


def moments(x):
    return x.mean(axis=0), x.std(), x.var(axis=1)


def standardize(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def layer_norm(x, w):
    mu = x.mean(axis=-1, keepdims=True)
    d = x - mu
    return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5) * w


def scalar_after_tree(x):
    return np.sqrt(np.abs(x.sum()) * 2 + 1.5) + x.max()


def selects(x):
    return np.where(x > 0, x, 0.1 * x), np.clip(x, -0.5, 0.5).astype(np.float32), (x * 10).astype(np.int32)


def through_dask_array(x, y):
    return (x.T @ y + 1, np.concatenate([x, x[::2, :] * 2]), np.cumsum(x, axis=0)[1:, 2:],
            np.argmax(x, axis=1))


F32, F64, I32, B = "float32", "float64", "int32", "bool"

PROGRAMS = {
    "chain": (chain, [((50, 40), F32, (16, 15))]),
    "broadcast": (broadcast, [((37, 23), F64, (10, 7)), ((23,), F64, 5), ((37, 1), F64, 8)]),
    "sq_diff_sum": (sq_diff_sum, [((45, 30), F32, (20, 11)), ((45, 30), F32, (9, 30))]),
    "axis_reductions": (axis_reductions, [((33, 21), F64, (10, 8))]),
    "more_reductions": (more_reductions, [((30, 12), F64, (7, 5)), ((30, 12), B, (11, 4))]),
    "int_math": (int_math, [((25, 14), I32, (8, 6)), ((25, 14), I32, (10, 5))]),
    "moments": (moments, [((31, 17), F64, (9, 6))]),
    "standardize": (standardize, [((40, 9), F64, (12, 4))]),
    "softmax": (softmax, [((24, 35), F32, (7, 10))]),
    "layer_norm": (layer_norm, [((18, 32), F32, (5, 32)), ((32,), F32, 32)]),
    "scalar_after_tree": (scalar_after_tree, [((29, 13), F64, (10, 5))]),
    "selects": (selects, [((21, 19), F64, (8, 7))]),
    "through_dask_array": (through_dask_array, [((20, 12), F64, (6, 5)), ((20, 7), F64, (6, 3))]),
}


def inputs_for(spec, seed: int = 0) -> list:
    """Dask arrays of fresh random values (never all zeros) for a program's spec."""
    rng = np.random.default_rng(seed)
    made = []
    for shape, dtype, chunks in spec:
        if dtype == B:
            a = rng.random(shape) > 0.3
        elif dtype == I32:
            a = rng.integers(-50, 50, shape).astype(np.int32)
        else:
            a = rng.standard_normal(shape).astype(dtype)
        made.append(da.from_array(a, chunks=chunks))
    return made


def assert_matches(got, want, what="result"):
    """Computed results == NumPy's: type, dtype and shape exactly, values within the dtype's
    tolerance relative to the largest magnitude (float32 chains round differently by an ulp).
    NumPy scalars are compared as the 0-d arrays Dask gives."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), f"{what}: {type(got).__name__} of {len(got)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_matches(g, w, f"{what}[{i}]")
        return
    assert_same_result(np.asarray(got), np.asarray(want), what)
