"""The backend "llvm" end to end: fused kernels against NumPy on fresh random inputs, threads,
layouts, NumPy's integer and cast semantics, vector math accuracy, fallbacks
and what NUMPILE_LOGS=output_code shows."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numpile
from numpile import plugins
from numpile.lowering import schedule
from numpile_llvm.kernels import step as kernel_step
from numpile_llvm.backend import LLVMBackend
from numpile_llvm.program import CompiledProgram

rng = np.random.default_rng()


def assert_same(got, want, rtol=None):
    assert type(got) is type(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        rtol = rtol or (2e-6 if want.dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def programs():
    """A backend recording the CompiledPrograms "llvm" makes."""
    made = []

    def compile_llvm(graph, example_inputs):
        made.append(LLVMBackend().compile(graph, example_inputs, {}))
        return made[-1]
    return compile_llvm, made


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def mlp(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)


def squared_distance(x, y):
    return ((x - y) ** 2).sum()


def test_llvm_is_the_default_cpu_backend():
    plugins.reset_plugins()
    info = {b.name: b for b in numpile.backend_table()}
    assert info["llvm"].available
    assert plugins.default_backend(numpile.config.default_backends["cpu"], "cpu").name == "llvm"


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows", [3, 257])  # 257 x 1000 is past the threshold for threads
def test_models_match_numpy(dtype, rows):
    x = rng.standard_normal((rows, 1000)).astype(dtype)
    g, b = rng.standard_normal(1000).astype(dtype), rng.standard_normal(1000).astype(dtype)
    w1, b1 = rng.standard_normal((1000, 64)).astype(dtype), rng.standard_normal(64).astype(dtype)
    w2, b2 = rng.standard_normal((64, 10)).astype(dtype), rng.standard_normal(10).astype(dtype)
    for fn, args in [(softmax, (x,)), (layer_norm, (x, g, b)), (mlp, (x, w1, b1, w2, b2)), (chain, (x,)),
                     (squared_distance, (x, x[::-1]))]:
        compiled = numpile.compile(fn, backend="llvm")
        # float32 sums of many products: BLAS and the kernel add in different orders
        loose = fn in (squared_distance, mlp) and dtype == np.float32
        assert_same(compiled(*args), fn(*args), rtol=1e-4 if loose else None)


def test_fused_kernels_are_native_and_threaded():
    compile_llvm, made = programs()
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    assert_same(numpile.compile(softmax, backend=compile_llvm)(x), softmax(x))
    program = made[0]
    assert len(program.program.kernels) == 1 and not program.fallbacks
    (step,) = program.steps.values()
    assert step.parallel and step.native is not None
    # exp(x - max) is computed once per element: the division reads it from a row scratch
    # (float32 exp is inline: one rint per exp)
    assert program.ir.count("call float @llvm.rint.f32(") == 1 and "%scratch" in program.ir


@pytest.mark.parametrize("n", [7, 1 << 20])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool"])
def test_full_reductions_split_over_threads(n, dtype):
    x = (rng.standard_normal(n) * 1000).astype(dtype) if dtype != "bool" else rng.random(n) < 0.5
    for fn in (np.sum, np.prod, np.max, np.min, np.any, np.all, np.mean):
        if fn is np.prod and dtype.startswith("float"):
            x = (1 + rng.standard_normal(n) * 1e-4).astype(dtype)
        got, want = numpile.compile(lambda a: fn(a), backend="llvm")(x), fn(x)
        assert type(got) is type(want) and got.dtype == want.dtype
        assert got == want, (fn.__name__, got, want)   # sums pairwise, products in order: NumPy's to the bit


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sums_are_numpys_to_the_bit(dtype):
    # NumPy's pairwise order: balanced trees (4096 = 32 leaves of 128), unbalanced ones (1000,
    # 100003), single leaves, ranges split over threads, rows, means, fused expressions
    for n in (0, 1, 5, 8, 13, 128, 129, 384, 1000, 4096, 100003, (1 << 20) + 24, 3 << 20):
        x = (rng.standard_normal(n) * 100).astype(dtype)
        for fn in (np.sum, np.mean, lambda a: ((a - 0.25) ** 2).sum(), lambda a: (a * a).mean()):
            with np.errstate(invalid="ignore"), warnings.catch_warnings():   # the mean of nothing
                warnings.simplefilter("ignore", RuntimeWarning)
                want = fn(x)
                got = numpile.compile(lambda a: fn(a), backend="llvm")(x)
            assert type(got) is type(want) and got.dtype == want.dtype
            assert got == want or np.isnan(want) and np.isnan(got), (n, got, want)
    for shape in ((37, 1000), (64, 4096), (3, 5), (300, 129), (2048, 1024)):
        m = (rng.standard_normal(shape) * 100).astype(dtype)
        for fn in (lambda a: a.sum(axis=1), lambda a: (2 * a + 1).sum(axis=-1, keepdims=True), lambda a: a.mean(axis=1),
                   lambda a: a - a.mean(axis=1, keepdims=True), lambda a: a.sum(), lambda a: (a * a).mean()):
            got, want = numpile.compile(fn, backend="llvm")(m), fn(m)
            assert got.dtype == want.dtype and np.array_equal(got, want), shape
    # trailing axes are summed as one block, others one step at a time, as NumPy does
    cube = (rng.standard_normal((4, 50, 60)) * 100).astype(dtype)
    for fn in (lambda a: a.sum(axis=(1, 2)), lambda a: (a - 1).mean(axis=(1, 2)), lambda a: a.sum(),
               lambda a: a.sum(axis=0), lambda a: a.sum(axis=1), lambda a: a.sum(axis=(0, 2)), lambda a: a.prod(axis=1),
               lambda a: (a * a).mean(axis=(0, 1))):
        with np.errstate(over="ignore"):   # the products reach inf
            assert np.array_equal(numpile.compile(fn, backend="llvm")(cube), fn(cube))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sums_of_broadcast_expressions_are_numpys_to_the_bit(dtype):
    """A full sum or mean of a broadcast expression (scipy-lectures' crude integration,
    `(a[:, None, None] ** b[None, :, None] - c).mean()`): its flat positions run over loops that
    do not merge, whose values are computed a row at a time into the pairwise buffer."""
    for n in (4, 100, 333):
        a, b, c = ((rng.random(k) + 0.5).astype(dtype) for k in (n, n // 2 + 1, n // 4 + 3))
        for fn in (lambda a, b, c: (a[:, None, None] * b[None, :, None] - c[None, None, :]).mean(),   # (** is within ulps)
                   lambda a, b, c: (a[:, None, None] + b[None, :, None] - c).sum(),
                   lambda a, b, c: (a[:, None] * b).sum(axis=(0, 1)), lambda a, b, c: (b[:, None, None] * c).mean(axis=(1, 2))):
            got, want = numpile.compile(fn, backend="llvm")(a, b, c), fn(a, b, c)
            assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want), n


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8])
def test_reductions_down_columns_run_rows_side_by_side(dtype, monkeypatch):
    """Sums, products, means, variances and integer extremes over axis 0 (and axis 1 of a cube): a
    kernel of its own whose rows run in blocks of 32 and 8 and one by one, each row's total in
    NumPy's order: equal to the bit, every width of block and remainder."""
    from numpile_llvm.kernels import body
    widths = []
    block = body.KernelBody._block
    monkeypatch.setattr(body.KernelBody, "_block", lambda self, first, width: widths.append(width) or block(self, first, width))
    fns = [lambda a: a.sum(axis=0), lambda a: a.mean(axis=0), lambda a: a.sum(axis=0) * 2 + a.sum(axis=1)[:1],
           lambda a: a.var(axis=0, ddof=1), lambda a: (a * 3).sum(axis=0, keepdims=True), lambda a: a.prod(axis=0)]
    if np.dtype(dtype).kind in "iu":
        fns += [lambda a: a.max(axis=0), lambda a: a.min(axis=0) - a.max(axis=0)]
    for shape in ((5, 3), (7, 41), (300, 77), (64, 1000), (9, 2, 45)):
        m = rng.integers(0, 3, size=shape).astype(dtype) if dtype == np.uint8 else (rng.standard_normal(shape) * 10).astype(dtype)
        for fn in fns:
            with np.errstate(all="ignore"):
                got, want = numpile.compile(fn, backend="llvm")(m), fn(m)
            assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want, equal_nan=True), shape
    assert set(widths) == set(body.JAM)


