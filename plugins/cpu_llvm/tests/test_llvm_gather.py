"""Gathers compiled into kernels: `x[idx]` and every mix of index arrays with ints, slices, None and
Ellipsis loads through the index arrays inside the consumer's kernel (no extern, no temporary),
on any layout of the data and of the index arrays, with NumPy's negative indices and NumPy's
IndexError for an index out of bounds; compared with NumPy on fresh random inputs."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.lowering import Extern, Indirect, Load, walk
from test_llvm import programs
from test_llvm_in_place import run_both

rng = np.random.default_rng()


def indices(high: int, shape, dtype=np.int64):
    """Random indices in [-high, high), negatives included (unsigned: [0, high))."""
    low = 0 if np.dtype(dtype).kind == "u" else -high
    return rng.integers(low, high, shape).astype(dtype)


def gathered(program) -> list[Load]:
    return [e for k in program.kernels for s in k.stages for e in walk(s.value)
            if isinstance(e, Load) and any(isinstance(i, Indirect) for i in e.index)]


CASES = {   # name: (function of x, i, j; x's shape; i's and j's shapes)
    "x[i] * 2": (lambda x, i, j: x[i] * 2.0, (50, 7), (30,), (3,)),
    "x[i] 2-d index": (lambda x, i, j: x[i] + 1, (9, 5), (4, 6), (3,)),
    "x[:, j]": (lambda x, i, j: x[:, j] - 1, (6, 8), (4,), (5,)),
    "x[..., j] summed": (lambda x, i, j: x[..., j].sum(axis=-1), (3, 6, 8), (4,), (5,)),
    "x[None, i, 1:]": (lambda x, i, j: x[None, i, 1:], (6, 5), (4,), (3,)),
    "x[i[:, None], j]": (lambda x, i, j: x[i[:, None], j], (7, 8), (4,), (3,)),
    "x[i, j] broadcast": (lambda x, i, j: x[i, j[:1]] * x[i, 0], (7, 8), (4,), (3,)),
    "y[:, i, :, i] apart": (lambda y, i, j: y[:, i, :, i], (2, 6, 4, 6), (2, 3), (3,)),
    "y[1, :, i] apart": (lambda y, i, j: y[1, :, i] * 3, (2, 4, 6), (5,), (3,)),
    "x.T[i]": (lambda x, i, j: x.T[i], (6, 5), (4,), (3,)),
    "x[::-2][i]": (lambda x, i, j: x[::-2][i % 4], (8, 5), (6,), (3,)),
    "exp(x)[i]": (lambda x, i, j: np.sqrt(np.abs(x))[i] + x[i], (6, 5), (9,), (3,)),
    "x[i + 1]": (lambda x, i, j: x[(i % 5) + 1], (6, 5), (9,), (3,)),
    "x[x-derived index]": (lambda x, i, j: x[(np.abs(x[:, 0]) * 3).astype(np.int32) % 6], (6, 5), (9,), (3,)),
    "x[i] of a gather": (lambda x, i, j: x[i][j % 4], (6, 5), (4,), (7,)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_gathers_run_in_kernels_as_numpy_indexes(case):
    fn, shape, ishape, jshape = CASES[case]
    n = min(shape)
    for program in run_both(fn, lambda: (rng.standard_normal(shape), indices(n, ishape), indices(n, jshape))):
        assert not any(isinstance(s, Extern) for s in program.steps), str(program)
        assert gathered(program), str(program)


@pytest.mark.parametrize("data", ["float32", "int8", "uint16", "bool", "int64"])
@pytest.mark.parametrize("index", ["int8", "int32", "int64", "uint8", "uint64"])
def test_every_data_and_index_dtype(data, index):
    def f(x, i):
        return x[i], x[:, i[::-1]]
    make = (lambda: (rng.integers(-100, 100, (7, 9)).astype(data),
                     indices(7, 11, index)))
    [program] = run_both(f, make)
    assert len(gathered(program)) == 2


def test_layouts_of_the_data_and_the_index():
    def f(x, i):
        return x[i] * 2
    run_both(f, lambda: (rng.standard_normal((9, 8)).T, indices(8, (6, 4))[::2, ::-1]))
    run_both(f, lambda: (rng.standard_normal((9, 8))[::2], np.broadcast_to(indices(5, (1, 3)), (4, 3))))


def test_a_large_gather_is_split_over_threads_and_fused():
    def f(x, i):
        return x[i] * 2.0 + 1.0
    [program] = run_both(f, lambda: (rng.standard_normal(1 << 18), rng.permutation(1 << 18)))
    assert [s.stages[0].output for s in program.kernels] == ["add"] and len(program.steps) == 1


def test_dynamic_shapes():
    def f(x, i):
        return x[i] - x[i[::-1]]
    compiled = numpile.compile(f, backend="llvm", dynamic=True)
    for n, m in ((10, 4), (33, 17), (7, 2), (3, 5)):   # sizes 0 and 1 get entries of their own
        x, i = rng.standard_normal(n), indices(n, m)
        np.testing.assert_array_equal(compiled(x, i), f(x, i))
    assert len(compiled.all_entries()) == 1


@pytest.mark.parametrize("bad", [6, -7, 100])
def test_an_index_out_of_bounds_raises_numpys_index_error(bad):
    def f(x, i):
        return x[i] * 2
    compiled = numpile.compile(f, backend="llvm")
    x, i = rng.standard_normal((6, 3)), indices(6, 40)
    np.testing.assert_array_equal(compiled(x, i), f(x, i))
    i[17] = bad
    with pytest.raises(IndexError) as numpy_error:
        f(x, i)
    with pytest.raises(IndexError) as ours:
        compiled(x, i)
    assert str(ours.value) == str(numpy_error.value)


def test_a_gather_along_an_empty_dim():
    def f(x, i):
        return x[:, i] + 1
    for dynamic in (False, True):
        compiled = numpile.compile(f, backend="llvm", dynamic=dynamic)
        x = rng.standard_normal((3, 0))
        empty = np.zeros(0, np.int64)
        np.testing.assert_array_equal(compiled(x, empty), f(x, empty))
        with pytest.raises(IndexError, match="out of bounds for axis 1 with size 0"):
            compiled(x, np.array([0]))


def test_an_update_in_place_before_a_gather_that_raises_is_done_once():
    """NumPy updates x, then raises; the compiled graph must not have updated x when it raises,
    since numpile then runs the frame again with NumPy."""
    def f(x, z, i):
        x += 1
        return z[i]
    x, z = rng.standard_normal(5), rng.standard_normal(4)
    compiled = numpile.compile(f, backend="llvm")
    compiled(x.copy(), z, np.array([1, 2]))
    mine, numpys = x.copy(), x.copy()
    with pytest.raises(IndexError):
        f(numpys, z, np.array([1, 9]))
    with pytest.raises(IndexError):
        compiled(mine, z, np.array([1, 9]))
    np.testing.assert_array_equal(mine, numpys)


def test_the_kernel_source_shows_the_gather():
    llvm, made = programs()
    numpile.compile(lambda x, i: x[i] * 2, backend=llvm)(rng.standard_normal(5), indices(5, 3))
    assert "x[at(i[i0], 5)]" in str(made[0].program)


def _scatter_add(x, i, v):
    x[i] += v[:, None]  # buffered: a repeated position gets one update, the last
    return x


def _scatter_rows(x, i, v):
    x[i, 1:] = v[:, None]
    return x.sum()


def _scatter_pairs(x, i, v):
    y = x * 2
    y[i, i[::-1] % 3] = v
    return y


def _mask_zero(x, i, v):
    x[x < 0] = 0
    return x * 2


def _mask_of_a_temporary(x, i, v):
    y = np.abs(x)
    y[(y > 1).any(axis=1)] = -1.0
    return y


def _add_at(x, i, v):
    np.add.at(x, i, v[:, None])      # unbuffered: a repeated position adds again
    return x


def _multiply_at_reading_itself(x, i, v):
    y = x * 2
    np.multiply.at(y, (i[::-1], 0), y[i, 1])   # a value reading the array: computed before
    return y


UPDATES = {"x[i] += v": _scatter_add, "x[i, 1:] = v": _scatter_rows, "y[i, j] = v": _scatter_pairs,
           "x[mask] = 0": _mask_zero, "y[2-d rows mask] = c": _mask_of_a_temporary, "np.add.at": _add_at,
           "np.multiply.at reading itself": _multiply_at_reading_itself}


@pytest.mark.parametrize("case", list(UPDATES))
def test_scatters_and_masked_updates_are_kernels_storing_in_place(case):
    def make():
        return rng.standard_normal((7, 3)), indices(7, 9), rng.standard_normal(9)
    for program in run_both(UPDATES[case], make):
        assert not any(isinstance(s, Extern) for s in program.steps), str(program)


def _scatter_set(x, i, v):
    x[i] = v[:, None]   # no gather before the scatter: the scatter's own check must catch it
    return x


@pytest.mark.parametrize("update", [_scatter_add, _scatter_set])
def test_a_scatter_out_of_bounds_changes_nothing(update):
    """Every position is checked before any is stored: NumPy raises before writing, and so does the
    compiled kernel (numpile then runs the frame with NumPy, which raises its own error)."""
    compiled = numpile.compile(update, backend="llvm")
    x, v = rng.standard_normal((7, 3)), rng.standard_normal(4)
    compiled(x.copy(), np.array([0, 1, 2, 3]), v)
    bad = np.array([1, 2, 9, 3])
    mine, numpys = x.copy(), x.copy()
    with pytest.raises(IndexError) as numpy_error:
        update(numpys, bad, v)
    with pytest.raises(IndexError) as ours:
        compiled(mine, bad, v)
    assert str(ours.value) == str(numpy_error.value)
    np.testing.assert_array_equal(mine, numpys)
    np.testing.assert_array_equal(mine, x)


def scatter_through_gathers(xi, yi, z, n):
    selected = np.abs(z) > 0.5
    n[xi[selected], yi[selected]] = 7                  # positions read through gathers of symbolic sizes
    return n


def test_a_scatter_whose_positions_are_gathers_of_symbolic_sizes():
    """The kernel takes every symbol its scatter's positions are read with (s0 of xi's length was
    missing: KeyError compiling NPBench's mandelbrot2)."""
    compiled = numpile.compile(scatter_through_gathers, backend="llvm", dynamic=True)
    for size in (40, 57):
        xi, yi, z = rng.integers(0, 9, size), rng.integers(0, 6, size), rng.standard_normal(size)
        want = scatter_through_gathers(xi, yi, z, np.zeros((9, 6)))
        np.testing.assert_array_equal(compiled(xi, yi, z, np.zeros((9, 6))), want)


