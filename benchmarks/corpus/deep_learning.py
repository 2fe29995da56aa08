"""Inference in NumPy, float32: a convolution and a max-pool written as loops over output positions,
a small CNN built from them, an MLP, an Elman RNN over a sequence and multi-head self-attention."""

import numpy as np

from .kernel import Kernel, njit


def conv2d(x, w, b):
    """Valid cross-correlation of x (batch, channels, h, w) with w (filters, channels, r, s): at
    each output position, the flattened patches of the batch times the flattened filters."""
    n, _, h, wd = x.shape
    k, _, r, s = w.shape
    out = np.empty((n, k, h - r + 1, wd - s + 1), dtype=x.dtype)
    filters = w.reshape(k, -1).T
    for i in range(h - r + 1):
        for j in range(wd - s + 1):
            out[:, :, i, j] = x[:, :, i:i + r, j:j + s].reshape(n, -1) @ filters
    return out + b[:, None, None]


@njit
def conv2d_loops(x, w, b):
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    out = np.empty((n, k, h - r + 1, wd - s + 1), dtype=x.dtype)
    for m in range(n):
        for f in range(k):
            for i in range(h - r + 1):
                for j in range(wd - s + 1):
                    acc = 0.0
                    for ch in range(c):
                        for di in range(r):
                            for dj in range(s):
                                acc += x[m, ch, i + di, j + dj] * w[f, ch, di, dj]
                    out[m, f, i, j] = acc + b[f]
    return out


def make_conv2d(rng, n, c, h, k):
    return (rng.standard_normal((n, c, h, h), dtype=np.float32), rng.standard_normal((k, c, 3, 3), dtype=np.float32),
            rng.standard_normal(k, dtype=np.float32))


