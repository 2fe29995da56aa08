"""Corpus: code that leaves NumPy's op table. SciPy calls in the middle of a function, print and logging,
random draws, boolean masks, np.nonzero, np.unique, sorting, I/O, try/except/finally and with blocks.
Each unsupported call is one graph break: the graph before it is compiled, the call runs as Python,
capture resumes after it (a graph when there are ops left)."""

import io
import logging

import numpy as np
import pytest
import scipy.fft
import scipy.linalg
import scipy.ndimage
import scipy.special

from conftest import rand
from harness import Case, check, params

logger = logging.getLogger("numpile.corpus")


def n(call):
    return 12 if call != 1 else 15


# -- SciPy in the middle ------------------------------------------------------------------------
def logistic_grad_scipy(w, x, y):
    z = x @ w
    p = scipy.special.expit(z)
    return x.T @ (p - y) / len(y)


def power_spectrum(x):
    x = x - x.mean()
    spec = scipy.fft.rfft(x)
    power = np.abs(spec) ** 2
    return power / power.sum()


def dct_denoise(x, keep):
    y = x * 2
    c = scipy.fft.dct(y, norm="ortho")
    c[keep:] = 0.0
    return scipy.fft.idct(c, norm="ortho") / 2


def cholesky_solve(x, b):
    """Two SciPy calls back to back: the second break has no graph before it."""
    a = x.T @ x + np.eye(x.shape[1])
    factor = scipy.linalg.cho_factor(a)
    sol = scipy.linalg.cho_solve(factor, b)
    return sol, a @ sol - b


def tempered_log_softmax(x, temperature):
    x = x / temperature
    lse = scipy.special.logsumexp(x, axis=1, keepdims=True)
    return x - lse


def heat_then_blur(u, dt):
    lap = np.zeros_like(u)
    lap[1:-1, 1:-1] = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * u[1:-1, 1:-1]
    u += dt * lap
    blurred = scipy.ndimage.gaussian_filter(u, 1.0)
    return blurred - blurred.mean()


def update_then_scipy_sees_it(x):
    """The in-place update before the break must be written back before SciPy reads x."""
    x += 1
    s = scipy.special.expit(x)
    x *= s
    return s


def view_across_a_break(x):
    v = x[1:]
    x += 1
    print("mean after the update:", x.mean() > -1e9)
    v *= 2
    return v + 0


# -- print, logging, I/O -------------------------------------------------------------------------
def train_step_with_print(w, x, y, lr):
    r = x @ w - y
    loss = (r ** 2).mean()
    print("loss", loss)
    w -= lr * x.T @ r
    return loss


def normalise_with_logging(x):
    mu = x.mean(axis=0)
    logger.debug("normalising %s rows", x.shape[0])
    return (x - mu) / x.std(axis=0)


def save_checkpoint(x):
    y = np.tanh(x)
    buf = io.BytesIO()
    np.save(buf, y)
    return y * 2, len(buf.getvalue())


# -- random draws ----------------------------------------------------------------------------------
def dropout(x, p, gen):
    mask = gen.random(x.shape) >= p
    return x * mask / (1 - p)


def noisy_legacy_seed(x, seed):
    y = x * 2
    np.random.seed(seed)
    noise = np.random.rand(*x.shape)
    return y + 0.1 * noise


# -- data-dependent shapes --------------------------------------------------------------------------
def relu_by_mask(x):
    x[x < 0] = 0.0
    return x.sum(axis=0)


def select_positive(x):
    idx = np.nonzero(x > 0.5)[0]
    return idx, x[idx].sum()


def class_frequencies(labels, weights):
    vals, counts = np.unique(labels, return_counts=True)
    return vals, counts / counts.sum(), weights * 2


def trimmed_mean(x, k):
    s = np.sort(x)
    return s[k:-k].mean()


# -- exceptions and context managers -------------------------------------------------------------------
def cholesky_or_none(x):
    a = x.T @ x + 1e-3 * np.eye(x.shape[1])
    try:
        chol = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return None
    return chol @ chol.T - a