def test_a_masks_positions_are_read_unchecked_and_other_index_arrays_checked():
    """x[m]'s positions (np.nonzero of a mask the tracer checked against x) are inside x's dims
    whatever the data: gathered and scattered with no bounds check. Positions computed from them
    (x[idx[m]]) stay checked, and one out of bounds raises NumPy's IndexError."""
    def reverse(x, m, y):
        y[m] = x[m][::-1] * 2       # not element-wise: a gather and a scatter
        return y

    def gather(x, m, idx):
        return x[idx[m]] + x[m]
    [program] = run_both(reverse, lambda: (rng.standard_normal(12), rng.random(12) < 0.5, rng.standard_normal(12)))
    loads = [i for e in gathered(program) for i in e.index if isinstance(i, Indirect)]
    stores = [i for k in program.kernels for s in k.stages for i in s.output_index if isinstance(i, Indirect)]
    assert loads and stores and all(i.inside for i in loads + stores), str(program)
    make = lambda: (rng.standard_normal(12), rng.random(12) < 0.5, indices(12, 12))   # noqa: E731
    [program] = run_both(gather, make)
    assert {i.inside for e in gathered(program) for i in e.index if isinstance(i, Indirect) and e.buffer == "x"} \
        == {True, False}, str(program)
    x, m, idx = make()
    m[:], idx[3] = True, 12
    with pytest.raises(IndexError):
        numpile.compile(gather, backend="llvm")(x, m, idx)
