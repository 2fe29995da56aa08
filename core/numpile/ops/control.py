"""Structured control flow: `loop`, a Python `for` over a range captured with its body as a Graph,
`cond`, an `if` on a graph value captured with both of its sides as Graphs, and `while_loop`, a
`while` whose test is a graph value.

A loop node is `loop(body, start, stop, step, carried, free)`: `body` is a Graph whose inputs
are the loop index (a weak int, the symbol the body's sizes and indices use for it), then the
carried values, then the free values (read, never changed, by the body), and whose outputs are
the carried values' next values. The node's value is the tuple of the carried values after the
last iteration (the initial ones when the range is empty), read by `tuple_getitem` nodes like any
op with several results. `body.write_back` names the carried arrays the body updates in place:
a backend may store their next values into the arrays it was given, which the loop owns.

The implementation here runs the body graph once per index, eagerly; a backend that compiles
loops compiles the body once and passes it to `run_loop`.

A cond node is `cond(pred, then_body, else_body, operands)`: two Graphs taking the same inputs
(`operands`, values of the enclosing graph) and giving results of the same metas; its value is
the tuple of the results of the side `pred` (a 0-d bool) picks. Only that side runs: a side that
would raise, or index out of bounds, raises only where it is taken. A side never changes its
inputs (an array it updates is a result of its own).

A while_loop node is `while_loop(body, carried, free)`: `body` takes the carried values, then the
free ones, and gives whether to go on (a 0-d bool) and then the carried values' next values; it
runs at least once (the tracer captures a `while` after its first test was taken: CPython tests
again at the end of the body), and until it says stop. Its value is the tuple of the carried values
after the last run; `body.write_back` (output positions counting the flag) as for loops.

A check node is `check(holds)`: `assert c` or `if bad: raise ...` on a graph value, where the
other side of the branch can only raise. It raises CheckFailed where `bool(holds)` (a 0-d number)
is false;
a graph that raises has changed nothing, so the frame then runs again as Python from the graph's
start, and the program raises its own error. A backend runs every check node (its value, `holds`,
is read by nothing).
"""

from __future__ import annotations

import contextlib
import weakref

import numpy as np

from .. import logs
from ..loop_ranges import active_loop_ranges, assuming, in_loop, is_loop_symbol, loop_range
from ..shapes import SYMBOL_PATTERN, NewGuard, SymInt, hint, loop_dependent
from .registry import CONTROL, ArrayMeta, register


def run_loop(body, start: int, stop: int, step: int, carried: tuple, free: tuple, *, run=None) -> tuple:
    """The carried values after running the body graph for each index of range(start, stop, step):
    eagerly, or by `run`, the body compiled by a backend (same arguments and results). The arrays
    the body updates in place (its write_back) are copied first: the loop owns those copies, and
    its caller's arrays stay as they were."""
    run = run or body
    values = _carried(body, carried)
    for index in range(start, stop, step):
        values = run(index, *values, *free)
    return values


