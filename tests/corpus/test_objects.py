"""Corpus: objects holding weights. Layers and models compiled with `numpile.compile(model)`, optimisers
compiled through their bound `step` method, attribute updates (in place and by assignment), lists and
dicts of arrays mutated, sub-modules, properties, inheritance, and a function taking a model.
The model persists between the two calls: an update made by the first is seen by the second."""

import dataclasses

import numpy as np
import pytest
import scipy.special

from conftest import rand
from harness import Case, check, params


def b(call):
    return 6 if call != 1 else 9


# -- layers and models --------------------------------------------------------------------------
class Linear:
    def __init__(self, w, bias):
        self.w, self.b = w, bias

    def __call__(self, x):
        return np.maximum(x @ self.w + self.b, 0)


class MLP:
    """Sub-modules in a list; compiled through `forward`."""

    def __init__(self, rng, sizes):
        self.layers = [Linear(rand(rng, (m, k)) * 0.5, rand(rng, (k,))) for m, k in zip(sizes, sizes[1:])]

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = layer(x)
        last = self.layers[-1]
        return x @ last.w + last.b


class ParamDictModel:
    def __init__(self, rng):
        self.params = {"w1": rand(rng, (4, 8)), "b1": rand(rng, (8,)), "w2": rand(rng, (8, 2))}

    def __call__(self, x):
        h = np.tanh(x @ self.params["w1"] + self.params["b1"])
        return h @ self.params["w2"]


class BatchNorm:
    """Running statistics updated in place in training mode; a bool attribute picks the branch."""

    def __init__(self, rng, n, training):
        self.gamma, self.beta = rand(rng, (n,)), rand(rng, (n,))
        self.running_mean, self.running_var = np.zeros(n) + 0.1, np.ones(n)
        self.momentum, self.eps, self.training = 0.1, 1e-5, training

    def __call__(self, x):
        if self.training:
            mu, var = x.mean(axis=0), x.var(axis=0)
            self.running_mean *= 1 - self.momentum
            self.running_mean += self.momentum * mu
            self.running_var *= 1 - self.momentum
            self.running_var += self.momentum * var
        else:
            mu, var = self.running_mean, self.running_var
        return self.gamma * (x - mu) / np.sqrt(var + self.eps) + self.beta


class RNNCell:
    def __init__(self, rng, d, h):
        self.wx, self.wh, self.b = rand(rng, (d, h)) * 0.3, rand(rng, (h, h)) * 0.3, rand(rng, (h,))

    def __call__(self, xs, h):
        outs = []
        for t in range(xs.shape[0]):
            h = np.tanh(xs[t] @ self.wx + h @ self.wh + self.b)
            outs.append(h)
        return np.stack(outs), h


class GeluMLP:
    """scipy.special.erf (a ufunc SciPy owns) in the middle of forward: one break."""

    def __init__(self, rng):
        self.w1, self.w2 = rand(rng, (4, 6)), rand(rng, (6, 3))

    def __call__(self, x):
        h = x @ self.w1
        h = 0.5 * h * (1 + scipy.special.erf(h / np.sqrt(2)))
        return h @ self.w2


class ClippedResidual:
    """A data-dependent rescale of the activations."""

    def __init__(self, rng, d, clip):
        self.w, self.clip = rand(rng, (d, d)), clip

    def __call__(self, x):
        h = x + np.tanh(x @ self.w)
        peak = np.abs(h).max()
        if peak > self.clip:
            h = h * (self.clip / peak)
        return h


class Base:
    def __call__(self, x):
        return self.forward(self.preprocess(x))

    def preprocess(self, x):
        return (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)


class Scorer(Base):
    def __init__(self, rng):
        self.w = rand(rng, (3,))
        self.temperature = 0.7

    @property
    def scaled_w(self):
        return self.w / self.temperature

    def forward(self, x):
        s = x @ self.scaled_w
        e = np.exp(s - s.max())
        return e / e.sum()


@dataclasses.dataclass
class Polynomial:
    coeffs: np.ndarray
    calls: int = 0

    def __call__(self, x):
        self.calls += 1
        y = np.zeros_like(x)
        for k in range(self.coeffs.shape[0]):
            y = y * x + self.coeffs[k]
        return y


