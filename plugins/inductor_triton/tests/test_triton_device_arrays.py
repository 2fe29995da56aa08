"""Device arrays in and out on the GPU: the tutorial's scenarios with CuPy arrays (and torch CUDA
tensors), the default backend picked by the inputs' device, results staying on the device. Runs
only on a CUDA machine with CuPy (tests/run_on_gpu.sh); the oracle is NumPy on host copies."""

import json

import numpy as np
import pytest

import numpile
from numpile.testing.faults import UNUSABLE_CACHES, check_one_warning, run_with_unusable_cache

cupy = pytest.importorskip("cupy")
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

rng = np.random.default_rng()


def close(got, want, rtol=2e-6):
    """A CuPy result with NumPy's dtype, shape and values (floats within rounding)."""
    assert type(got) is cupy.ndarray, type(got)
    assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
    np.testing.assert_allclose(cupy.asnumpy(got), want, rtol=rtol, atol=rtol)


def on_gpu(*arrays):
    return [cupy.asarray(a) for a in arrays]


def foo(x, y):
    return np.sin(x) + np.cos(y)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(7,), (33, 65), (4, 5, 6)])
def test_basic_use_on_cupy_arrays(dtype, shape):
    x, y = (rng.standard_normal(shape).astype(dtype) for _ in range(2))
    compiled = numpile.compile(foo)   # no backend: CUDA arrays pick "triton"
    close(compiled(*on_gpu(x, y)), foo(x, y))
    assert compiled.entries[0].backend == "triton"


class Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return np.maximum(x @ self.w + self.b, 0)


