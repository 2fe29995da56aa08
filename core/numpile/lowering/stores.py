"""The scheduler's updates in place (a mixin of schedule.py's _Scheduler, which holds the graph,
its buffers, the open kernel and the steps made so far): an update stored into its base's buffer
(see in_place.py) at a view's positions, through index arrays (a scatter), everywhere a mask selects
(a select between the value and the old element), or by ufunc.at; updates that follow one another
computed, then stored, together; a reshaped value stored at a view's flat positions.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .. import ops
from ..graph import Node
from ..shapes import SymInt, identical, replaying
from .in_place import disjoint, setitem_form, update_parts
from .ir import Affine, Buffer, Call, Const, Extern, Kernel, Load, Stage, walk
from .node_kinds import COMPUTED, kind_of
from .views import VIEW_INDEX, broadcast_index


class StoresInPlace:
    """_Scheduler's updates in place."""

    def _place_together(self, nodes: list) -> None:
        """Nodes of one place: one node, or updates that follow one another (in_place.placement),
        none reading another's result. For those, what each computes comes first (an update not
        stored in place, then the values of those stored in place, the ones that read their base
        elsewhere than they store into buffers), then every store; stages over the same outer
        loops share a kernel: Gray-Scott's `u += ...; v += ...` is one kernel computing both, one
        storing both."""
        if len(nodes) == 1:
            self._place(nodes[0])
            return
        stored = [n for n in nodes if n in self.in_place]
        for n in nodes:
            if n not in self.in_place:
                self._place(n)
        self._close()
        # what a stage storing as it reads would read changed: the others' bases, and an extern's
        # result, which may view one of them (`x.reshape(-1)[::-1]`)
        changed = {self.buffer_of[update_parts(n)[0]] for n in stored} | {
            o for step in self.steps if isinstance(step, Extern) for o in step.outputs}
        plans = [self._store_plan(n, changed) for n in stored]
        for phase in ([stage for plan in plans for stage in plan[:-1]], [plan[-1] for plan in plans if plan]):
            for stage in phase:
                self._store_stage(*stage)
            self._close()

    def _flattened_stores(self, kept: set) -> dict:
        """{update in place: the value it stores, flattened by a reshape}: where the update stores a
        reshape of a value of static shape into a 1-D view (np.repeat's copies, `y[n:] =
        np.repeat(x, r)`), it stores the value itself at the view's flat positions, which are affine
        in the value's index: neither the reshape nor the value is made in a buffer of its own."""
        found = {}
        for n in self.in_place:
            base, items, value = update_parts(n)
            if not (setitem_form(n) == "basic" and isinstance(value, Node) and value.target == "reshape"
                    and self.users[value] == [n] and len(value.shape) == 1 and value not in kept):
                continue
            source = value.args[0]
            with replaying():
                target = ops.get("getitem").meta(base.array_meta, items).shape
            if isinstance(source, Node) and kind_of(source) in COMPUTED and self.users[source] == [value] \
                    and source not in kept and all(type(d) is int for d in (*source.shape, *target)) and len(target) == 1:
                found[n] = source
                self.materialized -= {value, source}
        return found

    def _store_in_place(self, n: Node) -> None:
        """setitem(base, index, value) as kernels storing `value` into base's buffer at `index`
        (see in_place.py): at a view's positions, through index arrays (a scatter), or everywhere
        a mask selects (a select between the value and the old element)."""
        form = setitem_form(n)
        if form == "numpy":   # NumPy's assignment into base's buffer: an extern whose output is its base
            self._extern(n)
            del self.buffers[self.buffer_of[n]]
            self.steps[-1].output = self.buffer_of[n] = self.buffer_of[update_parts(n)[0]]
            return
        for stage in self._store_plan(n):
            self._store_stage(*stage)
            self._close()

    def _store_plan(self, n: Node, stored: set = frozenset()) -> list[tuple]:
        """The stages that store update n in place, each (shape, value, buffer, where, used) for
        _store_stage: none (`b[s] = b[s]`), the store, or a value computed into a buffer first,
        then the store of that buffer: one that reads the base elsewhere than where it is stored
        (NumPy computes the right-hand side before assigning), or reads a buffer among `stored`
        (what updates stored together with n change). ufunc.at's are stored here (_accumulate)."""
        base, items, value = update_parts(n)
        form = setitem_form(n)
        buffer = self.buffer_of[n] = self.buffer_of[base]
        through = form in ("scatter", "accumulate")   # the positions come from index arrays
        used: set[Node] = set()
        with replaying():  # the target's shape: the decisions setitem's meta rule made
            metas = tuple(i.array_meta if isinstance(i, Node) else i for i in items)
            target = tuple(base.shape) if form == "mask" else \
                tuple(ops.get("index" if through else "getitem").meta(base.array_meta, metas).shape)
        if n in self.flattened:     # the value before its reshape, stored at its elements' flat positions
            value = self.flattened[n]
            target = tuple(value.shape)
        index = tuple(Affine.var(v) for v in range(len(target)))
        if n in self.flattened:
            flat = sum((i.scaled(math.prod(target[k + 1:])) for k, i in enumerate(index)), Affine.constant(0))
            where = VIEW_INDEX["getitem"](n, (flat,))
        elif through:
            where = self._gathered_index(base, items, index, {}, used)
        else:
            where = index if form == "mask" else VIEW_INDEX["getitem"](n, index)
        if form == "accumulate":
            self._accumulate(n, base, value, buffer, target, index, where, used)
            return []
        if isinstance(value, Node):
            expr = self._value(value, broadcast_index(value.shape, target, index), {}, used)
        elif isinstance(value, SymInt):   # a loop's index or a size, a Python int (the meta rule checked it fits)
            expr = Const(value, None)
        else:
            cell = np.empty((), base.dtype)
            cell[()] = value     # NumPy's conversion of the scalar (checked by the meta rule)
            expr = Const(cell[()], base.dtype)
        if expr.dtype != base.dtype:   # setitem casts (unsafe), as astype does
            expr = Call("astype", (expr, Const(base.dtype, None)), (), base.dtype)
        if form == "mask":
            mask = self._value(items[0], index[:len(items[0].shape)], {}, used)
            expr = Call("where", (mask, expr, Load(buffer, index, base.dtype)), (), base.dtype)
        if isinstance(expr, Load) and expr.buffer == buffer and expr.index == where:
            return []                  # b[s] = b[s] (what `b[s] op= v` stores back): nothing to do
        if any(isinstance(e, Load) and (e.buffer == buffer and e.index != where and not disjoint(e.index, where, target)
                                        or e.buffer != buffer and e.buffer in stored) for e in walk(expr)):
            temp = f"{n.name}_value"
            self.buffers[temp] = Buffer(temp, target, base.dtype, "temp")
            return [(target, expr, temp, index, used), (target, Load(temp, index, base.dtype), buffer, where, set())]
        return [(target, expr, buffer, where, used)]

    def _accumulate(self, n: Node, base: Node, value, buffer: str, target: tuple, index: tuple, where: tuple,
                    used: set) -> None:
        """ufunc.at: at each position in order, the element is read, the ufunc applied with the
        value and the result stored (a repeated position sees the earlier ones' results). A value
        that reads the base is computed into a buffer first, as NumPy evaluates it before."""
        ufunc = n.args[0]
        operands = []
        if value is not None:
            expr = self._value(value, broadcast_index(value.shape, target, index), {}, used) \
                if isinstance(value, Node) else Const(value, getattr(value, "dtype", None))
            if any(isinstance(e, Load) and e.buffer == buffer for e in walk(expr)):
                temp = f"{n.name}_value"
                self.buffers[temp] = Buffer(temp, target, value.dtype, "temp")
                self._store_stage(target, expr, temp, index, used)
                self._close()
                expr, used = Load(temp, index, value.dtype), set()
            operands.append(expr)
        elements = [dataclasses.replace(v.array_meta, shape=()) if isinstance(v, Node) else v
                    for v in (base, *([value] if value is not None else []))]   # one element of each
        dtype = ops.get(ufunc).meta(*elements).dtype
        expr = Call(ufunc, (Load(buffer, where, base.dtype), *operands), (), dtype)
        if dtype != base.dtype:   # ufunc.at casts back into the array (unsafe)
            expr = Call("astype", (expr, Const(base.dtype, None)), (), base.dtype)
        self._store_stage(target, expr, buffer, where, used)
        self._close()

    def _store_stage(self, shape: tuple, value, buffer: str, where: tuple, used: set) -> None:
        """A stage storing `value` (an expression over `shape`) into buffer at `where`: in the open
        kernel where its outer loops are the same (stages _place_together puts side by side), else
        in a kernel of its own."""
        if self.kernel is None or not identical(self.kernel.outer, shape[:-1]):
            self._close()
            self.kernel = Kernel(f"kernel{sum(isinstance(s, Kernel) for s in self.steps)}", shape[:-1])
        self.kernel.stages.append(Stage(shape[-1:], value, output=buffer, output_index=where))
        for u in used:
            self.kernels_using.setdefault(u, set()).add(self.kernel.name)