def test_the_same_sum_is_the_same_in_every_kernel():
    # a sum alone (a 1-d kernel, split over threads when large) and the same sum as a later
    # stage's input: equal, so comparing them is False as in NumPy
    def f(x):
        return (np.zeros(x.shape) + x).mean() > (np.zeros(x.shape) + x).mean(), x.sum() - (x * 1.0).sum()
    for n in (3, 5, 13, 200, 1 << 18):
        x = rng.standard_normal(n)
        got = numpile.compile(f, backend="llvm")(x)
        assert got[0] == np.False_ and got[1] == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_propagates_through_max_min_and_sum(dtype):
    x = rng.standard_normal((300, 1000)).astype(dtype)
    x[5, 7] = x[6, 999] = x[7, 0] = np.nan           # NaN first, last, inside a row
    x[8] = -np.inf
    x[9] = np.inf
    x[10, ::3] = np.nan
    x[11, 500] = np.inf
    x[12, 1] = -np.inf
    for fn in (lambda a: a.max(axis=1), lambda a: a.min(axis=1), lambda a: a.sum(), lambda a: np.maximum(a, 0.5),
               lambda a: a.min(), lambda a: a.max(), lambda a: a[13:].max(), lambda a: a.max(axis=0)):
        with np.errstate(invalid="ignore"):   # inf - inf in the sum
            assert_same(numpile.compile(fn, backend="llvm")(x), fn(x))


