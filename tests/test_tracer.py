"""The tracer on straight-line Python: every capture compared with NumPy eager on two calls
with fresh random inputs; graph and entry counts asserted so that a silent fallback fails."""

import abc
import functools
import logging
import math

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand

SCALE = 2.0
GLOBAL_W = np.arange(1.0, 5.0)


def run_twice(fn, make_args, graphs=1, entries=1, **compile_kwargs):
    """Compile fn on the eager backend, call it on two fresh argument sets, compare with eager."""
    compiled = numpile.compile(fn, backend="eager", **compile_kwargs)
    for _ in range(2):
        args = make_args()
        assert_same(compiled(*args), fn(*args))
    assert len(compiled.entries) == entries, [e.break_reason for e in compiled.entries]
    everything = compiled.all_entries()
    assert sum(e.graph is not None for e in everything) == graphs, [e.break_reason for e in everything]
    return compiled


def two_arrays(rng, shape=(3, 4), dtype=np.float64):
    return lambda: (rand(rng, shape, dtype), rand(rng, shape, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (2, 3, 4), (0, 3)])
def test_basic_sin_plus_cos(rng, dtype, shape):
    def foo(x, y):
        return np.sin(x) + np.cos(y)
    run_twice(foo, two_arrays(rng, shape, dtype))


def test_decorator_forms(rng):
    @numpile.compile
    def f(x):
        return np.sin(x) + 1

    @numpile.compile(backend="eager")
    def g(x):
        return np.cos(x) * 2

    x = rand(rng, (4,))
    assert_same(f(x), np.sin(x) + 1)
    assert_same(g(x), np.cos(x) * 2)
    assert f.__name__ == "f" and len(g.entries) == 1


@pytest.mark.parametrize("dtype, scalar", [(np.int32, 3), (np.float32, 3), (np.int32, 2.5), (np.float32, 2.5),
                                           (np.int64, True), (np.float32, 1j), (bool, 1)])
def test_python_scalars_are_weak(rng, dtype, scalar):
    def f2(x, y):
        return x + y
    compiled = numpile.compile(f2, backend="eager")
    for _ in range(2):
        x = rand(rng, (3,), dtype)
        assert_same(compiled(x, scalar), f2(x, scalar))
    assert len(compiled.entries) == 1


def test_scalar_arithmetic_is_folded(rng):
    def f(x, n):
        k = (n * 3 + 1) // 2 - math.sqrt(16) + SCALE ** 2
        return x * k, k
    compiled = run_twice(f, lambda: (rand(rng, (4,)), 5))
    [entry] = compiled.entries
    assert [n.target for n in entry.graph.calls] == ["multiply"]


def test_a_different_python_scalar_recompiles(rng):
    def f(x, n):
        return x * n
    compiled = numpile.compile(f, backend="eager")
    x = rand(rng, (3,))
    assert_same(compiled(x, 2), x * 2)
    assert_same(compiled(x, 3), x * 3)
    assert_same(compiled(x, 2.0), x * 2.0)
    assert len(compiled.entries) == 3


def test_numpy_scalar_arguments_are_graph_inputs(rng):
    def f(x, s):
        return x * s + s
    compiled = numpile.compile(f, backend="eager")
    for value in (np.float32(0.5), np.float32(3.0)):
        x = rand(rng, (3,), np.float32)
        assert_same(compiled(x, value), f(x, value))
    assert len(compiled.entries) == 1


def test_globals_constants_and_global_arrays(rng):
    def f(x):
        return x * SCALE + GLOBAL_W
    compiled = run_twice(f, lambda: (rand(rng, (4,)),))
    x = rand(rng, (4,))
    GLOBAL_W[0] = 100.0  # an in-place update of a global array is seen: it is an input, not a constant
    try:
        assert_same(compiled(x), f(x))
    finally:
        GLOBAL_W[0] = 1.0
    assert len(compiled.entries) == 1


