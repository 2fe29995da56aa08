"""Random draws in captured loops (Monte Carlo, Metropolis updates): one value per call of
np.random's functions or a Generator's methods, captured whole on eager and llvm
(tracer/variables/draws.py). The stream is numpile's own, not NumPy's: these tests check what it
promises instead, the same values for the same NumPy seed, new values at each call, NumPy's
distributions (ranges, moments, a Kolmogorov-Smirnov distance) and statistically right results."""

import math

import numpy as np
import pytest

import numpile

BACKENDS = ["eager", "llvm"]
N = 20000
STATE = np.random.RandomState(0)   # a RandomState of its own, read as a global
KS_1_PERCENT = 1.63   # the Kolmogorov-Smirnov distance exceeded with probability 1%, times sqrt(n)


def fill(draw):
    """A loop that fills x with one draw per element; `draw(rng)` names the draw."""
    def fn(x, rng):
        for i in range(x.shape[0]):
            x[i] = draw(rng)
        return x
    return fn


def _uniform_cdf(a, b):
    return lambda v: np.clip((v - a) / (b - a), 0.0, 1.0)


def _normal_cdf(mu, sigma):
    return np.vectorize(lambda v: 0.5 * (1.0 + math.erf((v - mu) / (sigma * math.sqrt(2.0)))))


# (name, the draw, dtype of the array, "float" and its CDF, or "int" and its range)
DRAWS = [
    ("random", lambda rng: np.random.random(), float, _uniform_cdf(0.0, 1.0)),
    ("rand", lambda rng: np.random.rand(), float, _uniform_cdf(0.0, 1.0)),
    ("uniform", lambda rng: np.random.uniform(-2.0, 3.0), float, _uniform_cdf(-2.0, 3.0)),
    ("normal", lambda rng: np.random.normal(1.5, 0.5), float, _normal_cdf(1.5, 0.5)),
    ("standard_normal", lambda rng: np.random.standard_normal(), float, _normal_cdf(0.0, 1.0)),
    ("randn", lambda rng: np.random.randn(), float, _normal_cdf(0.0, 1.0)),
    ("RandomState.random_sample", lambda rng: STATE.random_sample(), float, _uniform_cdf(0.0, 1.0)),
    ("randint", lambda rng: np.random.randint(3, 9), np.int64, (3, 9)),
    ("randint_high", lambda rng: np.random.randint(5), np.int64, (0, 5)),
    ("rng.random", lambda rng: rng.random(), float, _uniform_cdf(0.0, 1.0)),
    ("rng.uniform", lambda rng: rng.uniform(-2.0, 3.0), float, _uniform_cdf(-2.0, 3.0)),
    ("rng.normal", lambda rng: rng.normal(-1.0, 2.0), float, _normal_cdf(-1.0, 2.0)),
    ("rng.standard_normal", lambda rng: rng.standard_normal(), float, _normal_cdf(0.0, 1.0)),
    ("rng.integers", lambda rng: rng.integers(-4, 3), np.int64, (-4, 3)),
]


def captured(fn, backend):
    if backend not in numpile.list_backends(available_only=True):
        pytest.skip(f"backend {backend!r} is not installed here")
    compiled = numpile.compile(fn, backend=backend)
    explained = numpile.explain(numpile.compile(fn, backend=backend))
    return compiled, explained


def run(compiled, dtype, seed, n):
    """One call on a fresh array, NumPy's global generator and STATE seeded with `seed`, a Generator of it passed in."""
    np.random.seed(seed)
    STATE.seed(seed)
    return compiled(np.zeros(n, dtype), np.random.default_rng(seed))