def test_a_model_with_cupy_weights():
    w, b = rng.standard_normal((16, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    x = rng.standard_normal((4, 16)).astype(np.float32)
    model = Linear(*on_gpu(w, b))
    compiled = numpile.compile(model)
    close(compiled(cupy.asarray(x)), np.maximum(x @ w + b, 0), rtol=1e-4)
    model.w[...] = cupy.asarray(w * 2)          # updated in place: seen by the next call
    close(compiled(cupy.asarray(x)), np.maximum(x @ (w * 2) + b, 0), rtol=1e-4)


def bar(a, b):
    x = a / (np.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def test_graph_breaks_resume_on_the_device():
    a, b = rng.standard_normal(10).astype(np.float32), rng.standard_normal(10).astype(np.float32)
    compiled = numpile.compile(bar, backend="triton")
    close(compiled(*on_gpu(a, b)), bar(a, b))
    close(compiled(*on_gpu(a, -b)), bar(a, -b))


def test_dynamic_shapes_one_entry_for_every_size():
    def softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    compiled = numpile.compile(softmax, backend="triton", dynamic=True)
    for n in (3, 17, 130):
        x = rng.standard_normal((n, 50)).astype(np.float32)
        close(compiled(cupy.asarray(x)), softmax(x))
    assert len(compiled.entries) == 1


def test_numpy_inputs_go_to_the_cpu_backend_cupy_inputs_to_the_gpu():
    compiled = numpile.compile(foo)
    x, y = rng.standard_normal(9), rng.standard_normal(9)
    got = compiled(x, y)
    assert type(got) is np.ndarray and np.allclose(got, foo(x, y))
    close(compiled(*on_gpu(x, y)), foo(x, y), rtol=1e-12)
    assert sorted(e.backend for e in compiled.entries) == sorted(
        [numpile.plugins.default_backend(numpile.config.default_backends["cpu"], "cpu").name, "triton"])


def test_in_place_updates_of_device_inputs():
    def step(a, b):
        a[1:-1] = 0.5 * (b[:-2] + b[2:])
        b += 1
        return a.sum()
    a, b = rng.standard_normal(40), rng.standard_normal(40)
    da, db = on_gpu(a, b)
    got = numpile.compile(step, backend="triton")(da, db)
    want = step(a, b)
    close(got, np.asarray(want), rtol=1e-12)
    np.testing.assert_allclose(cupy.asnumpy(da), a, rtol=1e-12)
    np.testing.assert_allclose(cupy.asnumpy(db), b, rtol=1e-12)


def test_torch_cuda_tensors_in_and_out():
    x = torch.randn(6, 5, device="cuda")
    got = numpile.compile(foo)(x, x * 2)
    assert type(got) is torch.Tensor and got.device.type == "cuda"
    want = foo(x.cpu().numpy(), (x * 2).cpu().numpy())
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=2e-6, atol=2e-6)


def test_a_full_reduction_is_a_0d_device_array_as_cupy_gives():
    x = rng.standard_normal(100_000).astype(np.float32)
    got = numpile.compile(lambda v: ((v - 1) ** 2).sum(), backend="triton")(cupy.asarray(x))
    assert type(got) is cupy.ndarray and got.shape == ()
    np.testing.assert_allclose(float(got), ((x - 1) ** 2).sum(dtype=np.float64), rtol=1e-4)


def test_views_at_any_alignment_after_aligned_calls():
    """Later launches skip Triton's JIT: a view whose address is not 16-byte aligned must not run
    a kernel compiled for aligned addresses (the launch key says which addresses are aligned)."""
    compiled = numpile.compile(foo, backend="triton", dynamic=True)
    base = rng.standard_normal(2000).astype(np.float32)
    on_device = cupy.asarray(base)
    for start, n in [(0, 512), (0, 640), (1, 512), (3, 515), (0, 512), (16, 33)]:
        x = on_device[start:start + n]
        close(compiled(x, x[::-1]), foo(base[start:start + n], base[start:start + n][::-1]))


def test_launch_hooks_see_direct_launches():
    """Launches after the first skip Triton's JIT; a profiler's launch hooks still see them, with
    the kernel's metadata (none registered: None is what the launcher gets)."""
    from triton import knobs
    seen = []
    hook = lambda metadata: seen.append(metadata.get()["name"])   # noqa: E731  (a LazyDict)
    compiled = numpile.compile(foo, backend="triton")
    x = cupy.asarray(rng.standard_normal(100).astype(np.float32))
    compiled(x, x)
    chain = knobs.runtime.launch_enter_hook
    if hasattr(chain, "add"):   # triton 3.5 and newer: a HookChain
        chain.add(hook)
    else:
        knobs.runtime.launch_enter_hook = hook
    try:
        close(compiled(x, x), foo(cupy.asnumpy(x), cupy.asnumpy(x)))
    finally:
        if hasattr(chain, "remove"):
            chain.remove(hook)
        else:
            knobs.runtime.launch_enter_hook = chain
    assert len(seen) == 1 and "triton_kernel" in seen[0]


def test_externs_run_on_the_device_through_cupy():
    def f(a, b):
        return np.tanh(a @ b) + np.concatenate([a, a], axis=0)[: a.shape[0], : b.shape[1]]
    a, b = rng.standard_normal((64, 48)), rng.standard_normal((48, 32))
    compiled = numpile.compile(f, backend="triton")
    close(compiled(*on_gpu(a, b)), f(a, b), rtol=1e-10)


def scaled_sum(alpha, beta, A, x):
    return alpha * (A @ x) + beta * x, beta * x


def test_numbers_only_kernels_read_are_made_device_arrays_once_per_value(monkeypatch):
    """Python numbers that only kernels read (NPBench's alpha, beta) become device arrays once per
    value (reuse.HostScalar): the results are NumPy's for each value, NaN included, and the third
    time round no number is copied to the device."""
    from numpile_triton import device
    numbers = []
    to_device = device.CupyArrays.to_device

    def counted(self, x, copy):
        if not isinstance(x, cupy.ndarray):
            numbers.append(x)
        return to_device(self, x, copy)
    monkeypatch.setattr(device.CupyArrays, "to_device", counted)
    compiled = numpile.compile(scaled_sum, backend="triton")
    A, x = rng.standard_normal((64, 64)), rng.standard_normal(64)
    dA, dx = on_gpu(A, x)
    for i, (alpha, beta) in enumerate(((1.5, 0.25), (2.0, 0.5), (float("nan"), 0.5)) * 3):
        if i == 6:
            numbers.clear()
        for got, want in zip(compiled(alpha, beta, dA, dx), scaled_sum(alpha, beta, A, x)):
            close(got, want, rtol=1e-12)
    assert numbers == [], numbers


def test_a_negative_zero_number_argument_keeps_its_sign():
    """-0.0 * x has the signs opposite to x's. The second entry (alpha changed, so the numbers are
    graph inputs) got it wrong on CuPy arrays for (1.5, -0.0): CuPy makes a 0-d array of a number by
    `fill`, whose memset for a value == 0 wrote +0.0 (device.cupy_copy)."""
    compiled = numpile.compile(scaled_sum, backend="triton")
    A, x = rng.standard_normal((64, 64)), rng.standard_normal(64)
    dA, dx = on_gpu(A, x)
    for alpha, beta in ((1.5, -0.0), (2.0, 0.0), (float("nan"), 0.5), (1.5, -0.0)):
        got, want = compiled(alpha, beta, dA, dx), scaled_sum(alpha, beta, A, x)
        np.testing.assert_array_equal(np.signbit(cupy.asnumpy(got[1])), np.signbit(want[1]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_negative_zero_scalars_reach_the_device_bit_for_bit(dtype):
    """A NumPy scalar -0.0, a constant on the first call and a graph input from the second, against
    NumPy's signs (its 0-d device array was +0.0)."""
    def f(a, x):
        return a * x, x - a
    compiled = numpile.compile(f, backend="triton")
    x = rng.standard_normal(16).astype(dtype)
    x[:4] = 0.0
    for a in (dtype(1.5), dtype(-0.0), dtype(2.5), dtype(-0.0)):
        for got, want in zip(compiled(a, cupy.asarray(x)), f(a, x)):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(np.signbit(cupy.asnumpy(got)), np.signbit(want))


def gemm(alpha, beta, C, A, B):
    C[:] = alpha * A @ B + beta * C


def doitgen(A, C4):
    A[:] = np.reshape(np.reshape(A, (A.shape[0], A.shape[1], 1, A.shape[2])) @ C4, A.shape)


def shifted(x, y):
    x[1:] = x[:-1] + y[1:]


@pytest.mark.parametrize("layout", ["C", "F", "aliased", "offset"])
def test_arguments_updated_in_place_by_kernels(layout, monkeypatch):
    """A bound runner's kernels update a C-ordered argument in the caller's own array
    (CupyArrays.updated), one sharing memory with another argument or of another order in a copy
    the graph writes back; NumPy's values and updates either way, call after call."""
    from numpile_triton import device
    own, updated = [], device.CupyArrays.updated

    def spy(self, x, others):
        got = updated(self, x, others)
        own.append(got is x)
        return got
    monkeypatch.setattr(device.CupyArrays, "updated", spy)
    place = {"C": cupy.asarray, "F": lambda h: cupy.asfortranarray(cupy.asarray(h)),   # offset: a C-ordered view one element in
             "offset": lambda h: cupy.asarray(np.concatenate([[7.0], h.ravel()]))[1:].reshape(h.shape)}
    compiled = numpile.compile(gemm, backend="triton")
    for _ in range(3):
        C, A, B = rng.standard_normal((24, 40)), rng.standard_normal((24, 32)), rng.standard_normal((32, 40))
        if layout == "aliased":   # C is A: the kernel reads A while it writes C
            C, A, B = (rng.standard_normal((32, 32)) for _ in range(3))
            dC = cupy.asarray(C)
            compiled(1.5, 0.5, dC, dC, cupy.asarray(B))
            gemm(1.5, 0.5, C, C, B)
        else:
            dC = place[layout](C)
            compiled(1.5, 0.5, dC, cupy.asarray(A), cupy.asarray(B))
            gemm(1.5, 0.5, C, A, B)
        np.testing.assert_allclose(cupy.asnumpy(dC), C, rtol=1e-12, atol=1e-12)
    if layout != "aliased":   # (the tracer may see one array there, then updated in place as the graph says)
        assert own[-2:] == [layout != "F"] * 2, own


def test_updates_in_place_of_stacks_and_shifts_are_numpys():
    for fn, hosts in ((doitgen, lambda: (rng.standard_normal((6, 5, 16)), rng.standard_normal((16, 16)))),
                      (shifted, lambda: (rng.standard_normal(100), rng.standard_normal(100)))):
        compiled = numpile.compile(fn, backend="triton")
        for _ in range(3):
            args = hosts()
            devices = on_gpu(*args)
            compiled(*devices)
            fn(*args)
            close(devices[0], args[0], rtol=1e-12)


def rebound_after_a_break(x, y):
    c = -y
    print("", end="")   # a graph break: c comes out of the first graph
    x = c
    c *= 2.5
    return x, c


@pytest.mark.xfail(strict=True, reason="NumPy's -y of a 0-d y is an immutable scalar, numpile's (as CuPy eager's) a "
                   "0-d CuPy array, which `c *= 2.5` updates in place: cupy_fuzz seeds 1226716 and 777; not fixed")
def test_a_0d_result_updated_in_place_after_a_break_leaves_its_other_names_alone():
    x, y = rng.standard_normal(()), rng.standard_normal(())
    got = numpile.compile(rebound_after_a_break, backend="triton")(*on_gpu(x, y))
    for g, w in zip(got, rebound_after_a_break(x, y)):
        np.testing.assert_array_equal(cupy.asnumpy(g), w)


@pytest.mark.parametrize("kind", ["torch", "numpy"])
def test_externs_of_tensors_run_through_cupy_of_numpy_inputs_with_numpy(kind, capsys):
    def f(a, b):
        return np.tanh(a @ b) + 1
    a, b = rng.standard_normal((64, 48)), rng.standard_normal((48, 32))
    args = (torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()) if kind == "torch" else (a, b)
    numpile.set_logs("perf")
    try:
        got = numpile.compile(f, backend="triton")(*args)
    finally:
        numpile.set_logs()
    assert type(got) is (torch.Tensor if kind == "torch" else np.ndarray)
    np.testing.assert_allclose(got.cpu().numpy() if kind == "torch" else got, f(a, b), rtol=1e-10, atol=1e-12)
    assert ("host copies" in capsys.readouterr().err) == (kind == "numpy")


def test_reduce_overhead_replays_cuda_graphs_with_numpys_results():
    def step(x, w, b):
        h = np.maximum(x @ w + b, 0)
        e = np.exp(h - h.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True), h.sum()
    compiled = numpile.compile(step, mode="reduce-overhead")
    w, b = rng.standard_normal((16, 8)), rng.standard_normal(8)
    results = []
    for rows in (5, 5, 9, 5):   # a second signature is captured too
        x = rng.standard_normal((rows, 16))
        got = compiled(*on_gpu(x, w, b))
        want = step(x, w, b)
        close(got[0], want[0], rtol=1e-10)
        close(got[1], np.asarray(want[1]), rtol=1e-10)
        results.append((got, want))
    for got, want in results:   # earlier results are the caller's: later replays leave them alone
        close(got[0], want[0], rtol=1e-10)
    program = compiled.entries[0]
    assert program.backend == "triton"


def test_reduce_overhead_writes_updates_of_inputs_back():
    def step(a, b):
        a[1:-1] = 0.5 * (b[:-2] + b[2:])
        return a.sum()
    compiled = numpile.compile(step, backend="triton", mode="reduce-overhead")
    for _ in range(3):
        a, b = rng.standard_normal(40), rng.standard_normal(40)
        da, db = on_gpu(a, b)
        close(compiled(da, db), np.asarray(step(a, b)), rtol=1e-12)
        np.testing.assert_allclose(cupy.asnumpy(da), a, rtol=1e-12)


def test_reduce_overhead_captures_only_where_a_graph_saves_launches(capsys):
    compiled = numpile.compile(lambda v: np.tanh(v) * 2, backend="triton", mode="reduce-overhead")
    x = rng.standard_normal(100)
    numpile.set_logs("perf")
    try:
        close(compiled(cupy.asarray(x)), np.tanh(x) * 2, rtol=1e-12)
    finally:
        numpile.set_logs()
    assert "a graph saves nothing" in capsys.readouterr().err


def test_max_autotune_times_once_keeps_the_choice_on_disk_and_updates_in_place_once(tmp_path, monkeypatch, capsys):
    from numpile_triton import autotune
    monkeypatch.setattr(numpile.config, "cache_dir", tmp_path)

    def step(a, b):
        a[1:-1] += 0.5 * (b[:-2] + b[2:])   # timing candidates on copies: `a` is updated once
        return np.exp(b - b.max()).sum(), (a * b).sum()
    a, b = rng.standard_normal(300_000), rng.standard_normal(300_000)
    want_a = a.copy()
    want = step(want_a, b)
    numpile.set_logs("perf")
    try:
        da, db = on_gpu(a, b)
        got = numpile.compile(step, backend="triton", mode="max-autotune")(da, db)
    finally:
        numpile.set_logs()
    close(got[0], np.asarray(want[0]), rtol=1e-10)
    close(got[1], np.asarray(want[1]), rtol=1e-10)
    close(da, want_a, rtol=1e-12)
    assert "max-autotune timed" in capsys.readouterr().err
    assert list((tmp_path / "triton" / "autotune").glob("*.json"))

    def no_timing(*args):
        raise AssertionError("timed again: the choice on disk was not read")
    monkeypatch.setattr(autotune.Tuner, "_time", no_timing)
    numpile.reset()
    da, db = on_gpu(a, b)
    got = numpile.compile(step, backend="triton", mode="max-autotune")(da, db)
    close(got[1], np.asarray(want[1]), rtol=1e-10)
    close(da, want_a, rtol=1e-12)



TUNED_CHILD = """
import json, warnings
import cupy, numpy as np
import numpile

def step(a, b):
    return np.exp(b - b.max()).sum(), (a * b).sum()

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    compiled = numpile.compile(step, backend="triton", mode="max-autotune")
    for n in (300_000, 70_000):
        a, b = np.random.default_rng(n).standard_normal((2, n))
        got, want = compiled(cupy.asarray(a), cupy.asarray(b)), step(a, b)
        for g, w in zip(got, want):
            np.testing.assert_allclose(cupy.asnumpy(g), w, rtol=1e-10)
print(json.dumps([str(w.message) for w in caught]))
"""


@pytest.mark.parametrize("kind", UNUSABLE_CACHES)
def test_max_autotune_with_an_unusable_cache_directory_costs_one_warning(kind, tmp_path):
    """The tuned choices (and the kernels, Triton's cache, the records) are kept for this process only."""
    cache_dir, done = run_with_unusable_cache(kind, tmp_path, TUNED_CHILD)
    assert done.returncode == 0, done.stderr
    check_one_warning(json.loads(done.stdout.splitlines()[-1]), kind, cache_dir)

def test_numpy_inputs_on_the_gpu_say_what_their_transfers_cost(capsys):
    x = rng.standard_normal((512, 1024)).astype(np.float32)
    numpile.set_logs("perf")
    try:
        got = numpile.compile(lambda v: np.tanh(v) * 2 + 1, backend="triton")(x)
    finally:
        numpile.set_logs()
    assert type(got) is np.ndarray
    np.testing.assert_allclose(got, np.tanh(x) * 2 + 1, rtol=1e-6, atol=1e-6)
    err = capsys.readouterr().err
    assert "copies 2.1 MB of NumPy inputs to the device" in err and "2.1 MB of results back" in err, err


def test_numpy_inputs_pass_through_pinned_buffers_reused_call_after_call():
    from numpile_triton import staging
    from numpile_triton.backend import TritonBackend
    made = []

    def recording(graph, example_inputs):
        made.append(TritonBackend().compile(graph, example_inputs, {}))
        return made[-1]
    f = numpile.compile(lambda a, b: (a * 2 - b, (a * b).sum(axis=1)), backend=recording)
    for _ in range(4):   # each call's uploads may be in flight while the next call fills buffers
        a, b = (rng.standard_normal((600, 1024)) for _ in range(2))   # 4.9 MB each: staged
        got = f(a, b)
        np.testing.assert_allclose(got[0], a * 2 - b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], (a * b).sum(axis=1), rtol=1e-12, atol=1e-11)
    (program,) = made
    slots = program.arrays.staging.slots
    assert 1 <= len(slots) <= 6, len(slots)   # one where every upload is done before the next starts
    assert all(s[0].is_pinned() and s[0].numel() >= staging.SMALL and s[1] is not staging.IN_USE for s in slots)


def test_reduce_overhead_reads_the_same_weights_in_place(capsys):
    """Weights passed again as the same arrays are read where they are: their changes in place
    are seen, other arrays in their place are copied in, and the results stay NumPy's."""
    def layer(x, w, b):   # a matmul template and a row kernel: a graph of two launches
        return np.maximum(x @ w + b, 0).sum(axis=1)
    w, b = rng.standard_normal((64, 48)).astype(np.float32), rng.standard_normal(48).astype(np.float32)
    dw, db = on_gpu(w, b)
    compiled = numpile.compile(layer, backend="triton", mode="reduce-overhead")
    numpile.set_logs("perf")
    try:
        for step in range(6):
            if step == 3:
                dw[...] = dw * 2   # seen by the graph that reads dw in place
                w = w * 2
            if step == 5:          # another array in its place: copied in
                w = w + 1
                dw = cupy.asarray(w)
            x = rng.standard_normal((32, 64)).astype(np.float32)
            close(compiled(cupy.asarray(x), dw, db), layer(x, w, b), rtol=1e-4)
    finally:
        numpile.set_logs()
    assert "replays a CUDA graph that reads w, b where they are" in capsys.readouterr().err


def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)


def test_buffers_are_reused_only_once_the_caller_and_every_view_dropped_them():
    """After the first call a bound runner takes its buffers from slots (reuse.py): a result the
    caller holds, or reaches through a view, `.data`, DLPack or `__cuda_array_interface__`, is never
    written by a later call; one dropped is written again (no allocation)."""
    compiled = numpile.compile(chain, backend="triton")
    xs = [rng.standard_normal(1024).astype(np.float32) for _ in range(4)]
    first = compiled(cupy.asarray(xs[0]))                       # the first call: unbound
    second = compiled(cupy.asarray(xs[1]))                      # bound: a slot's buffer, held
    dropped = compiled(cupy.asarray(xs[2]))
    address = dropped.data.ptr
    del dropped
    reused = compiled(cupy.asarray(xs[3]))
    assert reused.data.ptr == address                           # dropped: taken again
    close(reused, chain(xs[3]))
    del reused
    holders = {"a view": lambda a: a[3:], "its memory pointer": lambda a: a.data,
               "a DLPack tensor": lambda a: torch.from_dlpack(a),
               "a __cuda_array_interface__ tensor": lambda a: torch.as_tensor(a, device="cuda")}
    held = []
    for i, (what, hold) in enumerate(holders.items()):
        result = compiled(cupy.asarray(xs[i]))
        address = result.data.ptr
        held.append((hold(result), chain(xs[i])))
        del result
        other = compiled(cupy.asarray(xs[3 - i]))
        assert other.data.ptr != address, what
        close(other, chain(xs[3 - i]))
        del other
    close(first, chain(xs[0]))
    close(second, chain(xs[1]))
    for h, want in held:                                        # each still reads its call's values
        if isinstance(h, torch.Tensor):
            h = cupy.asarray(h)
        if isinstance(h, cupy.ndarray):
            close(h, want[-h.size:])


def test_a_bound_runner_launches_directly_and_still_takes_views_at_odd_addresses():
    """Static shapes: after the first call, Triton's launcher is called directly by the bound runner
    (no `Launch`), while the addresses are 16-byte aligned; a view at an odd address of the same
    shape goes through `Launch`, which compiles a kernel for it."""
    from numpile_triton.launch import Launch

    def odd(x, y):   # a graph of its own: no other test's program is bound already
        return np.sin(x) * 3 - np.cos(y)
    compiled = numpile.compile(odd, backend="triton")
    base, other = (rng.standard_normal(600).astype(np.float32) for _ in range(2))
    on_device, other_on_device = cupy.asarray(base), cupy.asarray(other)   # two arrays: views of one break
    calls = []
    original = Launch.__call__
    Launch.__call__ = lambda self, *a, **k: (calls.append(1), original(self, *a, **k))[1]
    try:
        for start in (0, 0, 4, 1, 3, 0):   # float32: starts 1 and 3 are not 16-byte aligned
            x, y = on_device[start:start + 512], other_on_device[start:start + 512]
            close(compiled(x, y), odd(base[start:start + 512], other[start:start + 512]))
    finally:
        Launch.__call__ = original
    assert len(calls) == 3, calls   # the first call and the two views at odd addresses


WARM_START = '''
import sys, time
import numpy as np, cupy
import numpile
import triton.compiler
from triton.compiler import compiler
compiled = []   # Triton's compiler called, by the JIT or without it (jitless.py)
real = compiler.compile
compiler.compile = triton.compiler.compile = lambda *a, **k: (compiled.append(1), real(*a, **k))[1]
def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * {scale}
x = cupy.arange(1024, dtype=cupy.float32) / 100
start = time.perf_counter()
y = numpile.compile(chain, backend="triton")(x)
cupy.cuda.Device().synchronize()
seconds = time.perf_counter() - start
want = chain(cupy.asnumpy(x))
assert y.dtype == want.dtype and y.shape == want.shape
np.testing.assert_allclose(cupy.asnumpy(y), want, rtol=2e-6, atol=2e-6)
print(len(compiled), seconds)
'''


def test_a_new_process_launches_recorded_kernels_without_the_jit(tmp_path):
    """binaries.py: a second process with the same kernel finds numpile's record and launches
    Triton's compiled kernel without calling Triton's compiler (nor its JIT); another kernel source
    is not found (compiled again)."""
    import os
    import subprocess
    import sys

    def first_call(scale):
        env = dict(os.environ, NUMPILE_CACHE_DIR=str(tmp_path))
        env.pop("TRITON_CACHE_DIR", None)
        out = subprocess.run([sys.executable, "-c", WARM_START.format(scale=scale)], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        return int(out[0]), float(out[1])
    assert first_call(0.5)[0] == 1          # a new cache: the kernel is compiled
    compiles, seconds = first_call(0.5)
    assert compiles == 0, compiles          # recorded: no compiler, no JIT
    print(f"first call from the warm caches in a new process: {seconds * 1e3:.1f} ms")
    assert first_call(0.25)[0] == 1        # another source: another key
