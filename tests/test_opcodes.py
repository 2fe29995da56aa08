"""Every opcode of the running CPython is accounted for: handled by the tracer (a handler named
after it) or graph-breaking with a reason users can read. A new CPython's opcodes fail here
first, not in a user's program."""

import dis

import numpy as np
import pytest

import numpile
from numpile.tracer.dispatch import BREAKS, DISPATCH


def test_every_opcode_is_handled_or_breaks_with_a_reason():
    unaccounted = sorted(set(dis.opmap) - set(DISPATCH) - set(BREAKS))
    assert not unaccounted, f"opcodes neither handled nor listed in handlers.BREAKS: {unaccounted}"
    assert not set(DISPATCH) & set(BREAKS)


def test_each_handler_is_named_after_an_opcode_it_handles():
    names: dict = {}
    for opname, handler in DISPATCH.items():
        names.setdefault(handler, []).append(opname.lower())
    misnamed = {h.__name__: ops for h, ops in names.items() if h.__name__ not in ops}
    assert not misnamed


def _raises(x):
    try:
        raise KeyError("not there")
    except KeyError:
        return x * 2


def _a_set(x):
    seen = {1, 2}
    return x * len(seen)


@pytest.mark.parametrize("fn, reason", [
    (_raises, "raising or handling an exception"), (_a_set, "sets ({...}")])
def test_a_listed_opcode_breaks_the_graph_with_its_reason(fn, reason, rng):
    x = rng.standard_normal(5) + 3
    explained = numpile.explain(fn, backend="eager")(x)
    assert any(reason in b.reason for b in explained.break_reasons), [b.reason for b in explained.break_reasons]
    np.testing.assert_array_equal(numpile.compile(fn, backend="eager")(x), fn(x))