# -- stateful objects: optimisers, trackers ------------------------------------------------------
class SGDMomentum:
    def __init__(self, params_, lr=0.1, momentum=0.9):
        self.params, self.lr, self.momentum = params_, lr, momentum
        self.velocity = [np.zeros_like(p) + 0.01 for p in params_]

    def step(self, grads):
        for p, g, v in zip(self.params, grads, self.velocity):
            v *= self.momentum
            v += g
            p -= self.lr * v


class Adam:
    """An int step counter attribute incremented every call, moments updated in place."""

    def __init__(self, params_, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
        self.params, self.lr, self.b1, self.b2, self.eps = params_, lr, b1, b2, eps
        self.m = [np.full_like(p, 1e-3) for p in params_]    # warm-started moments (never all zeros)
        self.v = [np.full_like(p, 1e-4) for p in params_]
        self.t = 0

    def step(self, grads):
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m[...] = self.b1 * m + (1 - self.b1) * g
            v[...] = self.b2 * v + (1 - self.b2) * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)
        return self.t


class LinearRegressor:
    """Weights re-bound by assignment (not in place); a list attribute appended to every call."""

    def __init__(self, rng, d):
        self.w = rand(rng, (d,))
        self.losses = []

    def fit_step(self, x, y, lr):
        r = x @ self.w - y
        self.w = self.w - lr * x.T @ r / len(y)
        loss = (r ** 2).mean()
        self.losses.append(loss)
        return loss


class WeightEMA:
    """Shadow weights in a dict tracking a model's dict of weights."""

    def __init__(self, model, decay):
        self.model, self.decay = model, decay
        self.shadow = {k: v * 1.0 for k, v in model.params.items()}

    def update(self):
        for k, v in self.model.params.items():
            self.shadow[k] *= self.decay
            self.shadow[k] += (1 - self.decay) * v


class Kalman1D:
    """Predict and update on a batch of independent 1-D filters; the gain needs a division only."""

    def __init__(self, rng, n):
        self.x, self.p = rand(rng, (n,)), np.abs(rand(rng, (n,))) + 1
        self.q, self.r = 0.01, 0.5

    def __call__(self, z):
        self.p = self.p + self.q
        k = self.p / (self.p + self.r)
        self.x += k * (z - self.x)
        self.p *= 1 - k
        return self.x * 1.0, k


class RunningMean:
    """A NumPy scalar and an int accumulated in attributes across calls."""

    def __init__(self, rng):
        self.total = np.float64(rng.standard_normal())
        self.count = 1

    def __call__(self, x):
        self.total = self.total + x.sum()
        self.count += x.shape[0]
        return self.total / self.count


class EarlyStopping:
    """Attribute writes in branches taken on data: the writes run after the break, no ops there."""

    def __init__(self, patience):
        self.best, self.wait, self.patience = np.inf, 0, patience

    def __call__(self, pred, y):
        loss = ((pred - y) ** 2).mean()
        if loss < self.best:
            self.best = loss
            self.wait = 0
        else:
            self.wait += 1
        return self.wait >= self.patience


class SlotsLinear:
    """No __dict__: the trace cannot record the attribute store, which runs as Python (a break)."""

    __slots__ = ("w", "b", "last")

    def __init__(self, rng):
        self.w, self.b, self.last = rand(rng, (4, 3)), rand(rng, (3,)), None

    def __call__(self, x):
        h = x @ self.w + self.b
        self.last = h
        return np.maximum(h, 0)


class ActivationCache:
    """Appends every hidden activation to a list attribute (the caller sees the list grow)."""

    def __init__(self, rng):
        self.w1, self.w2, self.cache = rand(rng, (4, 5)), rand(rng, (5, 2)), []

    def __call__(self, x):
        h = np.tanh(x @ self.w1)
        self.cache.append(h)
        return h @ self.w2


