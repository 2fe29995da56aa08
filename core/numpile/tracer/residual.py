"""Residual code at a graph break: the instruction the tracer could not capture, run as
ordinary Python, followed by a tail call of the resume function that continues the
original bytecode after it.

`EMITTERS` maps an opcode to a function that writes its Python equivalent over the
expressions of the live stack and says where execution resumes; a conditional jump
gives two branches. Inside a try, with or finally block the instruction runs under
a try statement whose exceptions resume at the block's handler. An instruction with
no emitter resumes *at* the instruction in an uncompiled resume function, which runs
the rest of the frame natively, as does one whose emitter declines (returns None).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import bytecode_compat as bc

NULL_SLOT = None  # a stack slot holding CPython's NULL
LASTI_SLOT = "__lasti"  # a handler's stack slot for the raising instruction's index, filled in by _resumes


@dataclass
class Branch:
    test: str | None                 # Python condition for this branch; None: always taken
    lines: list = field(default_factory=list)
    stack: list = field(default_factory=list)   # expressions, NULL_SLOT for NULLs, bottom first
    offset: int = 0                  # where the resume function restarts the original code
    native: bool = False             # resume uncompiled, at the instruction itself
    raised_at: int | None = None     # for a handler that wants it (LASTI_SLOT): the raising instruction


def _next(tx, inst) -> int:
    return tx.instructions[tx.index_of[inst.offset] + 1].offset


def _result(tx, inst, s, pops: int, line: str) -> list[Branch]:
    return [Branch(None, [line], s[:len(s) - pops] + ["__r"], _next(tx, inst))]


def _call(tx, inst, s, argc: int, kw_names: tuple) -> list[Branch]:
    args = s[len(s) - argc:]
    nkw = len(kw_names)
    pos = args[:argc - nkw]
    kws = [f"{k}={v}" for k, v in zip(kw_names, args[argc - nkw:])]
    first, second = s[len(s) - argc - 2], s[len(s) - argc - 1]
    fn, self_expr = bc.split_call_slots(first, second, lambda e: e is NULL_SLOT)
    if self_expr is not None:
        pos = [self_expr, *pos]
    line = f"__r = __frame({fn})({', '.join([*pos, *kws])})"
    return [Branch(None, [line], s[:len(s) - argc - 2] + ["__r"], _next(tx, inst))]


def _emit_call(tx, inst, s):
    return _call(tx, inst, s, inst.arg, tx.kw_names)


def _emit_call_kw(tx, inst, s):
    return _call(tx, inst, s[:-1], inst.arg, tx.stack[-1].as_constant())


def _emit_call_function_ex(tx, inst, s):
    kwargs = s[-1] if inst.arg & 1 else "{}"
    rest = s[:-1] if inst.arg & 1 else s
    args = rest[-1]
    first, second = rest[-3], rest[-2]
    fn, self_expr = bc.split_call_slots(first, second, lambda e: e is NULL_SLOT)
    lead = f"{self_expr}, " if self_expr is not None else ""
    line = f"__r = __frame({fn})({lead}*{args}, **{kwargs})"
    return [Branch(None, [line], rest[:-3] + ["__r"], _next(tx, inst))]


def _jump(test_fmt: str, keep_on_jump: bool = False, keep_otherwise: bool = False):
    def emit(tx, inst, s):
        cond = test_fmt.format(s[-1])
        taken = Branch(cond, [], s if keep_on_jump else s[:-1], inst.argval)
        fallthrough = Branch(None, [], s if keep_otherwise else s[:-1], _next(tx, inst))
        return [taken, fallthrough]
    return emit


def _binary_op(tx, inst, s):
    fn, inplace = bc.BINARY_OPS[inst.arg]
    symbol = inst.argrepr.rstrip("=") if inplace else inst.argrepr
    a, b = s[-2], s[-1]
    if inplace:
        return [Branch(None, [f"__r = {a}", f"__r {symbol}= {b}"], s[:-2] + ["__r"], _next(tx, inst))]
    return _result(tx, inst, s, 2, f"__r = {a} {symbol} {b}")


def _compare_op(tx, inst, s):
    symbol = inst.argval[5:-1] if inst.argval.startswith("bool(") else inst.argval
    expr = f"{s[-2]} {symbol} {s[-1]}"
    return _result(tx, inst, s, 2, f"__r = bool({expr})" if inst.argval.startswith("bool(") else f"__r = {expr}")


def _load_attr(tx, inst, s):
    line = f"__r = {s[-1]}.{inst.argval}"
    if bc.attr_is_method_load(inst):
        return [Branch(None, [line], s[:-1] + list(bc.callable_pair("__r", NULL_SLOT)), _next(tx, inst))]
    return _result(tx, inst, s, 1, line)


def _for_iter(tx, inst, s):
    exhausted = s + ["None"] if bc.FOR_ITER_EXIT_PUSHES_PLACEHOLDER else s[:-1]
    return [
        Branch("__r is __STOP", [f"__r = next({s[-1]}, __STOP)"], exhausted, inst.argval),
        Branch(None, [], s + ["__r"], _next(tx, inst)),
    ]


def _unpack_sequence(tx, inst, s):
    names = [f"__u{i}" for i in range(inst.arg)]
    target = ", ".join(names) + ("," if inst.arg == 1 else "")
    return [Branch(None, [f"{target} = {s[-1]}"], s[:-1] + names[::-1], _next(tx, inst))]


def _before_with(tx, inst, s):
    """A context manager the tracer does not follow is entered as Python; its body is traced again
    (a graph that raises there is replayed as Python, so `__exit__` sees the error). np.errstate
    with settings other than "ignore" changes what NumPy raises: its whole block runs as Python."""
    if isinstance(getattr(tx.stack[-1], "value", None), np.errstate):
        return None
    # as CPython does: the context manager's __exit__, bound, stays on the stack under __enter__'s result
    lines = [f"__x = {s[-1]}", "__e = type(__x).__exit__.__get__(__x)", "__r = type(__x).__enter__(__x)"]
    return [Branch(None, lines, s[:-1] + ["__e", "__r"], _next(tx, inst))]


def _statement(fmt: str, pops: int):
    def emit(tx, inst, s):
        return [Branch(None, [fmt.format(*s[len(s) - pops:], name=inst.argval)], s[:len(s) - pops], _next(tx, inst))]
    return emit


def _expression(fmt: str, pops: int):
    def emit(tx, inst, s):
        return _result(tx, inst, s, pops, "__r = " + fmt.format(*s[len(s) - pops:], arg=inst.arg))
    return emit


EMITTERS = {
    "CALL": _emit_call,
    "CALL_KW": _emit_call_kw,
    "CALL_FUNCTION_EX": _emit_call_function_ex,
    "BINARY_OP": _binary_op,
    "COMPARE_OP": _compare_op,
    "LOAD_ATTR": _load_attr,
    "LOAD_METHOD": _load_attr,
    "FOR_ITER": _for_iter,
    "UNPACK_SEQUENCE": _unpack_sequence,
    "BEFORE_WITH": _before_with,
    "GET_ITER": _expression("iter({0})", 1),
    "TO_BOOL": _expression("bool({0})", 1),
    "UNARY_NOT": _expression("not {0}", 1),
    "UNARY_NEGATIVE": _expression("-{0}", 1),
    "UNARY_INVERT": _expression("~{0}", 1),
    "UNARY_POSITIVE": _expression("+{0}", 1),
    "BINARY_SUBSCR": _expression("{0}[{1}]", 2),
    "BINARY_SLICE": _expression("{0}[{1}:{2}]", 3),
    "IS_OP": _expression("({0} is not {1}) if {arg} else ({0} is {1})", 2),
    "CONTAINS_OP": _expression("({0} not in {1}) if {arg} else ({0} in {1})", 2),
    "STORE_SUBSCR": _statement("{1}[{2}] = {0}", 3),
    "STORE_SLICE": _statement("{1}[{2}:{3}] = {0}", 4),
    "STORE_ATTR": _statement("{1}.{name} = {0}", 2),
    "JUMP_IF_TRUE_OR_POP": _jump("{}", keep_on_jump=True),
    "JUMP_IF_FALSE_OR_POP": _jump("not {}", keep_on_jump=True),
}
for _prefix, _fmt in (("TRUE", "{}"), ("FALSE", "not {}"), ("NONE", "{} is None"), ("NOT_NONE", "{} is not None")):
    for _name in (f"POP_JUMP_IF_{_prefix}", f"POP_JUMP_FORWARD_IF_{_prefix}", f"POP_JUMP_BACKWARD_IF_{_prefix}"):
        EMITTERS[_name] = _jump(_fmt)


def _native_restart(tx, inst) -> int:
    """Where a native resume restarts for a break at `inst`: the instruction itself, or for a call
    with keywords on 3.11/3.12 the KW_NAMES before it, whose names the CALL reads from the
    interpreter's state rather than the stack."""
    if not tx.kw_names:
        return inst.offset
    i = tx.index_of[inst.offset]
    while tx.instructions[i].opname != "KW_NAMES":
        i -= 1
    return tx.instructions[i].offset