def decayed_step(x, lr, i):
    t = lr * 2 - 1.5  # Python arithmetic on a Python float: still a Python float in the kernel
    return x * lr + t, np.where(x > lr, x, t), np.clip(x, -lr, lr), np.maximum(x, t) + i * lr, (x - t).sum() + lr


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8])
def test_dynamic_python_floats_are_weak_in_kernels(dtype):
    compile_llvm, made = programs()
    compiled = numpile.compile(decayed_step, backend=compile_llvm)
    for k in range(4):
        x = (rng.standard_normal(300) * 4).astype(dtype)
        i = (rng.random(300) * 4).astype(np.int16)
        lr = float(rng.random()) + k  # a new value each call: a graph input after the second
        for got, want in zip(compiled(x, lr, i), decayed_step(x, lr, i)):
            assert_same(got, want)
    weak = made[-1]
    assert "python(lr[])" in str(weak.program) and not weak.fallbacks


def counter_step(x, t):
    return x * t + (t % 7), (x - t) * 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.int8])
def test_dynamic_python_ints_are_weak_and_checked_in_kernels(dtype):
    compiled = numpile.compile(counter_step, backend="llvm")
    x = (rng.standard_normal(300) * 4).astype(dtype)
    for t in (3, 4, 9, 100, -120, 300, 70000):
        try:
            want = counter_step(x, t)
        except OverflowError as e:  # out of int8's range: NumPy raises, and so must the kernel
            with pytest.raises(OverflowError, match=str(e)):
                compiled(x, t)
            continue
        for got, w in zip(compiled(x, t), want):
            assert_same(got, w)


def test_integer_division_and_modulo_like_numpy():
    info = np.iinfo(np.int32)
    a = np.array([7, -7, 7, -7, 0, 5, info.min, info.min, info.max, -1], np.int32)
    b = np.array([2, 2, -2, -2, 3, 0, -1, 1, 0, 0], np.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (np.floor_divide, np.remainder, np.fmod, lambda x, y: x * y + x, lambda x, y: x << (y % 40),
                   lambda x, y: x >> (y % 40), lambda x, y: np.abs(x) - y):
            assert_same(numpile.compile(lambda x, y: fn(x, y), backend="llvm")(a, b), fn(a, b))


def test_float_to_int_casts_like_numpy():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, 300.7, -300.7, -1.5, 70000.5, 0.0, -0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "bool", "float32"):
            for src in (x, x.astype(np.float32)):
                want = src.astype(dtype)
                assert_same(numpile.compile(lambda a: a.astype(dtype), backend="llvm")(src), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["sin", "cos", "tan", "exp", "expm1", "log", "log1p", "tanh", "arctan", "sinh", "cbrt"])
