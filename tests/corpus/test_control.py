"""Corpus: control flow. Branches on data (a graph break with the condition as an output, resumed in
the branch taken), early returns, while loops on data, loops over zip/enumerate/dict items, branches on
shapes and Python arguments (no break: specialised and guarded), inlined helpers and closures."""

import functools

import numpy as np
import pytest

from conftest import rand
from harness import Case, check, params
from plain import assert_finite_plain


def n(call):
    return 10 if call != 1 else 13


def sign(call):
    """Call 1 takes the other branch; calls 0 and 2 (explain) the same one."""
    return -1.0 if call == 1 else 1.0


# -- branches on data ---------------------------------------------------------------------------
def scale_by_mean(x):
    if x.mean() > 0:
        return x * 2
    return -x + 1


def rescale_if_large(x, limit):
    peak = np.abs(x).max()
    if peak > limit:
        x = x * (limit / peak)
    return x + 1


def conditional_temperature(logits):
    t = 0.5 if logits.std() > 1.0 else 2.0
    e = np.exp((logits - logits.max()) / t)
    return e / e.sum()


def nan_guard(x, y):
    """Early return of a sentinel when the data is bad; call 1 has a NaN."""
    if np.isnan(x).any():
        return None
    return np.sqrt(np.abs(x)) * y


def assert_finite_rewritten(x):
    """Defined in a test module: pytest rewrites this assert (locals named `@py_assert1`, ...)."""
    y = np.log(np.abs(x) + 1)
    assert np.isfinite(y).all(), "non-finite values"
    return y * 2


def clamp_in_place_if_negative(x):
    """The branch mutates the argument; both branches return nothing."""
    if x.min() < 0:
        x -= x.min()
    x /= x.max()


def choose_by_norm(a, b):
    na = (a * a).sum()
    nb = (b * b).sum()
    if na > nb:
        big, small = a, b
    else:
        big, small = b, a
    return big - small, big


# -- while and breaks on data -------------------------------------------------------------------
def halve_until_small(x):
    """The test needs data: the root graph ends at the first test (a break); the resumed graph holds
    the loop as a while_loop node (its body and the test after it) and what follows it."""
    while np.abs(x).max() > 1:
        x = x * 0.5
    return x * 2


def damped_iteration_with_break(x, steps):
    for t in range(steps):
        x = x * 0.9
        if x.sum() < 0:
            x = -x
    return x


def fixed_point_break(x, max_iter):
    for _ in range(max_iter):
        nxt = np.cos(x)
        if np.abs(nxt - x).max() < 1e-6:
            break
        x = nxt
    return x, np.cos(x) - x


# -- static control flow: no breaks --------------------------------------------------------------
def branch_on_shape(x):
    if x.shape[0] > 11:
        return x[::2] * 3
    return x[1:] - x[:-1]


def branch_on_mode(x, mode):
    if mode == "l1":
        return np.abs(x).sum()
    elif mode == "l2":
        return np.sqrt((x ** 2).sum())
    return np.abs(x).max()


def mlp_over_zip(x, weights, biases):
    for w, b in zip(weights, biases):
        x = np.tanh(x @ w + b)
    return x


def weighted_rows_enumerate(rows, out):
    for i, row in enumerate(rows):
        out[i] = row.sum() * (i + 1)
    return out.mean()


def sgd_over_dict_items(params_, grads, lr):
    total = 0.0
    for name, p in params_.items():
        p -= lr * grads[name]
        total = total + (p ** 2).sum()
    return total


def weighted_sum_genexpr(ws, xs):
    return sum(w * x for w, x in zip(ws, xs))


def pairwise_sum(xs):
    if len(xs) == 1:
        return xs[0]
    mid = len(xs) // 2
    return pairwise_sum(xs[:mid]) + pairwise_sum(xs[mid:])


def make_ema(alpha):
    def ema(state, x):
        state *= 1 - alpha
        state += alpha * x
        return state
    return ema


ema_03 = make_ema(0.3)


def star_args_kwargs(*arrays, scale=1.0, shift=0.0):
    acc = arrays[0] * scale
    for a in arrays[1:]:
        acc = acc + a * scale
    return acc + shift


def blend_layers(base, *layers, alpha=0.5):
    """Keyword-only parameters after *args."""
    out = base * (1 - alpha)
    for layer in layers:
        out = out + alpha * layer / len(layers)
    return out


def list_comprehension_rows(x):
    return [np.tanh(x[i]) * i for i in range(x.shape[0])]


