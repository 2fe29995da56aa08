"""Updates lowered in place: a slice update stores into its base's buffer, with its producer fused
into the store, and copies nothing else; overlapping reads, later reads of the old value, casts,
layouts and errors still give exactly NumPy's effects (every argument compared afterwards)."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.lowering import Extern, Kernel
from test_llvm import programs

rng = np.random.default_rng()


def run_both(fn, make_args):
    """fn compiled on llvm and eager on copies of the same fresh arguments, twice; results and every
    argument afterwards equal (dtype, shape, values). Returns the llvm Programs made."""
    llvm, made = programs()
    compiled = numpile.compile(fn, backend=llvm)
    for _ in range(2):
        args = make_args()
        copies = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]
        got, want = compiled(*args), fn(*copies)
        for g, w in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert type(g) is type(w) and np.shape(g) == np.shape(w)
            if w is not None:
                assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
        for a, c in zip(args, copies):
            if isinstance(c, np.ndarray):
                assert a.dtype == c.dtype and np.array_equal(a, c, equal_nan=True)
    return [p.program for p in made]


def jacobi(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def test_jacobi_stores_each_update_in_place_fused_with_its_producer():
    [program] = run_both(jacobi, lambda: (rng.random((9, 11)), rng.random((9, 11))))
    assert not any(isinstance(s, Extern) for s in program.steps)
    assert [s.stages[0].output for s in program.steps] == ["B", "A"]   # no temporaries at all
    assert all(b.kind == "input" for b in program.buffers.values())


def test_an_updated_input_comes_back_as_itself():
    def f(x, y):
        x[::2] += y[::2]
        return x
    x, y = rng.random(10), rng.random(10)
    out = numpile.compile(f, backend="llvm")(x, y)
    assert out is x


OVERLAPS = {
    "shift right": lambda a: a.__setitem__(slice(1, None), a[:-1] * 2),
    "shift left": lambda a: a.__setitem__(slice(None, -1), a[1:] + 1),
    "reverse": lambda a: a.__setitem__(slice(None, None, -1), a),
    "rows down": lambda a: a.__setitem__(slice(1, None), a[:-1] - a[1:]),
}


def _overlap(a, how):
    if how == "shift right":
        a[1:] = a[:-1] * 2
    elif how == "shift left":
        a[:-1] = a[1:] + 1
    elif how == "reverse":
        a[::-1] = a
    else:
        a[1:] = a[:-1] - a[1:]
    return a.sum()


@pytest.mark.parametrize("how", ["shift right", "shift left", "reverse", "rows down"])
def test_overlapping_source_and_destination_give_numpys_result(how):
    [program] = run_both(lambda a: _overlap(a, how), lambda: (rng.random((7, 5)),))
    assert not any(isinstance(s, Extern) for s in program.steps)   # the value is computed first, no copy of `a`


def _add_reversed_then_double(x):
    np.add(x, x.reshape(-1)[::-1].reshape(x.shape), out=x)   # read reversed through views placed as calls
    x += x                                                   # and again through the inlined add
    return x


def test_a_value_reading_the_input_through_a_view_is_not_computed_in_it():
    run_both(_add_reversed_then_double, lambda: (rng.random(6),))


def test_elementwise_read_modify_write_needs_no_temporary():
    def f(a, b):
        a[1:-1] += b[1:-1] * 2
        np.multiply(a, 3, out=a)
        return a
    [program] = run_both(f, lambda: (rng.random((6, 4)), rng.random((6, 4))))
    assert set(program.buffers) == {"a", "b"}


def test_a_read_of_the_old_value_after_the_update_is_placed_before_it():
    def f(a):
        old = a * 2             # inlined where `old + 1` is computed: placed before the store
        a[1:] = 0.0
        return old + 1, a
    [program] = run_both(f, lambda: (rng.random(6),))
    assert not any(isinstance(s, Extern) for s in program.steps)
    assert [s.stages[0].output for s in program.steps] == ["add", "a"]


def test_a_read_of_the_old_and_the_new_value_keeps_the_old():
    def f(a):
        old = a * 2             # read with the new `a`: after the update
        a[1:] = 0.0
        return old + a, a
    [program] = run_both(f, lambda: (rng.random(6),))
    assert any(isinstance(s, Extern) and s.op == "setitem" for s in program.steps)


def test_updates_that_follow_one_another_are_computed_then_stored_together():
    """Gray-Scott's step: v's update reads u's old value (uvv), so u's store waits: one kernel
    computes both new values, one stores both."""
    def f(U, V):
        u, v = U[1:-1, 1:-1], V[1:-1, 1:-1]
        Lu = U[:-2, 1:-1] + U[1:-1, :-2] - 4 * u + U[1:-1, 2:] + U[2:, 1:-1]
        Lv = V[:-2, 1:-1] + V[1:-1, :-2] - 4 * v + V[1:-1, 2:] + V[2:, 1:-1]
        uvv = u * v * v
        u += 0.16 * Lu - uvv + 0.04 * (1 - u)
        v += 0.08 * Lv + uvv - 0.1 * v
    [program] = run_both(f, lambda: (rng.random((9, 7)), rng.random((9, 7))))
    assert [len(s.stages) for s in program.steps] == [2, 2]
    assert [stage.output for stage in program.steps[1].stages] == ["U", "V"]


def test_an_update_stored_together_with_one_whose_old_value_it_reads_reads_the_old_value():
    def f(a, b):
        old = a[1:] * 2
        a[1:] = 5.0
        b[1:] = old             # stored after a's store: computed into a buffer before it
        return a, b
    [program] = run_both(f, lambda: (rng.random(6), rng.random(6)))
    assert not any(isinstance(s, Extern) for s in program.steps)


def test_updates_of_fresh_arrays_and_copies_are_in_place():
    def f(x):
        y = np.zeros((x.shape[0] + 2, 3))
        y[1:-1] = x[:, None] * 2
        z = x.copy()
        z[0] = -1.0
        z[1:] *= 0.5
        return y, z
    [program] = run_both(f, lambda: (rng.random(5),))
    assert [s.op for s in program.steps if isinstance(s, Extern)] == ["zeros", "copy"]


@pytest.mark.parametrize("dtype, value", [(np.int32, 2.75), (np.uint8, 7), (np.float32, np.float64(1) / 3), (bool, 1)])
def test_stored_values_are_cast_as_numpy_assigns(dtype, value):
    def f(a, v):
        a[1::2] = v
        a[:2] = a[:2] * 3
        return a
    run_both(lambda a: f(a, value), lambda: ((rng.random(9) * 10).astype(dtype),))
    run_both(lambda a, b: f(a, b * 100), lambda: ((rng.random(9) * 10).astype(dtype), rng.random(9)[1::2]))


@pytest.mark.parametrize("layout", ["C", "F", "reversed", "strided"])
def test_inputs_of_any_layout_are_updated_in_place(layout):
    def make():
        base = rng.random((8, 10))
        return ({"C": base, "F": np.asfortranarray(base), "reversed": base[::-1, ::-1], "strided": base[::2, ::3]}[layout],
                rng.random((8, 10)))

    def f(a, b):
        a[1:, :2] = b[:a.shape[0] - 1, :2] * 2 + a[1:, :2]
        return a[:, 0] * 1   # (not a sum: NumPy sums other layouts in memory order)
    run_both(f, make)


def test_an_update_before_an_extern_that_raises_happens_once():
    def f(x, m):
        x += 1.0
        return np.linalg.inv(m) @ x
    compiled = numpile.compile(f, backend="llvm")
    x, singular = rng.random(3), np.ones((3, 3))
    before = x.copy()
    with pytest.raises(np.linalg.LinAlgError):
        compiled(x, singular)
    assert np.array_equal(x, before + 1.0)   # as NumPy: incremented once, then the error


def test_kernels_of_updates_are_kernels_not_copies():
    def f(u):
        for _ in range(3):
            u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
        return u
    [program] = run_both(f, lambda: (rng.random(50),))
    assert not any(isinstance(s, Extern) for s in program.steps)
    assert all(isinstance(s, Kernel) for s in program.steps)


def test_disjoint_reads_and_stores_back_need_no_temporary():
    def f(q):
        q[0] = q[-2]          # reads an element the update does not write: no temporary
        q[-1] = q[1]
        q[2:5] *= 2.0         # `q[2:5] = (its view, updated)` stores nothing more
        q[6:] = q[:5] + 1     # reads [0, 5), writes [6, 11): disjoint
        return q
    [program] = run_both(f, lambda: (rng.random(11),))
    assert set(program.buffers) == {"q"} and len(program.steps) == 4


@pytest.mark.parametrize("how", ["augmented", "out", "slice"])
def test_a_read_through_an_extern_view_of_the_base_sees_its_old_value(how):
    def f(x):   # reshape is an extern here, and its result a view of x: x must not be written first
        flipped = x.reshape(-1)[::-1].reshape(x.shape)
        if how == "augmented":
            x -= flipped
        elif how == "out":
            np.add(x, flipped, out=x)
        else:
            x[1:] = flipped[1:] * 2
        return x
    run_both(f, lambda: (rng.random((3, 4)),))


def test_a_value_the_buffer_held_after_an_update_is_read_before_it_is_overwritten():
    def f(x):
        x[0] = x[0] * 0.5      # stored in place into x
        a = x + x              # reads that value, inlined where `a` is used: after the next line
        x -= x                 # written back into x: must not overwrite what `a` still reads
        return np.floor(a * 4)
    run_both(f, lambda: (rng.random((3, 2)),))


def escape_step(N, Z, C, Xi, Yi, i):
    """One step of an escape-time loop as NumPy code writes it (NPBench's mandelbrot2): the points
    that escaped recorded by scatter, then those left selected by mask."""
    Z = Z * Z + C
    escaped = np.abs(Z) > 2.0
    N[Xi[escaped], Yi[escaped]] = i
    left = ~escaped
    return Z[left], C[left], Xi[left], Yi[left]


def test_selections_by_a_mask_after_an_update_leave_it_in_place():
    """x[mask] reads positions the tracer checked against x: it cannot raise, so the update before
    it stores into the input. A selection by np.nonzero's positions of another array could: an
    update it does not read waits until after it, one it reads stays NumPy's, on a copy."""
    def make():
        Xi, Yi = np.divmod(rng.permutation(48), 8)
        return np.zeros((6, 8), np.int64), rng.standard_normal(48) + 1j * rng.standard_normal(48), \
            rng.standard_normal(48) * 1.5 + 0j, Xi, Yi, 3
    [program] = run_both(escape_step, make)
    assert not any(isinstance(s, Extern) and s.op == "setitem" for s in program.steps)

    def by_positions(x, m, y):
        x[m] = 0.0
        return y[np.nonzero(m)]
    [program] = run_both(by_positions, lambda: (rng.random(12), rng.random(12) > 0.5, rng.random(12)))
    assert not any(isinstance(s, Extern) and s.op == "setitem" for s in program.steps)
    assert isinstance(program.steps[-1], Kernel) and program.steps[-1].stages[-1].output == "x"

    def by_positions_of_the_update(x, m, y):
        x[m] = 0.0
        return y[np.nonzero(x > 0.5)]
    [program] = run_both(by_positions_of_the_update, lambda: (rng.random(12), rng.random(12) > 0.5, rng.random(12)))
    assert any(isinstance(s, Extern) and s.op == "setitem" for s in program.steps)


def test_constant_index_lists_are_numpys_assignment_into_the_array_itself():
    """`A[[0, 1]] = A[[1, 0]]` (a row swap), `x[[1, 3, 1]] = v`: NumPy's own assignment into the
    argument's buffer, not into a copy of it (numpy-100's exercise 72 ran at 0.02x NumPy)."""
    def swap_rows(A, x, v):
        A[[0, 1]] = A[[1, 0]]
        x[[1, 3, 1]] = v          # a repeated position: the last value wins, as in NumPy
        return A.sum(), x
    [program] = run_both(swap_rows, lambda: (rng.random((40, 30)), rng.random(6), rng.random(3)))
    updates = [s for s in program.steps if isinstance(s, Extern) and s.op == "setitem"]
    assert len(updates) == 2 and all(s.output == s.args[0].name for s in updates), str(program)


def _escaped(Z, C, Xi, Yi, N, Zs, i):   # NPBench's mandelbrot2: both scatters through Xi[I], Yi[I]
    I = abs(Z) > 2.0
    N[Xi[I], Yi[I]] = i + 1
    Zs[Xi[I], Yi[I]] = Z[I]
    return Z[~I] * C[~I]


def _escaped_args(bad=False):
    Xi, Yi = (a.ravel() for a in np.mgrid[0:20, 0:30])
    if bad:
        Xi = Xi * 2   # positions past N's rows where |Z| > 2
    Z = (rng.standard_normal(600) + 1j * rng.standard_normal(600)) * 2
    return Z, Z * 0.5, Xi, Yi, np.zeros((20, 30), np.int64), np.zeros((20, 30), complex), 3


def test_a_scatter_through_positions_stored_through_before_is_in_place_too():
    for program in run_both(_escaped, _escaped_args):
        assert not [s for s in program.steps if isinstance(s, Extern) and s.op == "setitem"], str(program)
    compiled = numpile.compile(_escaped, backend="llvm")
    compiled(*_escaped_args())
    args = _escaped_args(bad=True)
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with pytest.raises(IndexError):
        compiled(*args)
    with pytest.raises(IndexError):
        _escaped(*copies)
    for a, c in zip(args, copies):   # NumPy checks a scatter's positions before it stores
        if isinstance(c, np.ndarray):
            assert np.array_equal(a, c)


@pytest.mark.parametrize("make", [
    lambda x: 0.5 * np.ones_like(x),
    lambda x: x + np.full(x.shape, 1.7, dtype=np.int32),     # the fill cast as NumPy casts it
    lambda x: np.where(x > 0.5, np.zeros_like(x, dtype=bool), x < 0.2),
    lambda x: x * np.full_like(x, 3),
])
def test_a_filled_creation_read_by_pointwise_ops_is_a_constant_in_their_kernel(make):
    """numpy-ml's `slope * np.ones_like(x)` (0.6x NumPy: np.ones_like wrote 4 MB first)."""
    [program] = run_both(lambda x: make(x), lambda: (rng.random((6, 5)),))
    assert not any(isinstance(s, Extern) for s in program.steps), str(program)


def test_a_filled_creation_stored_whole_is_numpys():
    def f(x):
        z = np.zeros((x.shape[0], 7))
        return z, x + 1
    [program] = run_both(f, lambda: (rng.random(6),))
    assert [s.op for s in program.steps if isinstance(s, Extern)] == ["zeros"]