def test_vector_math_within_four_ulp(name, dtype):
    fn = getattr(np, name)
    x = (rng.standard_normal(1 << 16) * 4).astype(dtype)
    if name in ("log", "log1p"):
        x = np.abs(x) + dtype(0.01)
    x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0]
    with np.errstate(all="ignore"):
        want = fn(x)
        got = numpile.compile(lambda a: fn(a), backend="llvm")(x)
    assert got.dtype == want.dtype
    both_nan = np.isnan(got) & np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want) & ~both_nan
    np.testing.assert_array_equal(got[~finite & ~both_nan], want[~finite & ~both_nan])
    with np.errstate(all="ignore"):
        exact = fn(x[finite].astype(np.longdouble))
    ulp = np.spacing(np.maximum(np.abs(want[finite]), np.finfo(dtype).tiny)).astype(np.longdouble)
    ours = (np.abs(got[finite] - exact) / ulp).max()
    numpys = (np.abs(want[finite] - exact) / ulp).max()
    assert ours <= 4 or ours <= numpys + 1, f"{name}: {ours} ulp from the exact value (NumPy: {numpys})"


@pytest.mark.parametrize("scalef", [True, False], ids=["vscalef", "two-powers"])
def test_float32_exp_within_one_ulp_down_to_subnormals_and_up_to_overflow(scalef, monkeypatch):
    from numpile_llvm import jit
    features = jit.host_features()
    if scalef and "avx512f" not in features:
        pytest.skip("this CPU has no AVX-512")
    monkeypatch.setattr(jit, "host_features", lambda: features if scalef else features - {"avx512f"})
    x = np.concatenate([rng.uniform(-110, 95, 1 << 18), rng.uniform(-104.5, -85, 1 << 16), rng.uniform(88, 89, 1 << 12),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72283935546875, 88.7228470, -103.97208404541016,
                         -103.9721, 1e-30, -1e-30]]).astype(np.float32)
    with np.errstate(over="ignore"):
        want = np.exp(x)
    got = numpile.compile(lambda a: np.exp(a), backend="llvm")(x)
    assert got.dtype == want.dtype
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    exact = np.exp(x[finite].astype(np.longdouble))
    ulp = np.spacing(np.maximum(exact.astype(np.float32), np.finfo(np.float32).smallest_subnormal)).astype(np.longdouble)
    assert (np.abs(got[finite] - exact) / ulp).max() <= 1


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_outputs_stream_out_with_non_temporal_stores(dtype):
    from numpile_llvm import jit
    from numpile_llvm.kernels import streams
    if "sse2" not in jit.host_features():
        pytest.skip("streamed rows are for x86")
    compile_llvm, made = programs()
    rows = streams.STREAM_MIN_BYTES // (1024 * np.dtype(dtype).itemsize)
    x = rng.standard_normal((rows, 1024)).astype(dtype)
    g, b = rng.standard_normal(1024).astype(dtype), rng.standard_normal(1024).astype(dtype)

    def exp_and_row_sums(a):   # a later stage reads the streamed output back
        e = np.exp(a - a.max(axis=1, keepdims=True))
        return e, e[:, ::-1].sum(axis=1), e > 0.5

    def softmax_and_mass(a):   # the last stage reads exp(a - max) after the division's row went out
        e = np.exp(a - a.max(axis=1, keepdims=True))
        s = e.sum(axis=1, keepdims=True)
        return e / s, (e * e).sum(axis=1), (e / s).astype(np.float64)

    for fn, args in [(softmax, (x,)), (layer_norm, (x, g, b)), (exp_and_row_sums, (x,)), (softmax_and_mass, (x,))]:
        got, want = numpile.compile(fn, backend=compile_llvm)(*args), fn(*args)
        for g_, w_ in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert_same(g_, w_, rtol=1e-4 if w_.ndim == 1 else 2e-6)   # float32 exp: within an ulp
        assert "!nontemporal" in made[-1].ir and "@llvm.x86.sse.sfence()" in made[-1].ir
        assert "@llvm.prefetch" in made[-1].ir   # the next row of x, as a row goes out
    # rows that do not fill whole cache lines are stored as usual
    odd = rng.standard_normal((rows, 1023)).astype(dtype)
    assert_same(numpile.compile(softmax, backend=compile_llvm)(odd), softmax(odd))
    assert "!nontemporal" not in made[-1].ir


