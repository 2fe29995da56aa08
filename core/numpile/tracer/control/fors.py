"""For loops kept as loops: a `for` over a range or a positional iterable (an array's rows, `zip`,
`enumerate`, `np.ndindex`: tracer/variables/iterators.py) traced once, as the body of a loop node.

At a FOR_ITER over such an iterable of at least `config.loop_capture_min` iterations, on a backend
that runs loop nodes (state.py), the body's instructions are traced once into a Graph of their
own, with the index a loop symbol (shapes.py: decisions on it hold for the whole range) and every
array the frame can reach standing for its value at the start of an iteration. After the body:

- an array updated in place, or a local rebound to a new array (`x = x * 2`), is carried: its
  value after the iteration is a body output, of the same shape and dtype (else no loop);
- an array the body only reads is a free input, as is any other value of the enclosing graph;
- a local holding a Python value must end the iteration as it began (`flag = True` again), or
  hold an expression of the index (its value after the last iteration is known); a Python
  value that changes each iteration (`k += 1`), a container changed, or anything the body
  cannot capture (a graph break, `break`, `return`) makes the loop unroll as before.

A value that changes only in the first iteration (`s = 0.0; s += x[i]` makes a NumPy float64
of a Python float, a local first bound in the loop) is handled by peeling: the first iteration
is unrolled, and the rest captured from the second arrival at the loop. A loop that unrolled
would add few ops (`config.loop_unroll_ops`) is unrolled after all: its kernels fuse. The passes
are passes.py's, each a LoopBody (loops.py); a range the data bounds is a DataRangeBody's.
"""

from __future__ import annotations

import numpy as np

from ... import config
from ...graph import Graph
from ...ops import ArrayMeta
from ..variables import ArrayVariable, DataRange, PositionalIterator, RangeIteratorVariable
from .bodies import PYTHON_NUMBERS, FrameState, bind_symbols, number_before
from .liveness import stored_only
from .loops import LoopBody, index_name
from .passes import give_up, trace_passes
from .state import PEELS


def capture(tx, inst, it) -> bool:
    """Trace the rest of the loop at FOR_ITER `inst` as a loop node and continue after it; False
    to take the next iteration unrolled instead (the trace is then as it was)."""
    control = tx.output.control
    key = (tx.code, inst.offset)
    if not isinstance(it, (RangeIteratorVariable, PositionalIterator)) or not getattr(it, "by_symbol", True) \
            or not control.tries_for(key, it.remaining()[-1]):
        return False   # a SymbolicRange that is not captured raises as it is unrolled
    control.attempts[key] = control.attempts.get(key, 0) + 1
    state = FrameState(tx)
    kind = DataRangeBody if isinstance(getattr(it, "range", None), DataRange) else LoopBody
    loop = trace_passes(tx, key, state, lambda rebound, stale, period: kind(tx, inst, it, rebound, stale, period))
    if loop is None:
        return False
    if loop.small():
        state.restore()
        control.small.add(key)
        why = (f"{loop.count} iterations are fewer than config.loop_capture_min={config.loop_capture_min}"
               if loop.count < config.loop_capture_min else
               f"{loop.count} iterations of {len(loop.body.calls)} ops are fewer than config.loop_unroll_ops={config.loop_unroll_ops}")
        return give_up(tx, key, f"{why}: its kernels fuse unrolled", peel=False)
    loop.finish(tx, inst)
    if control.attempts[key] <= PEELS:   # the next time the loop runs (an enclosing loop unrolled): afresh
        del control.attempts[key]        # (not for iterations past a swap's whole periods: unrolled)
    return True


class DataRangeBody(LoopBody):
    """The body of a loop over a DataRange (`range(indptr[i], indptr[i + 1])`): its bounds are
    graph values, so its index is one too (a Python int input of the body), not a loop symbol:
    what the body does with it is decided when it runs (an element's index checked then)."""

    def __init__(self, tx, inst, it, rebound: dict, stale: set, period: int = 1):
        self.tx, self.inst, self.it, self.rebound, self.stale, self.period = tx, inst, it, rebound, stale, 1
        self.outer = tx.output.graph
        self.body = Graph(self.outer)
        self.first, self.last, self.stop, self.step, self.count = it.remaining()

    def _iterations(self) -> None:
        self.tx.push(self.it.at(ArrayVariable(self.index_node)))
        self._run()

    def _enter(self) -> None:
        self.target = index_name(self.tx, self.inst)
        self.index_node = self.body.input(self.target, ArrayMeta((), np.dtype(np.int64), True, True))

    def _of_index(self, value) -> bool:
        return False

    def _bounds(self) -> tuple:
        return tuple(self.tx.output.graph_arg(v) for v in (self.first, self.stop))

    def _bind_symbols(self, free_inits: list) -> None:
        bind_symbols(self.body, self.tx.output.shape_env, {}, free_inits)

    def _initial(self, value, meta):
        return number_before(self.tx, self.outer, value, meta)

    def _changed(self, name: str, before, var):
        """A number the body changes is carried where it keeps its type (a Python int stays one, a
        NumPy float64 stays one): the loop may run no iteration, and then the value is as before."""
        number = before.as_constant() if before.is_constant() else None
        if isinstance(var, ArrayVariable) and var.node.shape == () and var.python_type() is type(number):
            return var.node.array_meta
        if var.is_constant() and type(var.as_constant()) is type(number) in PYTHON_NUMBERS:   # `c += 1`
            return ArrayMeta((), PYTHON_NUMBERS[type(number)], True, True)
        if type(number) is float and isinstance(var, ArrayVariable) and var.python_type() is np.float64 \
                and stored_only(self.tx, name, self.tx.index_of[self.inst.argval], self._float_array):
            # `s = 0.0; for k in ...: s += x[k]` then `y[i] = s`: a Python float where no iteration ran,
            # a NumPy float64 after one, but only ever stored into a float array, where both are one
            return var.node.array_meta
        return super()._changed(name, before, var)

    def _float_array(self, name: str) -> bool:
        v = self.tx.locals.get(name)
        return isinstance(v, ArrayVariable) and not v.node.meta["scalar"] and v.node.dtype.kind in "fc"
