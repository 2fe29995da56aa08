"""In-place updates captured functionally and written back: the caller sees exactly NumPy's effects,
on returned values, on mutated arguments, and through views."""

import traceback

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand


def run_both(fn, make_args, graphs=1, breaks=0):
    """Call compiled and eager on separate copies of the same fresh arguments, twice; compare results
    and every argument afterwards."""
    compiled = numpile.compile(fn, backend="eager")
    for _ in range(2):
        args = make_args()
        copies = [a.copy(order="K") if isinstance(a, np.ndarray) else a for a in args]  # same layout
        assert_same(compiled(*args), fn(*copies))
        for got, want in zip(args, copies):
            if isinstance(want, np.ndarray):
                assert_same(got, want)
    entries = compiled.all_entries()
    assert sum(e.graph is not None for e in entries) == graphs, [e.break_reason for e in entries]
    assert sum(e.graph_break is not None for e in entries) == breaks, [e.break_reason for e in entries]
    return compiled


def stencil(u, steps):
    for _ in range(steps):
        u[1:-1] = u[1:-1] + 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2])
    return u


def test_stencil_slice_assignment(rng):
    compiled = run_both(stencil, lambda: (rand(rng, (16,)), 3))
    u = rand(rng, (16,))
    assert compiled(u, 3) is u  # the same array comes back, updated


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_augmented_assignment_on_arguments(rng, dtype):
    def f(x, y):
        x += y
        x *= 2
        y -= 1
        return x + y
    run_both(f, lambda: (rand(rng, (3, 4), dtype), rand(rng, (4,), dtype)))


def test_row_update_through_index(rng):
    def f(x, i):
        x[i, :] *= 2
        x[:, 0] = -1
        x[0] += x[1]
        return x.sum()
    run_both(f, lambda: (rand(rng, (4, 3)), 2))


def test_views_see_updates_of_their_base(rng):
    def f(x):
        v = x[1:]
        w = x[::2]
        x += 10
        w *= 2              # updates x through the view; v sees it too
        return v + 0, w + 0
    run_both(f, lambda: (rand(rng, (6,)),))


def test_an_element_read_before_an_update_is_a_copy(rng):
    def f(x):
        v = x[0]            # a NumPy scalar: NumPy copies it out of x
        row = x[1:]         # a view: it follows the update
        x += 1.0
        return v, row + 0
    run_both(f, lambda: (rand(rng, (4,)),))


def test_a_view_returned_twice_is_one_object(rng):
    def f(x):
        v = x[::-1]
        return v, v
    compiled = run_both(f, lambda: (rand(rng, (4,)),))
    x = rand(rng, (4,))
    got = compiled(x)
    assert got[0] is got[1] and np.shares_memory(got[0], x)


def test_reshape_of_an_updated_argument_is_numpys_view_or_copy(rng):
    def f(x):
        x /= 2.0
        a = x.reshape(-1)    # NumPy: a view of a contiguous x, a copy of a transposed one
        a += a               # through the view, x is updated too
        return a
    for transpose in (False, True):
        make = lambda: rand(rng, (3, 2)).T if transpose else rand(rng, (3, 2))  # noqa: E731
        compiled = run_both(f, lambda: (make(),), graphs=1, breaks=1)
        x = make()
        assert np.shares_memory(compiled(x), x) is not transpose


def test_a_copy_made_by_reshape_of_a_view_keeps_the_values_from_before_an_update(rng):
    """x[:, ::-1].reshape(-1) is a copy in NumPy: an update through the view after it must not reach
    it, also where a break rebuilds it for Python (found by the llvm fuzz, seed 1785577802)."""
    def f(x, n):
        a = x[:, ::-1]
        x = a.reshape(-1)[::-1].reshape(x.shape)
        for k in range(n):
            a[k % len(a)] = a[k % len(a)] * 0.5 + k
            a = (a + x)[::-1]
        return a
    run_both(f, lambda: (rand(rng, (2, 4)), 3), graphs=0, breaks=1)


def test_a_loop_over_an_array_reads_each_row_when_it_gets_there(rng, capsys):
    def f(x):
        seen = []
        for row in x:           # NumPy's iterator indexes x at each step: updates made in the loop show
            print(np.round(row, 3))     # a break inside the loop: the iterator goes on in Python
            x *= 2
            seen.append(row + 0)
        return seen
    # 2-d: rows are views of x, which resume frames get beside x and make from it in their graphs;
    # each iteration breaks at print and at the loop's next step
    run_both(f, lambda: (rand(rng, (3, 2)),), graphs=6, breaks=6)
    # 1-d: rows are NumPy scalars, and up to the break the graph holds no array work: the frame
    # runs as Python (a graph and a resume per iteration would only cost)
    compiled = run_both(f, lambda: (rand(rng, (3,)),), graphs=0, breaks=1)
    assert all(e.eager for e in compiled.all_entries())
    capsys.readouterr()