class CompiledLoop:
    """The extern a compiling backend runs for a loop node: `run_loop` with the body compiled by
    `compile_body(body, example_inputs)` on first use, once per range of indices (decisions the
    lowering takes on the index hold for that range: loop_ranges.loop_range). A compiled body may offer
    `iterate(start, step, count, carried, free)`, running `count` iterations in one call on carried
    arrays it may update in place: the iterations after the first (which, the first time, runs
    through the body's call, where the backend settles layouts) then run through it. It may stop
    early, raising IterationsStopped: the rest run through the body's call."""

    def __init__(self, compile_body, bounds: tuple = ()):
        """`bounds`: the loop node's (start, stop, step) as the graph has them; where they are
        expressions of enclosing loops' indices (`range(i)`), the body is compiled once for every
        range they give, not once per range."""
        self.compile_body = compile_body
        self.symbolic = symbolic_range(*bounds) if bounds else None
        # the index's value when the graph was traced: the body's expressions of it carry hints from then
        self.index_hint = hint(bounds[0]) if bounds and isinstance(bounds[0], (int, SymInt)) else None
        self.compiled: dict[tuple, object] = {}
        self.warm: set = set()   # keys whose body has run through its call once
        # an outermost loop whose body holds no loop, by (start, stop, step): its compiled body,
        # warm (a small loop's call costs what this saves: no range set up, no key made)
        self.ready: dict[tuple, object] = {}

    def __call__(self, body, start, stop, step, carried, free):
        start, stop = int(start), int(stop)   # bounds computed in the graph come as 0-d arrays
        values = range(start, stop, step)
        if not values:
            return tuple(carried)
        ready = self.ready.get((start, stop, step)) if not in_loop() else None
        if ready is not None:
            return self._iterate(body, ready, values, carried, free)
        first, last = self.symbolic or (values[0], values[-1])
        with index_range(body, first, last, step, self.index_hint):   # a loop inside the body compiles under it
            return self._run(body, values, carried, free)

    def _run(self, body, values: range, carried, free):
        key = active_loop_ranges()   # this loop's range and the enclosing loops'
        if key not in self.compiled:
            self.compiled[key] = _compiled(self.compile_body, body, [values[0], *_carried(body, carried), *free])
        compiled = self.compiled[key]
        if getattr(compiled, "iterate", None) is None or len(values) < 2:
            return run_loop(body, values.start, values.stop, values.step, carried, free, run=compiled)
        if key not in self.warm:
            carried = run_loop(body, values[0], values[1], values.step, carried, free, run=compiled)
            values = values[1:]
            self.warm.add(key)
            if len(key) == 1 and not body.loops():
                self.ready[(values.start - values.step, values.stop, values.step)] = compiled
        return self._iterate(body, compiled, values, carried, free)

    @staticmethod
    def _iterate(body, compiled, values: range, carried, free):
        step = values.step
        owned = tuple(v.copy() if hasattr(v, "__cuda_array_interface__") else np.array(v, copy=True) for v in carried)
        try:
            return compiled.iterate(values[0], step, len(values), owned, free)
        except IterationsStopped as stop:   # before any work of iteration `stop.done`: the rest, one by one
            rest = values[stop.done:]
            return run_loop(body, rest.start, rest.stop, step, stop.carried, free, run=compiled)


class IterationsStopped(Exception):
    """A compiled body's `iterate` stopped before iteration `done` did anything (a layout it was not
    compiled for, say): `carried` are the values after the iterations before it."""

    def __init__(self, done: int, carried: tuple):
        super().__init__(f"stopped before iteration {done}")
        self.done, self.carried = done, carried


def symbolic_range(start, stop, step) -> tuple | None:
    """(first, last) bounds of range(start, stop, step) as expressions of the indices of the
    enclosing loops being run, where a bound is one and every symbol in them is such an index."""
    if not loop_dependent(start, stop) or not isinstance(step, int) or not all(
            is_loop_symbol(k) for b in (start, stop) if isinstance(b, SymInt) for k in SYMBOL_PATTERN.findall(b.expr)):
        return None
    return (start, stop - 1) if step > 0 else (start, stop + 1)


def _carried(body, carried: tuple, first: int = 1) -> tuple:
    """The initial carried values as the body hands them on: the arrays it updates in place copied
    (the loop owns them), a NumPy scalar where the body's outputs are NumPy scalars (a backend may
    hold them as 0-d arrays). `first`: the body's first carried input (a loop's index comes before)."""
    if body not in _CARRIED:
        owned = {id(node) for _, node in body.write_back}
        placeholders = body.inputs[first:first + len(carried)]
        _CARRIED[body] = [("copy" if id(node) in owned else "scalar" if node.meta["scalar"] else None)
                          for node in placeholders]
    return tuple(v.copy() if how == "copy" else v[()] if how == "scalar" and isinstance(v, np.ndarray) else v
                 for how, v in zip(_CARRIED[body], carried))


_CARRIED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # body -> what _carried does to each value


def index_range(body, first, last, step: int, traced_hint=None):
    """Decisions on the index of loop body `body` (its first input) hold from first to last;
    `traced_hint`: the index's hint in the trace (where it differs from `first`)."""
    if body not in _INDEX:
        k = next((k for k, s in enumerate(body.symbols) if s is not None and s[1] is None and s[0] is body.inputs[0]), None)
        _INDEX[body] = None if k is None else f"s{k}"
    return contextlib.nullcontext() if _INDEX[body] is None else loop_range(SymInt(_INDEX[body], traced_hint if traced_hint is not None else first if isinstance(first, int) else None), first, last, step)


