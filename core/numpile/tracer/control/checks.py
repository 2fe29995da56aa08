"""`assert c` and `if bad: raise ...` on a graph value kept in the graph as a check node.

At a conditional jump on a 0-d graph value, where one side can only raise (every path from it ends
in a `raise`, none reaches the other side), the tracer adds `check(holds)` (ops/control.py) and goes
on along the other side: no graph break, and in a loop body no refused capture. The side that
raises is never traced: a check that fails makes the graph raise, a graph that raises has changed
nothing, and the frame runs again as Python from the graph's start, which raises the program's own
error (its message, its type, its handlers). Tried everywhere a graph value is tested, not only
in loop bodies: a check costs a compare, where a break costs a graph. Only for backends that run
control flow (`supports_conditionals`, as cond nodes): an exporter that cannot raise breaks there.
"""

from __future__ import annotations

from ... import logs, ops
from ..variables import ArrayVariable
from .branches import as_bool
from .liveness import successors

_RAISES = ("RAISE_VARARGS", "RERAISE")
_CHECKED_JUMPS = ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE")
WALK = 200   # instructions looked at on the raising side before giving up


def capture(tx, inst, jump_when: bool, keep_on_jump: bool) -> bool:
    """At conditional jump `inst` (jumping when its value's truth is `jump_when`): a check node
    and the trace on along the side that does not raise; False where neither or both sides raise
    (the jump is then a cond or decided as before)."""
    value = tx.stack[-1]
    if keep_on_jump or not _checkable(tx, value):
        return False
    k = tx.index_of[inst.offset]
    jumped, fell = tx.index_of[inst.argval], k + 1
    raises_jumping, raises_falling = _only_raises(tx, jumped, fell), _only_raises(tx, fell, jumped)
    if raises_jumping == raises_falling:
        return False
    holds_when = jump_when != raises_jumping   # the truth the trace goes on with
    tx.output.call_op(ops.get("check"), (as_bool(tx, value, negate=not holds_when),), {})
    tx.pop()
    if raises_falling:
        tx.jump(inst)
    logs.get("graph").debug("%s: the raise on %s is a check", tx.loc, value.describe())
    return True


def truth_value(tx, value, negate: bool = False):
    """bool(value) (or `not value`) as a graph value where the next instruction is a jump on it that
    capture makes a check (TO_BOOL and UNARY_NOT before `assert`, 3.12+), else None."""
    k = tx.ip
    while k < len(tx.instructions) and tx.instructions[k].opname == "EXTENDED_ARG":   # a far jump's prefix
        k += 1
    following = tx.instructions[k] if k < len(tx.instructions) else None
    if following is None or following.opname not in _CHECKED_JUMPS or not _checkable(tx, value):
        return None
    if _only_raises(tx, tx.index_of[following.argval], k + 1) == _only_raises(tx, k + 1, tx.index_of[following.argval]):
        return None
    return as_bool(tx, value, negate)


def _checkable(tx, value) -> bool:
    return tx.output.control.conds and isinstance(value, ArrayVariable) and value.node.shape == ()


def _only_raises(tx, start: int, other: int) -> bool:
    """Whether every path from instruction `start` ends in a raise without reaching `other`."""
    seen, todo = set(), [start]
    while todo:
        j = todo.pop()
        if j in seen:
            continue
        if j == other or j >= len(tx.instructions) or len(seen) == WALK:
            return False
        seen.add(j)
        inst = tx.instructions[j]
        after = successors(tx, j, inst)
        if not after and inst.opname not in _RAISES:
            return False
        todo += after
    return True