def test_intermediates_updated_in_place(rng):
    def f(x):
        y = x * 2
        alias = y
        y += 1
        y[0] = 100
        return alias, y
    run_both(f, lambda: (rand(rng, (5,)),))


def test_out_argument_and_fill(rng):
    def f(a, b, c):
        r = np.add(a, b, out=c)
        d = a * 3
        d.fill(7)
        np.multiply(c, 2, out=c)
        return r is c, d, c
    run_both(f, lambda: (rand(rng, (4,)), rand(rng, (4,)), rand(rng, (4,))))


def test_in_place_casting_follows_numpy(rng):
    def f(x, y):
        x += y            # int32 += float64: NumPy refuses (same_kind casting)
        return x
    compiled = numpile.compile(f, backend="eager")
    with pytest.raises(TypeError, match="Cannot cast"):
        compiled(np.arange(3, dtype=np.int32), rand(rng, (3,)))

    def g(x, y):
        x += y            # float32 += float64 array: cast back to float32
        return x
    run_both(g, lambda: (rand(rng, (3,), np.float32), rand(rng, (3,))))


def test_assignment_casts_like_numpy(rng):
    def f(x, v):
        x[1:] = v         # assignment casts unsafely: floats truncate into an int array
        return x
    run_both(f, lambda: (np.arange(5), rand(rng, (4,)) * 10))


def test_a_view_of_another_input_is_made_from_it_in_the_graph(rng):
    def f(a, b):
        a += 1              # b sees it, and the update through b below shows in a
        b *= 2
        return a + 0, b + 0
    compiled = numpile.compile(f, backend="eager")
    for view in (lambda x: x[1:], lambda x: x[::-2], lambda x: x[2]):
        for _ in range(2):
            x = rand(rng, (4, 3))
            y = x.copy()
            assert_same(compiled(x, view(x)), f(y, view(y)))
            assert_same(x, y)
        entry = compiled.entries[0]
        assert entry.graph is not None and entry.graph_break is None
        assert any(g.startswith("b: is the view a[") for g in entry.guards.describe())


def test_overlapping_inputs_that_are_no_view_of_each_other_fall_back_to_python(rng):
    def f(a, b):
        a += 1
        return b * 2
    compiled = numpile.compile(f, backend="eager")
    x, y = np.arange(5.0), np.arange(5.0)
    assert_same(compiled(x[:4], x[1:]), f(y[:4], y[1:]))
    assert_same(x, y)
    assert "shares memory" in compiled.entries[0].break_reason
    # separate arrays: a new entry that updates in the graph, guarded on the arrays being disjoint
    x, y = np.arange(5.0), np.arange(5.0)
    assert_same(compiled(x, x.copy()), f(y, y.copy()))
    assert_same(x, y)
    graph_entries = [e for e in compiled.entries if e.graph is not None]
    assert graph_entries and any("shares no memory" in g for g in graph_entries[0].guards.describe())


def test_one_array_passed_twice_is_one_graph_input(rng):
    def f(x, y):
        x += 1              # y sees it: the same array
        y *= 2
        return x + y, x is y
    compiled = numpile.compile(f, backend="eager")
    for _ in range(2):
        a = rand(rng, (4,))
        got, want = a.copy(), a.copy()
        assert_same(compiled(got, got), f(want, want))
        assert_same(got, want)
    assert len(compiled.entries) == 1 and compiled.entries[0].graph is not None
    assert "y: is x" in compiled.entries[0].guards.describe()
    a, b = rand(rng, (4,)), rand(rng, (4,))           # two arrays: the guard fails, a new entry
    assert_same(compiled(a.copy(), b.copy()), f(a.copy(), b.copy()))
    assert len(compiled.entries) == 2


def test_an_updated_input_is_guarded_disjoint_from_every_other_input(rng):
    def f(x, y, z):
        x += 1
        return y + z
    compiled = numpile.compile(f, backend="eager")
    a, b, c = rand(rng, (4,)), rand(rng, (4,)), rand(rng, (4,))
    assert_same(compiled(a.copy(), b, c), f(a.copy(), b, c))
    x1, x2 = a.copy(), a.copy()
    assert_same(compiled(x1, b, x1), f(x2, b, x2))     # z is x now: the first entry must not run
    assert_same(x1, x2)