_INDEX: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # body -> the name of its index's symbol


def _loop_sig(body, start, stop, step, carried, free): ...


def _loop_meta(body, start, stop, step, carried, free):
    return tuple(node.array_meta for node in body.outputs)


def run_while(body, carried: tuple, free: tuple, *, run=None) -> tuple:
    """The carried values after running the body graph (or `run`, it compiled by a backend) until
    the flag it gives first says stop; at least once. The arrays it updates in place are copied
    first, as for `run_loop`."""
    run = run or body
    values = _carried(body, carried, first=0)
    go = True
    while go:
        go, *values = run(*values, *free)
    return tuple(values)


class CompiledWhile:
    """The extern a compiling backend runs for a while_loop node: `run_while` with the body compiled
    by `compile_body(body, example_inputs)` on first use (once per range of enclosing loops)."""

    def __init__(self, compile_body):
        self.compile_body = compile_body
        self.compiled: dict[tuple, object] = {}

    def __call__(self, body, carried, free):
        key = active_loop_ranges()
        if key not in self.compiled:
            self.compiled[key] = _compiled(self.compile_body, body, [*_carried(body, carried, first=0), *free])
        return run_while(body, carried, free, run=self.compiled[key])


def _while_sig(body, carried, free): ...


def _while_meta(body, carried, free):
    return tuple(node.array_meta for node in body.outputs[1:])


def _compiled(compile_body, graph, inputs: list):
    """graph compiled by a backend, or where a size needs a decision the lowering cannot take for
    every index of the loops around it, as NumPy code."""
    try:
        return compile_body(graph, inputs)
    except NewGuard as e:
        logs.get("perf").debug("%s runs with NumPy: %s", repr(graph), e)
        return graph.compile_python()


def run_cond(pred, then_body, else_body, operands: tuple, *, run_then=None, run_else=None) -> tuple:
    """The results of the side `pred` picks, run eagerly or by `run_then` / `run_else`, the sides
    compiled by a backend (same arguments and results)."""
    return (run_then or then_body)(*operands) if pred else (run_else or else_body)(*operands)


class CompiledCond:
    """The extern a compiling backend runs for a cond node: `run_cond` with each side compiled by
    `compile_body(side, example_inputs)` the first time it is taken."""

    def __init__(self, compile_body):
        self.compile_body = compile_body
        self.compiled: dict[tuple, object] = {}   # (side, enclosing loops' ranges) -> its compiled graph

    def __call__(self, pred, then_body, else_body, operands):
        taken = bool(pred)
        side = then_body if taken else else_body
        key = (taken, active_loop_ranges())
        if key not in self.compiled:
            with assuming(side.assumes):
                self.compiled[key] = _compiled(self.compile_body, side, list(operands))
        return self.compiled[key](*operands)


def _cond_sig(pred, then_body, else_body, operands): ...


def _cond_meta(pred, then_body, else_body, operands):
    return tuple(node.array_meta for node in then_body.outputs)


class CheckFailed(AssertionError):
    """A check node found its condition false: the frame runs as Python, which raises the program's error."""


def run_check(holds):
    if not holds:
        raise CheckFailed("a check of the traced code failed (the frame runs again as Python)")
    return np.True_


def _check_sig(holds): ...


def _check_meta(holds):
    if holds.shape != () or holds.dtype.kind not in "biuf":
        raise NotImplementedError(f"a check of a {holds.dtype} value of shape {holds.shape} (a 0-d number)")
    return ArrayMeta((), np.dtype(np.bool_), scalar=True)


register("check", CONTROL, impl=run_check, meta=_check_meta, signature=_check_sig,
         doc="`assert c` (or `if not c: raise`) on a graph value: raises where c is false, emitted by the tracer")
register("cond", CONTROL, impl=run_cond, meta=_cond_meta, signature=_cond_sig,
         doc="an if on a graph value with both sides as Graphs, emitted by the tracer")
register("while_loop", CONTROL, impl=run_while, meta=_while_meta, signature=_while_sig,
         doc="a while loop on a graph value with its body (and test) as a Graph, emitted by the tracer")
register("loop", CONTROL, impl=run_loop, meta=_loop_meta, signature=_loop_sig,
         doc="a for loop over a range with its body as a Graph, emitted by the tracer")
