"""Corpus: numerical kernels. Normalisation, softmax, logsumexp, layer and batch norm, k-means, gradient
descent with in-place weight updates, power iteration with an early return on convergence, linear
algebra through np.linalg (solve and eigh in the graph), a running sum."""

import numpy as np
import pytest

from conftest import rand
from harness import Case, check, params


def rows(call):
    return 17 if call != 1 else 23


# -- normalisation ----------------------------------------------------------------------------
def zscore_columns(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def logsumexp(x):
    m = x.max()
    return m + np.log(np.exp(x - m).sum())


def log_softmax_cross_entropy(logits, labels):
    """Integer labels turned one-hot by broadcasting against an arange."""
    n, k = logits.shape
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    onehot = labels[:, None] == np.arange(k)
    return -(logp * onehot).sum() / n, logp.argmax(axis=1)


def layer_norm(x, gamma, beta, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


def batch_norm_train(x, gamma, beta, running_mean, running_var, momentum=0.1, eps=1e-5):
    mu = x.mean(axis=0)
    var = x.var(axis=0)
    running_mean *= 1 - momentum
    running_mean += momentum * mu
    running_var *= 1 - momentum
    running_var += momentum * var * x.shape[0] / (x.shape[0] - 1)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


def minmax_scale_float32(x):
    lo, hi = x.min(axis=0), x.max(axis=0)
    return ((x - lo) / (hi - lo)).astype(np.float32), np.float32(2) * x.dtype.itemsize


def cosine_similarity(a, b):
    an = a / np.sqrt((a * a).sum(axis=1, keepdims=True))
    bn = b / np.sqrt((b * b).sum(axis=1, keepdims=True))
    return an @ bn.T


def rbf_kernel(x, y, sigma):
    sq = (x ** 2).sum(axis=1)[:, None] + (y ** 2).sum(axis=1)[None, :] - 2 * x @ y.T
    return np.exp(-np.maximum(sq, 0) / (2 * sigma ** 2))


# -- learning ---------------------------------------------------------------------------------
def kmeans_step(x, centroids):
    """Assign by squared distance, move each centroid to the mean of its points (written in place)."""
    k = centroids.shape[0]
    d = ((x[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=-1)
    labels = d.argmin(axis=1)
    onehot = (labels[:, None] == np.arange(k)).astype(x.dtype)
    counts = onehot.sum(axis=0)
    sums = onehot.T @ x
    moved = sums / np.maximum(counts, 1)[:, None]
    centroids[...] = np.where(counts[:, None] > 0, moved, centroids)
    return labels, d.min(axis=1).sum()


def linreg_gradient_descent(w, x, y, lr, steps):
    losses = []
    for _ in range(steps):
        r = x @ w - y
        losses.append((r ** 2).mean())
        w -= lr * 2 * x.T @ r / x.shape[0]
    return losses


def logistic_regression_step(w, b, x, y, lr):
    z = np.clip(x @ w + b, -30, 30)
    p = 1 / (1 + np.exp(-z))
    g = p - y
    w -= lr * (x.T @ g) / len(y)
    return b - lr * g.mean(), -(y * np.log(p) + (1 - y) * np.log1p(-p)).mean()


def adam_update(w, g, m, v, t, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    m *= b1
    m += (1 - b1) * g
    v *= b2
    v += (1 - b2) * g * g
    mhat = m / (1 - b1 ** t)
    vhat = v / (1 - b2 ** t)
    w -= lr * mhat / (np.sqrt(vhat) + eps)
    return w


def welford_batches(batches):
    n, mean, m2 = 0, 0.0, 0.0
    for b in batches:
        k = b.shape[0]
        bmean = b.mean(axis=0)
        delta = bmean - mean
        tot = n + k
        mean = mean + delta * k / tot
        m2 = m2 + ((b - bmean) ** 2).sum(axis=0) + delta ** 2 * n * k / tot
        n = tot
    return mean, m2 / (n - 1)


def horner(coeffs, x):
    y = np.zeros_like(x)
    for c in coeffs:
        y = y * x + c
    return y


# -- iterations that look at data ----------------------------------------------------------------
def power_iteration(a, v, max_iter, tol):
    """Early return on convergence: a data-dependent branch in every iteration."""
    v = v / np.sqrt((v * v).sum())
    for i in range(max_iter):
        w = a @ v
        w = w / np.sqrt((w * w).sum())
        if np.abs(w - v).max() < tol:
            return w, i
        v = w
    return v, max_iter


def spd(rng, n):
    m = rand(rng, (n, n))
    return m @ m.T + n * np.eye(n) + np.diag(np.arange(n) * 3.0)


# -- np.linalg and scans (solve, eigh's two results and cumsum in the graph) ---------
def ridge_regression(x, y, lam):
    d = x.shape[1]
    a = x.T @ x + lam * np.eye(d)
    w = np.linalg.solve(a, x.T @ y)
    resid = y - x @ w
    return w, resid.var()


def pca_explained(x, k):
    xc = x - x.mean(axis=0)
    cov = xc.T @ xc / (x.shape[0] - 1)
    evals, evecs = np.linalg.eigh(cov)
    proj = xc @ evecs[:, ::-1][:, :k]
    return (proj ** 2).sum(axis=0), evals[::-1][:k] / evals.sum()


def drawdown(returns):
    """ndarray.cumsum: a scan in the graph."""
    r = np.log1p(returns * 0.01)
    wealth = r.cumsum()
    return np.exp(wealth) - 1


CASES = [
    Case(zscore_columns, lambda rng, c: (rand(rng, (rows(c), 4)),), 1, 0),
    Case(softmax_rows, lambda rng, c: (rand(rng, (rows(c), 5)),), 1, 0),
    Case(logsumexp, lambda rng, c: (rand(rng, (rows(c),)) * 10,), 1, 0),
    Case(log_softmax_cross_entropy, lambda rng, c: (rand(rng, (rows(c), 6)), rng.integers(0, 6, rows(c))), 1, 0),
    Case(layer_norm, lambda rng, c: (rand(rng, (rows(c), 8)), rand(rng, (8,)), rand(rng, (8,))), 1, 0),
    Case(batch_norm_train, lambda rng, c: (rand(rng, (rows(c), 3)), rand(rng, (3,)), rand(rng, (3,)),
                                           rand(rng, (3,)), np.abs(rand(rng, (3,))) + 0.5), 1, 0),
    Case(minmax_scale_float32, lambda rng, c: (rand(rng, (rows(c), 3), np.float32),), 1, 0),
    Case(cosine_similarity, lambda rng, c: (rand(rng, (rows(c), 4)), rand(rng, (5 + c, 4))), 1, 0),
    Case(rbf_kernel, lambda rng, c: (rand(rng, (rows(c), 3)), rand(rng, (6, 3)), 1.5), 1, 0),
    Case(kmeans_step, lambda rng, c: (rand(rng, (rows(c), 2)), rand(rng, (3, 2))), 1, 0),
    Case(linreg_gradient_descent, lambda rng, c: (rand(rng, (3,)), rand(rng, (rows(c), 3)), rand(rng, (rows(c),)),
                                                  0.05, 6), 1, 0),
    Case(logistic_regression_step, lambda rng, c: (rand(rng, (4,)), 0.3, rand(rng, (rows(c), 4)),
                                                   (rng.random(rows(c)) < 0.5).astype(np.float64) + (rng.random(rows(c)) < 0.1),
                                                   0.1), 1, 0),
    Case(adam_update, lambda rng, c: (rand(rng, (rows(c),)), rand(rng, (rows(c),)), rand(rng, (rows(c),)) * 0.1,
                                      np.abs(rand(rng, (rows(c),))) * 0.01, 3 + c), 1, 0),
    Case(welford_batches, lambda rng, c: ([rand(rng, (4 + i, 3)) for i in range(3 + c)],), 1, 0),
    Case(horner, lambda rng, c: ((1.0, -2.0, 0.5, 3.0)[:3 + c], rand(rng, (rows(c),))), 1, 0),
    # root graph ends with the first test (a break); after a false test the loop goes back to a
    # range iterator that the resume function iterates natively (a break); the resumed body traces the
    # next iteration up to its test (a graph, a break); later iterations reuse these entries;
    # the early return and the loop exit have no ops
    Case(power_iteration, lambda rng, c: (spd(rng, 5 + c), rand(rng, (5 + c,)), 200, 1e-9), 2, 3),
    Case(ridge_regression, lambda rng, c: (rand(rng, (rows(c), 3)), rand(rng, (rows(c),)), 0.5), 1, 0),
    Case(pca_explained, lambda rng, c: (rand(rng, (rows(c), 4)), 2), 1, 0),
    Case(drawdown, lambda rng, c: (rand(rng, (rows(c),)),), 1, 0),
]


@pytest.mark.parametrize("case", params(CASES))
def test_numerics(case, rng):
    check(case, rng)
