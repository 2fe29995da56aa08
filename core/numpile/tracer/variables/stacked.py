"""A list a captured loop appended to (`out.append(v)`, a comprehension's values), its items the
rows of one array the loop node filled (tracer/control/appends.py).

NumPy's `list(rows)` is what the list holds: row views of `rows` (for a 1-d `rows`, NumPy scalars),
each made where the list gives one (indexing, iteration); a list of such lists (a nested
comprehension) gives StackedLists of its rows. `np.array` of it is a copy of `rows`, `len` its
length. A list of at most `SMALL` items has them made at once and is an ordinary list from then on;
a longer one refuses what would need its items one by one (a graph break saying so), and Python
sees `list(rows)` (or a list of such lists) where it is handed back.
"""

from __future__ import annotations

import operator

from ... import ops
from ...exc import Unsupported
from .arrays import ArrayVariable
from .containers import ListVariable
from .objects import ConstantVariable

SMALL = 64   # items made at once, up to this many


class Rows:
    """The items of a long StackedList: not made, so every look at them one by one refuses."""

    def __init__(self, count: int):
        self.count = count

    def _refuse(self, *args):
        raise Unsupported(f"a list of {self.count} values a loop appended, used other than by np.array, len, "
                          "indexing or a for loop")

    __len__ = __iter__ = __getitem__ = __contains__ = __add__ = __radd__ = _refuse
    append = extend = insert = pop = remove = index = sort = reverse = copy = _refuse


class Appending(list):
    """A list's items while a loop body that appends to it is traced (control/appends.py): the
    appends are taken, any other look refuses (the body would see the list as it is in the first
    iteration, not as it grows)."""

    def _refuse(self, *args):
        raise Unsupported("a loop body reads a list it appends to")

    __len__ = __iter__ = __getitem__ = __contains__ = __add__ = __radd__ = __bool__ = _refuse
    extend = insert = pop = remove = index = count = sort = reverse = copy = _refuse

    def values(self) -> list:
        return list(list.__iter__(self))


def items_seen(var) -> list:
    """What a list or tuple holds, as the frame's visitors see it: a long StackedList its rows."""
    if isinstance(var.items, Appending):
        return var.items.values()
    return [var.rows] if isinstance(var.items, Rows) else var.items


class StackedList(ListVariable):
    """A list whose items are the rows of `rows` (`lists`: lists of their rows)."""

    @classmethod
    def fill(cls, tx, var: ListVariable, rows: ArrayVariable, lists: bool) -> "StackedList":
        """`var`, a list the frame holds wherever it holds it, made the StackedList of `rows`."""
        var.__class__ = cls
        var.rows, var.lists = rows, lists
        var.count = operator.index(rows.node.shape[0])
        var.items = [var._item(tx, k) for k in range(var.count)] if var.count <= SMALL else Rows(var.count)
        var.made = list(var.items) if var.count <= SMALL else None
        return var

    def _item(self, tx, k: int):
        row = tx.output.call_op(ops.lookup_callable(operator.getitem), (self.rows, ConstantVariable(k)), {})
        return StackedList.fill(tx, ListVariable([]), row, False) if self.lists else row

    def stacked(self) -> ArrayVariable | None:
        """The rows, where the list still holds them and only them (else None)."""
        if isinstance(self.items, Rows):
            return self.rows
        same = len(self.items) == len(self.made) and all(a is b for a, b in zip(self.items, self.made))
        return self.rows if same and (not self.lists or all(i.stacked() is not None for i in self.items)) else None

    def describe(self) -> str:
        return f"list of {self.count} (the rows of an array a loop filled)"

    def truth(self, tx) -> bool:
        return bool(self.count) if isinstance(self.items, Rows) else super().truth(tx)

    def length(self, tx) -> int:
        return self.count if isinstance(self.items, Rows) else super().length(tx)

    def iterate(self, tx, what: str):
        if isinstance(self.items, Rows) and not self.lists:
            return self.rows.iterate(tx, what)
        return super().iterate(tx, what)

    def getitem(self, tx, index):
        if isinstance(self.items, Rows) and index.is_constant() and type(index.as_constant()) is int:
            k = index.as_constant()
            if not -self.count <= k < self.count:
                raise Unsupported(f"indexing {self.describe()} with {k} raises IndexError")
            return self._item(tx, k % self.count)
        return super().getitem(tx, index)


def stacked_rows(var) -> ArrayVariable | None:
    """The array a list's items are the rows of, where it is a StackedList holding them."""
    return var.stacked() if isinstance(var, StackedList) else None
