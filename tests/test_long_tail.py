"""The long tail of NumPy spellings, as programs written by others use them (issue 32): np.tile,
np.repeat, np.average, np.triu/np.tril, the stacks, one-argument np.where, np.array/np.asarray of
lists, ufuncs with positional outputs, max()/min() of NumPy scalars, np.take, a.flat[...]. Each program is compared
with NumPy on fresh random inputs (results, dtypes, shapes, arguments afterwards, errors) on eager
and llvm, and captured whole (one graph); forms that stay NumPy's say why."""

import numpy as np
import pytest

import numpile
from numpile import lowering
from conftest import rand, run_like_numpy

BACKENDS = ["eager", "llvm"]


def periodic(x, L):
    t = np.tile(x, (len(x), 1))
    d = t - t.T
    d[d > L / 2] = d[d > L / 2] - L
    d[d < -L / 2] = d[d < -L / 2] + L
    return d


def repeated_into(x, r):
    y = np.empty(x.shape[0] * (1 + r))
    y[:x.shape[0]] = x
    y[x.shape[0]:] = np.repeat(x, r)
    return y


def fit(x, y):
    dx, dy = x - np.average(x), y - np.average(y)
    slope = np.sum(dx * dy) / np.sum(dx ** 2)
    return slope, np.average(y) - slope * np.average(x)


def groups(values):
    diff = np.concatenate(([1], np.diff(values)))
    idx = np.concatenate((np.where(diff)[0], [len(values)]))
    return values[idx[:-1]], np.diff(idx)


def where_positions(x):
    rows, cols = np.where(x > 0.5)
    return rows * 10 + cols, x[np.where(x < 0)]


def flat_items(x):
    return x.flat[3], x.flat[1:5] * 2, x.flat[[0, 2]], x.flat[np.abs(x - 0.5).argmin()], x.flat[-1] + 1


def flat_assigned(x):
    x.flat[2] = 7.0                          # through NumPy's flatiter itself, at a break
    return x * 2


def taken(x, i):
    return np.take(x, i), np.take(x, i, axis=0) * 2, x.take(i[:2], axis=-1), np.take(x, 3), x.take([1, 0], 1)


def pair_of_scalars(x):
    return np.array([x.sum(), x.max() * 2.0]), np.asarray((x.min(), 1.5, 2))


def rows_of_arrays(a, b):
    return np.array([a, b, a * b]) + np.array([[a], [b]]).sum(axis=0), np.array((a, b), dtype=np.float32)


def asarray_is_the_array(x):
    y = np.asarray(x)
    y[0] = -1.0          # through to x, as NumPy's asarray returns x itself
    return np.array(x), np.asarray(x, dtype=np.int32), np.asarray(x.sum())


def positional_out(a, b, c):
    np.multiply(a, b, c)
    np.add(c, 1.0, c)
    q, r = np.divmod(a, 0.75, np.empty_like(a), np.empty_like(a))
    return c, q + r


def triangles(m, k):
    return np.triu(m, k) + np.tril(m, -k) * 2, np.triu(m[0])


def stacks(a, b):
    return np.hstack((a, b)), np.vstack([a, b, a]), np.column_stack((a, b)), np.hstack((a.sum(), b))


def repeats_and_tiles(a, counts):
    return np.repeat(a, counts), a.repeat(2, axis=0), np.tile(a, (2, 1, 3)), np.repeat(a, [1, 0, 2, 3], axis=1)


def weighted(a, w):
    return np.average(a, axis=1, weights=w), np.average(a, axis=0, returned=True), np.average(a, weights=a > 0)


def scaled_by_largest(image):
    out = np.abs(4 * image[1:-1, 1:-1] - image[:-2, 1:-1] - image[2:, 1:-1])
    valmax = np.max(out)
    valmax = max(1., valmax) + 1.E-9
    out /= valmax       # the same either way: the Python float or the np.float64 max() chose
    return out, min(np.max(out), np.float64(0.5)), max(np.min(image), np.max(image) / 2)


