"""The conformance suite itself: its cases cover the registry, and check_case catches
backends (and meta rules) that get NumPy's results wrong."""

import dataclasses

import numpy as np
import pytest

from numpile import ops
from numpile.testing import Arr, Case, assert_same, check_case, conformance_cases

CASES = conformance_cases()


def test_every_op_has_cases():
    counts = {name: 0 for name in ops.REGISTRY}
    for case in CASES:
        counts[case.op] += 1
    assert not [name for name, n in counts.items() if n < 4]


def test_case_ids_are_unique_and_inputs_reproducible():
    assert len({str(c) for c in CASES}) == len(CASES)
    case = conformance_cases(["add"])[0]
    for x, y in zip(case.inputs(), case.inputs()):
        assert np.array_equal(x, y)


def test_inputs_are_never_all_zeros():
    for case in CASES:
        for x in case.inputs():
            assert x.size == 0 or x.any() or np.isnan(x).any(), case


@pytest.mark.parametrize("spec, check", [
    (Arr((3, 4), layout="T"), lambda x: not x.flags.c_contiguous and x.shape == (3, 4)),
    (Arr((3, 4), layout="rev"), lambda x: all(s < 0 for s in x.strides)),
    (Arr((3, 4), "int32", layout="step"), lambda x: x.strides[-1] == 8 and x.dtype == np.int32),
    (Arr((), scalar=True), lambda x: isinstance(x, np.float64)),
    (Arr((2, 3), special=True), lambda x: np.isnan(x).any() and np.isinf(x).any()),
    (Arr((50,), "int64", nonzero=True), lambda x: (x != 0).all()),
    (Arr((50,), low=0.1, high=6.0), lambda x: (x >= 0.1).all() and (x <= 6).all()),
])
def test_arr_specs(spec, check):
    assert check(spec.make(np.random.default_rng(0)))


# Each broken backend must fail on at least one of the cases it is run on.
def _scalars_as_arrays(graph, inputs):
    return lambda *xs: tuple(np.asarray(o) for o in graph(*xs))


def _in_float32(graph, inputs):
    return lambda *xs: tuple(o.astype(np.float32) if o.dtype == np.float64 else o for o in graph(*xs))


def _perturbed(graph, inputs):
    return lambda *xs: tuple(o * (1 + 1e-9) if o.dtype.kind == "f" else o for o in graph(*xs))


def _bare_output(graph, inputs):
    return lambda *xs: graph(*xs)[0]


def _mutating(graph, inputs):
    def run(*xs):
        out = graph(*xs)
        for x in xs:
            if isinstance(x, np.ndarray) and x.size and x.dtype.kind == "f":
                x.reshape(-1)[:1] += 1  # also through views of non-contiguous inputs
        return out
    return run


def _off_by_one_index(graph, inputs):
    return lambda *xs: tuple(np.roll(o, 1) if np.ndim(o) else o for o in graph(*xs))


@pytest.mark.parametrize("broken, ops_", [
    (_scalars_as_arrays, ["add", "sum", "matmul", "getitem"]),
    (_in_float32, ["sin", "mean", "dot", "where"]),
    (_perturbed, ["multiply", "std", "clip"]),
    (_bare_output, ["reshape"]),
    (_mutating, ["exp", "transpose"]),
    (_off_by_one_index, ["argmax", "ravel", "arange"]),
])
def test_check_case_catches_broken_backends(broken, ops_):
    for name in ops_:
        failures = 0
        for case in conformance_cases([name]):
            try:
                check_case(case, broken)
            except AssertionError:
                failures += 1
        assert failures, f"{broken.__name__} passed every {name} case"


def test_check_case_catches_a_wrong_meta():
    op = ops.get("sum")
    right = op.meta

    def wrong(*args, **kwargs):  # int32 sums are int64 in NumPy 2, not float64
        return dataclasses.replace(right(*args, **kwargs), dtype=np.dtype("float64"))

    object.__setattr__(op, "meta", wrong)  # OpDef is frozen
    try:
        with pytest.raises(AssertionError, match="meta rule says"):
            check_case(Case("sum", (Arr((3, 4), "int32"),)), lambda g, inputs: g)
    finally:
        object.__setattr__(op, "meta", right)


def test_a_case_can_be_written_by_hand():
    check_case(Case("add", (Arr((2, 3), "float32"), 1.5)), lambda g, inputs: g.compile_python())


def test_assert_same_compares_every_float_within_its_tolerance():
    """Python floats as NumPy's (float(a.sum()) after a sin of a few ulp is not a mismatch), the rest exactly."""
    assert_same((1.0 + 1e-15, np.float64(2.0), [float("nan")]), (1.0, np.float64(2.0 + 1e-15), [float("nan")]))
    with pytest.raises(AssertionError, match=r"result\[0\]: 1.001 != 1.0"):
        assert_same((1.001,), (1.0,))
    with pytest.raises(AssertionError, match="result: 3 != 4"):
        assert_same(3, 4)
    with pytest.raises(AssertionError, match="type float != int"):
        assert_same(3.0, 3)
