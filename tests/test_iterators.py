"""Loops over iterators other than ranges (tracer/variables/iterators.py): enumerate and zip of
arrays and ranges, np.ndindex, np.ndenumerate, a.flat, and index arithmetic with `//` and `%` on
a loop's index (intervals.py). Each is captured whole (one loop node) and agrees with NumPy on the
eager and llvm backends."""

import numpy as np
import pytest

from tests.conftest import rand, run_like_numpy

BACKENDS = ["eager", "llvm"]


def rows_enumerated(x):
    out = np.zeros(x.shape[0])
    for i, row in enumerate(x):
        out[i] = row.sum() * i
    return out


def enumerated_from(x):
    out = np.zeros(x.shape[0] + 5)
    for i, row in enumerate(x, 5):
        out[i] = row[0] - i
    return out


def zipped(x, y):
    out = np.empty_like(x)
    for i, (a, b) in enumerate(zip(x, y)):
        out[i] = a * b + i
    return out


def zipped_with_range(x, y):
    out = np.zeros(len(x))
    for k, row in zip(range(3, 100, 2), x):
        out[(k - 3) // 2] = row[0] + k
    return out


def pairs_of_one_iterator(x, y):
    it = iter(x)
    out = np.zeros(len(x) // 2)
    for k, (a, b) in enumerate(zip(it, it)):   # consecutive pairs: the iterator is taken in turn
        out[k] = a[0] - b[0]
    return out


def by_ndindex(x, y):
    r = np.zeros(x.shape)
    for pos in np.ndindex(x.shape):
        r[pos] = x[pos] * 2 + y[pos]
    return r


def by_ndindex_of_ints(x, y):
    total = np.zeros(())
    for i, j in np.ndindex(*x.shape):
        total += x[i, j] * (i - j)
    return total


def ndenumerated(x, y):
    r = np.zeros(x.shape)
    for pos, v in np.ndenumerate(x):
        r[pos] = v + pos[0] - pos[-1]
    return r


def flat_sum(x, y):
    s = 0.0
    for v in x.flat:
        s += v * v
    return s


def periodic_neighbours(x, y):
    n = x.shape[0]
    out = np.empty_like(x)
    for i in range(n):
        out[i] = x[(i + 1) % n] - 2 * x[i] + x[(i - 1) % n]
    return out


def flattened_walk(x, y):
    r = np.zeros(x.shape)
    for k in range(x.size):
        i, j = k // x.shape[1], k % x.shape[1]
        r[i, j] = x[(i + 1) % x.shape[0], j] * 2
    return r, i, j


def masked_rows(db, y):
    """A boolean table checked row by row against a mask (the pattern of a kernel seen in public code)."""
    out = np.zeros(db.shape[0], dtype=bool)
    for idx, line in enumerate(db):
        head, rest = line[0], line[1:]
        if ((1, 0, 1) == np.bitwise_and((1, 0, 1), rest)).all():
            if head:
                out[idx] = True
    return out


CASES = [
    (rows_enumerated, lambda rng: (rand(rng, (40, 3)),)),
    (enumerated_from, lambda rng: (rand(rng, (30, 2)),)),
    (zipped, lambda rng: (rand(rng, (50,)), rand(rng, (50,)))),
    (zipped_with_range, lambda rng: (rand(rng, (70, 2)), None)),
    (by_ndindex, lambda rng: (rand(rng, (6, 5)), rand(rng, (6, 5)))),
    (by_ndindex_of_ints, lambda rng: (rand(rng, (7, 4)), None)),
    (ndenumerated, lambda rng: (rand(rng, (3, 4, 5)), None)),
    (flat_sum, lambda rng: (rand(rng, (9, 8)), None)),
    (periodic_neighbours, lambda rng: (rand(rng, (33,)), None)),
    (flattened_walk, lambda rng: (rand(rng, (12, 4)), None)),
    (masked_rows, lambda rng: (rand(rng, (60, 4), bool), None)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, make", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_captured_whole_and_same_as_numpy(fn, make, backend, rng):
    run_like_numpy(fn, backend, lambda call: make(rng), graphs=1, calls=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_iterator_zipped_with_itself_takes_pairs(backend, rng):
    run_like_numpy(pairs_of_one_iterator, backend, lambda call: (rand(rng, (10, 2)), None), graphs=None)


@pytest.mark.parametrize("shape", [(0, 3), (), (1,), (2, 1, 3)])
def test_ndindex_of_any_shape(shape, rng):
    def count(x):
        total = 0.0
        for pos in np.ndindex(x.shape):
            total += x[pos]
        return total
    run_like_numpy(count, "eager", lambda call: (rand(rng, shape),), graphs=None)


def printed_rows(x):
    out = np.zeros(len(x))
    for i, (row, k) in enumerate(zip(x, np.ndindex(len(x)))):
        print(end="")   # a graph break in every iteration: the rest of the loop resumes as Python's iterators
        out[i] = row.sum() + k[0]
    return out


def test_a_break_inside_resumes_with_the_same_iterators(rng):
    run_like_numpy(printed_rows, "eager", lambda call: (rand(rng, (12, 3)),), graphs=None)
