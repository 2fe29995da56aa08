"""Graph breaks that resume: SPEC-tutorial.md items 4, 6, 7, 8, 9, 10, and breaks inside loops,
try/except, with blocks, nested calls and comprehensions, on every supported Python."""

import io
import warnings

import numpy as np
import pytest
import scipy.fft

import numpile
from conftest import assert_same, rand


def recording_backend():
    graphs = []

    def backend(graph, example_inputs):
        graphs.append(graph)
        return graph
    return backend, graphs


def compare(compiled, fn, *args):
    assert_same(compiled(*args), fn(*args))


def count_graphs(compiled) -> int:
    return sum(e.graph is not None for e in compiled.all_entries())


# 4. data-dependent control flow
def f1(x, y):
    return -y if x.sum() < 0 else y


def test_4_data_dependent_control_flow(rng):
    compiled = numpile.compile(f1, backend="eager")
    x, y = rand(rng, (5,)), rand(rng, (5,))
    for a in (x, -x, np.abs(x), -np.abs(x)):
        compare(compiled, f1, a, y)


# 6. non-NumPy functions
def f3(x):
    x = x * 2
    x = scipy.fft.dct(x)
    return x * 2


def test_6_scipy_call_between_two_graphs(rng):
    backend, graphs = recording_backend()
    compiled = numpile.compile(f3, backend=backend)
    for _ in range(2):
        compare(compiled, f3, rand(rng, (8,)))
    assert [[n.target for n in g.calls] for g in graphs] == [["multiply"], ["multiply"]]