PROGRAMS = {
    periodic: lambda rng: (np.arange(0.0, 6.0, 0.1) + rng.random(), 4),
    repeated_into: lambda rng: (rand(rng, (17,)), 3),
    fit: lambda rng: (rand(rng, (50,)), rand(rng, (50,))),
    groups: lambda rng: (np.sort(rng.integers(0, 9, 40)).astype(np.uint32),),
    where_positions: lambda rng: (rand(rng, (4, 6)),),
    pair_of_scalars: lambda rng: (rand(rng, (5, 3)),),
    taken: lambda rng: (rand(rng, (4, 5)), rng.integers(-4, 4, 6)),
    flat_items: lambda rng: (rand(rng, (3, 4)).T,),
    rows_of_arrays: lambda rng: (rand(rng, (4,)), rand(rng, (4,), np.int32)),
    asarray_is_the_array: lambda rng: (rand(rng, (6,)),),
    positional_out: lambda rng: (rand(rng, (3, 4)), rand(rng, (4,)), rand(rng, (3, 4))),
    triangles: lambda rng: (rand(rng, (5, 6)), -1),
    stacks: lambda rng: (rand(rng, (3,)), rand(rng, (3,), np.int64)),
    repeats_and_tiles: lambda rng: (rand(rng, (3, 4), np.int32), rng.integers(0, 3, 12)),
    weighted: lambda rng: (rand(rng, (4, 5)), rng.random(5) + 0.1),
    scaled_by_largest: lambda rng: (rand(rng, (6, 7, 3)) * rng.choice([0.01, 3.0]),),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_like_numpy_in_one_graph(rng, backend, fn):
    run_like_numpy(fn, backend, lambda call: PROGRAMS[fn](rng), graphs=1, calls=3)


def test_errors_are_numpys():
    zero_weights = lambda a: np.average(a, weights=np.zeros_like(a))   # noqa: E731
    scalar_where = lambda a: np.where(a.sum())                         # noqa: E731
    out_twice = lambda a: np.multiply(a, a, a, out=a)                  # noqa: E731
    taken_past_the_end = lambda a: np.take(a, 3) + 1                  # noqa: E731
    flat_past_the_end = lambda a: a.flat[3] + 1                       # noqa: E731
    for fn in (zero_weights, scalar_where, out_twice, taken_past_the_end, flat_past_the_end, flat_assigned):
        for backend in BACKENDS:
            run_like_numpy(fn, backend, lambda call: (np.ones(3),), graphs=None)


@pytest.mark.parametrize("fn, reason", [
    (lambda a: np.array(a, copy=False), "np.array with arguments other than the object and dtype="),
    (lambda a: np.array([]), "np.array of an empty list"),
    (lambda a: np.repeat(a, a.astype(np.int64)) + 1, None),
], ids=["copy=", "empty list", "data-dependent repeats"])
def test_forms_left_to_numpy_say_why(fn, reason):
    a = np.arange(1.0, 4.0)
    explained = numpile.explain(fn)(a)
    if reason is None:      # counts computed in the graph: a length only the data knows, captured
        assert explained.graph_break_count == 0
        np.testing.assert_array_equal(numpile.compile(fn, backend="llvm")(a), fn(a))
    else:
        assert any(reason in b.reason for b in explained.break_reasons), explained.break_reasons


def largest_returned(x):
    return max(1.0, np.max(x))          # a Python float or a np.float64, as the data decides


def largest_in_float32(x, y):
    return y * max(0.5, x.sum())        # float32 * Python float is float32; * np.float64 is float64


def largest_of_two(x, y):
    return max(x.max(), y.max()) - min(x.min(), y.min())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, graphs", [(largest_returned, 2), (largest_in_float32, 2), (largest_of_two, 1)],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_max_of_number_and_scalar_where_the_type_shows(rng, backend, fn, graphs):
    """Where it shows whether max() chose the Python number or the NumPy scalar (returned, or a
    dtype that promotes differently), the call is a graph break, and the results are NumPy's."""
    def args(call):
        scale = (0.01, 5.0)[call % 2]
        return rand(rng, (5,)) * scale, rand(rng, (5,), np.float32)
    compiled = run_like_numpy(lambda x, y: fn(x, y) if fn is not largest_returned else fn(x), backend, args,
                              graphs=None, calls=4)
    assert sum(e.graph is not None for e in compiled.all_entries()) >= 1
    for call in range(4):
        x, y = args(call)
        got = compiled(x, y)
        want = fn(x, y) if fn is not largest_returned else fn(x)
        assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype


def repeated_tail(x, r):
    y = np.zeros(x.shape[0] * (1 + r), dtype=np.float32)
    y[:x.shape[0]] = x
    y[x.shape[0]:] = np.repeat(x, r)        # int64 values cast into float32, as setitem casts
    return y


def repeated_own_head(y, r):
    y[4:4 + 4 * r] = np.repeat(y[:4], r)    # reads the array it is stored into
    return y


def tiled_steps(x):
    y = np.ones(6 * x.shape[0])
    y[1::2] = np.tile(x, 3)                 # into a stepped view
    y[::2] = np.repeat(x[::-1], 3)
    return y


@pytest.mark.parametrize("fn, args", [
    (repeated_tail, lambda rng: (rng.integers(-9, 9, 6), 3)),
    (repeated_own_head, lambda rng: (rand(rng, (20,)), 3)),
    (tiled_steps, lambda rng: (rand(rng, (5,)),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_stores_of_repeats_and_tiles_write_the_array_itself(rng, fn, args):
    """`y[a:b] = np.repeat(x, r)` (np.tile too) stores the copies at y's positions: one kernel, no
    reshape called, no temporary of the copies."""
    run_like_numpy(fn, "llvm", lambda call: args(rng), graphs=1, calls=2)
    graphs = []
    numpile.compile(fn, backend=lambda graph, example_inputs: graphs.append(graph) or graph)(*args(rng))
    (graph,) = graphs
    program = lowering.schedule(graph)
    assert not any(isinstance(step, lowering.Extern) and step.op == "reshape" for step in program.steps), str(program)


def large_pieces(a, b, v):
    return (np.concatenate(([1], np.diff(v))), np.concatenate((a, b.astype(np.int32)), axis=1),
            np.concatenate((a, np.full((160, 300), 2.5)), axis=-1), np.diff(v, prepend=0, append=v[-1]))


def test_large_concatenates_are_stored_piece_by_piece(rng):
    """A concatenate of LARGE_CONCATENATE elements or more is a new array with each piece stored
    into its slice (kernels at affine positions), not NumPy's call."""
    def args(call):
        return rand(rng, (160, 200)), rand(rng, (160, 90), np.int64), np.sort(rng.integers(0, 99, 50000)).astype(np.uint32)
    for backend in BACKENDS:
        run_like_numpy(large_pieces, backend, args, graphs=1, calls=2)
    graphs = []
    numpile.compile(large_pieces, backend=lambda graph, example_inputs: graphs.append(graph) or graph)(*args(0))
    program = lowering.schedule(graphs[0])
    assert not any(isinstance(step, lowering.Extern) and step.op == "concatenate" for step in program.steps), str(program)


def flattened_grid(x, n):
    Xi, Yi = np.mgrid[0:n, 0:x.shape[0]]
    C = x[Yi] + Xi * 1j
    Xi.shape = Yi.shape = C.shape = n * x.shape[0]     # NumPy's in-place reshape of each object
    grid = Xi * 10 + Yi
    grid.shape = (x.shape[0], n)
    return grid, C[Xi > 0].sum(), Yi.shape


def shape_of_an_input(x):
    x.shape = (x.size,)
    return x * 2


def shape_of_an_array_with_a_view(x):
    y = x * 2
    row = y[0]
    y.shape = (y.size,)
    y[1] = 7.0
    return row.sum() + y.sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_setting_shape_reshapes_the_array_in_place(rng, backend):
    """`a.shape = n` on arrays the function made (an mgrid's rows too) is captured; on the caller's
    array or one with views it is a break that says so, NumPy's effects either way."""
    run_like_numpy(flattened_grid, backend, lambda call: (rand(rng, (4,)), 3), graphs=1)
    compiled = run_like_numpy(flattened_grid, backend, lambda call: (rand(rng, (4 + call,)), 3), graphs=None, calls=3)
    assert not any(e.break_reason for e in compiled.all_entries())   # sizes symbolic from the second on
    compiled = run_like_numpy(shape_of_an_input, backend, lambda call: (rand(rng, (3, 4)),), graphs=None)
    assert any("the caller's array" in e.break_reason for e in compiled.all_entries() if e.break_reason)
    compiled = run_like_numpy(shape_of_an_array_with_a_view, backend, lambda call: (rand(rng, (3, 4)),), graphs=None)
    assert any("an array with views" in e.break_reason for e in compiled.all_entries() if e.break_reason)
