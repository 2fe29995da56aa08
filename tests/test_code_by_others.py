"""Shapes of code found running public repositories as written (a sweep of six repositories'
NumPy functions, 2026-11-28) that crashed, raised or gave NumPy's values wrong: each written
here anew in its smallest form, differentially against NumPy on fresh random inputs."""

import math

import numpy as np
import pytest

import numpile
from numpile.testing.compare import assert_same
from conftest import run_like_numpy
import checks_by_others

BACKENDS = ["eager", "llvm"]


class Holder:
    pass


def attribute_filled_in_loop(o, X):
    """An attribute's array first read, and updated, inside a loop body."""
    for t in range(X.shape[1]):
        o.s[:, t] = X[:, t] * 2.0
    return o.s


def attribute_made_then_filled(o, X):
    """Arrays the function stores into attributes, then updates in a loop (a recurrent layer)."""
    o.states = np.zeros((X.shape[0], X.shape[1] + 1))
    o.out = np.zeros(X.shape)
    for t in range(X.shape[1]):
        o.states[:, t] = np.tanh(X[:, t] + o.states[:, t - 1])
        o.out[:, t] = o.states[:, t] * 0.5
    return o.out


def attribute_list_appended(o, X):
    o.means = []
    for col in X.T:
        o.means.append(col.mean())
    return o.means


def generator_summed(x, y):
    total = sum(abs(v - y[i]) for i, v in enumerate(x))
    return total / len(x)


def generator_max(x):
    return max(v * 2 for v in x)


def tuple_summed(x, pad):
    return x.shape[0] + np.sum(pad), np.exp((1.0, 2.0)) * x[:2], np.maximum(0, [1, -2, 3])


def keyword_named(a, v):
    """A loop carrying a local named after a keyword (a graph input named `lambda` was a SyntaxError)."""
    lambda_, change = 0.0, 1.0
    while change > 1e-10:
        before = lambda_
        v = a @ v
        v = v / np.linalg.norm(v)
        lambda_ = v @ (a @ v)
        change = abs(lambda_ - before)
    return lambda_


def closure_in_comprehension(x):
    n = x.shape[1]

    def inner():
        return [print(n, end="") for _ in range(2)]   # a comprehension whose body breaks
    return x * len(inner())


def half_mean(x):
    return x.mean(), np.square(x - x[::-1]).mean(), x.reshape(-1, 100).mean(axis=1)


def bools_squared(v):
    return v ** 2, (v + np.sqrt(v ** 2 + 2.0)) / 2


