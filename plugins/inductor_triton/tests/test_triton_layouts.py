"""Arrays in every layout a user hands over (C and F order, transposed, negative and non-unit
strides, offset views, broadcast views, 0-d, empty), and the device values externs give back in any
layout. On the CPU the CuPy path is played by `HostViews`: externs run on the buffers' memory as
NumPy arrays and their results keep NumPy's layout (a transpose stays a view), as CuPy's do; on a
GPU the same programs run on CuPy arrays against NumPy and CuPy eager."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import numpile
from numpile.lowering import schedule
from numpile.testing import assert_same_result
from numpile.testing.loop_programs import jacobi

rng = np.random.default_rng()


def kmeans_assign(X, C):
    return ((X * X).sum(1)[:, None] - 2.0 * X @ C.T + (C * C).sum(1)[None, :]).argmin(1)


PRODUCTS = {   # name: (function, shapes of its operands)
    "a@b": (lambda a, b: a @ b, [(33, 17), (17, 20)]),
    "a@b.T": (lambda a, b: a @ b.T, [(33, 17), (20, 17)]),
    "a.T@b": (lambda a, b: a.T @ b, [(17, 33), (17, 20)]),
    "a.T@b.T+1": (lambda a, b: a.T @ b.T + 1.0, [(17, 33), (20, 17)]),
    "a[::2]@b[:, 1:]": (lambda a, b: a[::2] @ b[:, 1:], [(66, 17), (17, 21)]),
    "a[::-1]@b": (lambda a, b: a[::-1] @ b, [(33, 17), (17, 20)]),
    "2*(a@b.T)": (lambda a, b: 2.0 * (a @ b.T), [(33, 17), (20, 17)]),
    "kmeans": (kmeans_assign, [(64, 16), (7, 16)]),
}


class HostViews:
    """The device-array library of a CuPy program, played on the CPU for Triton's interpreter:
    buffers are torch CPU tensors, externs run on them as NumPy arrays sharing their memory, and an
    extern's result keeps the layout NumPy gave it."""

    def __new__(cls):
        import torch
        from numpile_triton import device

        class Arrays(device.TorchArrays):
            numpy_api = True
            cupy = np   # the library of the externs' arrays

            @staticmethod
            def numpy_view(tensor):
                return tensor.numpy()

            @staticmethod
            def asarray(value):
                value = np.asarray(value)
                return torch.from_numpy(value if min(value.strides, default=0) >= 0 else value.copy())
        arrays = Arrays()
        arrays.cupy = np
        return arrays


@pytest.fixture
def _interpreting():
    """Under the interpreter only, and a backend error (which numpile would run eagerly past with a
    warning) fails the test."""
    from numpile_triton import device
    if not device.interpreting():
        pytest.skip("HostViews plays CuPy on the CPU, through Triton's interpreter")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        yield


def host_views(graph, example_inputs):
    from numpile_triton.backend import python_numbers
    from numpile_triton.program import CompiledProgram
    program = schedule(graph)
    return CompiledProgram(program, arrays=HostViews(), python_numbers=python_numbers(graph, program))


@pytest.mark.parametrize("name", PRODUCTS)
def test_products_of_views_read_what_an_extern_gave_in_its_layout(name, _interpreting):
    fn, shapes = PRODUCTS[name]
    args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    assert_same_result(numpile.compile(fn, backend=host_views)(*args), fn(*args), what=name)


def test_a_kernel_writing_into_an_externs_view_leaves_the_callers_array_alone(_interpreting):
    def fn(a):
        t = a.T
        t += 1.0
        return t * 2.0
    a = rng.standard_normal((5, 4))
    before = a.copy()
    got = numpile.compile(fn, backend=host_views)(a)
    assert_same_result(got, fn(before.copy()), what="fn")
    np.testing.assert_array_equal(a, before + 1.0)


def test_a_python_number_a_graph_returns_comes_back_as_one(_interpreting):
    """A Python int that changed between calls is a graph value, and `w0 * 0.5` of it a graph
    output that is a Python float: it must come back as one, not a NumPy scalar, which the
    boundary of a CuPy program makes a CuPy 0-d array (found on the GPU, on a loop's condition)."""
    def f(x, w0):
        return x - 1.0, w0 * 0.5, w0 < 3
    made = []

    def recording(graph, example_inputs):
        made.append((graph, host_views(graph, example_inputs), example_inputs))
        return made[-1][1]
    x = rng.random(4) + 2.0
    compiled = numpile.compile(f, backend=recording)
    for w0 in (1, 2, 5):
        got, want = compiled(x.copy(), w0), f(x.copy(), w0)
        assert_same_result(got[0], want[0], what="f")
        assert type(got[1]) is float and got[1:] == want[1:]
    numbers = [(g, c(*inputs)) for g, c, inputs in made if any(n.meta.get("weak") for n in g.outputs)]
    assert numbers, "no graph returned a Python number"
    for graph, outputs in numbers:
        for node, out in zip(graph.outputs, outputs):
            if node.meta.get("weak"):
                assert type(out) is node.array_meta.python_type, (node, type(out))


