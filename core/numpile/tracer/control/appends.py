"""Lists a loop body appends to (`out.append(v)`, a list comprehension's values), carried as one
array the loop node fills.

A body that appends the same number of values to a list every iteration, the list empty before
the loop and of the function's own making, each value a new array or NumPy scalar of one shape
and dtype (or a list such a loop filled: a nested comprehension), is captured: the first pass sees
the appends (`found`, raising Unstable with them); the next makes an array of count * k rows before
the loop, carried (`enter`), and stores the iteration's values into its rows (i - first) * k + j
instead of appending them (`store`); after the loop node the list holds those rows
(variables/stacked.py). Refused, as before (the loop unrolls): values that are views, arrays the
loop carries (the list would share them with later iterations), Python numbers (the rows would
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
    """A list the body appends `per_iteration` values of `meta` to (`lists`: lists of rows)."""
    target: ListVariable
    per_iteration: int
    meta: ArrayMeta
    lists: bool


def found(loop, containers) -> dict:
    """The lists the pass appended to, as `Appended` by id (Unstable where a list changed in
    another way a loop node cannot carry; dicts are the caller's to check)."""
    grown = {}
    for c, before in containers.containers:
        if not isinstance(c, ListVariable) or isinstance(c, StackedList) or isinstance(c.items, Appending) \
                or len(c.items) == len(before):
            continue
        new = c.items[len(before):]
        if before or c.source is not None or not all(a is b for a, b in zip(c.items, before)):
            raise Unstable("changes a list other than by appending to a new one", peel=False)
        lists = {isinstance(v, StackedList) for v in new}
        if len({id(v) for v in new}) != len(new) or len(lists) != 1:
            raise Unstable("appends one value twice to a list, or lists beside arrays", peel=False)
        metas = [_value(loop, v).node.array_meta for v in new]
        if any(m != metas[0] for m in metas) or not isinstance(loop.count, int) or loop.step != 1 or loop.period != 1:
            raise Unstable("appends values of several shapes or dtypes, or over a range of unknown length", peel=False)
        grown[id(c)] = Appended(c, len(new), metas[0], lists.pop())
    return grown


def _value(loop, v) -> ArrayVariable:
    """The array an appended value stores into its row, or Unstable."""
    rows = stacked_rows(v)
    if rows is not None:
        return rows
    if not isinstance(v, ArrayVariable) or v.node.meta.get("weak") or v.node.shape == () and not v.node.meta["scalar"]:
        raise Unstable(f"appends {v.describe()} to a list (an array or a NumPy scalar is carried)", peel=False)
    carried = [*loop.fresh.values(), *(loop.tx.locals.get(name) for name in loop.names)]
    if v.base is not None or v in loop.arrays or any(v is w for w in carried):
        raise Unstable("appends a view, or an array the loop carries, to a list", peel=False)
    return v


def enter(loop) -> dict:
    """Before the iterations: per list appended to, its rows as an array the loop carries."""
    out = loop.tx.output
    made = {}
    saved, out.graph = out.graph, loop.outer
    try:
        for key, a in loop.appends.items():
            shape = (loop.count * a.per_iteration, *a.meta.shape)
            rows = out.call_op(ops.get("empty"), (ConstantVariable(shape),), {"dtype": ConstantVariable(a.meta.dtype)})
            made[key] = rows
    finally:
        out.graph = saved
    for key, rows in made.items():
        placeholder = loop.body.input(f"rows_{rows.node.name}", rows.node.array_meta)
        loop.arrays[rows] = (rows.node, placeholder)
        rows.node = placeholder
        loop.appends[key].target.items = Appending()
    return made


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
        at = (loop.index - loop.first) * a.per_iteration + j
        rows.node = out.call_op(ops.get("setitem"), (rows, TupleVariable([ConstantVariable(at)]), value), {}).node
        rows.version += 1
    a.target.items = []


def hand_on(loop, made: dict) -> None:
    """After the loop node: each list holds its rows."""
    for key, a in loop.appends.items():
        StackedList.fill(loop.tx, a.target, made[key], a.lists)