def lookup_with_fallback(x, table):
    y = np.sin(x)
    try:
        y = y * table["scale"]
    except KeyError:
        y = y * 2
    finally:
        y = y + 1
    return y


def safe_ratio(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = x / y
    return np.where(np.isfinite(r), r, 0.0)


def validate_then_compute(x):
    if x.ndim != 2:
        raise ValueError("expected a matrix")
    return x @ x.T


def print_in_finally(x):
    y = x * 3
    try:
        y = y - y.mean()
    finally:
        print("done")
    return y / y.std()



CASES = [
    Case(logistic_grad_scipy, lambda rng, c: (rand(rng, (3,)), rand(rng, (n(c), 3)), (rng.random(n(c)) < 0.5) * 1.0), 2, 1),
    Case(power_spectrum, lambda rng, c: (rand(rng, (n(c),)),), 2, 1),
    Case(dct_denoise, lambda rng, c: (rand(rng, (n(c),)), 5), 3, 2),
    Case(cholesky_solve, lambda rng, c: (rand(rng, (n(c), 3)), rand(rng, (3,))), 2, 2),
    Case(tempered_log_softmax, lambda rng, c: (rand(rng, (n(c), 4)), 0.7), 2, 1),
    Case(heat_then_blur, lambda rng, c: (rand(rng, (n(c), 9)), 0.1), 2, 1),
    Case(update_then_scipy_sees_it, lambda rng, c: (rand(rng, (n(c),)),), 2, 1),
    Case(view_across_a_break, lambda rng, c: (rand(rng, (n(c),)),), 2, 1),
    Case(train_step_with_print, lambda rng, c: (rand(rng, (3,)), rand(rng, (n(c), 3)), rand(rng, (n(c),)), 0.01), 2, 1),
    Case(normalise_with_logging, lambda rng, c: (rand(rng, (n(c), 3)),), 2, 1),
    Case(save_checkpoint, lambda rng, c: (rand(rng, (n(c),)),), 2, 3),
    Case(dropout, lambda rng, c: (rand(rng, (n(c), 4)), 0.3, np.random.default_rng(int(rng.integers(1 << 30)))), 1, 1),
    Case(noisy_legacy_seed, lambda rng, c: (rand(rng, (n(c),)), int(rng.integers(1 << 30))), 2, 2),
    Case(relu_by_mask, lambda rng, c: (rand(rng, (n(c), 3)),), 1, 0),
    Case(select_positive, lambda rng, c: (rand(rng, (n(c),)),), 1, 0),
    Case(class_frequencies, lambda rng, c: (rng.integers(0, 4, n(c)), rand(rng, (3,))), 1, 0),
    Case(trimmed_mean, lambda rng, c: (rand(rng, (n(c),)), 2), 1, 0),   # np.sort is an op (ops/ordering.py)
    # the break is inside the try block: the call runs under a try whose exception resumes at the
    # handler; the code after the block is captured again (a graph)
    Case(cholesky_or_none, lambda rng, c: (rand(rng, (n(c), 3)),), 1, 0),
    Case(lookup_with_fallback, lambda rng, c: (rand(rng, (n(c),)), ({"scale": 3.0}, {"other": 1})[c % 2]), 1, 0),
    # np.errstate only changes how floating-point errors are reported: a known context manager, like
    # torch.no_grad for Dynamo, whose block is captured (run under the errstate)
    Case(safe_ratio, lambda rng, c: (rand(rng, (n(c),)), np.where(np.arange(n(c)) % 4 == 0, 0.0, rand(rng, (n(c),)))), 1, 0),
    Case(validate_then_compute, lambda rng, c: (rand(rng, (n(c), 3)),), 1, 0),
    Case(print_in_finally, lambda rng, c: (rand(rng, (n(c),)),), 2, 1),
]


@pytest.mark.parametrize("case", params(CASES))
def test_interop(case, rng, capsys):
    check(case, rng)