def test_mutation_of_caller_lists_and_dicts_is_replayed(rng):
    def f(x, out, cfg):
        out.append(x * 2)
        cfg["calls"] = cfg.get("calls", 0) + 1
        return len(out)
    compiled = numpile.compile(f, backend="eager")
    for _ in range(2):
        x = rand(rng, (3,))
        got_list, want_list = [], []
        got_cfg, want_cfg = {"calls": 1}, {"calls": 1}
        assert compiled(x, got_list, got_cfg) == f(x, want_list, want_cfg)
        assert_same(got_list, want_list)
        assert got_cfg == want_cfg
    assert compiled.entries[0].graph is not None and compiled.entries[0].graph_break is None


def test_attribute_updates_run_as_python(rng):
    class Counter:
        def __init__(self):
            self.n = 0
            self.w = rand(rng, (3,))

        def __call__(self, x):
            self.n += 1
            self.w *= 0.5
            return x * self.w
    model, twin = Counter(), Counter()
    twin.w = model.w.copy()
    compiled = numpile.compile(model, backend="eager")
    for _ in range(3):
        x = rand(rng, (3,))
        assert_same(compiled(x), twin(x))
    assert model.n == twin.n == 3
    assert_same(model.w, twin.w)


def test_attribute_writes_are_replayed_in_order(rng):
    class State:
        def __init__(self):
            self.a, self.b = 1.0, 2.0
            self.cache = None

    def f(x, st):
        old_b = st.b
        st.b = 5.0
        st.a = old_b
        st.cache = x * 2
        return st.cache + st.a
    compiled = numpile.compile(f, backend="eager")
    for _ in range(2):
        x = rand(rng, (3,))
        got_state, want_state = State(), State()
        assert_same(compiled(x, got_state), f(x, want_state))
        assert (got_state.a, got_state.b) == (want_state.a, want_state.b) == (2.0, 5.0)
        assert_same(got_state.cache, want_state.cache)
    [entry] = compiled.entries
    assert entry.graph_break is None


def view_then_update_across_a_break(x):
    v = x[1:]
    x += 1
    print("a break between the update of x and the update through its view v")
    v *= 2
    return v


def test_a_view_of_an_argument_stays_a_view_across_a_break(rng, capsys):
    compiled = numpile.compile(view_then_update_across_a_break, backend="eager")
    for _ in range(2):
        x = rand(rng, (6,))
        want_x = x.copy()
        want = view_then_update_across_a_break(want_x)
        got = compiled(x)
        assert_same(got, want)
        assert_same(x, want_x)  # the update through the view reached the argument
        assert np.shares_memory(got, x)


def update_then_reduce(x):
    x[1:] *= 2.0
    y = np.sin(x)
    return y, float(y.sum())


def test_slice_update_keeps_the_layout_of_the_array(rng):
    """NumPy's pairwise sums depend on memory order: an updated Fortran-ordered argument must stay
    Fortran-ordered in the graph for its results to match to the last bit."""
    compiled = numpile.compile(update_then_reduce, backend="eager")
    base = rand(rng, (40, 7))
    got, want = compiled(base.copy().T), update_then_reduce(base.copy().T)
    assert got[0].flags.f_contiguous and want[0].flags.f_contiguous
    assert got[1] == want[1]


def _add_in_place(x, y):
    z = y * 2
    x += z
    return z


def _set_slice(x, y):
    x[1:] = y[1:] * 3
    return x.sum()


def _out_argument(x, y):
    np.add(x, y, out=x)
    return x


def _through_a_view(x, y):
    v = x[::2]
    v *= y[::2]
    return v


@pytest.mark.parametrize("fn", [_add_in_place, _set_slice, _out_argument, _through_a_view])
@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_writing_to_a_read_only_input_raises_numpys_error_at_the_users_line(rng, fn, backend):
    if backend not in numpile.list_backends(available_only=True):
        pytest.skip(f"backend {backend!r} is not installed here")
    compiled = numpile.compile(fn, backend=backend)
    x, y = rand(rng, (6,)), rand(rng, (6,))
    compiled(x.copy(), y)                          # an entry for a writeable x first
    before = x.copy()
    x.flags.writeable = False
    with pytest.raises(ValueError) as numpy_error:
        fn(x, y)
    with pytest.raises(ValueError) as ours:
        compiled(x, y)
    assert str(ours.value) == str(numpy_error.value)  # "output array is read-only", ...
    last = traceback.extract_tb(ours.value.__traceback__)[-1]
    assert last.filename == __file__ and last.line == traceback.extract_tb(numpy_error.value.__traceback__)[-1].line
    assert_same(x, before)                         # and nothing was written
