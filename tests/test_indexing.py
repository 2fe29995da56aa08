"""Advanced indexing captured in the graph: integer arrays and lists among the index items (reads,
assignments, augmented assignments) and assignments through boolean masks, each compared with
NumPy on fresh random inputs, on every backend, including NumPy's errors and their messages."""

import numpy as np
import pytest

import numpile
from conftest import rand, run_like_numpy

BACKENDS = ["eager", "llvm"]


def _run(fn, backend, make_args, graphs=1):
    """fn compiled and eager on copies of the same fresh arguments, twice (conftest.run_like_numpy)."""
    run_like_numpy(fn, backend, lambda call: make_args(), graphs)


def _ints(rng, high, shape, dtype=np.int64):
    return rng.integers(-high, high, shape).astype(dtype)


READS = {
    "x[i]": (lambda x, i, j: x[i] * 2, (6, 5), (7,), (3,)),
    "x[i] 2-d index": (lambda x, i, j: x[i] + 1, (6, 5), (2, 3), (3,)),
    "x[:, j]": (lambda x, i, j: x[:, j] - x[:, :3], (6, 5), (7,), (3,)),
    "x[..., j]": (lambda x, i, j: x[..., j].sum(axis=0), (2, 6, 5), (7,), (4,)),
    "x[None, i]": (lambda x, i, j: x[None, i], (6, 5), (4,), (3,)),
    "x[i, j] broadcast": (lambda x, i, j: x[i[:, None], j], (6, 5), (4,), (3,)),
    "x[i, 1:]": (lambda x, i, j: x[i, 1:], (6, 5), (4,), (3,)),
    "x[1:, j] uint8": (lambda x, i, j: x[1:, j.astype(np.uint8) % 5], (6, 5), (4,), (3,)),
    "y[:, i, :, i] apart": (lambda y, i, j: y[:, i, :, i], (2, 6, 4, 6), (2, 3), (3,)),
    "y[1, :, i] apart": (lambda y, i, j: y[1, :, i] * 3, (2, 4, 6), (5,), (3,)),
    "y[:, 1, i] together": (lambda y, i, j: y[:, 1, i], (2, 4, 6), (5,), (3,)),
    "x[list]": (lambda x, i, j: x[[0, 2, -1]] + x[[[1, 1], [0, -6]]].sum(), (6, 5), (2,), (3,)),
    "x[0-d array]": (lambda x, i, j: x[i[0, ...]] * 2, (6, 5), (3,), (3,)),
    "result is a copy": (None, (6, 5), (4,), (3,)),
}


def _result_is_a_copy(x, i, j):
    y = x[i]
    y[0] = 100.0
    return x.sum(), y


READS["result is a copy"] = (_result_is_a_copy, *READS["result is a copy"][1:])


@pytest.mark.parametrize("case", list(READS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_advanced_reads(rng, backend, case):
    fn, shape, ishape, jshape = READS[case]
    n = min(shape)
    _run(fn, backend, lambda: (rand(rng, shape), _ints(rng, n, ishape), _ints(rng, n, jshape)))


def _assign(x, i, v):
    x[i] = v
    return x.sum()


def _assign_scalar(x, i, v):
    x[:, i] = 0.5
    return x


def _add_at_duplicates(x, i, v):
    x[i] += v          # buffered, as NumPy: a repeated index adds once
    return x


def _assign_pairs(x, i, v):
    x[i, i[::-1] % 5] = v
    return x


def _mask_zero(x, i, v):
    x[x < 0] = 0
    return x * 2


def _mask_leading_dims(x, i, v):
    y = x.reshape(3, 2, 5)
    y[y.sum(axis=-1) > 0] = -1.0
    return x


def _mask_int(x, i, v):
    k = (x * 10).astype(np.int32)
    k[k % 3 == 0] = 7
    return k


WRITES = {"x[i] = v": _assign, "x[:, i] = scalar": _assign_scalar, "x[i] += v duplicates": _add_at_duplicates,
          "x[i, j] = v": _assign_pairs, "x[mask] = 0": _mask_zero, "x[2-d mask] = c": _mask_leading_dims,
          "int x[mask] = 7": _mask_int}


@pytest.mark.parametrize("case", list(WRITES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_advanced_writes(rng, backend, case):
    _run(WRITES[case], backend, lambda: (rand(rng, (6, 5)), rng.integers(0, 5, 8), rand(rng, (8,))[:, None][:, :1]))


ERRORS = {  # the form, and the graphs captured before NumPy raises (at the break, or in the graph)
    "constant out of bounds": (lambda x, i: x[[0, 9]], 0),
    "runtime out of bounds": (lambda x, i: x[i + 10], 1),
    "negative out of bounds": (lambda x, i: x[:, i - 20], 1),
    "float index array": (lambda x, i: x[i.astype(np.float64)], 1),
    "shapes do not broadcast": (lambda x, i: x[i, i[:2]], 1),
    "too many indices": (lambda x, i: x[i, i, i], 0),
    "mask of another shape": (None, 1),
}


def _mask_of_another_shape(x, i):
    x[x[:3] > 0] = 0
    return x


ERRORS["mask of another shape"] = (_mask_of_another_shape, 1)


@pytest.mark.parametrize("case", list(ERRORS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_numpys_indexing_errors(rng, backend, case):
    fn, graphs = ERRORS[case]

    def f(x, i):
        return fn(x, i)
    _run(f, backend, lambda: (rand(rng, (6, 5)), rng.integers(0, 5, 4)), graphs)


def _add_at(x, i, v):
    np.add.at(x, i, v[:, None])   # unbuffered: every repeated index adds again
    return x.sum()


def _at_forms(x, i, v):
    np.negative.at(x, i[:2])
    np.maximum.at(x, (i, 0), 0.25)
    y = x * 2
    np.multiply.at(y, i[::-1], 3)
    return y


def _add_at_out_of_bounds(x, i, v):
    x += 1
    np.add.at(x, i + 10, 1.0)   # NumPy updates x, then raises: x is updated once
    return x


AT = {"np.add.at": _add_at, "negative/maximum/multiply.at": _at_forms, "out of bounds": _add_at_out_of_bounds}


@pytest.mark.parametrize("case", list(AT))
@pytest.mark.parametrize("backend", BACKENDS)
def test_ufunc_at_updates_in_place_unbuffered(rng, backend, case):
    _run(AT[case], backend, lambda: (rand(rng, (6, 5)), rng.integers(-6, 6, 9), rand(rng, (9,))))
