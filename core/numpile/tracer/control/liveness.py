"""Liveness of a frame's locals, from its bytecode: whether a value bound in a loop may be read
after it (loops.py keeps such a local, or refuses the loop), or one bound on one side of a branch
after the branch (branches.py); the successors of an instruction and the `for` loop around one
(a walk of the bytecode's control flow)."""

from __future__ import annotations

import dis

from .. import bytecode_compat as bc


def live_after_loop(tx, name: str, inst) -> bool:
    """Whether local `name` may be read after the loop at FOR_ITER `inst` before it is stored again
    (on some path through the code from the loop's exit); in code with try blocks, whether any
    instruction outside the loop reads it (handlers are reached through the exception table)."""
    start, end = tx.index_of[inst.offset], tx.index_of[inst.argval]
    return live_at(tx, name, end, outside=range(start, end))


def innermost_for(tx):
    """(frame, FOR_ITER instruction) of the innermost `for` loop whose body holds the instruction
    being traced, in its frame or a frame it was inlined from; None outside loops."""
    while tx is not None:
        k = tx.ip - 1
        found = [i for j, i in enumerate(tx.instructions) if i.opname == "FOR_ITER" and j < k < tx.index_of.get(i.argval, j)]
        if found:
            return tx, found[-1]
        tx = tx.parent
    return None


def live_at(tx, name: str, k: int, outside: range = range(0)) -> bool:
    """Whether local `name` may be read from instruction k on before it is stored again; in code
    with try blocks, whether any instruction not in `outside` reads it."""
    if bc.user_protected_offsets(tx.code):
        return any(j not in outside and _reads(i, name) for j, i in enumerate(tx.instructions))
    seen, todo = set(), [k]
    while todo:
        k = todo.pop()
        if k in seen or k >= len(tx.instructions):
            continue
        seen.add(k)
        i = tx.instructions[k]
        if _reads(i, name):
            return True
        if _stores(i, name):
            continue
        todo += successors(tx, k, i)
    return False


# What may stand between loading a value and the STORE_SUBSCR storing it (`y[i + 1] = s`): loads of
# a local or a constant (the local's name kept: the container), and operators on what they loaded.
_PUSHES_NAMES = ("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_LOAD_FAST", "LOAD_CONST", "LOAD_SMALL_INT")
_OPERATORS = {"BINARY_OP": lambda i: 2, "BUILD_TUPLE": lambda i: i.arg, "UNARY_NEGATIVE": lambda i: 1}


def stored_only(tx, name: str, k: int, into) -> bool:
    """Whether local `name`, from instruction k on, is read only as the value stored by
    `target[index] = name` statements into locals `target` for which `into(target)` holds, until
    it is stored again or no path reads it: then whatever holds the same value serves as well."""
    if name in tx.code.co_cellvars or bc.user_protected_offsets(tx.code):
        return False
    while k < len(tx.instructions):
        i = tx.instructions[k]
        if _stores(i, name):
            return True
        if _reads(i, name):
            pair = i.opname == "LOAD_FAST_LOAD_FAST" and i.argval[0] == name != i.argval[1]   # 3.13: `s, y` loaded
            if not (i.opname == "LOAD_FAST" or pair) or (k := _stored_at(tx, k + 1, into, [i.argval[1]] if pair else [])) is None:
                return False
            continue
        if i.opname in _ENDS or i.opcode in dis.hasjrel or i.opcode in dis.hasjabs:
            return not live_at(tx, name, k)
        if i.opname.startswith(_STORES + ("DELETE_FAST", "DELETE_DEREF")):
            return False   # a local rebound before the store: `into` judged the container it held before
        k += 1
    return True


def _stored_at(tx, k: int, into, above: list) -> int | None:
    """Where control goes on after a STORE_SUBSCR from instruction k on stores the value loaded
    just before k into a local `into` accepts, with nothing but loads and operators between; else
    None. `above`: what stands above the value on the stack (a local's name, or None for anything else)."""
    for k in range(k, len(tx.instructions)):
        i = tx.instructions[k]
        if i.opname == "STORE_SUBSCR":
            return k + 1 if len(above) == 2 and above[0] is not None and into(above[0]) else None
        if i.opname in _PUSHES_NAMES:
            names = i.argval if i.opname == "LOAD_FAST_LOAD_FAST" else (i.argval,)
            above += [n if i.opname.startswith("LOAD_FAST") else None for n in names]
        elif i.opname in _OPERATORS and len(above) >= _OPERATORS[i.opname](i):
            del above[len(above) - _OPERATORS[i.opname](i):]
            above.append(None)
        else:
            return None
    return None


_LOADS = ("LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE", "DELETE_FAST", "DELETE_DEREF")
_STORES = ("STORE_FAST", "STORE_DEREF")
_ENDS = ("RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE")
_UNCONDITIONAL = ("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT")


def _reads(i, name: str) -> bool:
    if i.opname == "STORE_FAST_LOAD_FAST":   # 3.13: a store, then a load
        return i.argval[1] == name and i.argval[0] != name
    return i.opname.startswith(_LOADS) and name in (i.argval if isinstance(i.argval, tuple) else (i.argval,))


def _stores(i, name: str) -> bool:
    return i.opname.startswith(_STORES) and name in (i.argval if isinstance(i.argval, tuple) else (i.argval,))


def successors(tx, k: int, i) -> list[int]:
    """The instructions control may go to after instruction i at index k (none after a return)."""
    if i.opname in _ENDS:
        return []
    jumps = i.opcode in dis.hasjrel or i.opcode in dis.hasjabs
    target = [tx.index_of[i.argval]] if jumps and i.argval in tx.index_of else []
    return target if i.opname in _UNCONDITIONAL else target + [k + 1]