@pytest.mark.parametrize("dtype", [np.float32, np.int8])
def test_large_1d_outputs_stream_out_in_blocks(dtype):
    from numpile_llvm import jit
    from numpile_llvm.kernels import streams
    if "sse2" not in jit.host_features():
        pytest.skip("streamed rows are for x86")
    compile_llvm, made = programs()
    # an odd length: each thread's range starts and ends inside a cache line
    n = streams.STREAM_MIN_BYTES // np.dtype(dtype).itemsize + 37
    x = (rng.standard_normal(n) * 50).astype(dtype)
    y = (rng.standard_normal(n) * 50).astype(dtype)
    for fn in (lambda a, b: a * 3 - b, lambda a, b: (a > b) | (a < -b), lambda a, b: a[::-1] - b):
        got, want = numpile.compile(fn, backend=compile_llvm)(x, y), fn(x, y)
        assert_same(got, want)
        assert ("!nontemporal" in made[-1].ir) == (want.nbytes >= streams.STREAM_MIN_BYTES)
    if dtype == np.float32:
        assert_same(numpile.compile(chain, backend=compile_llvm)(x), chain(x))


def test_extern_results_are_read_with_their_own_strides():
    # reshape runs as an extern here (a view of a view); its result keeps the input's strides
    def f(a, b):
        a = a.reshape(b.shape)
        return a + a * 2, a
    x = rng.standard_normal((30, 20))
    for a in (x[::-1], x.T, x[::2, ::-3], x):
        for _ in range(2):
            assert_same(numpile.compile(f, backend="llvm")(a, a)[0], f(a, a)[0])


def test_new_input_layout_gets_its_own_variant():
    compile_llvm, made = programs()
    fn = numpile.compile(lambda a, b: a * 2 + b, backend=compile_llvm)
    a, b = rng.standard_normal((40, 30)), rng.standard_normal((40, 30))
    assert_same(fn(a, b), a * 2 + b)
    for other in (np.asfortranarray(a), a[::-1], rng.standard_normal((30, 40)).T, rng.standard_normal((40, 60))[:, ::2]):
        assert_same(fn(other, b), other * 2 + b)
    (step,) = made[0].steps.values()
    assert len(step.variants) == 3  # F order and a transpose are one layout
    assert len(made) == 1  # layouts are not guarded: one graph, kernel variants below it


def test_unlowerable_kernels_run_with_numpy_and_say_why(capsys):
    compile_llvm, made = programs()
    x = rng.standard_normal(16).astype(np.float16)
    numpile.set_logs(perf=True)
    try:
        got = numpile.compile(lambda a: a * 3 + 1, backend=compile_llvm)(x)
    finally:
        numpile.set_logs()
    assert_same(got, x * 3 + 1)
    assert list(made[0].fallbacks.values()) == ["dtype float16 has no LLVM lowering"]
    assert "runs with NumPy: dtype float16 has no LLVM lowering" in capsys.readouterr().err


def _swapped(a):
    """`a` with the same values, stored in the other byte order."""
    return a.astype(a.dtype.newbyteorder())


@pytest.mark.parametrize("fn", [lambda a: a + 1, lambda a: np.sin(a) * 2, lambda a: a.sum(), lambda a: a.max(axis=0),
                                lambda a: a + a.astype(a.dtype.newbyteorder("=")),
                                lambda a: (a * 2).astype(a.dtype)])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_non_native_byte_order_runs_with_numpy_and_says_why(fn, dtype, capsys):
    compile_llvm, made = programs()
    a = _swapped((rng.standard_normal((5, 7)) * 100).astype(dtype))
    numpile.set_logs(perf=True)
    try:
        got = numpile.compile(fn, backend=compile_llvm)(a)
    finally:
        numpile.set_logs()
    want = fn(a)
    assert type(got) is type(want) and got.dtype == want.dtype  # '>i4' stays '>i4' where NumPy keeps it
    assert_same(np.asarray(got), np.asarray(want))
    assert any("byte order" in why for why in made[0].fallbacks.values())
    assert "is not in this machine's byte order" in capsys.readouterr().err