def test_array_attributes_and_methods(rng):
    def f(x):
        n = x.shape[0]
        m = x.ndim + x.size
        t = x.T
        return t.sum(axis=0) * n + m, x.reshape(-1, 2), x[1:, ::2], x.dtype, x.shape
    run_twice(f, lambda: (rand(rng, (4, 6)),))


def test_containers_built_and_unpacked(rng):
    def f(x, y):
        t = (x, y, 3)
        a, b, k = t
        first, *rest = [a, b, k]
        d = {"a": a, "b": b}
        d["c"] = a + b
        keys = list(d.keys())
        lst = [a]
        lst.append(b)
        lst.extend([k])
        lst += [first]
        return d["c"] * rest[1], keys, len(lst), tuple(lst[:2]), {**d, "k": k}
    run_twice(f, two_arrays(rng))


def test_container_arguments(rng):
    def f(pair, params):
        a, b = pair
        return a * params["scale"] + b[0], len(pair)
    compiled = numpile.compile(f, backend="eager")
    for _ in range(2):
        pair = (rand(rng, (3,)), rand(rng, (2, 3)))
        assert_same(compiled(pair, {"scale": 2.0}), f(pair, {"scale": 2.0}))
    assert len(compiled.entries) == 1
    pair = [rand(rng, (3,)), rand(rng, (2, 3))]
    assert_same(compiled(pair, {"scale": 3.0}), f(pair, {"scale": 3.0}))
    assert len(compiled.entries) == 2  # a list is not a tuple; a new scale is a new constant


def helper(a, b=1.5, *rest, scale=1, **kw):
    return (a + b + sum(rest)) * scale + kw.get("z", 0)


def test_inlined_calls_defaults_varargs_kwargs(rng):
    def f(x, y):
        return helper(x), helper(x, y, 1, 2, scale=3, z=4), helper(*(x, 2.0), **{"z": 1})
    compiled = run_twice(f, two_arrays(rng))
    assert compiled.entries[0].graph is not None


def test_closures_lambdas_and_nested_functions(rng):
    bias = 0.25

    def f(x, y):
        k = 3

        def inner(z):
            return z * k + x
        square = lambda q: q * q  # noqa: E731
        return inner(y) + square(x) + bias
    run_twice(f, two_arrays(rng))


def test_comprehensions(rng):
    def f(x, y):
        rows = [np.sin(v) for v in (x, y)]
        scaled = {name: v * i for i, (name, v) in enumerate(zip(("x", "y"), (x, y)))}
        total = rows[0] + rows[1]
        return total, scaled
    run_twice(f, two_arrays(rng))


def test_loops_over_known_iterables(rng):
    def f(x, weights):
        acc = x
        for i in range(3):
            acc = acc + i
        for w, s in zip(weights, (1.0, 2.0)):
            acc = acc * s + w
        for i, row in enumerate(x):
            acc = acc + row * i
        for k, v in {"a": 1, "b": 2}.items():
            acc = acc - v
        return acc
    run_twice(f, lambda: (rand(rng, (3, 3)), [rand(rng, (3,)), rand(rng, (3,))]))


def test_branches_on_python_values_are_followed_and_guarded(rng):
    def f(x, mode, bias=None):
        if mode == "double":
            x = x * 2
        elif mode is None:
            x = -x
        if bias is not None:
            x = x + bias
        return x
    compiled = numpile.compile(f, backend="eager")
    x = rand(rng, (3,))
    for mode in ("double", None, "double", "other"):
        assert_same(compiled(x, mode), f(x, mode))
    assert_same(compiled(x, "double", 1.0), f(x, "double", 1.0))
    assert len(compiled.entries) == 4


class Linear:
    def __init__(self, rng, n_in, n_out):
        self.w = rand(rng, (n_in, n_out))
        self.b = rand(rng, (n_out,))

    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        return self.act(np.sin(x).sum(axis=1, keepdims=True) * self.b)

    @staticmethod
    def act(v):
        return v + 1

    @property
    def scale(self):
        return self.b * 2


