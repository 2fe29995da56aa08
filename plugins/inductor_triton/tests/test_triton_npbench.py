"""NPBench's programs (github.com/spcl/npbench, BSD 3-clause licence) that benchmarks/gpu_npbench.py
found wrong or failing on CuPy arrays, written here as NPBench writes them, at small sizes. Each runs
on NumPy arrays through the backend (Triton's interpreter in CI) and, on a GPU, on CuPy arrays,
called several times (what goes wrong may be a second call's: a CUDA graph replayed), every call
against NumPy on fresh random inputs: values, dtypes, shapes, and the arguments updated in place."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.testing import assert_same_result

rng = np.random.default_rng()


def syrk(alpha, beta, C, A):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def syr2k(alpha, beta, C, A, B):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += (A[:i + 1, k] * alpha * B[i, k] +
                             B[:i + 1, k] * alpha * A[i, k])


@pytest.fixture(params=["numpy", "cupy"])
def arrays(request):
    """The array module the program is called with: NumPy (the interpreter, or the GPU through host
    copies), or CuPy on a GPU."""
    if request.param == "numpy":
        return np
    return request.getfixturevalue("cupy")


@pytest.fixture
def made(monkeypatch):
    """The CompiledPrograms the test makes, loop bodies' included."""
    from numpile_triton.program import CompiledProgram
    programs, init = [], CompiledProgram.__init__

    def record(self, *args, **kwargs):
        init(self, *args, **kwargs)
        programs.append(self)
    monkeypatch.setattr(CompiledProgram, "__init__", record)
    return programs


def check_calls(fn, make, xp, calls: int = 3) -> None:
    compiled = numpile.compile(fn, backend="triton")
    for call in range(calls):
        host = make()
        want = [a.copy() if isinstance(a, np.ndarray) else a for a in host]
        expected = fn(*want)
        args = [xp.asarray(a) if isinstance(a, np.ndarray) else a for a in host]
        got = compiled(*args)
        if expected is None:
            assert got is None, f"{fn.__name__}: {got!r} returned, NumPy gives None"
        else:
            gots, wants = (got, expected) if isinstance(expected, tuple) else ((got,), (expected,))
            assert type(gots) is tuple and len(gots) == len(wants), f"{fn.__name__}: {got!r}"
            for i, (g, w) in enumerate(zip(gots, wants)):
                assert_same_result(g if isinstance(g, np.ndarray) else xp.asnumpy(g), w,
                                   what=f"{fn.__name__}: result {i} of call {call}")
        for i, (g, w) in enumerate(zip(args, want)):
            if isinstance(w, np.ndarray):
                g = g if isinstance(g, np.ndarray) else xp.asnumpy(g)
                assert_same_result(g, w, what=f"{fn.__name__}: argument {i} after call {call}")


@pytest.mark.parametrize("fn", [syrk, syr2k])
def test_loops_nested_in_a_loop_whose_index_sizes_the_body(fn, arrays):
    """syrk, syr2k: the inner loop's iterations are one CUDA graph on CuPy arrays; one captured at
    one row `i` was replayed at the others, whose offsets and lengths differ (the key left out the
    outer index, a number the runner makes kernel arguments of): 5 of 9 rows wrong."""
    n, m = 9, 4
    extra = (rng.random((n, m)),) if fn is syr2k else ()
    check_calls(fn, lambda: (1.5, 1.2, rng.random((n, n)), rng.random((n, m)), *extra), arrays)


def cholesky2(A):
    A[:] = np.linalg.cholesky(A) + np.triu(A, k=1)


def test_an_extern_with_a_keyword_cupy_lacks_at_its_default_runs_on_the_device(arrays, capsys):
    """cholesky2: the graph spells out `np.linalg.cholesky(A, upper=False)`, NumPy 2's keyword, which
    CuPy's cholesky does not take: it ran on host copies (30 ms against CuPy's 1.2). A keyword at its
    default is left out on the device."""
    def spd():
        a = rng.random((12, 12))
        return (a @ a.T + 12 * np.eye(12),)
    numpile.set_logs("perf")
    try:
        check_calls(cholesky2, spd, arrays)
    finally:
        numpile.set_logs()
    assert "host copies" not in capsys.readouterr().err or arrays is np


