"""Loops kept as loops (tracer/control/loops.py, ops/control.py): a for loop over a range is traced once,
as a loop node whose body is a Graph, on every backend that runs loop nodes; differentially
against NumPy, with the graph's shape checked (one loop node, a body the trip count does not grow)."""

import numpy as np
import pytest

import numpile
from numpile import config
from conftest import assert_same, rand, run_like_numpy
from numpile.testing.loop_programs import jacobi, rebinding, sum_of_squares, sweep, triangular

BACKENDS = ["eager", "llvm"]


class Recording(numpile.Backend):
    """Runs graphs with NumPy and keeps them; takes loop nodes."""

    name = "recording-loops"
    supports_dynamic_shapes = True
    supports_loops = True

    def __init__(self):
        self.graphs = []

    def compile(self, graph, example_inputs, options):
        self.graphs.append(graph)
        return graph.compile_python()


def like_numpy(fn, backend, *args):
    """fn compiled and fn itself on copies of `args`: same results and same arguments afterwards."""
    compiled = numpile.compile(fn, backend=backend)
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    assert_same(compiled(*mine), fn(*theirs))
    for a, b in zip(mine, theirs):
        if isinstance(a, np.ndarray):
            assert_same(a, b)
    return compiled


def loops_of(fn, *args):
    """The loop nodes of the graph fn is compiled to (one graph), and that graph."""
    backend = Recording()
    numpile.compile(fn, backend=backend)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
    (graph,) = backend.graphs
    return graph.loops(), graph










def nested(A):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            A[i, j] = A[i, j] * 2 + i - j
    return A




def back_substitution(A, b):
    n = A.shape[0]
    x = b.copy()
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            x[i] -= A[i, j] * x[j]
        x[i] /= A[i, i]
    return x


def inner_print(A):
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] += 1.0
            print(j)
    return A


