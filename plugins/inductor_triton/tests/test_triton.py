"""The backend "triton" end to end, against NumPy on fresh random inputs: pointwise chains,
broadcasting and views, reductions of every kind and axis in each kernel layout (persistent rows,
looped rows, whole-array reductions split over programs), softmax and layer norm, NumPy's integer,
bool and cast semantics, dynamic shapes, updates in place, fallbacks and what
NUMPILE_LOGS=output_code shows. Sizes stay small: Triton's interpreter runs these without a GPU."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numpile
from numpile.testing import assert_same_result
from numpile.testing.faults import UNUSABLE_CACHES, check_backend_with_unusable_cache
from numpile.testing.loop_programs import jacobi, sum_of_squares, triangular

rng = np.random.default_rng()


def programs():
    """A backend recording the CompiledPrograms "triton" makes."""
    from numpile_triton.backend import TritonBackend
    made = []

    def compile_triton(graph, example_inputs):
        made.append(TritonBackend().compile(graph, example_inputs, {}))
        return made[-1]
    return compile_triton, made


def check(fn, *args, backend="triton"):
    """fn compiled on "triton" gives NumPy's result (type, dtype, shape, values); inputs unchanged."""
    before = [np.copy(a) for a in args]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
        got = numpile.compile(fn, backend=backend)(*args)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert_same_result(g, w, what=getattr(fn, "__name__", "fn"))
    for a, b in zip(args, before):
        assert np.array_equal(a, b, equal_nan=True), "an input was modified"


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.abs(x)


def squared_distance(x, y):
    return ((x - y) ** 2).sum()


def mlp(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0) @ w2 + b2


def test_backend_is_listed_and_says_why_it_is_unavailable():
    from numpile_triton import device
    assert "triton" in numpile.list_backends()
    try:
        import torch
        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if not has_cuda:
        assert device._availability(False) == (
            False, "no CUDA device (TRITON_INTERPRET=1 runs the kernels through Triton's interpreter on the CPU)")
    assert device._availability(True) == (True, "")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_models_match_numpy(dtype, layout):
    x = rng.standard_normal((6, 13)).astype(dtype)
    g, b = rng.standard_normal(13).astype(dtype), rng.standard_normal(13).astype(dtype)
    check(softmax, x)
    check(layer_norm, x, g, b)
    check(chain, x)
    check(squared_distance, x, rng.standard_normal((6, 13)).astype(dtype))
    check(mlp, x, rng.standard_normal((13, 5)).astype(dtype), rng.standard_normal(5).astype(dtype),
          rng.standard_normal((5, 3)).astype(dtype), rng.standard_normal(3).astype(dtype))


def test_each_row_of_softmax_is_one_kernel_in_its_layout(layout):
    compile_triton, made = programs()
    x = rng.standard_normal((5, 11))
    numpile.compile(softmax, backend=compile_triton)(x)
    (step,) = made[0].launches.values()
    assert step.kp.mode == ("persistent" if layout == "persistent" else "looped")
    assert not made[0].fallbacks
    numpile.compile(squared_distance, backend=compile_triton)(x, x[::-1])
    (step,) = made[1].launches.values()
    assert step.kp.mode == {"persistent": "persistent", "looped": "looped", "split": "split"}[layout]