class _DeviceView(np.ndarray):
    """A device array, as the stand-in arrays below hand it to an extern."""


class _StandInArrays:
    numpy_view = staticmethod(lambda a: a.view(_DeviceView))
    to_host = staticmethod(np.array)
    is_array = staticmethod(lambda v: isinstance(v, np.ndarray))
    operators: dict = {}


def test_an_extern_the_device_library_refuses_runs_on_host_copies():
    """CuPy lacks a function, or is stricter than NumPy (`min(axis=-1)` of a 0-d array): the first
    failure runs the extern on host copies, and there from then on; where NumPy fails too, NumPy's
    error propagates; after a run on the device, a failure there is the op's own."""
    from numpile_triton.on_device import DeviceExtern
    tried = []

    def strict_min(a):   # refuses device arrays, as CuPy refuses a 0-d array's axis -1
        tried.append(type(a))
        if isinstance(a, _DeviceView):
            raise np.exceptions.AxisError("axis -1 is out of bounds for array of dimension 0")
        return a.min(axis=-1, keepdims=True)
    extern = DeviceExtern(strict_min, "min", _StandInArrays(), "graph")
    x = np.array(2.5)
    for _ in range(2):
        assert_same_result(extern(x), x.min(axis=-1, keepdims=True), what="min")
    assert tried == [_DeviceView, np.ndarray, np.ndarray]

    def empty_max(a):   # fails on both: NumPy's own error
        return a.max()
    with pytest.raises(ValueError, match="zero-size"):
        DeviceExtern(empty_max, "max", _StandInArrays(), "graph")(np.zeros(0))

    calls = iter([None, ValueError("the op's own")])

    def later_failure(a):
        error = next(calls)
        if error is not None:
            raise error
        return a * 2.0
    extern = DeviceExtern(later_failure, "multiply", _StandInArrays(), "graph")
    extern(x)
    with pytest.raises(ValueError, match="own"):
        extern(x)


def test_an_extern_runs_as_the_device_librarys_operator_once_it_ran_there():
    """CupyArrays.operators: np.matmul on CuPy arrays is `a @ b` once its first call ran on the
    device; a call with keywords keeps NumPy's function, and so does an extern that runs on host copies."""
    from numpile_triton.on_device import DeviceExtern
    through = []

    class Arrays(_StandInArrays):
        operators = {"matmul": lambda a, b: through.append("operator") or np.matmul(a, b)}

    def matmul(a, b, **kwargs):
        through.append(type(a).__name__)
        if isinstance(a, _DeviceView) and a.ndim == 1:   # as CuPy refusing a call NumPy runs
            raise TypeError("refused on the device")
        return np.matmul(a, b, **kwargs)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    extern = DeviceExtern(matmul, "matmul", Arrays(), "graph")
    for _ in range(2):
        assert_same_result(np.asarray(extern(a, b)), a @ b, what="matmul")
    assert_same_result(np.asarray(extern(a, b, dtype=np.float32)), np.matmul(a, b, dtype=np.float32), what="matmul")
    assert through == ["_DeviceView", "operator", "_DeviceView"]
    through.clear()
    on_host = DeviceExtern(matmul, "matmul", Arrays(), "graph")
    for _ in range(2):
        assert_same_result(on_host(a[0], b), a[0] @ b, what="matmul")
    assert through == ["_DeviceView", "ndarray", "ndarray"]


def scatter_add(x, i, v):
    x[i] += v
    return x.cumsum()


UNRENDERED = {   # kernels the renderer has no Triton form for: on CuPy arrays they run through CuPy
    "complex": (lambda z, w: np.abs(np.exp(z) * w.conj()) + z.real * w.imag,
                lambda: [rng.standard_normal(9) + 1j * rng.standard_normal(9) for _ in range(2)]),
    "cumsum rows": (lambda x: np.cumsum(x * 2.0, axis=1), lambda: [rng.standard_normal((5, 7))]),
    "cumprod": (lambda x: x.cumprod() + 1.0, lambda: [rng.standard_normal(11)]),
    "gather": (lambda x, i: x[i] * 2.0, lambda: [rng.standard_normal(10), rng.integers(-10, 10, 6)]),
    "scatter in place": (scatter_add, lambda: [rng.standard_normal(10), rng.integers(0, 10, 4), rng.standard_normal(4)]),
}


