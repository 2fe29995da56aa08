"""The corpus harness: one `Case` per real-looking NumPy function.

`check(case, rng)` calls the compiled function and NumPy eager on separate deep copies of the same
fresh random arguments, twice (the second call with other values and, where the case says so,
other shapes), and compares the returned values AND every argument afterwards (in-place updates
must match NumPy exactly; an argument returned by NumPy must come back as that same object). Calling
again with the first call's values must hit the cache (no recompilation). Then
`numpile.explain` on a third fresh set of arguments must report the case's graph and break counts.

A case whose `obj` flag is set compiles an object (`numpile.compile(model)`, or its bound method
`numpile.compile(model.step)` when `obj` names one): the first argument the factory returns is the
model; it persists between the two calls (its state evolves), and an eager twin made by deep copy is
called alongside; the model is compared with its twin, attribute by attribute, after each call.
"""

from __future__ import annotations

import copy
import types
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import numpile
from conftest import assert_same


@dataclass
class Case:
    fn: Callable                       # the plain Python function (for obj cases: unused, may be None)
    make: Callable                     # make(rng, call) -> tuple of arguments; call is 0, 1 (or 2 for explain)
    graphs: int                        # numpile.explain(...).graph_count on make(rng, 2)
    breaks: int                        # numpile.explain(...).graph_break_count on make(rng, 2)
    id: str = ""
    obj: bool | str = False            # compile the first argument (a model; or its method of this name),
                                       # call it with the rest
    xfail: str | None = None           # a known compiler bug: strict xfail with this reason
    xfail_if: bool = True              # ... on these Python versions only
    rtol: float | None = None          # looser tolerance (long reassociated reductions)
    compare_result: bool = True        # False when the result is legitimately random (np.random draws)
    replay: bool = True                # calling again with call 0's values compiles nothing new
    marks: list = field(default_factory=list)

    def param(self):
        marks = list(self.marks)
        if self.xfail:
            marks.append(pytest.mark.xfail(self.xfail_if, strict=True, reason=self.xfail))
        return pytest.param(self, id=self.id or self.fn.__name__, marks=marks)


def params(cases):
    return [c.param() for c in cases]


# -- comparing ------------------------------------------------------------------------------
def same(got, want, path="result", rtol=None):
    """assert_same, extended to objects holding state (compared attribute by attribute)."""
    if rtol is not None and isinstance(want, np.ndarray) and want.dtype.kind in "fc":
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape, path
        np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-9, equal_nan=True, err_msg=path)
        return
    if isinstance(want, (dict, list, tuple)):
        assert type(got) is type(want), f"{path}: type {type(got).__name__} != {type(want).__name__}"
        if isinstance(want, dict):
            assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
            for k in want:
                same(got[k], want[k], f"{path}[{k!r}]", rtol)
        else:
            assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
            for i, (g, w) in enumerate(zip(got, want)):
                same(g, w, f"{path}[{i}]", rtol)
        return
    if isinstance(want, np.random.Generator):  # the same draws were consumed
        assert type(got) is type(want), f"{path}: type {type(got).__name__}"
        assert got.bit_generator.state == want.bit_generator.state, f"{path}: the generator's state differs"
        return
    if _is_state_object(want):
        assert type(got) is type(want), f"{path}: type {type(got).__name__} != {type(want).__name__}"
        same(_state(got), _state(want), f"{path}.<attributes>", rtol)
        return
    assert_same(got, want, path)


def _is_state_object(value) -> bool:
    """A user object holding state (weights, counters): compared through its attributes."""
    return (hasattr(value, "__dict__") or hasattr(type(value), "__slots__")) \
        and type(value).__module__ not in ("builtins", "numpy") \
        and not isinstance(value, (type, types.FunctionType, types.ModuleType, types.MethodType))


def _state(obj) -> dict:
    """An object's attributes: its __dict__, or its __slots__."""
    if hasattr(obj, "__dict__"):
        return dict(vars(obj))
    return {name: getattr(obj, name) for name in type(obj).__slots__ if hasattr(obj, name)}


def _aliases(result, args):
    """Which argument (by position) each top-level returned array is, or None."""
    items = result if isinstance(result, tuple) else (result,)
    return [next((i for i, a in enumerate(args) if r is a), None) if isinstance(r, np.ndarray) else None
            for r in items]


# -- running --------------------------------------------------------------------------------
def check(case: Case, rng):
    if case.obj:
        return _check_object(case, rng)
    compiled = numpile.compile(case.fn, backend="eager")
    for call in range(2):
        args = case.make(rng, call)
        _nonzero(args)
        replay = copy.deepcopy(args)
        want_args = copy.deepcopy(args)
        want = case.fn(*want_args)
        got = compiled(*args)
        if case.compare_result:
            same(got, want, f"call {call}: result", case.rtol)
        same(args, want_args, f"call {call}: arguments after the call", case.rtol)
        assert _aliases(got, args) == _aliases(want, want_args), f"call {call}: returned arguments differ"
        if call == 0 and case.replay:
            # the same values again take the same path: every guard passes, nothing compiles again
            before = len(compiled.all_entries())
            got = compiled(*replay)
            if case.compare_result:
                same(got, want, "call 0 again: result", case.rtol)
            after = compiled.all_entries()
            assert len(after) == before, \
                f"the same arguments compiled again: {len(after) - before} new entries; breaks: " \
                f"{[e.break_reason for e in after]}"
    _check_counts(case, case.fn, case.make(rng, 2))


def _check_object(case: Case, rng):
    args = case.make(rng, 0)
    _nonzero(args)
    model, eager_model = args[0], copy.deepcopy(args[0])
    compiled = numpile.compile(_target(case, model), backend="eager")
    eager = _target(case, eager_model)
    if not callable(eager):  # numpile.compile(model) calls forward when there is no __call__
        eager = eager.forward
    for call in range(2):
        if call:
            args = case.make(rng, 1)
        rest = args[1:]
        want_rest = copy.deepcopy(rest)
        want = eager(*want_rest)
        got = compiled(*rest)
        if case.compare_result:
            same(got, want, f"call {call}: result", case.rtol)
        same(rest, want_rest, f"call {call}: arguments after the call", case.rtol)
        same(model, eager_model, f"call {call}: the model after the call", case.rtol)
    fresh = case.make(rng, 2)
    _check_counts(case, _target(case, fresh[0]), fresh[1:])


def _target(case: Case, model):
    """The model itself, or its bound method when the case names one."""
    return model if case.obj is True else getattr(model, case.obj)


def _check_counts(case: Case, target, args):
    report = numpile.explain(target)(*args)
    got = (report.graph_count, report.graph_break_count)
    assert got == (case.graphs, case.breaks), \
        f"(graphs, breaks) = {got}, expected {(case.graphs, case.breaks)}\n{report}"


def _nonzero(args):
    """Random inputs are never all zeros."""
    for a in _arrays(args):
        assert a.size == 0 or np.any(a != 0), "an input array is all zeros"


def _arrays(value, seen=None):
    seen = set() if seen is None else seen
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _arrays(v, seen)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _arrays(v, seen)
    elif _is_state_object(value):
        yield from _arrays(_state(value), seen)
