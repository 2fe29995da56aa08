"""Lists a loop body appends to (`out.append(v)`, a list comprehension's values), carried as one
array the loop node fills.

A body that appends the same number of values to a list every iteration, the list of the
function's own making and empty before the loop (or holding NumPy scalars: a first iteration
peeled), each value a new array or NumPy scalar of one shape and dtype (or a list such a loop
filled: a nested comprehension), is captured: the first pass sees
the appends (`found`, raising Unstable with them); the next makes an array of count * k rows before
the loop, carried (`enter`), and stores the iteration's values into its rows (i - first) * k + j
instead of appending them (`store`); after the loop node the list holds those rows
(variables/stacked.py). Refused, as before (the loop unrolls): values that are views, arrays the
loop carries (the list would share them with later iterations; a NumPy scalar is immutable), Python numbers (the rows would
make them NumPy's), other shapes per iteration, a range of unknown length or step other than 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import ops
from ...loop_ranges import loop_range
from ...ops import ArrayMeta
from ..variables import ArrayVariable, ConstantVariable, ListVariable, TupleVariable
from ..variables.stacked import Appending, StackedList, stacked_rows
from .passes import Unstable


@dataclass(frozen=True)
class Appended:
    """A list the body appends `per_iteration` values of `meta` to (`lists`: lists of rows), after
    the NumPy scalars it held before the loop (`prefix`)."""
    target: ListVariable
    per_iteration: int
    meta: ArrayMeta
    lists: bool
    prefix: tuple


def found(loop, containers) -> dict:
    """The lists the pass appended to, as `Appended` by id (Unstable where a list changed in
    another way a loop node cannot carry; dicts are the caller's to check)."""
    grown = {}
    for c, before in containers.containers:
        if not isinstance(c, ListVariable) or isinstance(c, StackedList) or isinstance(c.items, Appending) \
                or len(c.items) == len(before):
            continue
        new = c.items[len(before):]
        if c.source is not None or not all(a is b for a, b in zip(c.items, before)) or not all(map(_scalar, before)):
            raise Unstable("changes a list other than by appending to one of its own of NumPy scalars", peel=False)
        lists = {isinstance(v, StackedList) for v in new}
        if len({id(v) for v in new}) != len(new) or len(lists) != 1:
            raise Unstable("appends one value twice to a list, or lists beside arrays", peel=False)
        metas = [_value(loop, v).node.array_meta for v in (*new, *before)]
        if any(m != metas[0] for m in metas) or not isinstance(loop.count, int) or loop.step != 1 or loop.period != 1:
            raise Unstable("appends values of several shapes or dtypes, or over a range of unknown length", peel=False)
        grown[id(c)] = Appended(c, len(new), metas[0], lists.pop(), tuple(before))
    return grown


def _value(loop, v) -> ArrayVariable:
    """The array an appended value stores into its row, or Unstable."""
    rows = stacked_rows(v)
    if rows is not None:
        return rows
    if not isinstance(v, ArrayVariable) or v.node.meta.get("weak") or v.node.shape == () and not v.node.meta["scalar"]:
        raise Unstable(f"appends {v.describe()} to a list (an array or a NumPy scalar is carried)", peel=False)
    carried = [*loop.fresh.values(), *(loop.tx.locals.get(name) for name in loop.names)]
    if not _scalar(v) and (v.base is not None or v in loop.arrays or any(v is w for w in carried)):
        raise Unstable("appends a view, or an array the loop carries, to a list", peel=False)
    return v


def _scalar(v) -> bool:
    """A NumPy scalar: immutable, so a list holding it shares nothing with later iterations."""
    return isinstance(v, ArrayVariable) and v.node.meta["scalar"] and not v.node.meta.get("weak")


def enter(loop) -> dict:
    """Before the iterations: per list appended to, its rows as an array the loop carries (made
    before the loop by `initial`, once the passes settled)."""
    made = {}
    for key, a in loop.appends.items():
        meta = ArrayMeta((len(a.prefix) + loop.count * a.per_iteration, *a.meta.shape), a.meta.dtype)
        placeholder = loop.body.input(f"rows_{len(loop.body.nodes)}", meta)
        made[key] = rows = ArrayVariable(placeholder)
        loop.arrays[rows] = (None, placeholder)
        a.target.items = Appending()
    return made


def initial(loop, made: dict) -> None:
    """The rows' value before the loop, in the enclosing graph: the NumPy scalars the list held."""
    out = loop.tx.output
    saved, out.graph = out.graph, loop.outer
    try:
        for key, a in loop.appends.items():
            shape = (len(a.prefix) + loop.count * a.per_iteration, *a.meta.shape)
            rows = out.call_op(ops.get("empty"), (ConstantVariable(shape),), {"dtype": ConstantVariable(a.meta.dtype)})
            for k, v in enumerate(a.prefix):   # its value before the loop (the body reads a placeholder)
                rows = _stored(out, rows, k, ArrayVariable(loop.arrays[v][0]) if v in loop.arrays else v)
            loop.arrays[made[key]] = (rows.node, loop.arrays[made[key]][1])
    finally:
        out.graph = saved


def store(loop, made: dict) -> None:
    """After the iterations: each list's new values stored into its rows, the list as it was."""
    out = loop.tx.output
    with loop_range(loop.index, loop.first, loop.last, loop.step):   # a row's index is in bounds for every index
        for key, a in loop.appends.items():
            _store(out, loop, a, made[key])


def _store(out, loop, a: Appended, rows: ArrayVariable) -> None:
    values = a.target.items.values()
    if len(values) != a.per_iteration:
        raise Unstable("appends a different number of values than the pass before", peel=False)
    for j, v in enumerate(values):
        value = _value(loop, v)
        if value.node.array_meta != a.meta:
            raise Unstable("appends values of several shapes or dtypes", peel=False)
        at = len(a.prefix) + (loop.index - loop.first) * a.per_iteration + j
        rows.node, rows.version = _stored(out, rows, at, value).node, rows.version + 1
    a.target.items = list(a.prefix)


def _stored(out, rows: ArrayVariable, at, value) -> ArrayVariable:
    """rows with `value` stored into row `at`."""
    return out.call_op(ops.get("setitem"), (rows, TupleVariable([ConstantVariable(at)]), value), {})


def hand_on(loop, made: dict) -> None:
    """After the loop node: each list holds its rows."""
    for key, a in loop.appends.items():
        StackedList.fill(loop.tx, a.target, made[key], a.lists)

