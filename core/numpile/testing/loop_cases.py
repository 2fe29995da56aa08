"""Conformance cases of `loop`, `cond` and `while_loop` (ops/control.py): such nodes as the tracer
captures them, their bodies and sides built here as Graphs."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..graph import Graph, map_nodes
from ..ops import ArrayMeta
from ..shapes import SymInt
from .specs import Arr, Case


def _loop_body(carried: list, free: list, build, in_place: bool = False) -> Graph:
    """A loop body (ops/control.py) over carried and free inputs of these metas: build(call, index,
    *inputs) gives the carried values' next values, `call(op, *args)` adding an op to it."""
    body = Graph()
    index = body.input("i", ArrayMeta((), np.dtype(np.int64), True, True))
    inputs = [body.input(f"c{k}", m) for k, m in enumerate(carried)] + [body.input(f"f{k}", m) for k, m in enumerate(free)]
    body.symbols = [(index, None)]

    def call(name, *args):
        return body.call(name, args, {}, ops.get(name).meta(*map_nodes(args, lambda n: n.array_meta)))
    body.output(build(call, SymInt("s0", 1), *inputs))
    body.write_back = [(0, inputs[0])] if in_place else []
    body.write_back_owned = True
    return body


def loop_cases() -> list[Case]:
    """Loops as the tracer captures them: carried arrays rebound or updated in place at the index,
    a carried NumPy scalar, free inputs, steps of 1, 2 and -2, an empty range."""
    row, acc = ArrayMeta((5, 3), np.dtype(np.float64)), ArrayMeta((), np.dtype(np.float64), scalar=True)
    scaled = _loop_body([row], [], lambda call, i, a: [call("add", call("multiply", a, 0.5), 1.0)])
    rows = _loop_body([row], [], lambda call, i, a: [call("setitem", a, (i,), call(
        "add", call("multiply", call("getitem", a, (i - 1,)), 0.5), call("getitem", a, (i,))))], in_place=True)
    summed = _loop_body([acc], [ArrayMeta((6,), np.dtype(np.float64))],
                        lambda call, i, s, x: [call("add", s, call("sum", call("multiply", x, x)))])
    ints = _loop_body([ArrayMeta((4,), np.dtype(np.int32))], [], lambda call, i, a: [call("add", a, i)])
    return [Case("loop", (scaled, 0, 4, 1, (Arr((5, 3)),), ())),
            Case("loop", (rows, 1, 5, 1, (Arr((5, 3)),), ())),
            Case("loop", (rows, 1, 5, 2, (Arr((5, 3), layout="T"),), ())),
            Case("loop", (summed, 0, 7, 1, (Arr((), scalar=True),), (Arr((6,)),))),
            Case("loop", (ints, 6, 0, -2, (Arr((4,), "int32"),), ())),
            Case("loop", (scaled, 3, 3, 1, (Arr((5, 3)),), ()))]


def _side(operands: list, build) -> Graph:
    """A cond side over inputs of these metas: build(call, *inputs) gives its results."""
    side = Graph()
    inputs = [side.input(f"o{k}", m) for k, m in enumerate(operands)]

    def call(name, *args):
        return side.call(name, args, {}, ops.get(name).meta(*map_nodes(args, lambda n: n.array_meta)))
    side.output(build(call, *inputs))
    return side


def cond_cases() -> list[Case]:
    """Conds as the tracer captures them: an array rebound on one side, updated at an element on
    the other, and a NumPy scalar computed differently on each side; both ways each."""
    row, value = ArrayMeta((5, 3), np.dtype(np.float64)), ArrayMeta((), np.dtype(np.float64), scalar=True)
    scaled = _side([row, value], lambda call, a, v: [call("multiply", a, 0.5), call("add", v, 1.0)])
    updated = _side([row, value], lambda call, a, v: [call("setitem", a, (1, 2), v), call("negative", v)])
    return [Case("cond", (pred, scaled, updated, (Arr((5, 3)), Arr((), scalar=True)))) for pred in (True, False)] + \
        [Case("cond", (pred, updated, scaled, (Arr((5, 3), layout="T"), Arr((), scalar=True)))) for pred in (True, False)]


def while_cases() -> list[Case]:
    """While loops as the tracer captures them: a carried NumPy scalar halved until small, beside an
    array updated in place at an element, and an array rebound; free inputs; one run only too."""
    value, row = ArrayMeta((), np.dtype(np.float64), scalar=True), ArrayMeta((5, 3), np.dtype(np.float64))

    def halve(call, v, a, x):
        smaller = call("multiply", v, 0.5)
        return [call("greater", smaller, 0.01), smaller, call("setitem", a, (1, 2), call("add", smaller, x))]
    in_place = _side([value, row, value], halve)
    in_place.write_back = [(2, in_place.inputs[1])]
    in_place.write_back_owned = True
    def shrink(call, a, x):   # until the sum of magnitudes is small: it halves each run
        smaller = call("add", call("multiply", a, 0.5), call("multiply", x, 0.0))
        return [call("greater", call("sum", call("absolute", smaller)), 0.01), smaller]
    rebound = _side([row, value], shrink)
    return [Case("while_loop", (in_place, (Arr((), scalar=True), Arr((5, 3))), (Arr((), scalar=True),))),
            Case("while_loop", (in_place, (Arr((), scalar=True), Arr((5, 3), layout="T")), (Arr((), scalar=True),))),
            Case("while_loop", (rebound, (Arr((5, 3)),), (Arr((), scalar=True),))),
            Case("while_loop", (rebound, (Arr((5, 3), layout="T"),), (Arr((), scalar=True),)))]
