"""The differences between CPython 3.11, 3.12 and 3.13 bytecode, in one place.

The translator reads instructions through `dis` (which resolves jump targets
and names for every version) and asks this module wherever the versions
disagree: where the NULL sits beside a callable, how loops end, how keyword
names reach CALL, how comparisons are encoded.
"""

from __future__ import annotations

import dis
import operator
import sys

PY = sys.version_info[:2]
if not (3, 11) <= PY <= (3, 13):
    raise ImportError(f"numpile's tracer supports CPython 3.11 to 3.13, not {sys.version.split()[0]}")


def instructions(code) -> list[dis.Instruction]:
    return list(dis.get_instructions(code))


# -- calls -----------------------------------------------------------------------------
# 3.11/3.12 put the NULL (or the method) below the callable: [NULL, fn] or [method, self];
# 3.13 puts it above: [fn, NULL] or [method, self].
NULL_BELOW_CALLABLE = PY < (3, 13)


def callable_pair(fn, null) -> tuple:
    """The two stack slots that hold a callable with no self, in this version's order."""
    return (null, fn) if NULL_BELOW_CALLABLE else (fn, null)


def split_call_slots(first, second, is_null) -> tuple:
    """(callable, self or None) from the two stack slots below a call's arguments."""
    if NULL_BELOW_CALLABLE:
        return (second, None) if is_null(first) else (first, second)
    return (first, None) if is_null(second) else (first, second)


def global_pushes_null(inst) -> bool:
    return bool(inst.arg & 1)


def attr_is_method_load(inst) -> bool:
    """LOAD_ATTR with the low bit set (3.12+) or LOAD_METHOD (3.11) loads a callable pair."""
    return inst.opname == "LOAD_METHOD" or (inst.opname == "LOAD_ATTR" and PY >= (3, 12) and bool(inst.arg & 1))


def kw_names(code, inst) -> tuple:
    """KW_NAMES (3.11, 3.12) names the keyword arguments of the next CALL by a constant index."""
    return code.co_consts[inst.arg]


# -- loops -----------------------------------------------------------------------------
# When FOR_ITER's iterator is exhausted: 3.11 pops it and jumps past the loop; 3.12 and 3.13
# jump to END_FOR, which (3.12) pops iterator and value, or (3.13) pops the value with a
# POP_TOP following for the iterator. The translator pushes a placeholder value and jumps
# to the target on 3.12+, so END_FOR and POP_TOP do their ordinary pops.
FOR_ITER_EXIT_PUSHES_PLACEHOLDER = PY >= (3, 12)
END_FOR_POPS = 2 if PY == (3, 12) else 1


# -- operators -------------------------------------------------------------------------
_NB_FUNCTIONS = {
    "+": operator.add, "&": operator.and_, "//": operator.floordiv, "<<": operator.lshift,
    "@": operator.matmul, "*": operator.mul, "%": operator.mod, "|": operator.or_,
    "**": operator.pow, ">>": operator.rshift, "-": operator.sub, "/": operator.truediv,
    "^": operator.xor,
}
# BINARY_OP's argument indexes dis._nb_ops: the 13 binary operators, then their in-place forms.
BINARY_OPS = [(_NB_FUNCTIONS[sym.rstrip("=")], sym.endswith("=") and sym not in ("==",))
              for _, sym in dis._nb_ops if sym.rstrip("=") in _NB_FUNCTIONS]

COMPARE_OPS = {
    "<": operator.lt, "<=": operator.le, "==": operator.eq,
    "!=": operator.ne, ">": operator.gt, ">=": operator.ge,
}


def compare_op(inst):
    """The operator function of a COMPARE_OP (3.13 may spell it 'bool(<)' when it also converts)."""
    name = inst.argval
    if name.startswith("bool("):
        name = name[5:-1]
    return COMPARE_OPS[name]


# -- functions -------------------------------------------------------------------------
# MAKE_FUNCTION flags (3.11, 3.12 in its argument; 3.13 through SET_FUNCTION_ATTRIBUTE)
FN_DEFAULTS, FN_KWDEFAULTS, FN_ANNOTATIONS, FN_CLOSURE = 0x01, 0x02, 0x04, 0x08
MAKE_FUNCTION_TAKES_FLAGS = PY < (3, 13)

# CALL_INTRINSIC_1 (3.12+) operands that the tracer handles
INTRINSIC_LIST_TO_TUPLE = 6
INTRINSIC_UNARY_POSITIVE = 5


# -- loops ------------------------------------------------------------------------------
def inside_loop(code, offset: int) -> bool:
    """Whether `offset` lies in a loop of `code`: between a backward jump (every version ends a
    for or while body with one) and its target."""
    return any(i.argval <= offset <= i.offset for i in instructions(code)
               if (i.opcode in dis.hasjrel or i.opcode in dis.hasjabs) and isinstance(i.argval, int) and i.argval < i.offset)


# -- exception handling ----------------------------------------------------------------
def user_protected_offsets(code) -> frozenset:
    """Offsets covered by a try/except/finally/with handler of the user's (3.11+ exception
    tables). 3.12's inlined comprehensions also protect their bodies, with a cleanup handler
    that does not start with PUSH_EXC_INFO; those are not the user's and are left out."""
    insts = {i.offset: i for i in instructions(code)}
    covered = set()
    for entry in dis._parse_exception_table(code):
        handler = insts.get(entry.target)
        if handler is not None and handler.opname == "PUSH_EXC_INFO":
            covered.update(o for o in insts if entry.start <= o < entry.end)
    return frozenset(covered)


def handler_at(code, offset: int):
    """The exception table entry (start, end, target, depth, lasti) that handles an exception
    raised at `offset`, or None. Entries never overlap: the innermost handler owns each offset."""
    return next((e for e in dis._parse_exception_table(code) if e.start <= offset < e.end), None)


def cache_entries(opname: str) -> int:
    """Inline cache code units after an instruction (3.11, 3.12 index by opcode; 3.13 by name)."""
    import opcode
    table = opcode._inline_cache_entries
    if isinstance(table, dict):
        return table.get(opname, 0)
    return table[dis.opmap[opname]] if opname in dis.opmap else 0
