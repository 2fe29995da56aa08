"""The backend "onnxrt" through numpile.compile: models and chains against NumPy, session
options, what an op it cannot express does, and random programs (numpile.fuzz's generator) over
six calls each (new values, another shape: symbolic dims)."""

from __future__ import annotations

import contextlib
import io
import warnings

import hypothesis
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

import numpile
from numpile.testing import assert_same_result

rng = np.random.default_rng()


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layer_norm(x, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)


def int_math(a, b):
    return (a // b) * 3 + a % b - np.abs(a) // 2, np.where(a > b, a, b).sum(axis=0)


def assignments(x, idx, m):
    x = x.copy()
    x[x < 0] = 0.5                  # a mask, one value
    x[idx] = 7.0                    # an index array with repeats: the last write wins
    x[idx, 1] = np.arange(3.0)
    x[m] = -1.0
    x[[0, 0, 1]] = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 9]])
    x[-1, idx[:2] % 3] = 3.5
    return x


@pytest.mark.parametrize("fn, args", [
    (assignments, (rng.random((5, 3)) - 0.5, np.array([2, -3, 2]), rng.random(5) < 0.4)),
    (softmax, (rng.standard_normal((4, 10)).astype(np.float32),)),
    (layer_norm, (rng.standard_normal((3, 8)),)),
    (int_math, (rng.integers(-9, 9, (3, 5)), rng.integers(1, 5, (3, 5)) * rng.choice([-1, 1], (3, 5)))),
    (lambda x, w: np.tanh(x @ w)[:, ::-1].T, (rng.standard_normal((4, 3)), rng.standard_normal((3, 5)))),
])
def test_programs_against_numpy(fn, args):
    want = fn(*args)
    got = numpile.compile(fn, backend="onnxrt")(*args)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert_same_result(g, w)


def test_session_options():
    x = rng.standard_normal((5, 7))
    f = numpile.compile(softmax, backend="onnxrt", options={"threads": 1, "graph_optimization_level": "basic"})
    assert_same_result(f(x), softmax(x))
    with pytest.raises(numpile.BackendCompilerFailed, match="unknown options"):
        numpile.compile(softmax, backend="onnxrt", options={"thread": 1})(x)


def test_an_op_it_cannot_express_is_named():
    with pytest.raises(numpile.BackendCompilerFailed, match=r"(?s)opset 18.*cannot express slogdet.*LAPACK"):
        numpile.compile(lambda x: np.linalg.slogdet(x), backend="onnxrt")(rng.standard_normal((3, 3)))


def test_listed_as_a_backend():
    assert "onnxrt" in numpile.list_backends()
    info = numpile.backend_info("onnxrt")
    assert info.distribution == "numpile-onnx" and info.available


def test_random_programs():
    """numpile.fuzz's programs on "onnxrt": each passes, or stops at an op the exporter declares
    unsupported (BackendCompilerFailed naming it), never a wrong value."""
    from numpile.fuzz.check import Mismatch, check_program, make_function
    from numpile.fuzz.programs import programs
    outcomes = {"passed": 0, "unsupported": 0}

    @hypothesis.seed(20261124)
    @settings(max_examples=30, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(programs())
    def one(program):
        source, inputs = program
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                check_program(make_function(source), inputs, "onnxrt")
        except Mismatch as e:
            if "BackendCompilerFailed" in str(e) and "cannot express" in str(e):
                outcomes["unsupported"] += 1
                return
            raise
        outcomes["passed"] += 1

    one()
    assert outcomes["passed"] >= 20, outcomes