def gramschmidt(A):
    Q = np.zeros_like(A)
    R = np.zeros((A.shape[1], A.shape[1]), dtype=A.dtype)
    for k in range(A.shape[1]):
        nrm = np.dot(A[:, k], A[:, k])
        R[k, k] = np.sqrt(nrm)
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, A.shape[1]):
            R[k, j] = np.dot(Q[:, k], A[:, j])
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def test_a_loop_index_in_offsets_compiles_no_kernel_an_iteration(arrays, monkeypatch):
    """gramschm (and lu, trmm, ludcmp, seidel2d): `A[:, k]`, `A[:, j]` are offsets of static kernels,
    and a static kernel's compiled form was keyed by its integers' values: every (k, j) looked a kernel
    up again (compiled, or loaded from the records), 19.5 s of gramschm's first call on the H200. Keyed
    by their specialisation, the look-ups do not grow with the iterations."""
    from numpile_triton import binaries
    looked_up = []
    load = binaries.Records.load
    monkeypatch.setattr(binaries.Records, "load", lambda self, fn, key: looked_up.append(key) or load(self, fn, key))
    check_calls(gramschmidt, lambda: (rng.random((14, 12)),), arrays, calls=2)
    assert len(looked_up) < 60, f"{len(looked_up)} kernel look-ups for 12 columns"


def spmv(A_row, A_col, A_val, x):
    y = np.empty(A_row.size - 1, A_val.dtype)
    for i in range(A_row.size - 1):
        cols = A_col[A_row[i]:A_row[i + 1]]
        vals = A_val[A_row[i]:A_row[i + 1]]
        y[i] = vals @ x[cols]
    return y


def csr(rows: int, columns: int, nnz: int):
    """A random matrix in NPBench's CSR form (uint32 row starts and columns, float64 values), empty rows included."""
    starts = np.uint32(np.concatenate([[0], np.cumsum(rng.multinomial(nnz, [1 / rows] * rows))]))
    return starts, np.uint32(rng.integers(0, columns, nnz)), rng.random(nnz), rng.random(columns)


def test_a_gather_through_positions_from_data_is_a_checked_kernel(arrays, made):
    """spmv: each row's `x[cols]` through columns read from the data, at positions a slice with bounds
    from the data picks, ran through about thirty CuPy operations and two range checks a row (0.13x
    CuPy eager on the H200); it is one Triton kernel now, whose positions are checked after it
    (checks.py), and the slice's positions are known to be inside (positions.py)."""
    check_calls(spmv, lambda: csr(5, 7, 9), arrays, calls=2)
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]
    checked = {k.kp.unproven for p in made for k in p.launches.values() if k.kp.checked}
    assert checked == {frozenset({"at(A_col_1[at(slice_positions[i0], 9)], 7)"})}, checked


@pytest.mark.parametrize("bad", [7, -8, 40])
def test_a_position_out_of_range_raises_numpys_index_error(arrays, bad):
    """A checked gather whose data holds a position outside the dimension: NumPy's IndexError, its
    message, and the caller's arrays as NumPy leaves them (the output not written). On CuPy arrays,
    whose indexing wraps the position, the replay raises NumPy's error too (graph_compile.py)."""
    def gather(x, idx, out):
        out[:] = x[idx] * 2.0
    x, idx, out = rng.random(7), rng.integers(-7, 7, 5), rng.random(5)
    idx[3] = bad
    with pytest.raises(IndexError) as want:
        gather(x, idx, out.copy())
    args = [arrays.asarray(a) for a in (x, idx, out)]
    with pytest.raises(IndexError) as got:
        numpile.compile(gather, backend="triton")(*args)
    assert str(got.value) == str(want.value)
    kept = args[2] if isinstance(args[2], np.ndarray) else arrays.asnumpy(args[2])
    np.testing.assert_array_equal(kept, out)


def test_a_column_out_of_range_in_a_row_loop_raises_numpys_index_error(arrays):
    """spmv with the last column past x's end: IndexError as NumPy raises it, nothing returned."""
    A_row, A_col, A_val, x = csr(5, 7, 9)
    A_col[-1] = 9
    with pytest.raises(IndexError) as want:
        spmv(A_row, A_col, A_val, x)
    with pytest.raises(IndexError) as got:
        numpile.compile(spmv, backend="triton")(*[arrays.asarray(a) for a in (A_row, A_col, A_val, x)])
    assert str(got.value) == str(want.value)