def test_methods_staticmethods_properties(rng):
    model = Linear(rng, 4, 3)

    def f(x):
        return model(x) + model.scale
    run_twice(f, lambda: (rand(rng, (2, 3)),))


class _Basis(abc.ABC):   # np.polynomial's classes: classmethods inherited, called through a subclass
    scale = 3.0

    @classmethod
    def fit(cls, x):
        return x * cls.scale + cls.shift(x)

    def shift(x):   # a plain function, read through the class: no self bound
        return x - 1


class _Chebyshev(_Basis):
    scale = 5.0


def test_classmethods_and_functions_read_through_a_subclass(rng):
    def f(x):
        return _Chebyshev.fit(x), _Basis.fit(x), _Chebyshev.shift(x)
    run_twice(f, lambda: (rand(rng, (4,)),))


def test_compiled_model_weights_are_inputs(rng):
    model = Linear(rng, 4, 3)
    compiled = numpile.compile(model, backend="eager")
    x = rand(rng, (2, 3))
    assert_same(compiled(x), model(x))
    model.b[:] = rand(rng, (3,))            # in-place update: seen, no recompile
    assert_same(compiled(x), model(x))
    model.b = rand(rng, (3,))               # rebinding with the same shape: seen, no recompile
    assert_same(compiled(x), model(x))
    assert len(compiled.entries) == 1
    model.b = rand(rng, (1,))               # another shape: recompiles
    assert_same(compiled(x), model(x))
    assert len(compiled.entries) == 2
    assert compiled.w is model.w            # the compiled model still shows its attributes


def test_forward_only_object_and_bound_method(rng):
    class Net:
        def __init__(self):
            self.w = rand(rng, (3,))

        def forward(self, x):
            return x * self.w

    net = Net()
    x = rand(rng, (3,))
    assert_same(numpile.compile(net, backend="eager")(x), net.forward(x))
    assert_same(numpile.compile(net.forward, backend="eager")(x), net.forward(x))


def test_compile_as_method_decorator(rng):
    class Net:
        def __init__(self):
            self.w = rand(rng, (3,))

        @numpile.compile(backend="eager")
        def forward(self, x):
            return x + self.w

    net = Net()
    x = rand(rng, (3,))
    assert_same(net.forward(x), x + net.w)


@pytest.mark.parametrize("make_result", [
    lambda x: x.sum(),                       # a NumPy scalar
    lambda x: (x.sum(), x * 2),
    lambda x: [x, x + 1],
    lambda x: {"a": x * 2, "b": 3},
    lambda x: None,
    lambda x: 42,
    lambda x: x[0, 0],                       # scalar from indexing
])
def test_return_kinds(rng, make_result):
    run_twice(make_result, lambda: (rand(rng, (3, 3)),), graphs=_expected_graphs(make_result, rng))


def _expected_graphs(fn, rng):
    result = fn(rand(rng, (3, 3)))
    return 0 if result is None or isinstance(result, int) else 1


def test_returning_an_input_keeps_its_identity(rng):
    def f(x, y):
        return x, y * 2
    compiled = numpile.compile(f, backend="eager")
    x, y = rand(rng, (3,)), rand(rng, (3,))
    out = compiled(x, y)
    assert out[0] is x


def test_functools_partial_runs_as_python(rng):
    def scale(x, k):
        return x * k

    def f(x):
        g = functools.partial(scale, k=2)
        return g(x) + 1
    compiled = numpile.compile(f, backend="eager")
    for _ in range(2):
        x = rand(rng, (3,))
        assert_same(compiled(x), f(x))  # partial objects are not traced: breaks around them
    assert "functools.partial" in compiled.entries[0].break_reason


# -- breaks: correct results, clear reasons -------------------------------------------------
def with_print(x):
    y = x * 2
    print("side effect")
    return y + 1