def check_finite_args(fn):
    """A user decorator with functools.wraps (the wrapper takes *args, **kwargs)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@check_finite_args
def smooth_clip(x, limit, sharpness=4.0):
    return limit * np.tanh(sharpness * x / limit) / sharpness


def uses_decorated_helper(x):
    return smooth_clip(x, 2.0, sharpness=3.0) + 1


# -- breaks inside inlined helpers ----------------------------------------------------------------
def safe_log(x):
    if (x <= 0).any():
        return np.log(np.abs(x) + 1e-12)
    return np.log(x)


def entropy_with_helper(p):
    """The helper's data-dependent branch: the helper cannot be inlined whole, so the caller breaks
    at its call (graph before: the normalisation), the helper runs as its own compiled frame (a graph
    with the test, a break, a graph in the branch), and the caller resumes after it (a graph)."""
    p = np.abs(p) / np.abs(p).sum()
    lp = safe_log(p)
    return -(p * lp).sum()


CASES = [
    Case(scale_by_mean, lambda rng, c: (np.abs(rand(rng, (n(c),))) * sign(c),), 2, 1),
    Case(rescale_if_large, lambda rng, c: (rand(rng, (n(c),)) * (10 if c != 1 else 0.1), 2.0), 2, 1),
    Case(conditional_temperature, lambda rng, c: (rand(rng, (n(c),)) * (6 if c != 1 else 0.1),), 2, 1),
    Case(nan_guard, lambda rng, c: (np.where(np.arange(n(c)) == 3, np.nan if c == 1 else 1.0, rand(rng, (n(c),))),
                                    rand(rng, (n(c),))), 2, 1),
    Case(assert_finite_plain, lambda rng, c: (rand(rng, (n(c),)),), 1, 0),   # a check node
    Case(assert_finite_rewritten, lambda rng, c: (rand(rng, (n(c),)),), 1, 0),
    Case(clamp_in_place_if_negative, lambda rng, c: (np.abs(rand(rng, (n(c),))) * sign(c) - 0.5 * sign(c),), 2, 1),
    Case(choose_by_norm, lambda rng, c: (rand(rng, (n(c),)) * (3 if c != 1 else 0.2), rand(rng, (n(c),))), 2, 1),
    Case(halve_until_small, lambda rng, c: (np.concatenate([[9.0], rand(rng, (n(c) - 1,))]),), 2, 1),
    # positive data never takes the branch; the root graph ends at the first test, the resumed
    # false branch goes back to the range iterator (run natively: a break), the resumed body traces the
    # next iteration to its test (a graph, a break); later iterations reuse these entries
    Case(damped_iteration_with_break, lambda rng, c: (np.abs(rand(rng, (n(c),))) * sign(c), 5), 1, 0),
    # the break statement leaves the loop: its resumed path returns (ops: cos, subtract)
    Case(fixed_point_break, lambda rng, c: (rand(rng, (n(c),)), 500), 3, 3),
    Case(branch_on_shape, lambda rng, c: (rand(rng, (n(c),)),), 1, 0),
    Case(branch_on_mode, lambda rng, c: (rand(rng, (n(c),)), ("l1", "l2", "max")[c]), 1, 0),
    Case(mlp_over_zip, lambda rng, c: (rand(rng, (n(c), 4)), [rand(rng, (4, 6)), rand(rng, (6, 3))],
                                       (rand(rng, (6,)), rand(rng, (3,)))), 1, 0),
    Case(weighted_rows_enumerate, lambda rng, c: ([rand(rng, (3 + i,)) for i in range(4)], np.ones(4 + c)), 1, 0),
    Case(sgd_over_dict_items, lambda rng, c: ({"w": rand(rng, (3, n(c))), "b": rand(rng, (n(c),))},
                                              {"w": rand(rng, (3, n(c))), "b": rand(rng, (n(c),))}, 0.1), 1, 0),
    Case(weighted_sum_genexpr, lambda rng, c: ((0.5, 1.5, -2.0), [rand(rng, (n(c),)) for _ in range(3)]), 1, 0),
    Case(pairwise_sum, lambda rng, c: ([rand(rng, (n(c),)) for _ in range(5 + c)],), 1, 0),
    Case(ema_03, lambda rng, c: (rand(rng, (n(c),)), rand(rng, (n(c),))), 1, 0),
    Case(star_args_kwargs, lambda rng, c: (rand(rng, (n(c),)), rand(rng, (n(c),)), rand(rng, (n(c),)))
         if c != 1 else (rand(rng, (n(c),)), rand(rng, (n(c),))), 1, 0),
    Case(blend_layers, lambda rng, c: (rand(rng, (n(c),)), *[rand(rng, (n(c),)) for _ in range(2 + c)]), 1, 0),
    Case(list_comprehension_rows, lambda rng, c: (rand(rng, (3 + c, 4)),), 1, 0),
    Case(smooth_clip, lambda rng, c: (rand(rng, (n(c),)) * 3, 2.0), 1, 0),
    Case(uses_decorated_helper, lambda rng, c: (rand(rng, (n(c),)) * 3,), 1, 0),
    Case(entropy_with_helper, lambda rng, c: (rand(rng, (n(c),)),), 4, 2),
]


@pytest.mark.parametrize("case", params(CASES))
def test_control(case, rng):
    check(case, rng)