def get_acc(pos, mass, G, softening):   # NPBench nbody's getAcc
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z
    inv_r3 = (dx**2 + dy**2 + dz**2 + softening**2)
    inv_r3[inv_r3 > 0] = inv_r3[inv_r3 > 0]**(-1.5)
    ax = G * (dx * inv_r3) @ mass
    ay = G * (dy * inv_r3) @ mass
    az = G * (dz * inv_r3) @ mass
    return np.hstack((ax, ay, az))


def leapfrog(mass, pos, vel, dt, G, softening):
    for _ in range(8):
        vel += get_acc(pos, mass, G, softening) * dt / 2.0
        pos += vel * dt


@pytest.mark.filterwarnings("error::RuntimeWarning")   # a backend error run past as Python fails
def test_hstack_positions_clipped_inside_are_loads(arrays, made):
    """nbody: `np.hstack((ax, ay, az))` gathers each piece at positions clipped to constants inside
    it; added into `vel` in place, the kernel ran through CuPy's operations at every step (a gather
    not proven inside, in a kernel updating a buffer in place, cannot be checked after its launch).
    positions.py bounds clip: a Triton kernel."""
    check_calls(leapfrog, lambda: (20.0 * np.ones((6, 1)) / 6, rng.random((6, 3)), rng.random((6, 3)), 0.05, 1.0, 0.1),
                arrays, calls=2)
    reasons = [r for p in made for r in p.fallbacks.values()]
    assert not any("index array" in r for r in reasons), reasons


@pytest.mark.parametrize("m, n, k, template", [
    (8, 2000, 30000, False), (8, 2000, 2000, False),   # NPBench mlp's second and third layers: cuBLAS splits K
    (8, 30000, 3, True), (16, 4096, 4096, True), (128, 128, 128, True), (512, 512, 512, True),
    (4096, 4096, 1024, False)])
def test_a_product_whose_tiles_leave_sms_idle_along_a_long_k_stays_cublas(m, n, k, template):
    """mlp (float32, 8 rows): the template's 63 tiles walked K=30000 one block after another, 0.72x
    CuPy eager on the H200; cuBLAS splits K over the SMs (matmul.py's Note)."""
    from numpile_triton import matmul
    assert matmul.use_template(m, n, k) is template


def mlp(input, w1, b1, w2, b2, w3, b3):   # NPBench's, relu and softmax inlined
    x = np.maximum(input @ w1 + b1, 0)
    x = np.maximum(x @ w2 + b2, 0)
    x = x @ w3 + b3
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def test_mlp(arrays):
    # Weights of a network's scale (centred, 1/sqrt(fan-in)): with NPBench's [0, 1) weights the
    # logits reach ~100, where float32 softmax turns one ulp of a logit into 3e-5 of a probability,
    # above the float32 tolerance whatever the summation order (a CI run failed on it).
    def f32(*shape):
        return ((rng.random(shape) - 0.5) / np.sqrt(shape[0])).astype(np.float32)
    check_calls(mlp, lambda: (f32(8, 3), f32(3, 40), f32(40), f32(40, 24), f32(24), f32(24, 24), f32(24)), arrays, calls=2)


@pytest.mark.filterwarnings("error::RuntimeWarning")   # a backend error run past as Python fails
@pytest.mark.parametrize("name", ["1-d", "rows", "columns", "summed rows", "two index arrays"])
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_checked_gathers_of_every_layout_give_numpys_values(name, dtype, arrays, made):
    """Gathers through index arrays the caller passes (negative positions too, where signed), as checked
    Triton kernels: NumPy's values, dtypes and shapes."""
    fn = {"1-d": lambda x, i: x.ravel()[i] * 2.0, "rows": lambda x, i: x[i] + 1.0, "columns": lambda x, i: x[:, i] - x[:, 0:1],
          "summed rows": lambda x, i: (x[i] * x[i]).sum(axis=1), "two index arrays": lambda x, i: x[i, i[::-1]] * 3.0}[name]
    low = -5 if np.dtype(dtype).kind == "i" else 0
    check_calls(fn, lambda: (rng.standard_normal((5, 5)), rng.integers(low, 5, 7).astype(dtype)), arrays, calls=2)
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]