def test_unsupported_call_breaks_and_resumes(rng, capsys, caplog):
    compiled = numpile.compile(with_print, backend="eager")
    with caplog.at_level(logging.DEBUG, logger="numpile.graph_breaks"):
        x = rand(rng, (3,))
        assert_same(compiled(x), with_print(x))
    assert capsys.readouterr().out.count("side effect") == 2
    assert "print() has side effects" in caplog.text and "test_tracer.py" in caplog.text
    [entry] = compiled.entries
    assert [n.target for n in entry.graph.calls] == ["multiply"] and "print" in entry.break_reason
    [resumed] = [e for e in compiled.all_entries() if e is not entry]
    assert [n.target for n in resumed.graph.calls] == ["add"]


def test_fullgraph_raises_unsupported_with_location(rng):
    compiled = numpile.compile(with_print, backend="eager", fullgraph=True)
    with pytest.raises(numpile.Unsupported) as info:
        compiled(rand(rng, (3,)))
    assert "print()" in str(info.value)
    assert info.value.loc.lineno == with_print.__code__.co_firstlineno + 2
    assert "test_tracer.py" in str(info.value)


def test_data_dependent_branch_is_a_break(rng):
    def f(x):
        if x.sum() > 0:
            return x
        return -x
    compiled = numpile.compile(f, backend="eager")
    for sign in (1, -1, 1):
        x = sign * np.abs(rand(rng, (4,)))
        assert_same(compiled(x), f(x))
    assert "data-dependent jump" in compiled.entries[0].break_reason
    assert len(compiled.entries) == 1


def test_user_exceptions_propagate_unchanged(rng):
    def f(x, y):
        return x + y
    compiled = numpile.compile(f, backend="eager")
    with pytest.raises(ValueError, match="broadcast"):
        compiled(rand(rng, (3,)), rand(rng, (4,)))

    def g(d):
        return d["missing"]
    with pytest.raises(KeyError):
        numpile.compile(g, backend="eager")({"a": 1})


def test_disable(rng):
    @numpile.disable
    def opaque(x):
        return x * 3

    def f(x):
        return opaque(x) + 1
    compiled = numpile.compile(f, backend="eager")
    x = rand(rng, (3,))
    assert_same(compiled(x), f(x))
    assert "numpile.disable" in compiled.entries[0].break_reason


def test_compile_rejects_non_callables():
    with pytest.raises(TypeError, match="numpile.compile expects"):
        numpile.compile(42)


def test_generator_expressions_and_generators_are_inlined(rng):
    def squares(xs):
        for v in xs:
            yield v * v

    def f(xs, y):
        total = sum(v.sum() for v in xs)
        doubled = list(v * 2 for v in (y, y + 1))
        return total, doubled, tuple(squares(xs)), any(v.ndim == 2 for v in xs)
    run_twice(f, lambda: ([rand(rng, (3,)), rand(rng, (2,))], rand(rng, (4,))))


def test_generator_with_a_break_runs_as_python(rng):
    def f(xs):
        return max(float(v.max()) for v in xs) * 2
    compiled = numpile.compile(f, backend="eager")
    for _ in range(2):
        xs = [rand(rng, (3,)), rand(rng, (2,))]
        assert_same(compiled(xs), f(xs))


class _Tagged(np.ndarray):
    """A subclass with ndarray semantics: results of its arithmetic stay _Tagged."""


@pytest.mark.parametrize("make", [lambda x: np.asmatrix(x), lambda x: np.ma.masked_array(x, mask=x > 0.5),
                                  lambda x: x.view(_Tagged)], ids=["matrix", "masked", "own"])
