"""Opcode handlers of control flow: returns and yields, jumps, conditional jumps (both sides of
one on a graph value traced into a cond node: tracer/control/), `with` blocks, and `for` loops
(iterators unrolled, or the rest of a loop captured as a loop node: tracer/control/). Registered in
dispatch.DISPATCH as handlers.py's are, and named after their opcodes too.
"""

from __future__ import annotations

from .. import config
from ..exc import Unsupported
from . import bytecode_compat as bc
from . import control
from .dispatch import handles
from .translator import InstructionTranslator
from .variables import NULL, ConstantVariable, DataRange, IteratorVariable, RangeIteratorVariable, SymbolicRange, contexts

Tx = InstructionTranslator


# -- returns and yields --------------------------------------------------------------------
@handles("RETURN_GENERATOR")
def return_generator(tx: Tx, inst):
    tx.push(ConstantVariable(None))  # the value the generator's first resumption discards


@handles("YIELD_VALUE")
def yield_value(tx: Tx, inst):
    tx.yields.append(tx.pop())
    tx.push(ConstantVariable(None))  # what send() gives back: next() sends None


@handles("RETURN_VALUE")
def return_value(tx: Tx, inst):
    tx.return_value = tx.pop()


@handles("RETURN_CONST")
def return_const(tx: Tx, inst):
    tx.return_value = ConstantVariable(inst.argval)


# -- jumps ---------------------------------------------------------------------------------
@handles("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT")
def jump(tx: Tx, inst):
    tx.jump(inst)


def _conditional(name: str, pop_when, test):
    """The handler of conditional jump `name` (and its spellings in other CPython versions)."""
    def handler(tx: Tx, inst):
        value = tx.stack[-1]
        if test in (_truthy, _falsy) and control.conditional_jump(tx, inst, test is _truthy, pop_when is not None):
            return   # both sides traced into a cond node
        taken = test(tx, value)
        if pop_when is None or pop_when != taken:  # POP_JUMP_* always pop; JUMP_IF_*_OR_POP pops when not jumping
            tx.pop()
        if taken:
            tx.jump(inst)
    handler.__name__ = handler.__qualname__ = name.lower()
    return handler


_truthy = lambda tx, v: v.truth(tx)              # noqa: E731
_falsy = lambda tx, v: not v.truth(tx)           # noqa: E731
_none = lambda tx, v: _is_none_checked(v)        # noqa: E731
_not_none = lambda tx, v: not _is_none_checked(v)  # noqa: E731


def _is_none_checked(var) -> bool:
    if var.is_constant():
        return var.as_constant() is None
    return False  # arrays, containers and objects are never None


for _names, _test in (
    (("POP_JUMP_IF_TRUE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_TRUE"), _truthy),
    (("POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_BACKWARD_IF_FALSE"), _falsy),
    (("POP_JUMP_IF_NONE", "POP_JUMP_FORWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NONE"), _none),
    (("POP_JUMP_IF_NOT_NONE", "POP_JUMP_FORWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE"), _not_none),
):
    handles(*_names)(_conditional(_names[0], None, _test))
handles("JUMP_IF_TRUE_OR_POP")(_conditional("JUMP_IF_TRUE_OR_POP", True, _truthy))
handles("JUMP_IF_FALSE_OR_POP")(_conditional("JUMP_IF_FALSE_OR_POP", True, _falsy))


# -- with and for -------------------------------------------------------------------------
@handles("BEFORE_WITH")
def before_with(tx: Tx, inst):
    tx.push(contexts.enter(tx, tx.pop()))


@handles("GET_ITER")
def get_iter(tx: Tx, inst):
    value = tx.pop()
    if value.is_constant() and type(value.as_constant()) in (range, SymbolicRange, DataRange):   # a loop node's candidate (control/fors.py)
        tx.push(RangeIteratorVariable(value.as_constant()))
        return
    tx.push(value.iterate(tx, "a for loop"))


@handles("FOR_ITER")
def for_iter(tx: Tx, inst):
    it = tx.stack[-1]
    if not isinstance(it, IteratorVariable):
        raise Unsupported(f"iterating over {it.describe()}")
    if control.for_iter(tx, inst, it):   # the rest of the loop as a loop node
        return
    count = tx.loop_counts[inst.offset] = tx.loop_counts.get(inst.offset, 0) + 1
    if count > config.unroll_limit + 1:
        raise Unsupported(f"a loop ran more than config.unroll_limit={config.unroll_limit} iterations")
    value = it.next()
    if value is not None:
        tx.push(value)
        return
    if bc.FOR_ITER_EXIT_PUSHES_PLACEHOLDER:
        tx.push(NULL)
    else:
        tx.pop()
    tx.jump(inst)


@handles("END_FOR")
def end_for(tx: Tx, inst):
    tx.popn(bc.END_FOR_POPS)