def distance_kernel(n):
    """abs() and ** of loop indices (bilateral filters' Gaussian kernels): SymInt had no abs."""
    arr = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            arr[i, j] = math.sqrt(abs(i - n // 2) ** 2 + abs(j - n // 2) ** 2)
    return arr


def shifted_indices(x):
    for i in range(x.shape[0]):
        x[i] = i ^ (i >> 2)
    return x


def shape_spelled(X):
    """np.shape(X), np.ndim, np.size as functions (ML code's `n_samples, n_features = np.shape(X)`)."""
    n_samples, n_features = np.shape(X)
    return X.sum(axis=0) / n_samples * np.ndim(X) + np.size(X, 1) - np.size(X) / n_features


def _symmetric(a):
    return a + a.T


def _holder(rng):
    o = Holder()
    o.s = rng.random((4, 7))
    return o


CASES = {
    attribute_filled_in_loop: lambda rng: (_holder(rng), rng.random((4, 7))),
    attribute_made_then_filled: lambda rng: (Holder(), rng.random((5, 30))),
    attribute_list_appended: lambda rng: (Holder(), rng.random((50, 6))),
    generator_summed: lambda rng: (rng.random(600), rng.random(600)),
    generator_max: lambda rng: (rng.random(500),),
    tuple_summed: lambda rng: (rng.random(5), (1, 2)),
    keyword_named: lambda rng: (_symmetric(rng.standard_normal((20, 20))), rng.standard_normal(20)),
    closure_in_comprehension: lambda rng: (rng.random((10, 3)),),
    half_mean: lambda rng: ((rng.standard_normal(200_000) * 3).astype(np.float16),),
    bools_squared: lambda rng: (rng.random(1000) < 0.5,),
    distance_kernel: lambda rng: (int(rng.integers(20, 40)),),
    shifted_indices: lambda rng: (rng.random(300),),
    shape_spelled: lambda rng: (rng.random((40, 6)),),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_code_as_others_write_it(fn, backend, capsys):
    seed = np.random.SeedSequence().entropy   # the same fresh arguments twice: objects are updated
    expected = fn(*CASES[fn](np.random.default_rng(seed)))
    assert_same(numpile.compile(fn, backend=backend)(*CASES[fn](np.random.default_rng(seed))), expected)
    if fn in (distance_kernel, shifted_indices, shape_spelled):
        report = numpile.explain(fn)(*CASES[fn](np.random.default_rng(seed)))
        assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)


def test_a_method_of_a_class_from_another_module_is_inlined_and_its_globals_guarded(tmp_path, monkeypatch):
    """An activation object whose class lives in another module (a layer calling
    `self.activation(x)`): its method reads that module's globals, guarded there (it was a break:
    "global 'np' of an inlined function cannot be guarded")."""
    (tmp_path / "numpile_test_acts.py").write_text(
        "import numpy as np\nSCALE = 1.5\n\nclass Scaled:\n    def __call__(self, x):\n"
        "        return SCALE * np.where(x >= 0.0, x, np.exp(x) - 1)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import numpile_test_acts as acts

    class Layer:
        def __init__(self):
            self.activation = acts.Scaled()

    def forward(layer, x):
        return layer.activation(x)

    x = np.random.default_rng().standard_normal((50, 40))
    compiled, layer = numpile.compile(forward, backend="llvm"), Layer()
    assert_same(compiled(layer, x), forward(layer, x))
    assert numpile.explain(forward)(layer, x).graph_break_count == 0
    monkeypatch.setattr(acts, "SCALE", 3.0)   # the guard on the other module's global sees it
    assert_same(compiled(layer, x), forward(layer, x))


def _nearest(d, k):   # k nearest neighbours by rows, as kNN code writes it, and the long tail's helpers
    out = np.empty((d.shape[0], k), np.int64)
    for i in range(d.shape[0]):
        out[i] = np.argsort(d[i])[:k]
    return (out, np.median(d, axis=1), np.percentile(d, [25, 75], axis=0), np.searchsorted(np.sort(d[0]), d[1]),
            np.isclose(d[0], d[1], atol=0.2), np.interp(d[2], np.sort(d[3]), d[4]), np.convolve(d[5], d[6, :3]),
            np.trace(np.diag(d[7]) @ d[:9]), np.pad(d[:3, :3], ((1, 0), (2, 2)), mode="edge"),
            np.nanmean(np.where(d > 0.9, np.nan, d), axis=0), np.nanargmax(np.where(d < 0.1, np.nan, d), axis=1),
            np.take_along_axis(d, np.argpartition(d, 2, axis=1)[:, :2], axis=1), np.count_nonzero(d > 0.5, axis=0),
            np.digitize(d[8], np.array([0.25, 0.5])), np.corrcoef(d[:4]), np.linalg.det(d[:3, :3]),
            np.select([d < 0.2, d > 0.8], [d * 10, -d], default=0.0), *np.gradient(d[:5], 0.5))


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_orderings_and_order_statistics_stay_in_the_graph(rng, backend):
    d = rng.random((30, 9))
    compiled = numpile.compile(_nearest, backend=backend)
    got, want = compiled(d, 4), _nearest(d, 4)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w)
    assert numpile.explain(_nearest, backend=backend)(d, 4).graph_break_count == 0


def _kalman_shapes(x, P, z, R):   # filterpy's way: atleast_2d, isscalar on what came in
    z = np.atleast_2d(z)
    if np.isscalar(R):
        R = np.eye(P.shape[0]) * R
    y = z.T - x
    S = P + R
    return x + P @ np.linalg.solve(S, y), np.atleast_1d(S.trace()), np.atleast_3d(P).shape


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_atleast_nd_and_isscalar_stay_in_the_graph(rng, backend):
    x, P, z = rng.random((3, 1)), np.eye(3) + rng.random((3, 3)) * 0.1, rng.random(3)
    for R in (0.5, rng.random((3, 3)) + np.eye(3)):
        got, want = numpile.compile(_kalman_shapes, backend=backend)(x, P, z, R), _kalman_shapes(x, P, z, R)
        for g, w in zip(got, want):
            assert type(g) is type(w) and np.shape(g) == np.shape(w) and np.allclose(g, w)
        assert numpile.explain(_kalman_shapes, backend=backend)(x, P, z, R).graph_break_count == 0


# ddbourgin/numpy-ml's ways (the sweep's top breaks): a bias column by np.c_, a window as the sum
# of a list of arrays, eps from np.finfo
def _ridge_design(X, y, alpha):
    X = np.c_[np.ones(X.shape[0]), X]
    A = X.T @ X + alpha * np.eye(X.shape[1])
    return np.linalg.solve(A, X.T @ y), np.r_[X[0], y[:2]]


def _generalized_cosine(x, coefs):
    window = np.sum([ak * np.cos(2 * np.pi * k * x) for k, ak in enumerate(coefs)], axis=0)
    return window, np.max([window.max(), x.sum(), 0.5]), np.mean((window, x), axis=0)


def _cross_entropy(y, y_pred):
    eps = np.finfo(float).eps
    top = np.iinfo(np.int16).max
    return -np.sum(y * np.log(y_pred + eps)) + np.finfo(y_pred.dtype).tiny * top


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("fn, make", [
    (_ridge_design, lambda rng: (rng.random((20, 3)), rng.random(20), 0.1)),
    (_generalized_cosine, lambda rng: (rng.random(64), [0.42, 0.5, 0.08])),
    (_cross_entropy, lambda rng: (rng.random((8, 4)) < 0.3, rng.random((8, 4)).astype(np.float32))),
])
def test_bias_columns_lists_of_arrays_and_type_limits_stay_in_the_graph(rng, backend, fn, make):
    run_like_numpy(fn, backend, lambda call: make(rng))


def _spectral_steps(vx, kx, ky, dt, nu, steps):   # pmocz/navier-stokes-spectral-python's way
    k2 = kx ** 2 + ky ** 2
    k2[0, 0] = 1.0
    for _ in range(steps):
        vx_hat = np.fft.fftn(vx)
        dvx = np.real(np.fft.ifftn(1j * kx * vx_hat))
        vx = np.real(np.fft.ifftn(vx_hat / (1.0 + dt * nu * k2))) - dt * vx * dvx
    return vx, np.fft.fftshift(np.abs(np.fft.rfft2(vx))), np.vdot(vx, vx)


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_a_spectral_solver_stays_one_graph(rng, backend):
    k = np.fft.fftfreq(16) * 16
    kx, ky = np.meshgrid(k, k)
    run_like_numpy(_spectral_steps, backend, lambda call: (rng.random((16, 16)), kx, ky, 0.01, 0.1, 3))


def _pad_checked(X, pad):   # numpy-ml's calc_pad_dims_2D: a check of the padding by builtin any()
    pr1, pr2, pc1, pc2 = pad
    if any(np.array([pr1, pr2, pc1, pc2]) < 0):
        raise ValueError("Padding cannot be less than 0")
    return np.pad(X, ((pr1, pr2), (pc1, pc2))), all(X[0] > 0.5), any(X[:, 0] < 0.5)


def _viterbi(A, B, pi, O, eps=1e-12):   # numpy-ml's MultinomialHMM.decode
    N, T = A.shape[0], O.shape[1]
    viterbi = np.zeros((N, T))
    back_pointer = np.zeros((N, T)).astype(int)
    ot = O[0, 0]
    for s in range(N):
        back_pointer[s, 0] = 0
        viterbi[s, 0] = np.log(pi[s] + eps) + np.log(B[s, ot] + eps)
    for t in range(1, T):
        ot = O[0, t]
        for s in range(N):
            seq_probs = [viterbi[s_, t - 1] + np.log(A[s_, s] + eps) + np.log(B[s, ot] + eps) for s_ in range(N)]
            viterbi[s, t] = np.max(seq_probs)
            back_pointer[s, t] = np.argmax(seq_probs)
    return viterbi, back_pointer


def _hmm(rng):
    A, B = rng.random((4, 4)), rng.random((4, 6))
    return A / A.sum(1, keepdims=True), B / B.sum(1, keepdims=True), np.full(4, 0.25), rng.integers(0, 6, (1, 30))


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("fn, make", [(_pad_checked, lambda rng: (rng.random((3, 4)), (1, 0, 2, 1))), (_viterbi, _hmm)])
def test_builtin_any_of_an_array_and_lists_of_values_in_loops_stay_in_the_graph(rng, backend, fn, make):
    run_like_numpy(fn, backend, lambda call: make(rng))


def test_builtin_any_of_a_negative_padding_raises_as_numpy(rng):
    run_like_numpy(_pad_checked, "llvm", lambda call: (rng.random((3, 4)), (1, -1, 2, 1)), graphs=None)


def _stochastic(rng):
    X = rng.random((4, 3))
    return (X / X.sum(1, keepdims=True),)


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("fn, make, raises", [
    (checks_by_others.is_stochastic, _stochastic, False),
    (checks_by_others.is_stochastic, lambda rng: (rng.random((4, 3)),), True),
    (checks_by_others.is_binary, lambda rng: ((rng.random((3, 3)) < 0.5) * 1.0, (rng.random((3, 3)) < 0.5) * 1.0), False),
    (checks_by_others.is_binary, lambda rng: (rng.random((3, 3)), rng.random((3, 3))), True),
])
def test_allclose_and_array_equal_are_python_bools_in_the_graph(rng, backend, fn, make, raises):
    run_like_numpy(fn, backend, lambda call: make(rng), graphs=None)
    if not raises:
        assert numpile.explain(fn, backend=backend)(*make(rng)).graph_break_count == 0