@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_ndarray_subclasses_run_as_python_and_say_why(rng, make, capsys):
    def f(a, b):
        return (a * b + 1).sum(axis=0), a @ b.T
    compiled = numpile.compile(f, backend="eager")
    numpile.set_logs("graph_breaks")
    try:
        for _ in range(2):
            a, b = make(rand(rng, (3, 3))), rand(rng, (3, 3))
            got, want = compiled(a, b), f(a, b)
            for g, w in zip(got, want):
                assert type(g) is type(w) and g.dtype == w.dtype and g.shape == w.shape
                np.testing.assert_array_equal(np.ma.getdata(g), np.ma.getdata(w))
                assert np.array_equal(np.ma.getmaskarray(g), np.ma.getmaskarray(w))
    finally:
        numpile.set_logs()
    why = f"a is an ndarray subclass ({type(a).__name__})"
    assert f".f: {why}" in capsys.readouterr().err
    assert [e.eager for e in compiled.entries] == [True] and why in compiled.entries[0].break_reason
    plain = rand(rng, (3, 3)), rand(rng, (3, 3))   # a plain ndarray still compiles (the eager entry is guarded)
    assert_same(compiled(*plain), f(*plain))
    assert [e.eager for e in compiled.entries] == [False, True]
    with pytest.raises(numpile.Unsupported, match="ndarray subclass"):
        numpile.compile(f, backend="eager", fullgraph=True)(a, b)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_ndarray_subclass_attribute_of_a_model_runs_as_python(rng):
    class Model:
        def __init__(self):
            self.w = np.asmatrix(rand(rng, (3, 3)))

        def __call__(self, x):
            y = x * 2
            return self.w @ y
    model = Model()
    x = rand(rng, (3, 3))
    got = numpile.compile(model, backend="eager")(x)
    assert type(got) is np.matrix and np.array_equal(got, model(x))


# -- imports in the function body --------------------------------------------------------------

def test_import_in_the_body_keeps_capturing(rng):
    def f(x):
        import math
        import numpy.linalg as la
        from numpy.linalg import norm
        return la.norm(x, axis=0) / norm(x) * math.pi
    run_twice(f, lambda: (rand(rng, (3, 4)),))


def test_a_call_into_an_imported_module_breaks_only_there(rng):
    def f(x):
        from json import dumps
        y = np.sin(x)
        text = dumps([1, 2])
        return np.cos(y), text
    compiled = run_twice(f, lambda: (rand(rng, (3,)),), graphs=2)
    assert "json.dumps" in compiled.entries[0].break_reason


def test_an_entry_runs_only_when_every_guard_passes(rng):
    """The most recent entry is tried with its guards and its run in one function: any guard
    failing is a miss (a once wrong precedence ran the entry whenever the first guard passed)."""
    def f(x, y):
        return np.sin(x) + y
    compiled = numpile.compile(f, backend="eager")
    x, y = rand(rng, (5,)), rand(rng, (5,))
    for args in ((x, x), (x, y), (x, x), (y, x)):
        assert_same(compiled(*args), f(*args))
    assert len(compiled.entries) == 2


def test_an_imported_module_is_guarded_by_identity(rng):
    import sys
    import types
    name = "_numpile_import_probe"
    first = types.ModuleType(name)
    first.SCALE = 2.0
    second = types.ModuleType(name)
    second.SCALE = 5.0
    def f(x):
        from _numpile_import_probe import SCALE
        return x * SCALE
    compiled = numpile.compile(f, backend="eager")
    x = rand(rng, (3,))
    try:
        sys.modules[name] = first
        assert_same(compiled(x), x * 2.0)
        first.SCALE = 3.0  # a module attribute that is data is guarded by value
        assert_same(compiled(x), x * 3.0)
        sys.modules[name] = second
        assert_same(compiled(x), x * 5.0)
        assert len(compiled.entries) == 3
    finally:
        sys.modules.pop(name, None)


def test_a_failing_import_breaks_and_raises_as_python(rng):
    def f(x):
        y = np.sin(x)
        import _numpile_no_such_module  # noqa: F401
        return y
    compiled = numpile.compile(f, backend="eager")
    with pytest.raises(ModuleNotFoundError):
        compiled(rand(rng, (3,)))
    assert "import of '_numpile_no_such_module' raised ModuleNotFoundError" in compiled.entries[0].break_reason