@pytest.mark.parametrize("name", UNRENDERED)
def test_kernels_without_a_triton_form_run_on_the_device_arrays(name, _interpreting):
    fn, make = UNRENDERED[name]
    args = make()
    want_args = [np.copy(a) for a in args]
    want = fn(*want_args)
    assert_same_result(numpile.compile(fn, backend=host_views)(*args), want, what=name)
    for a, w in zip(args, want_args):
        assert_same_result(a, w, what=f"{name}: argument")


# -- on the GPU: CuPy arrays in every layout, against NumPy and CuPy eager --------------------------
LAYOUTS = {   # name: a CuPy array of `x`'s values in that layout, from x (NumPy, C order, 2-D)
    "C": lambda cp, x: cp.asarray(x),
    "F": lambda cp, x: cp.asfortranarray(cp.asarray(x)),
    "transposed": lambda cp, x: cp.asarray(np.ascontiguousarray(x.T)).T,
    "negative": lambda cp, x: cp.asarray(x[::-1, ::-1].copy())[::-1, ::-1],
    "strided": lambda cp, x: cp.asarray(np.repeat(np.repeat(x, 2, 0), 3, 1))[::2, ::3],
    "offset": lambda cp, x: cp.asarray(np.pad(x, ((1, 0), (3, 0))))[1:, 3:],
    "broadcast": lambda cp, x: cp.broadcast_to(cp.asarray(x[:1]), x.shape),
}

PROGRAMS = {   # name: (function, shapes of its operands: 2-D ones take every layout)
    **PRODUCTS,
    "pointwise": (lambda x, y: np.sin(x) * y + 1.0, [(33, 20), (33, 20)]),
    "rows": (lambda x, y: (x * y).sum(1) - x.max(1), [(33, 20), (33, 20)]),
    "columns": (lambda x, y: (x - y).min(0) + x.mean(0), [(33, 20), (33, 20)]),
    "whole": (lambda x, y: ((x - y) ** 2).sum(), [(33, 20), (33, 20)]),
    "argmin": (lambda x, y: (x + y).argmin(1), [(33, 20), (33, 20)]),
    "0-d": (lambda x, y: x * 2.0 + y, [(), ()]),
    "empty": (lambda x, y: np.exp(x) + y.sum(0), [(0, 5), (0, 5)]),
}


def _same(got, want, cupy, what):
    """got (CuPy) equals want (NumPy, or CuPy eager's result): type kind, dtype, shape, values."""
    want = cupy.asnumpy(want) if isinstance(want, cupy.ndarray) else np.asarray(want)
    assert isinstance(got, cupy.ndarray), f"{what}: {type(got)}"
    assert_same_result(cupy.asnumpy(got), want, what=what)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", PROGRAMS)
def test_cupy_arrays_in_every_layout_match_numpy_and_cupy(name, layout, cupy):
    fn, shapes = PROGRAMS[name]
    hosts = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    args = [LAYOUTS[layout](cupy, h) if len(s) == 2 else cupy.asarray(h) for h, s in zip(hosts, shapes)]
    numpy_args = [cupy.asnumpy(a) for a in args]
    got = numpile.compile(fn)(*args)
    _same(got, fn(*numpy_args), cupy, f"{name} on {layout} arrays against NumPy")
    _same(got, fn(*args), cupy, f"{name} on {layout} arrays against CuPy")


def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def nbody_step(pos, vel, mass, dt):
    d = pos[None, :, :] - pos[:, None, :]
    inv = ((d ** 2).sum(-1) + 0.01) ** -1.5
    vel += (d * (inv * mass[None, :])[:, :, None]).sum(1) * dt
    pos += vel * dt
    return pos.sum(0), np.abs(vel).max()


def complex_ops(z, w):
    return np.abs(np.exp(z) * w.conj()) + z.real * w.imag, (z * w + 1j) / (np.abs(w) + 1)


def integers_and_bools(i, j, m):
    return (i * j + 3) // (np.abs(j) + 1), (m & (i > j)) | ~m, np.where(m, i, j).sum(), m.any(), m.all()


def multiply_into(a, b, c):
    np.multiply(a, b, out=c)
    return c + 1.0