def ks_distance(values, cdf) -> float:
    v = np.sort(values)
    f = cdf(v)
    n = len(v)
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name, draw, dtype, law", DRAWS, ids=[d[0] for d in DRAWS])
def test_captured_whole_reproducible_and_distributed_as_numpy(name, draw, dtype, law, backend):
    fn = fill(draw)
    compiled, explained = captured(fn, backend)
    report = explained(np.zeros(8, dtype), np.random.default_rng(0))
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    n = N if backend == "llvm" else N // 5   # eager runs the loop through its interpreter
    first = run(compiled, dtype, 1, n)
    assert np.array_equal(first, run(compiled, dtype, 1, n))        # seeded alike: the same draws
    assert not np.array_equal(first, run(compiled, dtype, 2, n))    # another seed: others
    again = compiled(np.zeros(n, dtype), np.random.default_rng(1))
    assert not np.array_equal(first, again) or name.startswith("rng.")   # NumPy's state advanced
    if isinstance(law, tuple):
        low, high = law
        assert first.min() == low and first.max() == high - 1
        counts = np.bincount(first - low)
        assert np.all(np.abs(counts - n / (high - low)) < 5 * math.sqrt(n / (high - low)))
    else:
        assert ks_distance(first, law) < KS_1_PERCENT / math.sqrt(n)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_calls_draw_anew_and_a_seed_repeats_them(backend):
    compiled, _ = captured(fill(lambda rng: rng.random()), backend)
    rng = np.random.default_rng(5)
    a, b = compiled(np.zeros(100), rng), compiled(np.zeros(100), rng)
    assert not np.array_equal(a, b)
    rng = np.random.default_rng(5)
    assert np.array_equal(compiled(np.zeros(100), rng), a) and np.array_equal(compiled(np.zeros(100), rng), b)


def test_the_stream_is_the_same_on_every_backend():
    def draws(x, rng):
        for i in range(x.shape[0]):
            x[i] = rng.random() + rng.integers(0, 10) + np.random.normal()
        return x
    results = []
    for backend in BACKENDS:
        np.random.seed(3)
        results.append(captured(draws, backend)[0](np.zeros(50), np.random.default_rng(3)))
    np.testing.assert_allclose(*results, rtol=1e-13)


def moments(x, y):
    """Two draws per element, nested loops, a draw outside any loop: all independent."""
    shift = np.random.random()
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            x[i, j] = np.random.random()
            y[i, j] = np.random.random() + shift
    return shift


@pytest.mark.parametrize("backend", BACKENDS)
def test_draws_in_nested_loops_are_independent(backend):
    compiled, explained = captured(moments, backend)
    report = explained(np.zeros((4, 5)), np.zeros((4, 5)))
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    x, y = np.zeros((100, 200)), np.zeros((100, 200))
    shift = compiled(x, y)
    assert type(shift) is float and 0.0 <= shift < 1.0
    y -= shift
    n = x.size
    assert abs(np.corrcoef(x.ravel(), y.ravel())[0, 1]) < 4 / math.sqrt(n)
    assert abs(np.corrcoef(x[:, 1:].ravel(), x[:, :-1].ravel())[0, 1]) < 4 / math.sqrt(n)   # neighbours
    assert abs(np.corrcoef(x[1:].ravel(), x[:-1].ravel())[0, 1]) < 4 / math.sqrt(n)
    assert ks_distance(np.concatenate([x.ravel(), y.ravel()]), _uniform_cdf(0.0, 1.0)) < KS_1_PERCENT / math.sqrt(2 * n)


def python_types(rng):
    return np.random.random(), np.random.randint(5), np.random.normal(), rng.integers(5), rng.standard_normal()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_draw_is_the_python_or_numpy_scalar_numpy_gives(backend):
    compiled, _ = captured(python_types, backend)
    got = compiled(np.random.default_rng(0))
    assert [type(v) for v in got] == [type(v) for v in python_types(np.random.default_rng(0))]


def monte_carlo_pi(n):
    hits = 0
    for i in range(n):
        x = np.random.random()
        y = np.random.random()
        if x * x + y * y < 1.0:
            hits += 1
    return 4.0 * hits / n


@pytest.mark.parametrize("backend", BACKENDS)
def test_monte_carlo_pi(backend):
    compiled, explained = captured(monte_carlo_pi, backend)
    report = explained(10)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    n = 40000 if backend == "eager" else 1000000
    estimate = compiled(n)
    assert abs(estimate - math.pi) < 4 * 4 * math.sqrt(math.pi / 4 * (1 - math.pi / 4) / n)