@pytest.mark.parametrize("unit", ["datetime64[D]", "datetime64[s]", "timedelta64[ms]"])
def test_datetime_reductions_run_with_numpy(unit):
    a = rng.integers(-10**6, 10**6, (4, 9)).astype(unit)
    for fn in (lambda a: a.max(), lambda a: a.min(axis=1), lambda a: a.max(axis=0) - a.min(axis=0),
               lambda a: np.maximum(a, a[::-1])):
        got, want = numpile.compile(fn, backend="llvm")(a), fn(a)
        assert type(got) is type(want) and got.dtype == want.dtype and np.shape(got) == np.shape(want)
        assert np.array_equal(got, want)


def test_output_code_log_shows_kernel_ir_and_llvm_ir(capsys):
    numpile.set_logs(output_code=True)
    try:
        numpile.compile(lambda a: np.exp(a) + 1, backend="llvm")(rng.standard_normal(64))
    finally:
        numpile.set_logs()
    text = capsys.readouterr().err
    assert "kernel kernel0 parallel over" in text and "@npk_" in text and "_ZGV" in text and "def run(" in text


def test_unknown_option_is_named():
    with pytest.raises(numpile.BackendCompilerFailed, match="no option 'fast'"):
        numpile.compile(lambda a: a + 1, backend="llvm", options={"fast": True})(np.ones(3))


def test_fast_math_option_compiles_with_fast_flags():
    x = rng.standard_normal(1000)
    graph_programs = []

    def compile_fast(graph, example_inputs):
        graph_programs.append(LLVMBackend().compile(graph, example_inputs, {"fast_math": True}))
        return graph_programs[-1]
    got = numpile.compile(lambda a: (a * 2 + 1).sum(), backend=compile_fast)(x)
    assert "fmul fast" in graph_programs[0].ir
    np.testing.assert_allclose(got, (x * 2 + 1).sum(), rtol=1e-12)


def test_matmul_runs_through_blas_between_kernels():
    compile_llvm, made = programs()
    x, w1, b1 = rng.standard_normal((8, 16)), rng.standard_normal((16, 32)), rng.standard_normal(32)
    w2, b2 = rng.standard_normal((32, 16)), rng.standard_normal(16)   # products of 4096 multiply-adds
    assert_same(numpile.compile(mlp, backend=compile_llvm)(x, w1, b1, w2, b2), mlp(x, w1, b1, w2, b2))
    kinds = [type(s).__name__ for s in made[0].program.steps]
    assert kinds == ["Extern", "Kernel", "Extern", "Kernel"]


def test_small_matmuls_are_kernels_fused_with_their_neighbours():
    compile_llvm, made = programs()
    x, w1, b1 = rng.standard_normal((4, 8)), rng.standard_normal((8, 6)), rng.standard_normal(6)
    w2, b2 = rng.standard_normal((6, 3)), rng.standard_normal(3)
    assert_same(numpile.compile(mlp, backend=compile_llvm)(x, w1, b1, w2, b2), mlp(x, w1, b1, w2, b2))
    assert all(type(s).__name__ == "Kernel" for s in made[0].program.steps), str(made[0].program)


def test_small_kernels_stay_on_the_calling_thread():
    x = rng.standard_normal(100).astype(np.float32)
    compiled = CompiledProgram(schedule(_graph_of(chain, x)), [x])
    assert not any(s.parallel for s in compiled.steps.values())
    assert kernel_step.PARALLEL_MIN_WORK > 100
    assert_same(compiled(x)[0], chain(x))


def _graph_of(fn, *args):
    graphs = []

    def record(graph, example_inputs):
        graphs.append(graph)
        return graph
    numpile.compile(fn, backend=record)(*args)
    return graphs[0]


def test_large_outputs_reuse_blocks_only_after_every_view_died():
    from numpile_llvm import allocator
    allocator.clear()
    fn = numpile.compile(lambda a: a * 2 + 1, backend="llvm")
    x = rng.standard_normal((512, 1024))
    first = fn(x)
    view = first[::3]
    address = first.ctypes.data
    del first
    second = fn(x)  # `view` still holds the first block
    assert second.ctypes.data != address
    assert_same(view, (x * 2 + 1)[::3])
    del view
    third = fn(x + 1)  # the first block came back when its last view died
    assert third.ctypes.data == address
    assert_same(third, (x + 1) * 2 + 1)
    assert_same(second, x * 2 + 1)
    allocator.clear()


