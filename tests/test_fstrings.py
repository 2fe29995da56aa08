"""f-strings of values known at compile time are text the trace computes (a dict key `f"W{i}"`, a
label's length): no break. A value known only when the code runs (an array, a number the graph
computes) breaks with a reason, and a format that raises raises Python's error."""

import numpy as np
import pytest

import numpile


def labelled(x, scale=2.5):
    label = f"n={x.size!r:>6}|{scale:.3f}|{x.dtype}|{'a'!a}|{x.shape[0]:{x.ndim + 3}d}"
    return x * len(label), label


def layers(x, params):
    for i in range(3):
        x = np.tanh(x @ params[f"W{i}"] + params[f"b{i}"])
    return x


def test_constant_fstrings_are_traced_text(rng):
    x = rng.standard_normal((4, 5))
    explained = numpile.explain(labelled)(x)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    for backend in ("eager", "llvm"):
        got, want = numpile.compile(labelled, backend=backend)(x), labelled(x)
        assert got[1] == want[1]
        np.testing.assert_array_equal(got[0], want[0])
        assert got[0].dtype == want[0].dtype


def test_fstring_dict_keys_in_a_loop_are_one_graph(rng):
    params = {}
    for i in range(3):
        params[f"W{i}"], params[f"b{i}"] = rng.standard_normal((6, 6)), rng.standard_normal(6)
    x = rng.standard_normal((8, 6))
    explained = numpile.explain(layers)(x, params)
    assert explained.graph_break_count == 0 and explained.graph_count == 1
    got = numpile.compile(layers, backend="llvm")(x, params)
    np.testing.assert_allclose(got, layers(x, params), rtol=1e-12)


def formats_an_array(x):
    return x + 1, f"{x.sum()}"


def test_an_fstring_of_a_value_the_graph_computes_breaks_with_a_reason(rng):
    x = rng.standard_normal(5)
    explained = numpile.explain(formats_an_array)(x)
    assert any("in an f-string" in b.reason for b in explained.break_reasons), explained.break_reasons
    got, want = numpile.compile(formats_an_array, backend="llvm")(x), formats_an_array(x)
    np.testing.assert_array_equal(got[0], want[0])
    assert got[1] == want[1]


def bad_spec(x):
    return x * 2, f"{x.size:q}"


def test_an_fstring_that_raises_raises_pythons_error(rng):
    x = rng.standard_normal(5)
    with pytest.raises(ValueError) as want:
        bad_spec(x)
    with pytest.raises(ValueError) as got:
        numpile.compile(bad_spec, backend="llvm")(x)
    assert str(got.value) == str(want.value)