def metropolis_sweeps(s, beta, sweeps):
    """Single-spin-flip Metropolis on a periodic 2-D Ising lattice; the mean energy per site."""
    n = s.shape[0]
    energy = 0.0
    for t in range(sweeps):
        for k in range(n * n):
            i = np.random.randint(0, n)
            j = np.random.randint(0, n)
            field = s[(i + 1) % n, j] + s[(i - 1) % n, j] + s[i, (j + 1) % n] + s[i, (j - 1) % n]
            change = 2.0 * s[i, j] * field
            if change <= 0.0 or np.random.random() < np.exp(-beta * change):
                s[i, j] = -s[i, j]
        energy += -np.sum(s * (np.roll(s, 1, 0) + np.roll(s, 1, 1))) / (n * n)
    return energy / sweeps


@pytest.mark.parametrize("backend", BACKENDS)
def test_metropolis_ising_energy(backend):
    """Deep in the ordered phase (beta = 0.8) the energy per site is -1.98 (Onsager's solution,
    e = -coth(2 beta) (1 + (2/pi)(2 tanh(2 beta)^2 - 1) K(k))), far above it (beta = 0.1) about
    -2 tanh(beta) = -0.2: a stream that repeated itself or a wrong acceptance would miss both."""
    compiled, explained = captured(metropolis_sweeps, backend)
    report = explained(np.ones((4, 4)), 0.5, 1)
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    np.random.seed(0)
    cold = compiled(np.ones((16, 16)), 0.8, 200 if backend != "eager" else 20)
    assert abs(cold - onsager_energy(0.8)) < 0.02
    hot = compiled(np.ones((16, 16)), 0.1, 400 if backend != "eager" else 40)
    compiled(np.ones((16, 16)), 0.1, 20)
    assert abs(hot - onsager_energy(0.1)) < (0.03 if backend != "eager" else 0.08)


def onsager_energy(beta: float) -> float:
    """The exact energy per site of the infinite 2-D Ising model (J = 1)."""
    k = 2 * math.sinh(2 * beta) / math.cosh(2 * beta) ** 2
    steps = 100000
    elliptic = sum(1 / math.sqrt(1 - (k * math.sin((t + 0.5) * math.pi / 2 / steps)) ** 2)
                   for t in range(steps)) * (math.pi / 2 / steps)
    return -1 / math.tanh(2 * beta) * (1 + 2 / math.pi * (2 * math.tanh(2 * beta) ** 2 - 1) * elliptic)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("draw, reason", [
    (lambda rng: np.random.random(size=2).sum(), "random draws of an array"),
    (lambda rng: rng.integers(0, 5, dtype=np.int32), "random draws of an array, or of another dtype"),
    (lambda rng: rng.normal(0.0, -1.0), "scale must be a number known when compiling, and not negative"),
    (lambda rng: np.random.randint(4, 4), "NumPy raises ValueError for an empty one"),
], ids=["size", "dtype", "negative scale", "empty range"])
def test_what_is_not_captured_breaks_with_a_reason_and_runs_as_numpy(draw, reason, backend):
    fn = fill(draw)
    compiled, _ = captured(fn, backend)
    with pytest.raises(numpile.Unsupported, match=reason):
        numpile.compile(fn, backend=backend, fullgraph=True)(np.zeros(3), np.random.default_rng(0))
    np.random.seed(0)
    try:
        want = fn(np.zeros(3), np.random.default_rng(0))
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)):
            compiled(np.zeros(3), np.random.default_rng(0))
    else:
        np.random.seed(0)
        assert np.array_equal(compiled(np.zeros(3), np.random.default_rng(0)), want)   # NumPy's own draws


def widening(x):
    for i in range(x.shape[0]):
        x[i] = np.random.uniform(0, i + 1)   # bounds from the loop's index: graph values
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_bounds_from_a_loops_index(backend):
    compiled, explained = captured(widening, backend)
    report = explained(np.zeros(300))
    assert (report.graph_count, report.graph_break_count) == (1, 0), report.break_reasons
    x = compiled(np.zeros(2000)) / np.arange(1, 2001)
    assert x.min() >= 0.0 and x.max() < 1.0
    assert ks_distance(x, _uniform_cdf(0.0, 1.0)) < KS_1_PERCENT / math.sqrt(len(x))