REDUCTIONS = [
    lambda a: a.sum(), lambda a: a.sum(axis=0), lambda a: a.sum(axis=-1, keepdims=True),
    lambda a: a.sum(axis=(0, 2)), lambda a: a.prod(axis=1), lambda a: a.max(), lambda a: a.min(axis=0),
    lambda a: a.max(axis=(1, 2), keepdims=True), lambda a: a.any(axis=1), lambda a: a.all(),
    lambda a: a.mean(axis=-1), lambda a: a.var(axis=0), lambda a: a.std(), lambda a: a[:, ::-1, 1:].sum(axis=1),
    lambda a: a.T.max(axis=0), lambda a: a.sum(dtype=np.float64) if a.dtype.kind == "f" else a.sum(dtype=np.int8),
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool", "float16"])
def test_reductions_of_every_kind_and_axis(dtype, layout):
    if dtype == "bool":
        a = rng.random((3, 5, 6)) < 0.7
    elif np.dtype(dtype).kind in "iu":
        a = rng.integers(1, 4, (3, 5, 6)).astype(dtype)
    else:
        a = (rng.random((3, 5, 6)) + 0.5).astype(dtype)
    for fn in REDUCTIONS:
        check(fn, a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_nan_propagates_through_max_min_and_sum(dtype, layout):
    x = rng.standard_normal((7, 9)).astype(dtype)
    x[1, 3] = x[2, 8] = x[3, 0] = np.nan
    x[4] = -np.inf
    x[5, ::2] = np.inf
    for fn in (lambda a: a.max(axis=1), lambda a: a.min(axis=1), lambda a: a.max(), lambda a: a.min(),
               lambda a: a[4:].max(), lambda a: a.max(axis=0), lambda a: np.maximum(a, 0.5), lambda a: np.fmin(a, 0.5),
               lambda a: a.sum(axis=1), lambda a: np.nan_to_num(a, posinf=9.0, neginf=-9.0).sum()):
        check(fn, x)


def test_pointwise_chains_broadcasting_and_views():
    x = rng.standard_normal((4, 6))
    y = rng.standard_normal(6).astype(np.float32)
    z = rng.standard_normal((4, 1))
    check(lambda a, b, c: (a * b + c) / (1.5 + np.abs(c)), x, y, z)
    check(lambda a, b: a[::-1, 1:] + b[:5][None, :], x, y)
    check(lambda a: a.T * 2 - a.T[::-1], x)
    check(lambda a, c: np.where(a > c, a, c * 3) + np.broadcast_to(c, (4, 6)), x, z)
    check(lambda a: np.expand_dims(a[1], 0) - a[:, ::2].sum(axis=1, keepdims=True), x)
    check(lambda a: np.clip(a, -0.5, 0.5) + np.round(a, 1) + np.floor(a) * np.sign(a), x)
    check(lambda a: np.square(a) + a ** 2 + a ** -1 + np.abs(a) ** 0.5, x)


def test_integer_division_modulo_and_shifts_like_numpy():
    for dtype in (np.int8, np.int32, np.int64, np.uint8):
        info = np.iinfo(dtype)
        a = np.array([7, -7, 7, -7, 0, 5, info.min, info.min, info.max, -1, 100, 3], np.int64).astype(dtype)
        b = np.array([2, 2, -2, -2, 3, 0, -1, 1, 0, 0, 7, 9], np.int64).astype(dtype)
        for fn in (lambda x, y: x // y, lambda x, y: x % y, np.fmod, lambda x, y: x * y + x, lambda x, y: x << (y % 40),
                   lambda x, y: x >> (y % 40), lambda x, y: np.abs(x) - y, lambda x, y: np.maximum(x, y) ^ ~y,
                   lambda x, y: (x > y) + (x == y)):
            check(lambda x, y: fn(x, y), a, b)


def test_float_to_int_casts_like_numpy():
    x = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20, 300.7, -300.7, -1.5, 70000.5, 0.0, -0.0])
    for dtype in ("int8", "int16", "int32", "int64", "uint8", "uint16", "bool", "float32", "float16"):
        for src in (x, x.astype(np.float32)):
            check(lambda a: a.astype(dtype), src)


def sin_and_cos_in_three_loops(a):
    m = a.max(axis=-1, keepdims=True)
    return (a * np.sin(m)).sum(axis=-1, keepdims=True) + a * np.cos(m)


def test_float32_sin_and_cos_of_one_value_share_their_reduction(layout):
    """One `_sincos` call gives both (the interpreter runs the same reduction and polynomials as
    the GPU), again in a later loop body (the first one's names are out of scope there); a block
    with a value past the reduction's range (1e5, 1e30, inf) takes the library's sin and cos; NaN,
    -0.0 and subnormals come out as NumPy's."""
    fns = [lambda a: np.sin(a) * np.cos(a) + np.cos(a), lambda a: (np.sin(a), np.cos(a * 2)), sin_and_cos_in_three_loops]
    wide = np.concatenate([rng.standard_normal(44) * 10, np.arange(-40, 40) * (np.pi / 2), [0.0, -0.0, 1e-40, np.nan]])
    for x in (wide, np.concatenate([wide, [1e5, 105615.0, -105614.99, 2e5, 1e6, -1e30, np.inf, -np.inf]])):
        x = x.astype(np.float32).reshape(-1, 8)
        for fn, calls in zip(fns, (1, 2, 1 if layout == "persistent" else 2)):   # (a * 2's is another)
            compile_triton, made = programs()
            check(fn, x, backend=compile_triton)
            kernels = made[0].kernel_source.split("def triton_")[1:]
            assert len(kernels) == 1 and kernels[0].count("= _sincos(") == calls and "libdevice.sin" not in kernels[0]
    signs = numpile.compile(lambda a: (np.sin(a), np.cos(a)), backend="triton")(np.array([-0.0, 0.0], np.float32))
    assert list(np.signbit(signs[0])) == [True, False]