def test_outputs_of_changing_sizes_reuse_blocks_and_never_share_live_memory():
    """Sizes change from call to call (a mask's selection): blocks come in size classes, reused
    once free; an output still alive (or a view of it) never shares memory with a new one."""
    from numpile_llvm import allocator
    allocator.clear()
    fn = numpile.compile(lambda a, m: a[m] * 2 + 1, backend="llvm")
    x = rng.standard_normal(40_000)
    kept, addresses = [], set()
    for call in range(40):
        m = rng.random(x.shape) < rng.uniform(0.3, 0.9)
        out = fn(x, m)
        assert_same(out, x[m] * 2 + 1)
        assert not any(np.shares_memory(out, k) for k, _ in kept)
        addresses.add(out.ctypes.data)
        if call % 3 == 0:
            kept.append((out[::2], x[m][::2] * 2 + 1))   # a view keeps its block
    for view, want in kept:
        assert_same(view, want)
    assert len(addresses) < 40   # blocks were reused
    allocator.clear()


def _repeating(x, n):   # numpy-benchmarks' repeating: an np.empty the function fills and returns
    y = np.empty(x.shape[0] * (1 + n))
    y[:x.shape[0]] = x
    y[x.shape[0]:] = np.repeat(x, n)
    return y


def test_an_empty_the_program_fills_comes_from_the_allocator():
    from numpile_llvm import allocator
    allocator.clear()
    fn = numpile.compile(_repeating, backend="llvm")
    x = rng.standard_normal(10_000)
    kept = [fn(x, 20) for _ in range(3)]   # alive at once: three blocks
    assert all(k.base is not None for k in kept)
    assert not any(np.shares_memory(a, b) for i, a in enumerate(kept) for b in kept[i + 1:])
    for k in kept:
        assert_same(k, _repeating(x, 20))
    address = kept[0].ctypes.data
    del kept
    assert fn(x, 20).ctypes.data == address   # the first block back
    allocator.clear()


def test_temporaries_are_made_when_first_needed_and_dropped_after_their_last_use():
    """The runner makes a temporary just before the step that first uses it and drops it after
    the last (program outputs and inputs stay): temporaries take turns in the memory the C
    library keeps, as NumPy's do, where all made at once mapped fresh pages on every call."""
    def f(x, m):
        a = (x * 2.0) @ m             # a kernel, then an extern (BLAS), three times
        b = (a + 1.0) @ m
        c = (b - 3.0) @ m
        return c * 0.5
    llvm, made = programs()
    compiled = numpile.compile(f, backend=llvm)
    m = rng.standard_normal((64, 64))
    for n in (300, 3000):
        x = rng.standard_normal((n, 64))
        got, want = compiled(x, m), f(x, m)
        assert got.dtype == want.dtype and np.allclose(got, want, rtol=1e-12, atol=1e-9)
    lines = made[-1].source.splitlines()
    made_at = [k for k, line in enumerate(lines) if ", dt_b" in line]   # an allocation
    dropped_at = [k for k, line in enumerate(lines) if line.strip().startswith("del ")]
    assert len(made_at) >= 3 and dropped_at and min(dropped_at) < max(made_at), made[-1].source


@pytest.mark.parametrize("columns", [4, 8, 10, 64, 100])
def test_short_rows_are_not_unrolled_into_gathers(columns):
    """`-(y - p)` on (N, 10): the row loop unrolled made LLVM vectorise across rows with gathers
    (0.15x NumPy); rows of 8 to 64 elements keep their loop, which the vectoriser widens."""
    compile_llvm, made = programs()
    y, p = rng.random((300, columns)), rng.random((300, columns))
    assert_same(numpile.compile(lambda a, b: -(a - b), backend=compile_llvm)(y, p), -(y - p))
    assert ("llvm.loop.unroll.disable" in made[-1].ir) == (8 <= columns <= 64)