def max_pool2d(x, size=2):
    """The largest value of each size x size window (stride size) of every channel."""
    n, c, h, w = x.shape
    out = np.empty((n, c, h // size, w // size), dtype=x.dtype)
    for i in range(h // size):
        for j in range(w // size):
            out[:, :, i, j] = x[:, :, i * size:(i + 1) * size, j * size:(j + 1) * size].max(axis=(2, 3))
    return out


@njit
def max_pool2d_loops(x, size=2):
    n, c, h, w = x.shape
    out = np.empty((n, c, h // size, w // size), dtype=x.dtype)
    for m in range(n):
        for ch in range(c):
            for i in range(h // size):
                for j in range(w // size):
                    best = x[m, ch, i * size, j * size]
                    for di in range(size):
                        for dj in range(size):
                            best = max(best, x[m, ch, i * size + di, j * size + dj])
                    out[m, ch, i, j] = best
    return out


def make_pool(rng, n, c, h):
    return (rng.standard_normal((n, c, h, h), dtype=np.float32),)


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def cnn(x, w1, b1, w2, b2, wd, bd):
    """Two convolution, ReLU and max-pool layers, then a dense layer and softmax: class probabilities."""
    h = max_pool2d(np.maximum(conv2d(x, w1, b1), 0))
    h = max_pool2d(np.maximum(conv2d(h, w2, b2), 0))
    return softmax(h.reshape(h.shape[0], -1) @ wd + bd)


@njit
def softmax_loops(z):
    out = np.empty_like(z)
    for i in range(z.shape[0]):
        m = z[i].max()
        total = 0.0
        for j in range(z.shape[1]):
            out[i, j] = np.exp(z[i, j] - m)
            total += out[i, j]
        for j in range(z.shape[1]):
            out[i, j] /= total
    return out


@njit
def dense_loops(x, w, b):
    out = np.empty((x.shape[0], w.shape[1]), dtype=x.dtype)
    for i in range(x.shape[0]):
        for j in range(w.shape[1]):
            acc = 0.0
            for k in range(x.shape[1]):
                acc += x[i, k] * w[k, j]
            out[i, j] = acc + b[j]
    return out


@njit
def cnn_loops(x, w1, b1, w2, b2, wd, bd):
    h = max_pool2d_loops(np.maximum(conv2d_loops(x, w1, b1), 0))
    h = max_pool2d_loops(np.maximum(conv2d_loops(h, w2, b2), 0))
    return softmax_loops(dense_loops(h.reshape(h.shape[0], -1), wd, bd))


def make_cnn(rng, n, side):
    """A batch of side x side one-channel images; 8 then 16 filters of 3x3; 10 classes."""
    f32 = np.float32
    flat = 16 * (((side - 2) // 2 - 2) // 2) ** 2
    return (rng.random((n, 1, side, side), dtype=f32),
            rng.standard_normal((8, 1, 3, 3), dtype=f32) / 3, rng.standard_normal(8, dtype=f32) * 0.1,
            rng.standard_normal((16, 8, 3, 3), dtype=f32) / 8, rng.standard_normal(16, dtype=f32) * 0.1,
            rng.standard_normal((flat, 10), dtype=f32) / np.sqrt(flat, dtype=f32), rng.standard_normal(10, dtype=f32))


def mlp(x, w1, b1, w2, b2, w3, b3):
    """Two ReLU layers and a softmax output."""
    h = np.maximum(x @ w1 + b1, 0)
    h = np.maximum(h @ w2 + b2, 0)
    return softmax(h @ w3 + b3)


@njit
def mlp_loops(x, w1, b1, w2, b2, w3, b3):
    h = np.maximum(dense_loops(x, w1, b1), 0)
    h = np.maximum(dense_loops(h, w2, b2), 0)
    return softmax_loops(dense_loops(h, w3, b3))


def layer(rng, n_in, n_out):
    return (rng.standard_normal((n_in, n_out), dtype=np.float32) / np.sqrt(n_in, dtype=np.float32),
            rng.standard_normal(n_out, dtype=np.float32) * 0.1)


def make_mlp(rng, batch, n_in, hidden):
    x = rng.random((batch, n_in), dtype=np.float32)
    return x, *layer(rng, n_in, hidden), *layer(rng, hidden, hidden), *layer(rng, hidden, 10)


def rnn(xs, h, Wx, Wh, b):
    """An Elman RNN over a sequence xs (steps, batch, inputs) from the state h: the last state."""
    for x in xs:
        h = np.tanh(x @ Wx + h @ Wh + b)
    return h


@njit
def rnn_loops(xs, h, Wx, Wh, b):
    h = h.copy()
    new = np.empty_like(h)
    for t in range(xs.shape[0]):
        for i in range(h.shape[0]):
            for j in range(h.shape[1]):
                acc = 0.0
                for k in range(xs.shape[2]):
                    acc += xs[t, i, k] * Wx[k, j]
                for k in range(h.shape[1]):
                    acc += h[i, k] * Wh[k, j]
                new[i, j] = np.tanh(acc + b[j])
        h[:] = new
    return h


def make_rnn(rng, steps, batch, n_in, hidden):
    xs = rng.standard_normal((steps, batch, n_in), dtype=np.float32)
    h = rng.standard_normal((batch, hidden), dtype=np.float32)
    Wx, _ = layer(rng, n_in, hidden)
    return xs, h, Wx, *layer(rng, hidden, hidden)


def attention(x, Wq, Wk, Wv, Wo, heads):
    """Multi-head self-attention over the tokens of x (tokens, features), one head at a time."""
    d = x.shape[1] // heads
    out = np.empty_like(x)
    for hd in range(heads):
        cols = slice(hd * d, (hd + 1) * d)
        q, k, v = x @ Wq[:, cols], x @ Wk[:, cols], x @ Wv[:, cols]
        out[:, cols] = softmax(q @ k.T / np.sqrt(d)) @ v
    return out @ Wo


@njit
def attention_loops(x, Wq, Wk, Wv, Wo, heads):
    n, features = x.shape
    d = features // heads
    zero = np.zeros(features, dtype=x.dtype)
    q, k, v = dense_loops(x, Wq, zero), dense_loops(x, Wk, zero), dense_loops(x, Wv, zero)
    out = np.zeros_like(x)
    scores = np.empty((n, n), dtype=x.dtype)
    for hd in range(heads):
        lo = hd * d
        for i in range(n):
            for j in range(n):
                acc = 0.0
                for c in range(lo, lo + d):
                    acc += q[i, c] * k[j, c]
                scores[i, j] = acc / np.sqrt(d)
        weights = softmax_loops(scores)
        for i in range(n):
            for j in range(n):
                for c in range(lo, lo + d):
                    out[i, c] += weights[i, j] * v[j, c]
    return dense_loops(out, Wo, zero)


def make_attention(rng, tokens, features, heads):
    f32 = np.float32
    weights = [rng.standard_normal((features, features), dtype=f32) / np.sqrt(features, dtype=f32) for _ in range(4)]
    return rng.standard_normal((tokens, features), dtype=f32), *weights, heads


KERNELS = [
    Kernel("attention", attention, attention_loops, make_attention,
           {"tiny": (5, 8, 2), "small": (64, 64, 4), "large": (512, 256, 8)}),
    Kernel("cnn", cnn, cnn_loops, make_cnn, {"tiny": (2, 10), "small": (4, 28), "large": (64, 28)}),
    Kernel("conv2d", conv2d, conv2d_loops, make_conv2d,
           {"tiny": (2, 2, 6, 3), "small": (8, 3, 16, 16), "large": (16, 3, 64, 32)}),
    Kernel("max-pool", max_pool2d, max_pool2d_loops, make_pool,
           {"tiny": (2, 2, 6), "small": (8, 16, 24), "large": (32, 32, 64)}),
    Kernel("mlp", mlp, mlp_loops, make_mlp, {"tiny": (3, 6, 5), "small": (64, 784, 256), "large": (1024, 784, 512)}),
    Kernel("rnn", rnn, rnn_loops, make_rnn, {"tiny": (3, 2, 4, 5), "small": (50, 8, 32, 64), "large": (300, 16, 64, 128)}),
]