def test_bools_and_mixed_dtypes():
    p, q = rng.random(9) < 0.5, rng.random(9) < 0.5
    i = rng.integers(-5, 5, 9).astype(np.int16)
    f = rng.standard_normal(9).astype(np.float32)
    check(lambda a, b: (a + b, a * b, a > b, a ^ b, ~a, np.logical_xor(a, b), a.astype(np.int8) - b), p, q)
    check(lambda a, b, c: (a + b, b * c, a / b, np.where(a, b, c), b // 2, c % 2.5, a - b), p, i, f)
    check(lambda c: (c.astype(np.float16) * 3 + 1).astype(np.float16), f)


def test_python_scalars_are_weak():
    def step(x, lr, t):
        return x * lr + t, (x - t).sum() + lr, np.where(x > lr, x, t)
    compiled = numpile.compile(step, backend="triton")
    for k in range(3):
        x = rng.standard_normal(10).astype(np.float32)
        lr, t = float(rng.random()) + k, k + 2
        for got, want in zip(compiled(x, lr, t), step(x, lr, t)):
            assert_same_result(got, want)


def test_dynamic_shapes_one_program_for_every_size():
    compile_triton, made = programs()
    compiled = numpile.compile(lambda a, b: (softmax(a), (a * b).sum(), a.max(axis=0) + b[0]),
                               backend=compile_triton, dynamic=True)
    for rows, cols in ((3, 5), (7, 12), (2, 2), (2, 40)):
        a, b = rng.standard_normal((rows, cols)), rng.standard_normal((rows, cols))
        for got, want in zip(compiled(a, b), (softmax(a), (a * b).sum(), a.max(axis=0) + b[0])):
            assert_same_result(got, want)
    assert len(made) == 1 and not made[0].fallbacks
    assert "z0" in made[0].kernel_source   # the sizes are kernel arguments


def test_updates_in_place_are_written_back_as_numpy_does():
    def update(x, y):
        x += y
        x[1:-1] = x[1:-1] * 2
        y[0] = 7.5
        return x.sum()
    x, y = rng.standard_normal(8), rng.standard_normal(8)
    x2, y2 = x.copy(), y.copy()
    want = update(x2, y2)
    got = numpile.compile(update, backend="triton")(x, y)
    assert_same_result(got, want)
    assert np.allclose(x, x2) and np.array_equal(y, y2)


def doubled_sum(x):
    x += x
    return x.sum()


def tripled_less_one(x):
    x *= 3
    return x - 1


def centred(x):
    x -= x.max()
    return x.sum(), np.exp(x)


@pytest.mark.parametrize("fn", [doubled_sum, tripled_less_one, centred])
def test_a_kernel_reads_what_it_stored_in_place(fn, layout):
    """A later stage of the kernel that updates an input in place sees the new values (found by
    numpile.fuzz: `x += x; return x.sum()` summed the old x)."""
    for n in (1, 7):
        x = rng.standard_normal(n)
        x2 = x.copy()
        want = fn(x2)
        got = numpile.compile(fn, backend="triton")(x)
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert_same_result(g, w)
        assert np.allclose(x, x2)


def test_unrenderable_kernels_run_with_numpy_and_say_why(capsys):
    compile_triton, made = programs()
    a, b = rng.integers(1, 50, 4096), rng.integers(1, 50, 4096)   # a product big enough for BLAS
    numpile.set_logs(perf=True)
    try:
        got = numpile.compile(lambda x, y: np.gcd(x, y) + x @ y, backend=compile_triton)(a, b)
    finally:
        numpile.set_logs()
    assert_same_result(got, np.gcd(a, b) + a @ b)
    assert list(made[0].fallbacks.values()) == ["no Triton lowering of gcd for int64"]
    err = capsys.readouterr().err
    assert "runs with NumPy on the host: no Triton lowering of gcd" in err
    assert "runs matmul with NumPy on host copies" in err


def test_output_code_log_shows_the_triton_source(capsys):
    numpile.set_logs(output_code=True)
    try:
        numpile.compile(softmax, backend="triton")(rng.standard_normal((3, 4)))
    finally:
        numpile.set_logs()
    text = capsys.readouterr().err
    assert "kernel kernel0 parallel over" in text and "@triton.jit" in text and "tl.sum(" in text and "def run(" in text


def test_unknown_option_is_named():
    with pytest.raises(numpile.BackendCompilerFailed, match="no option 'fast'"):
        numpile.compile(lambda a: a + 1, backend="triton", options={"fast": True})(np.ones(3))


def test_kernels_it_has_no_form_for_yet_run_on_the_host():
    """Scatters (kernels the lowering makes that this renderer does not render yet) run on the host
    through the reference renderer: NumPy's results, each fallback named under perf; the gather
    through an index array (checked after its launch: checks.py) and the scan beside them are Triton
    kernels (scans.py)."""
    def f(x, idx, m):
        y = x * 1.0
        y[idx] += 1.0
        y[m] = 0.0
        return x[idx] * 2, np.cumsum(x, axis=0), y
    backend, made = programs()
    x = rng.standard_normal((6, 4))
    args = (x, np.array([1, -2, 1]), rng.random(6) > 0.5)
    want = f(*[np.copy(a) for a in args])
    got = numpile.compile(f, backend=backend)(*args)
    for g, w in zip(got, want):
        assert_same_result(g, w, what="f")
    reasons = set(made[0].fallbacks.values())
    assert reasons == {"a store through an index array"}


def test_triton_caches_compiled_kernels_in_numpiles_cache_dir(tmp_path, monkeypatch):
    from triton import knobs
    monkeypatch.setattr(numpile.config, "cache_dir", tmp_path)
    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    before = knobs.cache.dir
    try:
        x = rng.standard_normal(50)
        assert_same_result(numpile.compile(lambda v: np.exp(v) * 2, backend="triton")(x), np.exp(x) * 2)
        assert knobs.cache.dir == str(tmp_path / "triton" / "compiled")
        assert any((tmp_path / "triton" / "kernels").iterdir())
    finally:
        knobs.cache.dir = before



@pytest.mark.parametrize("kind", UNUSABLE_CACHES)
def test_an_unusable_cache_directory_costs_one_warning_not_the_compile(kind, tmp_path):
    """Kernel sources, Triton's cache and the kernel records go to a directory of the process's own."""
    check_backend_with_unusable_cache("triton", kind, tmp_path)

def test_a_value_a_kernel_stores_and_reads_itself_is_allocated_not_copied_in():
    """A small matmul fused with its bias: the kernel stores `x @ w + b` and reads it back. The runner
    once treated that buffer as an input to copy onto the device before it had a value (an
    UnboundLocalError, which numpile answered by running the graph with NumPy, with a warning)."""
    def step(x, w, b):
        h = np.maximum(x @ w + b, 0)
        e = np.exp(h - h.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), h.sum()
    x, w, b = rng.standard_normal((5, 16)), rng.standard_normal((16, 8)), rng.standard_normal(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = numpile.compile(step, backend="triton")(x, w, b)
    want = step(x, w, b)
    assert_same_result(got[0], want[0])
    assert_same_result(got[1], want[1])


def test_max_autotune_under_the_interpreter_runs_untuned_and_says_so(capsys):
    from numpile_triton import device
    if not device.interpreting():
        pytest.skip("on a GPU max-autotune times its candidates (test_triton_device_arrays.py)")
    def step(a, b):
        a[1:-1] = 0.5 * (b[:-2] + b[2:])
        return np.exp(a - a.max()).sum()
    a, b = rng.standard_normal(40), rng.standard_normal(40)
    want_a = a.copy()
    want = step(want_a, b)
    numpile.set_logs("perf")
    try:
        got = numpile.compile(step, backend="triton", mode="max-autotune-no-cudagraphs")(a, b)
    finally:
        numpile.set_logs()
    assert_same_result(got, want)
    np.testing.assert_array_equal(a, want_a)
    assert "is not autotuned: the interpreter's timings say nothing of a GPU's" in capsys.readouterr().err


@pytest.mark.parametrize("mode", ["pointwise", "persistent", "looped", "split"])
def test_autotune_candidates_are_launchable_configurations(mode):
    from numpile_triton.autotune import candidates
    from numpile_triton.kernel import KernelPlan
    from numpile_triton.launch import configured, heuristic
    kp = KernelPlan(kernel=None, mode=mode, arrays=[])
    rows, cols = {"pointwise": (10 ** 6, ()), "persistent": (300, (700,)), "looped": (30, (10 ** 5,)),
                  "split": (64, (10 ** 7,))}[mode]
    found = candidates(kp, rows, cols)
    assert len(found) > 3 and heuristic(kp, rows, cols)[0] in [b for b, _ in found]
    for blocks, warps in found:
        grid, args, w = configured(kp, rows, cols, blocks, warps)
        assert w == warps and all(v & (v - 1) == 0 for k, v in args.items() if k != "CHUNK")
        step = args.get("BLOCK") or args["XBLOCK"]
        covered = grid[0] * (args["CHUNK"] if mode == "split" else step)
        assert covered >= (cols[0] if mode == "split" else rows)


def _steps(made) -> list[str]:
    """The kinds of a compiled program's steps, in order: "template", "kernel" or the extern's op."""
    from numpile_triton.matmul import MatmulKernel
    return ["template" if isinstance(s, MatmulKernel) else getattr(s, "op", "kernel") for s in made.program.steps]


def test_float32_matmuls_are_templates_with_their_epilogue_fused():
    """The MLP's two layers are two launches: each product tiled in Triton (float32 accumulation,
    no TF32) with its bias and ReLU applied to the tile. Shapes off the blocks, and K over several
    steps of the loop, included."""
    backend, made = programs()
    f32 = np.float32
    args = [rng.standard_normal(s).astype(f32) for s in [(37, 70), (70, 53), (53,), (53, 29), (29,)]]
    got = numpile.compile(mlp, backend=backend)(*args)
    assert_same_result(got, mlp(*args))
    assert _steps(made[0]) == ["template", "template"] and len(made[0].launches) == 2


def test_an_epilogue_of_several_stages_casts_and_scales():
    def f(x, w):
        y = x @ w
        return (y * 2 - 1).astype(np.float16), np.abs(y) / 3
    backend, made = programs()
    x, w = rng.standard_normal((20, 40)).astype(np.float32), rng.standard_normal((40, 24)).astype(np.float32)
    for g, want in zip(numpile.compile(f, backend=backend)(x, w), f(x, w)):
        assert_same_result(g, want)
    assert _steps(made[0]) == ["template"]


@pytest.mark.parametrize("fn", [lambda x, w: x @ w,                           # the product is the result
                                lambda x, w: np.dot(x, w).T + 1,              # read transposed
                                lambda x, w: np.exp(x @ w).sum(axis=1),       # by a row kernel
                                lambda x, w: ((y := x @ w) + 1, y.sum())])    # and by two kernels
def test_a_product_no_epilogue_can_take_is_stored_by_the_template(fn):
    backend, made = programs()
    x, w = rng.standard_normal((20, 40)).astype(np.float32), rng.standard_normal((40, 24)).astype(np.float32)
    got, want = numpile.compile(fn, backend=backend)(x, w), fn(x, w)
    for g, w_ in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert_same_result(g, w_)
    template = made[0].program.steps[0]
    assert _steps(made[0])[0] == "template" and template.stages[0].output == template.product


def test_what_the_template_does_not_take_stays_cublas(monkeypatch):
    """float64 (fp64 tensor cores: cuBLAS's), mixed dtypes, batched products, and any shape
    `use_template` gives to cuBLAS: an extern, then the epilogue kernel."""
    from numpile_triton import matmul
    cases = [(np.float64, np.float64, (30, 40), (40, 20)), (np.float32, np.float64, (30, 40), (40, 20)),
             (np.float32, np.float32, (3, 30, 40), (40, 20))]
    for a_dtype, b_dtype, a_shape, b_shape in cases:
        backend, made = programs()
        x, w = rng.standard_normal(a_shape).astype(a_dtype), rng.standard_normal(b_shape).astype(b_dtype)
        assert_same_result(numpile.compile(lambda x, w: np.maximum(x @ w, 0), backend=backend)(x, w),
                           np.maximum(x @ w, 0))
        assert _steps(made[0]) == ["matmul", "kernel"]
    monkeypatch.setattr(matmul, "use_template", lambda m, n, k: False)
    backend, made = programs()
    args = [rng.standard_normal(s).astype(np.float32) for s in [(37, 70), (70, 53), (53,), (53, 29), (29,)]]
    assert_same_result(numpile.compile(mlp, backend=backend)(*args), mlp(*args))
    assert _steps(made[0]) == ["matmul", "kernel", "matmul", "kernel"]


def test_matmul_candidates_are_launchable_configurations():
    from numpile_triton.autotune import candidates
    from numpile_triton.kernel import KernelPlan
    from numpile_triton.launch import configured, heuristic
    kp = KernelPlan(kernel=None, mode="matmul", arrays=[])
    for m, n, k in [(37, 53, 70), (4096, 4096, 1024), (1, 5000, 16)]:
        found = candidates(kp, m, (n, k))
        assert heuristic(kp, m, (n, k)) in found
        for blocks, warps in found:
            grid, args, _ = configured(kp, m, (n, k), blocks, warps)
            assert min(args["BLOCK_M"], args["BLOCK_N"], args["BLOCK_K"]) >= 16   # tl.dot's least
            assert grid[0] * args["BLOCK_M"] * args["BLOCK_N"] >= m * n


# -- loops kept as loops (numpile/ops/control.py): on the host, each iteration's kernels on the device --
@pytest.mark.parametrize("fn, make", [
    (jacobi, lambda: (rng.random(40), rng.random(40), 6)),
    (triangular, lambda: (rng.random((6, 6)),)),
    (sum_of_squares, lambda: (rng.random(9),)),
], ids=["time-loop", "triangular", "carried-scalar"])
def test_loops_run_as_loop_nodes(fn, make):
    args = make()
    want = fn(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])
    got = numpile.compile(fn, backend="triton")(*args)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert_same_result(g, w, what=fn.__name__)


def test_an_externs_result_on_cupy_takes_numpys_dtype_by_name():
    """CupyArrays.as_dtype, on NumPy arrays (the methods it calls are CuPy's too): CuPy's nanargmax
    gives int64 as 'q' (long long), equal to NumPy's int64 ('l' on Linux) but read back as
    numpy.longlong scalars (the GPU conformance suite's nanargmax cases); a cast where the dtype differs."""
    from numpile_triton.device import CupyArrays
    int64, longlong = np.dtype(np.int64), np.dtype(np.longlong)
    if int64.char == longlong.char:
        pytest.skip("int64 is long long here")
    got = CupyArrays.as_dtype(np.array([3, 1], longlong), int64)
    assert got.dtype.char == int64.char and type(got[0]) is np.int64 and got.tolist() == [3, 1]
    same = np.arange(3.0)
    assert CupyArrays.as_dtype(same, np.dtype(np.float64)) is same
    assert CupyArrays.as_dtype(np.arange(3, dtype=np.float32), np.dtype(np.float64)).dtype == np.float64


def test_a_number_kept_on_the_device_is_one_array_per_value_and_stream():
    """reuse.HostScalar with NumPy arrays as device arrays: the same value on the same stream is the
    same array; -0.0 and 0.0, 1 and True, float32 and float64, each NaN, another stream are not; an
    array is never kept; none is kept while the stream is captured, nor past LIMIT values."""
    from numpile_triton.reuse import HostScalar
    made = []

    def to_device(x, copy):
        made.append(x)
        return np.array(x)
    capturing = [False]
    kept = HostScalar(to_device, lambda: capturing[0])
    values = [1.5, -0.0, 0.0, 1, True, np.float32(1.5), np.float64(1.5), float("nan"), 2 ** 40]
    first = [kept(v, 7) for v in values]
    assert all(a.shape == () for a in first) and [a.dtype for a in first] == [np.asarray(v).dtype for v in values]
    assert [kept(v, 7) is a for v, a in zip(values, first)] == [True] * len(values)
    assert len(made) == len(values) and np.signbit(kept(-0.0, 7)) and not np.signbit(kept(0.0, 7))
    assert kept(1.5, 8) is not first[0]              # another stream: its own copy
    assert kept(np.ones(2), 7) is not kept(np.ones(2), 7)
    capturing[0] = True
    assert kept(2.5, 7) is not kept(2.5, 7)          # made while captured: not kept
    capturing[0] = False
    for v in range(HostScalar.LIMIT):
        kept(100.0 + v, 7)
    assert len(kept.kept) == HostScalar.LIMIT and kept(1.5, 7) is first[0]
    assert kept(200.0, 7) is not kept(200.0, 7)


def test_a_reused_slot_hands_back_only_a_buffer_no_one_else_holds():
    """reuse.py's slot, NumPy arrays as carriers (a view holds its base, as CuPy's do): the same
    buffer again only once the caller dropped it and every view of it, and on the same stream."""
    import sys
    from numpile_triton.reuse import Reused
    slot = Reused(np.empty, lambda a: (sys.getrefcount(a),), (4, 3), np.dtype(np.float32))
    first = slot(1)
    assert first.shape == (4, 3) and first.dtype == np.float32
    address = first.ctypes.data
    held = slot(1)                       # the caller still holds `first`
    assert held is not first
    del held
    again = slot(1)                      # dropped: taken again
    assert again.ctypes.data != address and slot(1) is not again
    kept = slot(1)
    view = kept[1:]
    del kept
    assert slot(1).ctypes.data != view.ctypes.data - 12   # a view keeps its base from reuse
    del view
    a = slot(1)
    address = a.ctypes.data
    del a
    assert slot(2).ctypes.data != address   # another stream: allocated
    b = slot(2)
    assert b is not None


def test_kernel_records_are_keyed_by_source_device_dtypes_launch_and_triton_environment(monkeypatch):
    """binaries.py: a record made for one kernel source, device, array dtypes, launch key or Triton
    environment is never found for another (a new process would launch a stale kernel)."""
    from numpile_triton import binaries

    class Fn:
        __name__ = "triton_kernel0"
    fn, f4, launch = Fn(), ("<f4", "<f4"), (4, (1024,), False)
    base = binaries.Records("src", "90", f4)._name(fn, launch)
    others = [binaries.Records("src2", "90", f4)._name(fn, launch),
              binaries.Records("src", "80", f4)._name(fn, launch),
              binaries.Records("src", "90", ("<f8", "<f4"))._name(fn, launch),
              binaries.Records("src", "90", f4)._name(fn, (8, (1024,), False)),
              binaries.Records("src", "90", f4)._name(fn, (4, (1024,), (True, False)))]
    assert base == binaries.Records("src", "90", f4)._name(fn, launch)
    assert len({base, *others}) == 6
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "0")   # one of Triton's cache-invalidating variables
    assert binaries.Records("src", "90", f4)._name(fn, launch) != base


def test_a_kernel_compiled_without_the_jit_is_specialised_by_the_jits_rules():
    """jitless.py writes the signature, constants and attributes Triton's JIT would: an aligned
    address and a multiple of 16 divisible by 16, an integer 1 a constant, past 32 bits i64."""
    import triton.language as tl
    from triton.compiler.compiler import ASTSource
    from triton.runtime.jit import JITFunction   # (triton.jit gives the interpreter's function here)
    from numpile_triton import jitless

    def kernel(x_ptr, y_ptr, n, m, big, one, BLOCK: tl.constexpr):
        pass
    k = JITFunction(kernel)

    arrays = [np.zeros(4, np.float32), np.zeros(4, np.bool_)]
    signature, constants, attrs = jitless._specialised(k, arrays, [4096, 4100], (48, 7, 2 ** 33, 1, 128))
    assert signature == {"x_ptr": "*fp32", "y_ptr": "*u1", "n": "i32", "m": "i32", "big": "i64",
                         "one": "constexpr", "BLOCK": "constexpr"}
    assert constants == {(5,): 1, (6,): 128}
    assert attrs == {(0,): jitless.DIVISIBLE, (2,): jitless.DIVISIBLE, (4,): jitless.DIVISIBLE}
    ASTSource(k, signature, constants, attrs).hash()   # what triton.compile takes
    assert jitless.compiled(k, arrays, [4096, 4100], (48,), 4, cupy=True) is None   # not every parameter
    assert jitless.compiled(k, arrays, [4096, 4100], (48, 7, 2 ** 33, 1, 128), 4, cupy=False) is None