def _programs():
    """name: (function, fresh NumPy arguments)."""
    r = lambda *s: rng.standard_normal(s)   # noqa: E731
    return {
        "gemm": (gemm, [1.5, np.float64(0.5), r(20, 30), r(20, 10), r(10, 30)]),
        "gemm float32": (gemm, [1.5, 0.5, *(r(*s).astype(np.float32) for s in [(20, 30), (20, 10), (10, 30)])]),
        "nbody": (nbody_step, [r(64, 3), r(64, 3), np.abs(r(64)), 0.01]),
        "complex128": (complex_ops, [r(50) + 1j * r(50), r(50) + 1j * r(50)]),
        "complex64": (complex_ops, [(r(50) + 1j * r(50)).astype(np.complex64), (r(50) + 1j * r(50)).astype(np.complex64)]),
        "int and bool": (integers_and_bools, [rng.integers(-50, 50, 40), rng.integers(-50, 50, 40), r(40) > 0]),
        "time loop": (jacobi, [r(40, 30), r(40, 30), 6]),
        "out=": (multiply_into, [r(7, 5), r(5), r(7, 5)]),
    }


PROGRAM_NAMES = ["gemm", "gemm float32", "nbody", "complex128", "complex64", "int and bool", "time loop", "out="]


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_programs_run_on_host_views_and_match(name, _interpreting):
    fn, args = _programs()[name]
    want_args = [np.copy(a) if isinstance(a, np.ndarray) else a for a in args]
    want = fn(*want_args)
    got = numpile.compile(fn, backend=host_views)(*args)
    for g, w in zip(got, want) if isinstance(want, tuple) else [] if want is None else [(got, want)]:
        assert_same_result(g, w, what=name)
    for a, w in zip(args, want_args):
        if isinstance(a, np.ndarray):
            assert_same_result(a, w, what=f"{name}: argument")


@pytest.mark.parametrize("name", PROGRAM_NAMES)
def test_programs_cupy_runs_run_and_match(name, cupy):
    """Updates of arguments in place, Python and NumPy scalars, complex, integer and bool programs."""
    fn, hosts = _programs()[name]
    device = lambda: [cupy.asarray(h) if isinstance(h, np.ndarray) else h for h in hosts]   # noqa: E731
    want_args = [np.copy(h) for h in hosts]
    want = fn(*want_args)
    compiled = numpile.compile(fn)
    for _ in range(3):   # the first run, then the bound runner (slots reused)
        args = device()
        got = compiled(*args)
        for g, w in zip(got, want) if isinstance(want, tuple) else [] if want is None else [(got, want)]:
            _same(g if isinstance(g, cupy.ndarray) else cupy.asarray(g), w, cupy, name)
        for a, w in zip(args, want_args):
            if isinstance(a, cupy.ndarray):
                _same(a, w, cupy, f"{name}: an argument updated in place")


def test_a_cupy_program_does_not_import_torch(cupy, tmp_path):
    """A new process running a program of CuPy arrays imports no torch: the one that compiles its
    kernels compiles them without Triton's JIT, which would import it (jitless.py), and a later one
    finds them recorded (binaries.py)."""
    code = ("import sys, numpy as np, cupy, numpile\n"
            "f = numpile.compile(lambda x, y: (np.sin(x) * y + 1.0).sum(1))\n"
            "x = cupy.ones((30, 20), dtype='f4')\n"
            "assert np.allclose(cupy.asnumpy(f(x, x)), 20 * (np.sin(1.0) + 1.0), rtol=1e-5)\n"
            "print('torch' in sys.modules)")
    env = {**os.environ, "NUMPILE_CACHE_DIR": str(tmp_path / "numpile"), "TRITON_CACHE_DIR": str(tmp_path / "triton")}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env) for _ in range(2)]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-2000:] for r in runs]
    assert [r.stdout.strip() for r in runs] == ["False", "False"], [r.stdout for r in runs]


def test_a_time_loop_replays_its_iterations_as_one_cuda_graph(cupy, monkeypatch):
    """A loop node's iterations after the first become one CUDA graph the second time the same
    arrays come (loop_graphs.py), and every call, the step count changed or not, gives NumPy's
    values."""
    from numpile_triton import loop_graphs
    replays = []
    replay = loop_graphs.LoopGraphs.replay
    monkeypatch.setattr(loop_graphs.LoopGraphs, "replay", lambda self, *a: replays.append(replay(self, *a)) or replays[-1])
    A, B = rng.standard_normal((40, 30)), rng.standard_normal((40, 30))
    compiled = numpile.compile(jacobi)
    for steps in (5, 6, 7, 7, 7, 7, 9):
        got = compiled(cupy.asarray(A), cupy.asarray(B), steps)
        for g, w, name in zip(got, jacobi(A.copy(), B.copy(), steps), "AB"):
            _same(g, w, cupy, f"{name} after {steps} steps")
        del got
    assert True in replays, replays