# -- a function taking a model --------------------------------------------------------------------
def train_step(model, x, y, lr):
    """Forward, a hand-written backward, in-place updates of the model's weights."""
    h = np.tanh(x @ model.params["w1"] + model.params["b1"])
    out = h @ model.params["w2"]
    err = out - y
    gw2 = h.T @ err / len(x)
    gh = err @ model.params["w2"].T * (1 - h * h)
    model.params["w2"] -= lr * gw2
    model.params["w1"] -= lr * x.T @ gh / len(x)
    model.params["b1"] -= lr * gh.mean(axis=0)
    return (err ** 2).mean()


def params_list(rng, c):
    return [rand(rng, (3, 2)), rand(rng, (2,))]


def sgd_args(rng, c):
    ps = params_list(rng, c)
    return SGDMomentum(ps), [rand(rng, p.shape) for p in ps]


def adam_args(rng, c):
    ps = params_list(rng, c)
    return Adam(ps), [rand(rng, p.shape) for p in ps]


def ema_args(rng, c):
    return (WeightEMA(ParamDictModel(rng), 0.9),)


def _rng_case(cls):
    def make(rng, c):
        return cls(rng), rand(rng, (b(c), 4))
    return make


CASES = [
    Case(Linear, lambda rng, c: (Linear(rand(rng, (4, 5)), rand(rng, (5,))), rand(rng, (b(c), 4))), 1, 0, obj=True),
    Case(MLP, lambda rng, c: (MLP(rng, (4, 8, 8, 2)), rand(rng, (b(c), 4))), 1, 0, obj=True),
    Case(ParamDictModel, _rng_case(ParamDictModel), 1, 0, obj=True),
    Case(BatchNorm, lambda rng, c: (BatchNorm(rng, 4, True), rand(rng, (b(c), 4))), 1, 0, obj=True, id="BatchNorm-train"),
    Case(BatchNorm, lambda rng, c: (BatchNorm(rng, 4, False), rand(rng, (b(c), 4))), 1, 0, obj=True, id="BatchNorm-eval"),
    Case(RNNCell, lambda rng, c: (RNNCell(rng, 3, 5), rand(rng, (4 + c, 3)), rand(rng, (5,))), 1, 0, obj=True),
    Case(GeluMLP, _rng_case(GeluMLP), 2, 1, obj=True),
    Case(ClippedResidual, lambda rng, c: (ClippedResidual(rng, 4, 1.5 if c != 1 else 100.0), rand(rng, (b(c), 4)) * 3),
         2, 1, obj=True),
    Case(Scorer, lambda rng, c: (Scorer(rng), rand(rng, (b(c), 3))), 1, 0, obj=True),
    Case(Polynomial, lambda rng, c: (Polynomial(rand(rng, (4,))), rand(rng, (b(c),))), 1, 0, obj=True),
    Case(SGDMomentum, sgd_args, 1, 0, obj="step"),
    Case(Adam, adam_args, 1, 0, obj="step"),
    Case(LinearRegressor, lambda rng, c: (LinearRegressor(rng, 3), rand(rng, (b(c), 3)), rand(rng, (b(c),)), 0.1),
         1, 0, obj="fit_step"),
    Case(WeightEMA, ema_args, 1, 0, obj="update"),
    Case(Kalman1D, lambda rng, c: (Kalman1D(rng, 5), rand(rng, (5,))), 1, 0, obj=True),
    Case(RunningMean, lambda rng, c: (RunningMean(rng), rand(rng, (b(c),))), 1, 0, obj=True),
    Case(EarlyStopping, lambda rng, c: (EarlyStopping(2), rand(rng, (b(c),)), rand(rng, (b(c),))), 1, 1, obj=True),
    Case(SlotsLinear, _rng_case(SlotsLinear), 2, 1, obj=True),
    Case(ActivationCache, _rng_case(ActivationCache), 1, 0, obj=True),
    Case(train_step, lambda rng, c: (ParamDictModel(rng), rand(rng, (b(c), 4)), rand(rng, (b(c), 2)), 0.05), 1, 0),
]


@pytest.mark.parametrize("case", params(CASES))
def test_objects(case, rng):
    check(case, rng)
