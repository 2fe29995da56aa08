"""Arrays of other libraries as inputs (numpile.array_kinds): torch CPU tensors here, on the CPU
backends; CuPy arrays and CUDA tensors are tested on the GPU (plugins/inductor_triton/tests).
The oracle is NumPy on the tensors' data: the same values, the results as tensors of NumPy's
dtype and shape, the inputs updated where NumPy updates them."""

import os

import numpy as np
import pytest

import numpile
from conftest import rand

torch = pytest.importorskip("torch")

BACKENDS = ["eager", "llvm"]


def available(name):
    if name not in numpile.list_backends(available_only=True):
        pytest.skip(f"backend {name!r} is not installed here")


def tensors(*arrays):
    return [torch.from_numpy(a.copy()) for a in arrays]


def assert_like(got, want):
    """A tensor result is NumPy's result with the same dtype and shape; other values equal."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert_like(g, w)
        return
    if isinstance(want, (np.ndarray, np.generic)):
        assert type(got) is torch.Tensor, type(got)
        assert got.numpy().dtype == want.dtype and tuple(got.shape) == np.shape(want)
        # floats: within a few rounding steps of the result's largest magnitude (tanh(x) * y + 1.5
        # near zero keeps the rounding error of 1.5, which is large relative to the result)
        scale = np.finfo(want.dtype).eps * 4 * np.abs(want).max() if want.dtype.kind == "f" and want.size else 0
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6 if want.dtype == np.float32 else 1e-12, atol=scale)
    else:
        assert type(got) is type(want) and got == want


def fused(x, y):
    z = np.tanh(x) * y + 1.5
    return z, z.sum(axis=0), z.max(), x.shape[0]


def update(x, v, k):
    x[1:] += v[:-1] * k
    x[0] = 0.5
    return x.T


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_tensors_in_tensors_out(rng, backend, dtype):
    available(backend)
    x, y = rand(rng, (5, 4), dtype), rand(rng, (4,), dtype)
    compiled = numpile.compile(fused, backend=backend)
    for _ in range(2):
        assert_like(compiled(*tensors(x, y)), fused(x, y))
    assert len(compiled.entries) == 1 and compiled.entries[0].graph is not None


@pytest.mark.parametrize("backend", BACKENDS)
def test_updates_in_place_reach_the_tensor(rng, backend):
    available(backend)
    x, v = rand(rng, (6, 3)), rand(rng, (6, 3))
    tx, tv = tensors(x, v)
    got = numpile.compile(update, backend=backend)(tx, tv, 2.0)
    want = update(x, v, 2.0)
    assert_like(got, want)
    np.testing.assert_array_equal(tx.numpy(), x)   # the caller's tensor, updated as NumPy updated x
    np.testing.assert_array_equal(tv.numpy(), v)   # the other untouched


def test_guards_say_kind_dtype_shape_and_device(rng):
    compiled = numpile.compile(softmax, backend="eager")
    compiled(*tensors(rand(rng, (3, 4))))
    assert "x: torch Tensor, dtype torch.float64, shape (3, 4), on cpu" in compiled.entries[0].guards.describe()
    compiled(torch.from_numpy(rand(rng, (3, 4), np.float32)))   # another dtype: another entry
    compiled(rand(rng, (3, 4)))                                   # an ndarray: another entry, NumPy out
    assert len(compiled.entries) == 3
    assert type(compiled(rand(rng, (3, 4)))) is np.ndarray


def test_dynamic_shapes_serve_every_size(rng):
    available("llvm")
    compiled = numpile.compile(softmax, backend="llvm", dynamic=True)
    for n in (3, 7, 12):
        x = rand(rng, (n, 5))
        assert_like(compiled(*tensors(x)), softmax(x))
    assert len(compiled.entries) == 1


def test_default_backend_is_the_cpu_one_for_cpu_tensors(rng):
    compiled = numpile.compile(softmax)
    x = rand(rng, (4, 4))
    assert_like(compiled(*tensors(x)), softmax(x))
    assert compiled.entries[0].backend == numpile.plugins.default_backend(numpile.config.default_backends["cpu"], "cpu").name


def test_mixing_tensors_and_ndarrays_runs_as_python():
    """torch refuses np.add(tensor, ndarray)'s mix in the ways NumPy's eager call does; compiled,
    the same call runs as Python (a break that names both), with the same result."""
    def f(x, y):
        return x * 2 + y
    x, y = torch.ones(3, dtype=torch.float64), np.arange(3.0)
    compiled = numpile.compile(f, backend="eager")
    want = f(x, y)
    got = compiled(x, y)
    assert type(got) is type(want) and np.array_equal(np.asarray(got), np.asarray(want))
    reason = compiled.entries[0].break_reason
    assert "y is an ndarray, beside a torch array on cpu" in reason


def test_two_views_of_one_tensor_run_as_python():
    def f(a, b):
        a += 1
        return a + b
    expected, base = torch.arange(6.0, dtype=torch.float64), torch.arange(6.0, dtype=torch.float64)
    want = f(expected[:3], expected[3:])
    compiled = numpile.compile(f, backend="eager")
    got = compiled(base[:3], base[3:])
    assert torch.equal(got, want) and torch.equal(base, expected)
    assert "are views of one torch array" in compiled.entries[0].break_reason


def test_a_cpu_backend_refuses_nothing_on_the_cpu_and_a_gpu_one_says_why(rng):
    class GPUOnly(numpile.Backend):
        name = "gpu-only-test"
        devices = ("cuda",)

        def compile(self, graph, example_inputs, options):
            return graph.compile_python()
    with pytest.raises(TypeError, match="the inputs are torch arrays on cpu; this backend runs on cuda"):
        numpile.compile(softmax, backend=GPUOnly())(*tensors(rand(rng, (2, 3))))


def test_a_dtype_numpy_has_not_runs_as_python():
    def f(x):
        return x * 2
    x = torch.ones(3, dtype=torch.bfloat16)
    compiled = numpile.compile(f, backend="eager")
    assert torch.equal(compiled(x), f(x))
    assert "has no NumPy dtype" in compiled.entries[0].break_reason


def test_a_loop_over_elements_resumed_after_a_break_takes_copies_as_numpy(rng):
    """A 1-d array's element is NumPy's scalar, a copy: `v *= 0.5` leaves the array alone. A torch
    tensor's (and a CuPy array's) is a 0-d view, through which the steps resumed after a graph break
    wrote into the array while the traced ones did not (found by the GPU fuzz on CuPy arrays)."""
    def f(x, y):
        for v in y:
            v *= 0.5
            x = np.tanh(x) + v   # array work: the loop resumes after the break, not the frame as Python
            print("a break", file=sink)
        return x, y
    sink = open(os.devnull, "w")   # noqa: SIM115  closed below
    x, y = rand(rng, (4,)), rand(rng, (3,))
    want = f(x.copy(), y.copy())
    got = numpile.compile(f, backend="eager")(*tensors(x, y))
    sink.close()
    assert_like(got, want)


def test_arrays_made_from_no_tensor_come_back_as_numpy_arrays(rng):
    """`np.zeros(x.shape)` or `np.asarray` of a list is NumPy's array in the library's eager run
    too: it comes back as one (and a scalar of it as NumPy's scalar), not a tensor. As a CuPy array
    it made `c.max(axis=0)` of a 0-d one raise after a break, which NumPy's allows (GPU fuzz)."""
    def f(x):
        c = np.asarray([1.5, 2.5])
        return x * 2, np.zeros(x.shape) + 1.0, c.sum(), c
    x = rand(rng, (3,))
    got = numpile.compile(f, backend="eager")(*tensors(x))
    want = f(x)
    assert type(got[0]) is torch.Tensor
    for g, w in zip(got[1:], want[1:]):
        assert type(g) is type(w) and np.array_equal(g, w), (g, w)