# 7, 8, 9. bar: three graphs over two calls, explain, fullgraph
def bar(a, b):
    x = a / (np.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


BAR_IF_LINE = bar.__code__.co_firstlineno + 2


def test_7_custom_backend_gets_three_graphs(rng, capsys):
    graphs = []

    def custom_backend(graph, example_inputs):
        graph.print_tabular()
        graphs.append(graph)
        return graph
    compiled = numpile.compile(bar, backend=custom_backend)
    a, b = rand(rng, (10,)), np.abs(rand(rng, (10,)))
    compare(compiled, bar, a, b)
    compare(compiled, bar, a, -b)
    compare(compiled, bar, a, b)     # both branches compiled: nothing new
    compare(compiled, bar, a, -b)
    ops = [[n.target for n in g.calls] for g in graphs]
    assert ops == [["absolute", "add", "divide", "sum", "less"], ["multiply"], ["multiply", "multiply"]]
    assert "opcode" in capsys.readouterr().out


def test_8_explain(rng):
    a, b = rand(rng, (10,)), np.abs(rand(rng, (10,)))
    report = numpile.explain(bar)(a, b)
    assert report.graph_count == 2 and report.graph_break_count == 1
    [brk] = report.break_reasons
    assert "data-dependent jump" in brk.reason
    assert brk.loc.lineno == BAR_IF_LINE and brk.loc.filename == __file__
    assert "if b.sum() < 0:" in str(report)
    assert report.ops_per_graph == [["absolute", "add", "divide", "sum", "less"], ["multiply"]]
    text = str(report)
    assert "Graph count: 2" in text and "Graph break count: 1" in text and "Ops of graph 1" in text


def test_9_fullgraph(rng):
    with pytest.raises(numpile.Unsupported) as info:
        numpile.compile(bar, fullgraph=True, backend="eager")(rand(rng, (3,)), rand(rng, (3,)))
    assert "data-dependent jump" in str(info.value)
    assert f"{__file__}:{BAR_IF_LINE}" in str(info.value)


# 10. breaks on unsupported calls (I/O)
def test_10_np_save_runs_once_per_call(rng, tmp_path):
    path = tmp_path / "y.npy"

    def f(x):
        y = x ** 2 / 2
        np.save(path, y)
        z = y ** 3 / 6
        return z
    backend, graphs = recording_backend()
    compiled = numpile.compile(f, backend=backend)
    for _ in range(2):
        x = rand(rng, (4,))
        assert_same(compiled(x), f(x))
        np.testing.assert_allclose(np.load(path), x ** 2 / 2)
        path.unlink()
    assert len(graphs) == 2


# breaks in loops, blocks, nested calls and comprehensions
def loop_with_print(x, n):
    for t in range(n):
        x = np.sin(x) + 0.5
        if t == 1:
            print("step", t)
    return x


def test_break_inside_for_loop(rng, capsys):
    compiled = numpile.compile(loop_with_print, backend="eager")
    for _ in range(2):
        compare(compiled, loop_with_print, rand(rng, (3,)), 4)
    assert capsys.readouterr().out.count("step 1") == 4


def data_loop(x):
    total = x
    while total.sum() < 100:            # the condition needs data: a break every iteration
        total = total * 2 + 1
    return total


def test_break_in_while_loop_on_data(rng):
    compiled = numpile.compile(data_loop, backend="eager")
    for _ in range(3):
        compare(compiled, data_loop, np.abs(rand(rng, (4,))))


def long_loop(x):
    for i in range(3000):               # past the unroll limit: the loop runs as Python, its body compiled
        x = x * 0.999 + 0.001
    return x


def test_long_loop_breaks_without_deep_recursion(rng):
    compiled = numpile.compile(long_loop, backend="eager")
    compare(compiled, long_loop, rand(rng, (3,)))


def with_try(x, d):
    y = np.sin(x)
    try:
        y = y + d["missing"]
    except KeyError:
        y = y * 2
    finally:
        y = y + 1
    return y


def test_try_except_finally(rng):
    compiled = numpile.compile(with_try, backend="eager")
    for _ in range(2):
        compare(compiled, with_try, rand(rng, (3,)), {"a": 1})
    compare(compiled, with_try, rand(rng, (3,)), {"missing": 3.0})


def branch_in_try_in_loop(x, y):
    k = 0
    while x.sum() > 0 and k < 3:
        k += 1
        try:
            if x.max() < 1.0:     # a data-dependent jump in a try body: its bool() runs under a try
                break
            x = y
        except ZeroDivisionError:
            pass
    return x


def test_data_dependent_jump_inside_try_resumes_either_way(rng):
    compiled = numpile.compile(branch_in_try_in_loop, backend="eager")
    for x0, y0 in [(0.5, 2.0), (1.5, 2.0), (1.5, 0.3), (2.0, 3.0)]:   # break at once; x = y, then either
        x, y = np.full(2, x0) + rand(rng, (2,)) * 0.01, np.full(2, y0)
        compare(compiled, branch_in_try_in_loop, x, y)


class Rejected(ValueError):
    pass


def validate(y, limit):
    print("validating")  # not inlinable: the caller breaks at this call, inside its try block
    if limit < 0:
        raise Rejected(f"limit {limit} < 0")
    if limit == 0:
        raise TypeError("no limit")
    return np.minimum(y, limit)


def clipped_or_shifted(x, limit):
    y = np.cos(x)
    try:
        z = validate(y, limit)
        z = z * 3            # captured again inside the try block
    except ValueError as e:
        z = y - len(str(e))  # the handler, run natively
    return np.exp(z) + 1     # captured again after the block


def test_break_inside_try_resumes_in_the_block_and_at_the_handler(rng, capsys):
    compiled = numpile.compile(clipped_or_shifted, backend="eager")
    for limit in (0.5, 0.25, -1, 0.75, -2):
        compare(compiled, clipped_or_shifted, rand(rng, (4,)), limit)
    ops = [n.target for e in compiled.all_entries() if e.graph is not None for n in e.graph.calls]
    assert {"cos", "multiply", "exp", "add"} <= set(ops)  # before, inside and after the try block
    with pytest.raises(TypeError, match="no limit") as info:  # not the handler's: propagates unchanged
        compiled(rand(rng, (4,)), 0)
    assert "raise TypeError" in str(info.traceback[-1].statement)  # the user's raise, in the user's file
    assert str(info.traceback[-1].path) == __file__


def with_errstate(x):
    y = x * 2
    with np.errstate(divide="ignore"):
        z = 1 / (y - y)
    return z + y


def test_with_block(rng):
    compiled = numpile.compile(with_errstate, backend="eager")
    for _ in range(2):
        compare(compiled, with_errstate, rand(rng, (3,)))


def quiet_ratio(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = x / y
    return np.where(np.isfinite(r), r, 0.0) + 1 / (y - y)  # the last division is outside: it warns


def test_errstate_ignore_block_is_captured_and_stays_quiet(rng):
    backend, graphs = recording_backend()
    compiled = numpile.compile(quiet_ratio, backend=backend)
    x, y = rand(rng, (6,)), np.where(np.arange(6) % 2 == 0, 0.0, rand(rng, (6,)))
    with pytest.warns(RuntimeWarning, match="divide by zero") as caught:
        compare(compiled, quiet_ratio, x, y)
    assert len(graphs) == 1 and count_graphs(compiled) == 1
    (divide_in_block,) = [n for n in graphs[0].calls if n.meta.get("errstate")]
    assert divide_in_block.meta["errstate"] == {"divide": "ignore", "invalid": "ignore"}
    # compiled and eager each warn once, for the division outside the block
    assert [str(w.message) for w in caught].count("divide by zero encountered in divide") == 2
    assert "with np.errstate(divide='ignore', invalid='ignore'):" in graphs[0].python_code()


def errstate_seen_by_a_break(x, log):
    with np.errstate(all="ignore"):
        y = x / 0.0
        log.append(np.geterr()["divide"])   # np.geterr: a break inside the block
        z = y - x / 0.0
    log.append(np.geterr()["divide"])
    return z


def errstate_raise(x):
    with np.errstate(divide="raise"):
        return x / (x - x)


def test_errstate_is_entered_again_at_a_break_and_other_settings_break(rng):
    compiled = numpile.compile(errstate_seen_by_a_break, backend="eager")
    got, want = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = rand(rng, (3,))
        assert_same(compiled(x, got), errstate_seen_by_a_break(x, want))
    assert got == want == ["ignore", np.geterr()["divide"]]
    compiled = numpile.compile(errstate_raise, backend="eager")
    before = np.geterr()
    with pytest.raises(FloatingPointError):
        compiled(rand(rng, (3,)))
    assert np.geterr() == before  # the block's __exit__ ran
    reasons = [e.graph_break.reason for e in compiled.all_entries() if e.graph_break is not None]
    assert any("np.errstate(divide='raise')" in r for r in reasons)


def print_in_errstate(x, buf, fail):
    y = np.sin(x)
    with np.errstate(all="ignore"):
        z = y / 0.5
        print("in block", file=buf)       # a break inside the with body
        if fail:
            raise KeyError("boom")
        z = z - y                          # captured again inside the block
    return np.cos(z) + y                   # and after it


def logged_in_finally(x, log):
    try:
        y = np.sin(x)
        log.append(y.shape)                # list.append of a caller's list: captured; the print breaks
        print("in try")
        y = y * 2
    finally:
        y = y + 1
    return y * 3


def test_break_inside_with_or_finally_resumes_compiled(rng, capsys):
    compiled = numpile.compile(print_in_errstate, backend="eager")
    for _ in range(2):
        x, got, want = rand(rng, (3,)), io.StringIO(), io.StringIO()
        assert_same(compiled(x, got, False), print_in_errstate(x, want, False))
        assert got.getvalue() == want.getvalue() == "in block\n"
    ops = [n.target for e in compiled.all_entries() if e.graph is not None for n in e.graph.calls]
    assert {"subtract", "cos"} <= set(ops)
    reasons = [e.graph_break.reason for e in compiled.all_entries() if e.graph_break is not None]
    assert "the end of a with block entered as Python (errstate.__exit__) runs as Python" in reasons
    before = np.geterr()
    with pytest.raises(KeyError, match="boom") as info:
        compiled(rand(rng, (3,)), io.StringIO(), True)
    assert np.geterr() == before                      # __exit__ ran on the way out
    assert 'raise KeyError("boom")' in str(info.traceback[-1].statement)
    with pytest.raises(AttributeError, match="write") as info:  # the breaking call itself raises
        compiled(rand(rng, (3,)), 123, False)
    assert np.geterr() == before
    assert any('print("in block", file=buf)' in str(t.statement) for t in info.traceback if str(t.path) == __file__)
    compiled = numpile.compile(logged_in_finally, backend="eager")
    for _ in range(2):
        x, got, want = rand(rng, (4,)), [], []
        assert_same(compiled(x, got), logged_in_finally(x, want))
        assert got == want
    ops = [n.target for e in compiled.all_entries() if e.graph is not None for n in e.graph.calls]
    assert ops.count("multiply") == 2 and "add" in ops   # after the break: inside the try and after it


class Recorder:
    """A context manager numpile does not know: entered as Python at a break."""

    def __init__(self, log):
        self.log = log

    def __enter__(self):
        self.log.append("enter")
        return len(self.log)

    def __exit__(self, kind, value, tb):
        self.log.append(("exit", kind))
        return False


def in_user_context(x, log):
    y = np.sin(x)
    with Recorder(log) as k:
        z = np.cos(y) * k          # the body is captured once the manager is entered
    return z + y                   # and the code after the block


def log_or_zero(x, log):
    with Recorder(log), warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            y = np.log(x)          # a captured op; the graph raises for zeros: replayed as Python
        except RuntimeWarning:
            y = np.zeros_like(x)
        z = np.sqrt(x - 1)         # raises out of the block (into __exit__) for x < 1
    return y + 1, z


def test_unknown_context_manager_body_is_captured_and_raising_graphs_replay(rng):
    compiled = numpile.compile(in_user_context, backend="eager")
    for _ in range(2):
        x, got, want = rand(rng, (3,)), [], []
        assert_same(compiled(x, got), in_user_context(x, want))
        assert got == want == ["enter", ("exit", None)]
    ops = [n.target for e in compiled.all_entries() if e.graph is not None for n in e.graph.calls]
    assert {"sin", "cos", "multiply", "add"} <= set(ops)
    compiled = numpile.compile(log_or_zero, backend="eager")
    for x in (np.full(3, 2.0) + rng.random(3), np.array([0.0, 2.0, 3.0]), np.array([1.5, 0.5, 2.0])):
        got, want = [], []
        try:
            expected = log_or_zero(x, want)
        except RuntimeWarning as e:
            with pytest.raises(RuntimeWarning, match=str(e)):
                compiled(x, got)
        else:
            assert_same(compiled(x, got), expected)
        assert got == want  # __exit__ saw what it sees in NumPy: nothing, or the RuntimeWarning
    assert any(("exit", RuntimeWarning) == item for item in want)


def print_in_with(x, buf):
    with np.errstate(all="ignore"):
        print("step", file=buf)      # a break in a with body, on a call with a keyword argument
    return x + 1


def errstate_in_try(x):
    try:
        with np.errstate(all="ignore"):
            x = x + 1
    except ZeroDivisionError:
        pass
    return x


def test_keyword_call_breaking_inside_with_or_try_keeps_its_keywords(rng, capsys):
    buf = io.StringIO()
    compare(numpile.compile(print_in_with, backend="eager"), lambda x, b: x + 1, rand(rng, (3,)), buf)
    assert buf.getvalue() == "step\n" and capsys.readouterr().out == ""
    compiled = numpile.compile(errstate_in_try, backend="eager")
    for _ in range(2):
        compare(compiled, errstate_in_try, rand(rng, (3,)))


def opaque(x):
    print("inside opaque")
    return x * 3


def caller(x):
    y = np.cos(x)
    z = opaque(y)          # cannot be inlined: called from residual code, compiled as its own frame
    return z + y


def test_nested_call_compiled_as_own_frame(rng, capsys):
    backend, graphs = recording_backend()
    compiled = numpile.compile(caller, backend=backend)
    for _ in range(2):
        compare(compiled, caller, rand(rng, (3,)))
    ops = sorted(tuple(n.target for n in g.calls) for g in graphs)
    assert ("multiply",) in ops      # opaque's own graph, after its print
    assert capsys.readouterr().out.count("inside opaque") == 4


def comprehension_with_break(xs):
    return [float(v.sum()) * 2 for v in xs]


def dict_and_set_comprehensions(x):
    rows = {i: np.sin(row) for i, row in enumerate(x)}
    total = sum(v.sum() for v in rows.values())
    return rows, float(total)


def test_comprehensions_with_breaks(rng):
    compiled = numpile.compile(comprehension_with_break, backend="eager")
    compare(compiled, comprehension_with_break, [rand(rng, (3,)), rand(rng, (2,))])
    compiled = numpile.compile(dict_and_set_comprehensions, backend="eager")
    compare(compiled, dict_and_set_comprehensions, rand(rng, (3, 2)))


# what breaks, and says so
def float_of_array(x):
    return x * float(x.sum())


def item_of_array(x):
    return x * x.sum().item()


def first_of_mask(x):
    return x[x > 0][0] * 2


def loop_over_nonzero(x):
    idx = np.nonzero(x > 0)[0]
    return [x[i] for i in range(len(idx))]


def random_draw(x):
    return x + np.random.rand(*x.shape)


@pytest.mark.parametrize("fn, reason", [
    (float_of_array, "float() of an array"),
    (item_of_array, "ndarray.item"),
    (first_of_mask, "s0 > 0 depends on the data"),
    (loop_over_nonzero, "int(s0) depends on the data"),
])
def test_unsupported_things_break_with_a_reason(rng, fn, reason):
    compiled = numpile.compile(fn, backend="eager")
    for _ in range(2):
        x = rand(rng, (6,))
        x[rng.integers(6)] = 1.5   # one element positive at least: x[x > 0][0] exists
        compare(compiled, fn, x)
    assert any(reason in (e.break_reason or "") for e in compiled.all_entries()), \
        [e.break_reason for e in compiled.all_entries()]


def test_random_draws_are_never_constants(rng):
    compiled = numpile.compile(random_draw, backend="eager")
    x = rand(rng, (4,))
    first, second = compiled(x), compiled(x)
    assert not np.array_equal(first, second)
    assert "random" in compiled.entries[0].break_reason


def checked_double(x):
    y = x * 2
    assert (y > -1e9).all(), "pytest rewrites this assert: its locals are named @py_assert1, ..."
    return y + 1


def test_locals_that_are_not_identifiers_resume(rng):
    compiled = numpile.compile(checked_double, backend="eager")
    for _ in range(2):
        x = rand(rng, (5,))
        compare(compiled, checked_double, x)


def copies_then_adds(x):
    y = x * 2
    z = y.getfield(y.dtype)  # ndarray.getfield is not in the op table
    return z + 1


def test_unsupported_ndarray_method_breaks_once_and_does_not_recompile(rng):
    compiled = numpile.compile(copies_then_adds, backend="eager")
    for _ in range(5):
        compare(compiled, copies_then_adds, rand(rng, (4,)))
    assert len(compiled.all_entries()) == 2
    report = numpile.explain(copies_then_adds)(rand(rng, (4,)))
    assert report.graph_break_count == 1 and "ndarray.getfield() is not supported" in str(report.break_reasons[0])


@pytest.mark.parametrize("let_go", ["reset", "drop"])
def test_resume_code_goes_with_reset_or_its_function(rng, let_go):
    """The resume code built for a function lives as long as its compiled function, or until
    numpile.reset() (a fuzzer making thousands of functions with breaks grew by ~6 KB each before)."""
    import gc
    from numpile.tracer import resume
    namespace = {}
    exec("import numpy as np\ndef made(x):\n    y = x * 2\n    z = y.getfield(y.dtype)\n    return z + 1\n", namespace)
    made = namespace.pop("made")
    compiled = numpile.compile(made, backend="eager")
    compare(compiled, made, rand(rng, (4,)))

    def resumes_of_made():
        gc.collect()
        return [origin for origin in resume._ORIGIN.values() if origin[0].co_name == "made"]
    assert resumes_of_made() and all(origin[0] is made.__code__ for origin in resumes_of_made())
    if let_go == "reset":
        numpile.reset()
    else:
        del made, compiled, namespace
    assert not resumes_of_made()



# breaks in loops of Python values, nested functions made on every call
def pairwise_sums(a, b):
    sums = []
    for x, y in zip(a, b):                        # 400 pairs: past the unroll limit
        sums.append(x + y)
    return sums


def scaled_rows(x, k):
    def scale(row):                               # a closure over k, made on every call
        print(end="")                             # breaks: run from residual code as its own frame
        return row * k
    return [scale(r).sum() for r in x]


def test_a_loop_of_python_values_that_breaks_runs_as_python():
    """A break in a loop whose graph would hold no array work (Python numbers only): the frame runs
    as Python instead of a graph and a resume function on every iteration; nothing is traced again
    on later calls."""
    compiled = numpile.compile(pairwise_sums, backend="eager")
    a, b = list(range(400)), [float(v) for v in range(400)]
    for _ in range(5):
        assert compiled(a, b) == pairwise_sums(a, b)
    entries = compiled.all_entries()
    assert len(entries) <= 3 and all(e.graph is None for e in entries), [e.break_reason for e in entries]


def test_a_nested_function_made_on_every_call_is_not_traced_on_every_call(rng):
    """Residual code calling a function made anew on every call with a closure of its own (entries
    made for one closure cannot run another) runs it as it is from the second call on; the number
    of compiles stays bounded."""
    compiled = numpile.compile(scaled_rows, backend="eager")
    for k in range(12):
        x = rand(rng, (3, 4))
        assert_same(compiled(x, float(k)), scaled_rows(x, float(k)))
    assert compiled.compiles() <= 8


def _setup_then_break(x):
    grid = np.outer(x, x)          # read only before the break: dead after it
    total = grid.sum() + 1.0
    if total > 0:                  # a data-dependent jump: the rest resumes
        y = x * 2.0
    else:
        y = x - 1.0
    return y / total


def test_a_local_nothing_reads_after_a_break_is_not_passed_on(rng):
    compiled = numpile.compile(_setup_then_break, backend="eager")
    for sign in (1.0, -1.0):
        x = rand(rng, (6,)) * sign
        assert_same(compiled(x), _setup_then_break(x))
    described = " ".join(str(e.guards.describe()) for e in compiled.all_entries() if e.graph_break is None)
    assert "grid" not in described and "total" in described, described


def _closure_then_break(x, a):
    scaled = lambda: x * a          # a and x are cells: only the lambda reads them after the break
    if x.sum() > 0:
        return scaled() + 1.0
    return scaled() - 1.0


def _locals_after_break(x):
    unused = x * 3.0
    if x.sum() > 0:
        return locals()["unused"] + 1.0
    return x


def test_locals_a_closure_or_locals_reads_after_a_break_are_passed_on(rng):
    for fn, args in ((_closure_then_break, lambda s: (rand(rng, (5,)) * s, 2.5)), (_locals_after_break, lambda s: (rand(rng, (5,)) * s,))):
        compiled = numpile.compile(fn, backend="eager")
        for sign in (1.0, -1.0):
            a = args(sign)
            assert_same(compiled(*a), fn(*a))


def _closure_over_a_later_list(x):   # from-python-to-numpy's Bridson sampling: the list is made after the break
    def add(p):
        points.append(p)
    n = int(x.sum())
    points = []
    add(x * n)
    return points


def _closure_over_an_earlier_list(x):
    points = []

    def add(p):
        points.append(p)
    n = int(x.sum())
    add(x * n)
    return points


def _closure_over_a_rebound_argument(x, k):
    scale = lambda: x * k       # noqa: E731
    k = int(x.sum())
    return scale()


@pytest.mark.parametrize("fn, resumes", [(_closure_over_a_later_list, False), (_closure_over_an_earlier_list, True),
                                         (_closure_over_a_rebound_argument, False)])
def test_a_closure_made_before_a_break_sees_what_the_code_after_it_assigns(fn, resumes, rng):
    x = rand(rng, (4,)) + 2.0
    args = (x, 3) if fn is _closure_over_a_rebound_argument else (x,)
    for backend in ("eager", "llvm"):
        got, want = numpile.compile(fn, backend=backend)(*args), fn(*args)
        for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
            assert_same(g, w)
    reasons = [b.reason for b in numpile.explain(fn)(*args).break_reasons]
    assert any("closes over" in r for r in reasons) != resumes, reasons




u_global = history_global = None   # module globals the next functions update, set by the test


def _global_updated_in_a_loop():   # from-python-to-numpy's gray_scott update, on a global array
    global u_global
    for _ in range(2):
        w = u_global * 2
        u_global += w


def _global_list_appended_in_a_loop(x):
    for _ in range(3):
        x = x * 2
        history_global.append(x.sum())
    return x


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_a_global_first_met_in_a_loop_body_that_is_unrolled_is_traced_afresh(backend, rng):
    """The loop is first traced as a loop node, which fails (the global's assignment, the list's
    append): the global array and the global list first met there are as they were for the unrolled
    iterations, not updated twice or read from the discarded body's graph."""
    global u_global, history_global
    start = rand(rng, (5,))
    u_global = start.copy()
    _global_updated_in_a_loop()
    want = u_global
    u_global = start.copy()
    numpile.compile(_global_updated_in_a_loop, backend=backend)()
    assert_same(u_global, want)
    x = rand(rng, (4,))
    history_global = []
    want_x, want_history = _global_list_appended_in_a_loop(x), history_global
    history_global = []
    assert_same(numpile.compile(_global_list_appended_in_a_loop, backend=backend)(x), want_x)
    assert len(history_global) == len(want_history)
    for g, w in zip(history_global, want_history):
        assert_same(g, w)


def _box_count(Z, k):   # from-python-to-numpy's fractal_dimension: np.add.reduceat pending at the break
    S = np.add.reduceat(np.add.reduceat(Z, np.arange(0, Z.shape[0], k), axis=0), np.arange(0, Z.shape[1], k), axis=1)
    return len(np.where((S > 0) & (S < k * k))[0])


def _reduce_at(op, x, k):
    return op(x * 2, np.arange(0, x.shape[0], k)) + 1


def test_a_builtin_method_at_a_break_is_guarded_by_its_object_and_name(rng):
    """np.add.reduceat is a new bound object at every access: the resume after the break it is
    pending at is guarded by the ufunc and the name, not by identity (was a new entry per call
    until the cache limit); another ufunc's reduceat is another entry."""
    Z = rng.random((64, 64)) > 0.5
    compiled = numpile.compile(_box_count, backend="llvm")
    for k in (2, 4, 2, 4, 2, 4):
        assert compiled(Z, k) == _box_count(Z, k)
    assert len(compiled.all_entries()) <= 6
    x = rand(rng, (12,))
    compiled = numpile.compile(_reduce_at, backend="llvm")
    for op in (np.add.reduceat, np.maximum.reduceat, np.add.reduceat, np.maximum.reduceat):
        assert_same(compiled(op, x, 3), _reduce_at(op, x, 3))


def _decay_global():   # from-python-to-numpy's game of life: `M *= 0.995` on a global
    global u_global
    u_global *= 0.995
    return u_global[1:-1] + 1


def _rebind_global(x):
    global history_global
    history_global = x * 2
    return x + 1


def test_an_update_in_place_of_a_global_is_captured_and_a_new_binding_breaks(rng):
    global u_global, history_global
    start = rand(rng, (6,))
    u_global = start.copy()
    want = _decay_global()
    want_global, u_global = u_global, start.copy()
    explained = numpile.explain(_decay_global)()
    assert explained.graph_break_count == 0
    u_global = start.copy()
    assert_same(numpile.compile(_decay_global, backend="llvm")(), want)
    assert_same(u_global, want_global)
    x = rand(rng, (4,))
    reasons = [b.reason for b in numpile.explain(_rebind_global)(x).break_reasons]
    assert any("assigning a global" in r for r in reasons), reasons
    history_global = None
    assert_same(numpile.compile(_rebind_global, backend="llvm")(x), x + 1)
    assert_same(history_global, x * 2)


def _columns_by_list(arrays):   # numpy-100's cartesian: a loop over a list whose body breaks
    out = np.zeros((len(arrays), 3))
    for n, arr in enumerate(arrays):
        out[n] = arr * 2
        print(end="")
    for arr in tuple(arrays):
        out[0] += arr
        print(end="")
    return out


def test_a_loop_over_a_list_resumes_after_a_break_in_its_body(rng):
    """The function resuming the loop takes the list's iterator on its stack: its items from its
    position on are traced (no "iterating over list_iterator" break at each iteration)."""
    arrays = [rand(rng, (3,)) for _ in range(4)]
    reasons = [b.reason for b in numpile.explain(_columns_by_list)(arrays).break_reasons]
    assert reasons and not any("iterating over" in r for r in reasons), reasons
    compiled = numpile.compile(_columns_by_list, backend="llvm")
    for k in (4, 4, 2):
        args = [rand(rng, (3,)) for _ in range(k)]
        assert_same(compiled(args), _columns_by_list(args))
