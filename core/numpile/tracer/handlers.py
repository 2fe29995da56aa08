"""Opcode handlers: one function per CPython opcode (or per family of spellings), registered in
dispatch.DISPATCH under the opcodes' names and named after one of them. Those of control flow
(returns, jumps, with, for) are flow_handlers.py's.

Each handler takes the translator and the `dis.Instruction`; version
differences are asked of bytecode_compat, never tested here by version number.
"""

from __future__ import annotations

import operator
import sys

from ..exc import Unsupported
from ..shapes import SymInt
from . import bytecode_compat as bc
from . import control
from .sources import ModuleSource
from .variables.spellings import assigned_sequence
from .dispatch import handles
from .translator import InstructionTranslator
from .variables import (
    NULL, ArrayVariable, CellVariable, ConstantVariable, DictVariable, ListVariable, NestedFunctionVariable, ObjectVariable,
    TupleVariable, make_slice,
)

Tx = InstructionTranslator


# -- no-ops and the stack ------------------------------------------------------------------
@handles("NOP", "RESUME", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS", "PRECALL", "NOT_TAKEN")
def nop(tx: Tx, inst):
    pass


@handles("POP_TOP")
def pop_top(tx: Tx, inst):
    tx.pop()


@handles("PUSH_NULL")
def push_null(tx: Tx, inst):
    tx.push(NULL)


@handles("COPY")
def copy(tx: Tx, inst):
    tx.push(tx.stack[-inst.arg])


@handles("SWAP")
def swap(tx: Tx, inst):
    tx.stack[-1], tx.stack[-inst.arg] = tx.stack[-inst.arg], tx.stack[-1]


# -- names -----------------------------------------------------------------------------------
@handles("LOAD_CONST")
def load_const(tx: Tx, inst):
    value = inst.argval
    tx.push(ConstantVariable(value) if not hasattr(value, "co_code") else ObjectVariable(value))


def _load_local(tx: Tx, name: str):
    if name not in tx.locals:
        raise Unsupported(f"local variable {name!r} referenced before assignment")
    return tx.locals[name]


@handles("LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_CLOSURE")
def load_fast(tx: Tx, inst):
    tx.push(_load_local(tx, inst.argval))


@handles("LOAD_FAST_AND_CLEAR")
def load_fast_and_clear(tx: Tx, inst):
    tx.push(tx.locals.pop(inst.argval, NULL))


@handles("LOAD_FAST_LOAD_FAST")
def load_fast_load_fast(tx: Tx, inst):
    for name in inst.argval:
        tx.push(_load_local(tx, name))


@handles("STORE_FAST")
def store_fast(tx: Tx, inst):
    value = tx.pop()
    if value is NULL:  # restoring a comprehension variable that was unbound (3.12+)
        tx.locals.pop(inst.argval, None)
    else:
        tx.locals[inst.argval] = value


@handles("STORE_FAST_LOAD_FAST")
def store_fast_load_fast(tx: Tx, inst):
    store, load = inst.argval
    tx.locals[store] = tx.pop()
    tx.push(_load_local(tx, load))


@handles("STORE_FAST_STORE_FAST")
def store_fast_store_fast(tx: Tx, inst):
    for name in inst.argval:
        tx.locals[name] = tx.pop()


@handles("DELETE_FAST")
def delete_fast(tx: Tx, inst):
    tx.locals.pop(inst.argval, None)


def _push_maybe_callable(tx: Tx, value, as_callable: bool):
    """Push a value, or (for a call to come) the value with its NULL in this version's order."""
    for v in bc.callable_pair(value, NULL) if as_callable else (value,):
        tx.push(v)


@handles("LOAD_GLOBAL")
def load_global(tx: Tx, inst):
    _push_maybe_callable(tx, tx.load_global(inst.argval), bc.global_pushes_null(inst))


@handles("STORE_GLOBAL")
def store_global(tx: Tx, inst):
    value = tx.pop()
    if inst.argval not in tx.f_globals or value is not tx.load_global(inst.argval):   # `global M; M *= 0.995`: the array it updated
        raise Unsupported("assigning a global (global x; x = ...) is not supported yet (STORE_GLOBAL)")


@handles("MAKE_CELL")
def make_cell(tx: Tx, inst):
    tx.locals[inst.argval] = CellVariable(contents=tx.locals.get(inst.argval))


@handles("LOAD_DEREF")
def load_deref(tx: Tx, inst):
    cell = _load_local(tx, inst.argval)
    if not isinstance(cell, CellVariable):
        raise Unsupported(f"closure variable holds {cell.describe()}")
    tx.push(cell.read(tx))


@handles("STORE_DEREF")
def store_deref(tx: Tx, inst):
    cell = tx.locals.get(inst.argval)
    if not isinstance(cell, CellVariable) or cell.source is not None:
        raise Unsupported(f"assigning to the enclosing function's variable {inst.argval!r} (nonlocal)")
    cell.contents = tx.pop()


# -- imports ---------------------------------------------------------------------------------
@handles("IMPORT_NAME")
def import_name(tx: Tx, inst):
    level, fromlist = (v.as_constant() for v in tx.popn(2))
    try:  # as the statement does: the first import of a module runs it, later ones find it in sys.modules
        module = __import__(inst.argval, tx.f_globals, None, fromlist, level)
    except Exception as e:
        raise Unsupported(f"import of {inst.argval!r} raised {type(e).__name__}: {e}") from None
    name = getattr(module, "__name__", None)
    if not isinstance(name, str) or sys.modules.get(name) is not module:
        raise Unsupported(f"import of {inst.argval!r} gave an object that sys.modules does not hold by its name")
    tx.push(tx.output.wrap(module, ModuleSource(name)))  # guarded by identity, as a global module is


@handles("IMPORT_FROM")
def import_from(tx: Tx, inst):
    tx.push(tx.stack[-1].getattr(tx, inst.argval))


# -- attributes and items --------------------------------------------------------------------
@handles("LOAD_ATTR", "LOAD_METHOD")
def load_attr(tx: Tx, inst):
    obj = tx.pop()
    _push_maybe_callable(tx, obj.getattr(tx, inst.argval), bc.attr_is_method_load(inst))


@handles("STORE_ATTR")
def store_attr(tx: Tx, inst):
    obj, value = tx.pop(), tx.pop()
    tx.output.store_attr(obj, inst.argval, value)


@handles("BINARY_SUBSCR")
def binary_subscr(tx: Tx, inst):
    index = tx.pop()
    tx.push(tx.pop().getitem(tx, index))


@handles("BINARY_SLICE")
def binary_slice(tx: Tx, inst):
    start, stop = tx.popn(2)
    container = tx.pop()
    tx.push(container.getitem(tx, make_slice(start, stop, ConstantVariable(None))))


@handles("BUILD_SLICE")
def build_slice(tx: Tx, inst):
    parts = tx.popn(inst.arg)
    if len(parts) == 2:
        parts.append(ConstantVariable(None))
    tx.push(make_slice(*parts))


@handles("STORE_SUBSCR")
def store_subscr(tx: Tx, inst):
    index, container, value = tx.pop(), tx.pop(), tx.pop()
    container.setitem(tx, index, _stored(tx, container, value))


@handles("STORE_SLICE")
def store_slice(tx: Tx, inst):
    start, stop = tx.popn(2)
    container, value = tx.pop(), tx.pop()
    container.setitem(tx, make_slice(start, stop, ConstantVariable(None)), _stored(tx, container, value))


def _stored(tx: Tx, container, value):
    """The value `container[...] = value` stores: into an array, a sequence as NumPy's array of it."""
    if isinstance(container, ArrayVariable) and (isinstance(value, (ListVariable, TupleVariable)) or
                                                 value.is_constant() and type(value.as_constant()) in (tuple, list)):
        return assigned_sequence(tx, container, value)
    return value


# -- operators -------------------------------------------------------------------------------
@handles("BINARY_OP")
def binary_op(tx: Tx, inst):
    fn, inplace = bc.BINARY_OPS[inst.arg]
    rhs = tx.pop()
    lhs = tx.pop()
    tx.push(lhs.apply_inplace(tx, fn, rhs) if inplace else tx.apply_operator(fn, [lhs, rhs]))


_UNARY = {"UNARY_NEGATIVE": operator.neg, "UNARY_INVERT": operator.invert, "UNARY_POSITIVE": operator.pos}


@handles(*_UNARY)
def unary_negative(tx: Tx, inst):   # and UNARY_INVERT, UNARY_POSITIVE
    tx.push(tx.apply_operator(_UNARY[inst.opname], [tx.pop()]))


@handles("UNARY_NOT")
def unary_not(tx: Tx, inst):
    value = tx.pop()
    truth = control.truth_value(tx, value, negate=True)   # a graph value where a cond may test it
    tx.push(truth if truth is not None else ConstantVariable(not value.truth(tx)))


@handles("TO_BOOL")
def to_bool(tx: Tx, inst):
    value = tx.pop()
    truth = control.truth_value(tx, value)
    tx.push(truth if truth is not None else ConstantVariable(value.truth(tx)))


@handles("COMPARE_OP")
def compare_op(tx: Tx, inst):
    rhs = tx.pop()
    tx.push(tx.apply_operator(bc.compare_op(inst), [tx.pop(), rhs]))


@handles("IS_OP")
def is_op(tx: Tx, inst):
    rhs, lhs = tx.pop(), tx.pop()
    if lhs.is_constant() and rhs.is_constant():
        same = lhs.as_constant() is rhs.as_constant()
    elif isinstance(lhs, ObjectVariable) and isinstance(rhs, ObjectVariable):
        same = lhs.value is rhs.value
    elif lhs is rhs:
        same = True
    elif _is_none(lhs) or _is_none(rhs):
        same = False  # a symbolic value (array, container, function) is never None
    else:
        raise Unsupported(f"`is` between {lhs.describe()} and {rhs.describe()}")
    tx.push(ConstantVariable(same != bool(inst.arg)))


def _is_none(var) -> bool:
    return var.is_constant() and var.as_constant() is None


@handles("CONTAINS_OP")
def contains_op(tx: Tx, inst):
    container, item = tx.pop(), tx.pop()
    tx.push(ConstantVariable(container.contains(tx, item) != bool(inst.arg)))


# -- building containers -----------------------------------------------------------------------
@handles("BUILD_TUPLE")
def build_tuple(tx: Tx, inst):
    tx.push(TupleVariable(tx.popn(inst.arg)))


@handles("BUILD_LIST")
def build_list(tx: Tx, inst):
    tx.push(ListVariable(tx.popn(inst.arg)))


@handles("BUILD_MAP")
def build_map(tx: Tx, inst):
    flat = tx.popn(2 * inst.arg)
    tx.push(DictVariable({flat[i].as_constant(): flat[i + 1] for i in range(0, len(flat), 2)}))


@handles("BUILD_CONST_KEY_MAP")
def build_const_key_map(tx: Tx, inst):
    keys = tx.pop().as_constant()
    tx.push(DictVariable(dict(zip(keys, tx.popn(inst.arg)))))


@handles("LIST_APPEND")
def list_append(tx: Tx, inst):
    value = tx.pop()
    target = tx.stack[-inst.arg]
    target.items.append(value)
    tx.output.mark_mutated(target)


@handles("LIST_EXTEND")
def list_extend(tx: Tx, inst):
    values = tx.pop()
    target = tx.stack[-inst.arg]
    target.items.extend(values.unpack(tx, "list extend"))
    tx.output.mark_mutated(target)


@handles("LIST_TO_TUPLE")
def list_to_tuple(tx: Tx, inst):
    tx.push(TupleVariable(list(tx.pop().items)))


@handles("MAP_ADD")
def map_add(tx: Tx, inst):
    value, key = tx.pop(), tx.pop()
    target = tx.stack[-inst.arg]
    target.items[key.as_constant()] = value
    tx.output.mark_mutated(target)


@handles("DICT_UPDATE", "DICT_MERGE")
def dict_update(tx: Tx, inst):
    other = tx.pop()
    if not isinstance(other, DictVariable):
        raise Unsupported(f"** unpacking of {other.describe()}")
    target = tx.stack[-inst.arg]
    target.items.update(other.items)
    tx.output.mark_mutated(target)


# -- f-strings: text of values known at compile time (a dict key f"W{i}", a message) -------------
CONVERSIONS = {0: lambda v: v, 1: str, 2: repr, 3: ascii}   # FORMAT_VALUE's low bits, CONVERT_VALUE's arg


def _known(v) -> object:
    if v.is_constant() and not isinstance(value := v.as_constant(), SymInt):
        return value
    raise Unsupported(f"{v.describe()} in an f-string: its text is known only when the code runs")


def _push_text(tx: Tx, make, *values) -> None:
    try:
        text = make(*values)
    except (TypeError, ValueError) as e:   # the residual code raises it, as Python does
        raise Unsupported(f"an f-string raising {type(e).__name__}: {e}") from None
    tx.push(ConstantVariable(text))


@handles("FORMAT_VALUE")
def format_value(tx: Tx, inst):   # up to Python 3.12: conversion and spec in one instruction
    spec = _known(tx.pop()) if inst.arg & 0x04 else ""
    _push_text(tx, lambda v: format(CONVERSIONS[inst.arg & 0x03](v), spec), _known(tx.pop()))


@handles("CONVERT_VALUE")
def convert_value(tx: Tx, inst):
    _push_text(tx, CONVERSIONS[inst.arg], _known(tx.pop()))


@handles("FORMAT_SIMPLE")
def format_simple(tx: Tx, inst):
    _push_text(tx, format, _known(tx.pop()))


@handles("FORMAT_WITH_SPEC")
def format_with_spec(tx: Tx, inst):
    spec = _known(tx.pop())
    _push_text(tx, format, _known(tx.pop()), spec)


@handles("BUILD_STRING")
def build_string(tx: Tx, inst):
    _push_text(tx, "".join, [_known(v) for v in tx.popn(inst.arg)])


@handles("CALL_INTRINSIC_1")
def call_intrinsic_1(tx: Tx, inst):
    if inst.arg == bc.INTRINSIC_LIST_TO_TUPLE:
        tx.push(TupleVariable(list(tx.pop().items)))
    elif inst.arg == bc.INTRINSIC_UNARY_POSITIVE:
        tx.push(tx.apply_operator(operator.pos, [tx.pop()]))
    else:
        raise Unsupported(f"CALL_INTRINSIC_1 {inst.argrepr} is not supported")


@handles("UNPACK_SEQUENCE")
def unpack_sequence(tx: Tx, inst):
    items = tx.pop().unpack(tx, "unpacking")
    if len(items) != inst.arg:
        raise Unsupported(f"unpacking {len(items)} values into {inst.arg} names (ValueError)")
    for v in reversed(items):
        tx.push(v)


@handles("UNPACK_EX")
def unpack_ex(tx: Tx, inst):
    before, after = inst.arg & 0xFF, inst.arg >> 8
    items = tx.pop().unpack(tx, "unpacking")
    if len(items) < before + after:
        raise Unsupported("not enough values to unpack (ValueError)")
    middle = ListVariable(items[before:len(items) - after])
    for v in reversed(items[:before] + [middle] + items[len(items) - after:]):
        tx.push(v)


# -- calls -----------------------------------------------------------------------------------
@handles("KW_NAMES")
def kw_names(tx: Tx, inst):
    tx.kw_names = bc.kw_names(tx.code, inst)


@handles("CALL")
def call(tx: Tx, inst):
    names, tx.kw_names = tx.kw_names, ()
    tx.call_with_kw(inst.arg, names)


@handles("CALL_KW")
def call_kw(tx: Tx, inst):
    tx.call_with_kw(inst.arg, tx.pop().as_constant())


@handles("CALL_FUNCTION_EX")
def call_function_ex(tx: Tx, inst):
    kwargs = tx.pop() if inst.arg & 1 else DictVariable({})
    args = tx.pop()
    first, second = tx.popn(2)
    fn, self_var = bc.split_call_slots(first, second, lambda v: v is NULL)
    if not isinstance(kwargs, DictVariable):
        raise Unsupported(f"** unpacking of {kwargs.describe()}")
    pos = args.unpack(tx, "* unpacking")
    if self_var is not None:
        pos = [self_var, *pos]
    tx.push(fn.call(tx, pos, dict(kwargs.items)))


@handles("MAKE_FUNCTION")
def make_function(tx: Tx, inst):
    code = tx.pop().value
    fn = NestedFunctionVariable(code, tx.f_globals, globals_source=tx.globals_source)
    if bc.MAKE_FUNCTION_TAKES_FLAGS:
        for flag in (bc.FN_CLOSURE, bc.FN_ANNOTATIONS, bc.FN_KWDEFAULTS, bc.FN_DEFAULTS):
            if inst.arg & flag:
                _set_function_attribute(tx, fn, flag, tx.pop())
    tx.push(fn)


@handles("SET_FUNCTION_ATTRIBUTE")
def set_function_attribute(tx: Tx, inst):
    fn = tx.pop()
    _set_function_attribute(tx, fn, inst.arg, tx.pop())
    tx.push(fn)


def _set_function_attribute(tx: Tx, fn: NestedFunctionVariable, flag: int, value):
    if flag == bc.FN_CLOSURE:
        fn.closure = tuple(value.items)
    elif flag == bc.FN_DEFAULTS:
        fn.defaults = tuple(value.known_items(tx, "defaults"))
    elif flag == bc.FN_KWDEFAULTS:
        fn.kwdefaults = dict(value.items) if isinstance(value, DictVariable) else \
            {k: ConstantVariable(v) for k, v in value.as_constant().items()}