_TRUTH_JUMPS = frozenset(f"POP_JUMP_{d}IF_{t}" for d in ("", "FORWARD_", "BACKWARD_") for t in ("TRUE", "FALSE"))


_PLAIN_JUMPS = frozenset({"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})


def _past_plain_jumps(tx, offset: int) -> int:
    """Where execution at `offset` really goes: a resume point on an unconditional jump (3.12's
    loop end after its bottom test) becomes the jump's target, so that every path into one place
    shares one resume function and its cache entry."""
    seen = set()
    while offset not in seen:
        seen.add(offset)
        inst = tx.instructions[tx.index_of[offset]]
        if inst.opname not in _PLAIN_JUMPS:
            break
        offset = inst.argval
    return offset


def _handled(tx, inst, stack_exprs: list, branches: list[Branch]) -> list[Branch] | None:
    """Residual code for a break inside a try, with or finally block: the instruction runs under a
    try statement whose exception resumes at the block's handler, as CPython's exception table says
    (the stack cut to the entry's depth, then the instruction's index if the entry wants it, then
    the exception); the other branches go on compiling inside the block."""
    entry = bc.handler_at(tx.code, inst.offset)
    if entry is None:
        return None
    lines = []
    for i, b in enumerate(branches):  # tests run under the try too: a jump's bool() can raise
        lines += b.lines
        b.lines = []
        if b.test is not None:
            lines.append(f"__test{i} = bool({b.test})")
            b.test = f"__test{i}"
    guarded = ["try:", *("    " + line for line in lines or ["pass"]),
               "except BaseException as __e:", "    __exc = __e", "else:", "    __exc = None"]
    lasti = [LASTI_SLOT] if entry.lasti else []
    raised = Branch("__exc is not None", guarded, [*stack_exprs[:entry.depth], *lasti, "__exc"], entry.target,
                    raised_at=inst.offset if entry.lasti else None)
    return [raised, *branches]


def branches_at(tx, inst, stack_exprs: list, protected: frozenset) -> list[Branch]:
    """The residual branches for a break at `inst`, given the stack as expressions."""
    emitter = EMITTERS.get(inst.opname)
    branches = emitter and _plain_branches(tx, emitter, inst, stack_exprs)
    if branches and inst.offset in protected:
        branches = _handled(tx, inst, stack_exprs, branches)
    if not branches:
        stack = list(stack_exprs)
        if inst.opname in _TRUTH_JUMPS:  # 3.13 jumps on exact bools only; the traced value may be np.bool_
            stack[-1] = f"bool({stack[-1]})"
        return [Branch(None, [], stack, _native_restart(tx, inst), native=True)]
    return branches


def _plain_branches(tx, emitter, inst, stack_exprs: list) -> list[Branch] | None:
    branches = emitter(tx, inst, list(stack_exprs))
    for branch in branches or ():
        branch.offset = _past_plain_jumps(tx, branch.offset)
    return branches