def max_pool(x):
    n, c, h, w = x.shape
    out = np.empty((n, c, h // 2, w // 2), dtype=x.dtype)
    for i in range(h // 2):
        for j in range(w // 2):
            out[:, :, i, j] = x[:, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2].max(axis=(2, 3))
    return out


def heads(x, w, n):
    d = x.shape[1] // n
    out = np.empty_like(x)
    for h in range(n):
        cols = slice(h * d, (h + 1) * d)
        out[:, cols] = np.tanh(x[:, cols] @ w[cols, cols])
    return out


def recurrent(xs, h, w):
    for x in xs:
        h = np.tanh(x @ w + h * 0.5)
    return h


def scale_each_row(A):
    for row in A:
        row *= 2.0
        row += row.sum()
    return A


def weighted(x):
    s = 0.0
    for i in range(1, x.shape[0]):
        s = s + x[i] / i + (i + 1) * 0.25   # the index in float arithmetic: a graph value
    return s


def fresh_each_step(u, f, iters):
    for _ in range(iters):
        new = np.empty_like(u)
        new[0], new[-1] = u[0], u[-1]
        new[1:-1] = 0.5 * (u[:-2] + u[2:]) - f[1:-1]
        u = new
    return u


def leapfrog(u, u_prev, steps):
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        u_prev[1:-1, 1:-1] = 2 * u[1:-1, 1:-1] - u_prev[1:-1, 1:-1] + 0.2 * lap
        u, u_prev = u_prev, u   # the two time levels swap roles: the callers' arrays take turns
    return u


def rotate_three(a, b, c, n):
    for i in range(n):
        a[1:] += b[:-1] * 0.5 + i
        a, b, c = b, c, a
    return a, b, c


def rows_and_rebind(x):
    for row in x:
        row *= 0.5                  # x's rows, of the array x held when the loop began
        x = np.sin(np.tanh(x))      # in the first iteration that is x itself, updated
    return x


def rebound_to_an_updated_view(x):
    for item in x:
        x = (x + x)[::-1]
        x += x                      # updates the view's base: the view is made again from it
    return x


def with_return(x, n):
    for i in range(n):
        x = x * 2.0
        if n > 2:
            return x + i            # a return in the body: the loop unrolls, as before
    return x


def with_break(x):
    for i in range(x.shape[0]):
        if i == 5:
            break
        x[i] += 1.0
    return x


def with_print(x):
    for i in range(6):
        x[i] *= 2.0
        print(i)
    return x


def index_after(x):
    for i in range(2, x.shape[0]):
        x[i] = x[i - 1] + x[i - 2]
    return x, i


def closure_rebound(x, steps):
    # `a` is a cell (the lambda reads it): a loop rebinding it is unrolled, not a loop node
    a = x * 0.5
    scaled = lambda u: u * 0.5 + a   # noqa: E731
    for _ in range(steps):
        a = scaled(a) + 1.0
    return a


def recursion_by_columns(img):
    # deriche's: locals rebound to views of the column before (`ym2, ym1 = ym1, y[:, j]`), carried
    # as views that follow the index; read after the loop too
    y = np.empty_like(img)
    xm1 = ym1 = ym2 = np.zeros(img.shape[0])
    for j in range(img.shape[1]):
        y[:, j] = 0.5 * img[:, j] + 0.25 * xm1 + 0.125 * ym1 - 0.0625 * ym2
        xm1, ym2, ym1 = img[:, j], ym1, y[:, j]
    return y, ym1 * 2, ym2


def updated_through_the_view(A):
    # the view carried is written through: its base sees it, as in NumPy
    prev = A[0]
    for i in range(1, A.shape[0]):
        prev *= 0.5
        A[i] += prev
        prev = A[i]
    return A


def downwards_by_rows(A):
    nxt = np.ones(A.shape[1])
    for i in range(A.shape[0] - 1, -1, -1):
        A[i] = A[i] * 0.5 + nxt
        nxt = A[i, ::-1]
    return A, nxt


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, make", [
    (jacobi, lambda rng: (rand(rng, 200), rand(rng, 200), 40)),
    (sweep, lambda rng: (rand(rng, (30, 20)),)),
    (sum_of_squares, lambda rng: (rand(rng, 20),)),
    (rebinding, lambda rng: (rand(rng, 50), 12)),
    (nested, lambda rng: (rand(rng, (6, 5)),)),
    (nested, lambda rng: (rand(rng, (6, 5), np.int32),)),
    (triangular, lambda rng: (rand(rng, (7, 7)),)),
    (with_break, lambda rng: (rand(rng, 9),)),
    (back_substitution, lambda rng: (rand(rng, (8, 8)) + 8 * np.eye(8), rand(rng, 8))),
    (max_pool, lambda rng: (rand(rng, (2, 3, 10, 12), np.float32),)),
    (heads, lambda rng: (rand(rng, (5, 12)), rand(rng, (12, 12)), 4)),
    (recurrent, lambda rng: (rand(rng, (30, 4, 6)), rand(rng, (4, 5)), rand(rng, (6, 5)))),
    (scale_each_row, lambda rng: (rand(rng, (40, 7)),)),
    (weighted, lambda rng: (rand(rng, 60),)),
    (fresh_each_step, lambda rng: (rand(rng, 30), rand(rng, 30), 25)),
    (leapfrog, lambda rng: (rand(rng, (12, 12)), rand(rng, (12, 12)), 10)),
    (leapfrog, lambda rng: (rand(rng, (12, 12)), rand(rng, (12, 12)), 11)),
    (rotate_three, lambda rng: (rand(rng, 20), rand(rng, 20), rand(rng, 20), 13)),
    (rows_and_rebind, lambda rng: (rand(rng, (12, 3)),)),
    (rebound_to_an_updated_view, lambda rng: (rand(rng, 6),)),
    (with_return, lambda rng: (rand(rng, 5), 9)),
    (index_after, lambda rng: (rand(rng, 12),)),
    (recursion_by_columns, lambda rng: (rand(rng, (7, 11)),)),
    (closure_rebound, lambda rng: (rand(rng, 6), 9)),
    (updated_through_the_view, lambda rng: (rand(rng, (9, 4)),)),
    (downwards_by_rows, lambda rng: (rand(rng, (9, 4)),)),
], ids=["jacobi", "sweep", "sum", "rebind", "nested", "nested-int32", "triangular", "break", "back-substitution", "max-pool", "slice-object", "rows", "rows-updated", "index-as-value", "empty-each-step", "swap-even", "swap-odd", "rotate-three", "rows-and-rebind", "rebound-view-updated", "return", "index-after", "views-by-columns", "closure-rebound",
        "view-updated", "views-downwards"])
def test_loops_compute_what_numpy_computes(fn, make, backend, rng):
    like_numpy(fn, backend, *make(rng))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_graph_break_in_the_body_gives_numpys_result(backend, rng, capsys):
    like_numpy(with_print, backend, rand(rng, 8))
    assert capsys.readouterr().out == "0\n1\n2\n3\n4\n5\n" * 2


def test_a_time_loop_is_one_loop_node_whatever_its_trip_count(rng):
    (short,), graph = loops_of(jacobi, rand(rng, 50), rand(rng, 50), 10)
    (long,), _ = loops_of(jacobi, rand(rng, 50), rand(rng, 50), 1000)
    assert len(short.args[0].calls) == len(long.args[0].calls) == 14
    assert short.args[1:4] == (0, 10, 1) and long.args[1:4] == (0, 1000, 1)
    assert "impl_loop(" in graph.python_code()


def test_the_index_is_symbolic_in_the_body(rng):
    (loop,), _ = loops_of(sweep, rand(rng, (40, 8)))
    body = loop.args[0]
    index = body.inputs[0]
    assert index.name == "i" and body.symbols.count((index, None)) == 1
    assert loop.args[1:4] == (1, 40, 1)


def test_values_that_settle_after_one_iteration_are_peeled(rng):
    (loop,), graph = loops_of(sum_of_squares, rand(rng, 30))
    assert loop.args[1] == 1   # the first iteration made s a NumPy float64: unrolled before the loop


def checksum(data):
    crc = 0xFFFF                        # a Python int the first iteration makes a graph value
    for b in data:
        if (crc & 1) ^ (b & 1):
            crc = (crc >> 1) ^ 0x8408
        else:
            crc >>= 1
    return crc


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_the_first_iteration_makes_a_graph_value_is_carried_from_the_start(backend, rng):
    """crc16's `crc`: no first iteration peeled before the loop (each peeled step costs a call)."""
    data = rng.integers(0, 256, 40).astype(np.uint8)
    recording = Recording()
    recording.supports_conditionals = True
    numpile.compile(checksum, backend=recording)(data)
    (graph,) = recording.graphs
    (loop,) = graph.loops()
    assert loop.args[1:4] == (0, 40, 1) and not [n for n in graph.calls if n.target == "cond"]
    like_numpy(checksum, backend, data)


def two_sweeps(A):
    for j in range(1, A.shape[1]):
        A[:, j] += A[:, j - 1]
    for j in range(A.shape[1] - 2, -1, -1):
        A[:, j] -= 0.5 * A[:, j + 1]
    return A


def test_an_index_stored_again_before_it_is_read_is_not_live_after_its_loop(rng):
    loops, _ = loops_of(two_sweeps, rand(rng, (5, 40)))
    assert [n.args[1:4] for n in loops] == [(1, 40, 1), (38, -1, -1)]   # neither first iteration peeled
    like_numpy(two_sweeps, "llvm", rand(rng, (5, 9)))


def test_a_short_loop_around_a_loop_is_a_loop_node(rng):
    """Fewer iterations than config.loop_capture_min, but unrolled each would copy the inner loop:
    another nest to compile (NPBench's sselfeng, eight nested loops of 2 to 6 iterations, compiled
    32 nests in 3.8 s; now one)."""
    loops, _ = loops_of(nested, rand(rng, (config.loop_capture_min - 2, 30)))
    assert sorted(n.args[2] for n in loops) == [config.loop_capture_min - 2, 30]   # the inner loop once, in the outer
    like_numpy(nested, "llvm", rand(rng, (3, 20)))


def test_short_loops_and_loops_that_cannot_be_captured_are_unrolled(rng):
    assert loops_of(jacobi, rand(rng, 10), rand(rng, 10), config.loop_capture_min - 1)[0] == []
    # small enough unrolled (iterations x body ops <= config.loop_unroll_ops): unrolled, its kernels fuse
    assert loops_of(rebinding, rand(rng, 10), 4)[0] == []
    assert len(loops_of(rebinding, rand(rng, 10), 9)[0]) == 1
    assert loops_of(with_break, rand(rng, 9))[0] == []


def test_a_range_bounded_by_an_enclosing_index_is_a_loop_too(rng):
    (outer, inner), _ = loops_of(triangular, rand(rng, (9, 9)))
    assert inner.args[1:4][0] == 0 and "s" in str(inner.args[2])   # range(i): its stop is the outer index
    (outer, inner), _ = loops_of(back_substitution, rand(rng, (8, 8)), rand(rng, 8))
    assert outer.args[1:4] == (7, -1, -1)


def test_a_symbolic_range_whose_body_breaks_unrolls_its_enclosing_loop(rng, capsys):
    for backend in BACKENDS:
        like_numpy(inner_print, backend, rand(rng, (5, 5)))
    assert capsys.readouterr().out == "".join(f"{j}\n" for i in range(5) for j in range(i)) * 4


def test_a_slice_object_made_in_the_body_moves_with_the_index(rng):
    (loop,), _ = loops_of(heads, rand(rng, (5, 96)), rand(rng, (96, 96)), 16)
    assert loop.args[1:4] == (0, 16, 1)


def test_a_loop_over_an_arrays_rows_is_a_loop_too(rng):
    (loop,), _ = loops_of(recurrent, rand(rng, (30, 4, 6)), rand(rng, (4, 5)), rand(rng, (6, 5)))
    assert loop.args[1:4] == (0, 30, 1)
    (loop,), _ = loops_of(scale_each_row, rand(rng, (40, 7)))
    assert loop.args[0].write_back   # the rows' updates reach the array, in place


def test_locals_rebound_to_views_that_follow_the_index_are_carried(rng):
    for fn, args in [(recursion_by_columns, (rand(rng, (7, 40)),)), (downwards_by_rows, (rand(rng, (30, 4)),))]:
        (loop,), _ = loops_of(fn, *args)
        count = len(range(*loop.args[1:4]))
        assert count >= args[0].shape[1 if fn is recursion_by_columns else 0] - 2   # at most two iterations peeled


def test_swapped_arrays_make_a_body_of_a_whole_period(rng):
    (loop,), _ = loops_of(leapfrog, rand(rng, (12, 12)), rand(rng, (12, 12)), 11)
    assert loop.args[1:4] == (0, 10, 2)   # five passes of two steps; the eleventh unrolled after


def test_nested_loops_nest(rng):
    (outer, inner), _ = loops_of(nested, rand(rng, (20, 30)))
    assert inner in outer.args[0].calls


def test_zero_and_one_iterations(rng, monkeypatch):
    monkeypatch.setattr(config, "loop_capture_min", 1)
    for backend in BACKENDS:
        like_numpy(jacobi, backend, rand(rng, 20), rand(rng, 20), 0)
        like_numpy(jacobi, backend, rand(rng, 20), rand(rng, 20), 1)
        like_numpy(index_after, backend, rand(rng, 3))


def test_bounds_from_arguments(rng):
    compiled = numpile.compile(jacobi, backend="llvm")
    for steps in (7, 9, 7):
        a, b = rand(rng, 30), rand(rng, 30)
        assert_same(compiled(a.copy(), b.copy(), steps), jacobi(a, b, steps))
    assert len(compiled.all_entries()) == 2   # the trip count is guarded: one entry each


def scale_rows(A, w):
    for i in range(A.shape[0]):
        A[i] *= i + 1.0
        A[i] += A[i].sum() * w   # a later kernel reads w: a layout it was not compiled for would stop it mid-iteration
    return A


def test_a_loop_run_again_with_inputs_of_another_layout(rng):
    compiled = numpile.compile(scale_rows, backend="llvm")
    for w in (rand(rng, 40), rand(rng, 80)[::2], rand(rng, 40)):   # the second is strided
        A = rand(rng, (30, 40))
        assert_same(compiled(A.copy(), w), scale_rows(A.copy(), w))


@pytest.mark.filterwarnings("error::RuntimeWarning")   # a loop that raised and ran as Python warns
def test_threads_run_one_compiled_loop_at_once(rng):
    from concurrent.futures import ThreadPoolExecutor
    compiled = numpile.compile(sweep, backend="llvm")
    arrays = [rand(rng, (60, 30)) for _ in range(16)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda a: compiled(a.copy()), arrays))
    for a, got in zip(arrays, results):
        assert_same(got, sweep(a.copy()))


def blocks_of_powers(x, K):
    for i in range(K):
        v = np.reshape(x, (2 ** i, -1))        # a size that is a power of the index: not a loop node's
        x = (v * 2.0 + i).reshape(-1)
    return x


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_a_power_of_the_index_unrolls_the_loop(backend, rng):
    """`R ** i` of a loop's index (NPBench's Stockham FFT) raised TypeError in the trace, and the
    whole function ran as Python; the loop unrolls instead."""
    run_like_numpy(blocks_of_powers, backend, lambda call: (rng.standard_normal(64), 6), graphs=1)


def windows_past_the_ends(x, k):
    out = np.zeros((x.shape[0], 3))
    for i in range(x.shape[0]):
        out[i, 0] = x[i:i + 3].max()                           # the end passes the array's near the last i
        out[i, 1] = x[max(i - 2, 0):i + 1].mean()              # the start clamped near the first
        out[i, 2] = np.argmax(x[min(i + 1, x.shape[0] - 1):i + 5:2])
    return out


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_windows_that_pass_the_arrays_ends_are_one_loop(backend, rng):
    """Slices whose bounds Python clamps for some indices only: their lengths are symbolic
    (min/max, bounded over the loop: intervals.py), not a decision that unrolls the loop."""
    run_like_numpy(windows_past_the_ends, backend, lambda call: (rng.integers(0, 20, 9 + call).astype(float), 3),
                   graphs=None)
    compiled = numpile.compile(windows_past_the_ends, backend=backend)
    x = rng.standard_normal(11)
    assert_same(compiled(x, 3), windows_past_the_ends(x, 3))
    assert [n.target for n in compiled.entries[0].graph.calls].count("loop") == 1


def clocked(x, steps, dt):
    t = 0.0
    for i in range(steps):
        x = x + np.sin(x) * dt          # the state
        t += dt                         # a simulation's clock: a Python float that changes
    return x, t


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_a_python_float_changed_each_iteration_is_carried_not_unrolled(backend, rng):
    run_like_numpy(clocked, backend, lambda call: (rng.standard_normal(16), 40, 0.05), graphs=1)
    compiled = numpile.compile(clocked, backend=backend)
    x = rng.standard_normal(16)
    assert_same(compiled(x, 40, 0.05), clocked(x, 40, 0.05))
    assert [n.target for n in compiled.entries[0].graph.calls].count("loop") == 1
    assert type(compiled(x, 0, 0.05)[1]) is float      # no iteration: the Python float as it was


def partition_count(l, x):
    """pythran's quicksort's partition, reduced: a while loop over a Python list."""
    idx, i = len(l) - 1, 0
    val = l[len(l) // 2]
    while i <= idx:
        if l[i] > val:
            l[i], l[idx] = l[idx], l[i]
            idx = idx - 1
        i = i + 1
    return i, l, x * i


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_a_while_loop_over_a_list_that_is_no_loop_node_leaves_the_list_as_it_was(backend):
    """Tracing a while body that cannot become a loop node puts the frame back as it was: the
    list's own items (it put back their ids: a break that said "'int' object has no attribute
    'is_constant'", and a list rebuilt from them would have held the ids)."""
    def make():
        return [7, 3, 9, 1, 5, 8, 2], np.arange(3.0)
    compiled = numpile.compile(partition_count, backend=backend)
    got, want = compiled(*make()), partition_count(*make())
    assert got[0] == want[0] and got[1] == want[1] and np.array_equal(got[2], want[2])
    reasons = [b.reason for b in numpile.explain(partition_count)(*make()).break_reasons]
    assert not any("object has no attribute" in r for r in reasons), reasons
