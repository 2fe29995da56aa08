"""Python arithmetic on dynamic Python scalars, kept in the graph.

A Python float or int whose value changed between compiles (automatic dynamic, see
automatic_dynamic.dynamic_inputs) is a graph value with meta `weak`: NumPy's ops treat it
as NEP 50 says, and Python operators on such values (`lr * 2`, `t % 10 == 0`) are graph ops
whose weak results come back as Python scalars. That is exact only where NumPy's float64/int64
result is Python's: `operator_result_is_weak` checks it and raises Unsupported (a graph break,
the operator then runs as Python) where it is not: division by zero (ZeroDivisionError in
Python), int results that could leave int64 (Python ints do not overflow), float floor division.

A float becomes a graph input at once. An int (`DynamicIntVariable`) stays a constant until the
trace uses it: in Python arithmetic it becomes a graph input guarded only to fit in int32; any
other use (a range, a shape, an index, an axis) specialises the entry on its value, as before.
"""

from __future__ import annotations

import operator

import numpy as np

from ..exc import Unsupported
from ..shapes import loop_dependent
from .variables import ArrayVariable, ConstantVariable, DynamicIntVariable

INT_INPUT_BOUND = 2 ** 31       # a dynamic int input fits in int32 (guarded)
_INT_RESULT_BOUND = 2 ** 62     # weak int results stay well inside int64
_EXACT_FLOAT_INT = 2 ** 53      # ints that float64 holds exactly

COMPARISON_SYMBOLS = {operator.lt: "<", operator.le: "<=", operator.eq: "==", operator.ne: "!=", operator.gt: ">", operator.ge: ">="}
_COMPARISONS = set(COMPARISON_SYMBOLS)
_ARITHMETIC = {operator.add, operator.sub, operator.mul, operator.neg, operator.pos, abs} | _COMPARISONS
_DIVISIONS = {operator.truediv, operator.floordiv, operator.mod}
_BITWISE = {operator.and_, operator.or_, operator.xor, operator.rshift, operator.lshift, operator.invert}   # on ints only
# operators that keep a dynamic int unspecialised
INT_OPERATORS = frozenset(_ARITHMETIC | _DIVISIONS | _BITWISE)


def unspecialised_operands(output, fn, args: list) -> list:
    """The operands of a Python operator with the dynamic ints among them made graph values, where
    the operator is arithmetic on numbers (not `t * [1, 2]`, not `x[t]`); and a loop's index (an
    expression of loop symbols) made its graph value where it meets a float (`i * 0.5`), which a
    size cannot be, or a Python number the graph computes (`i ^ (i >> 2)`)."""
    constants = [a.unguarded() if isinstance(a, ConstantVariable) else None for a in args]   # read without a guard
    weak = any(isinstance(a, ArrayVariable) and a.node.meta["weak"] for a in args)
    if fn in INT_OPERATORS and (float in map(type, constants) or weak) and any(map(loop_dependent, constants)):
        args = [output.control.index_value(c) if loop_dependent(c) else a for a, c in zip(args, constants)]
    if fn not in INT_OPERATORS or not any(isinstance(a, DynamicIntVariable) for a in args):
        return args
    if not all(isinstance(a, ArrayVariable) or isinstance(a, ConstantVariable) and type(a.unguarded()) in (int, float, bool)
               for a in args):  # unguarded: reading it must not specialise the constant
        return args
    return [a.graph_value(output) if isinstance(a, DynamicIntVariable) else a for a in args]


def _bound(var) -> int:
    """The largest magnitude a weak int graph value or an int constant can have."""
    if isinstance(var, ArrayVariable):
        return var.node.meta.get("bound", INT_INPUT_BOUND)
    return abs(var.as_constant())


def operator_result_is_weak(fn, args: list) -> tuple[bool, int | None]:
    """Whether `fn(*args)` is Python arithmetic on weak graph values (no NumPy operand, at least one
    weak one), and for an int result the bound of its magnitude. Raises Unsupported where Python's
    result could differ from NumPy's."""
    weak = [a for a in args if isinstance(a, ArrayVariable) and a.node.meta["weak"]]
    if not weak or any(isinstance(a, ArrayVariable) and not a.node.meta["weak"] for a in args):
        return False, None
    constants = [a.as_constant() for a in args if not isinstance(a, ArrayVariable)]
    ints = all(a.node.dtype == np.int64 for a in weak) and all(type(c) is int for c in constants)
    divisor = args[-1] if fn in _DIVISIONS else None
    exact = (
        all(a.node.dtype in (np.float64, np.int64) for a in weak)
        and all(type(c) is float or type(c) in (int, bool) and abs(c) <= _EXACT_FLOAT_INT for c in constants)
        and (fn in _ARITHMETIC or fn in _DIVISIONS and not isinstance(divisor, ArrayVariable)
             and divisor.as_constant() != 0 and (fn is operator.truediv or ints)
             or fn in _BITWISE and ints and _shift_by_constant(fn, args)
             or fn is operator.pow and _small_power(args))
    )
    if not exact:
        raise Unsupported(f"operator {fn.__name__} on {', '.join(a.describe() for a in args)}: "
                          "Python's result may differ from NumPy's (ZeroDivisionError, exact int comparison)")
    if not ints or fn in _COMPARISONS or fn is operator.truediv:
        return True, None
    bounds = [_bound(a) for a in args]
    bound = _bitwise_bound(fn, args, bounds) if fn in _BITWISE else bounds[0] * bounds[1] if fn is operator.mul else abs(divisor.as_constant()) if fn is operator.mod \
        else bounds[0] ** bounds[1] if fn is operator.pow \
        else bounds[0] if fn in (operator.floordiv, operator.neg, operator.pos, abs) else sum(bounds)
    if bound > _INT_RESULT_BOUND:
        raise Unsupported(f"operator {fn.__name__} on {', '.join(a.describe() for a in args)}: "
                          "the Python int could leave int64")
    return True, bound


def _small_power(args: list) -> bool:
    """`x ** k` of a constant int k >= 0, which Python and NumPy compute alike (a negative k is a
    float in Python and raises in NumPy for ints; a fractional one of a negative float is complex)."""
    k = args[1]
    return not isinstance(k, ArrayVariable) and type(k.as_constant()) is int and 0 <= k.as_constant() <= 62


def _shift_by_constant(fn, args: list) -> bool:
    """A shift by a constant count Python and int64 agree on (Python raises for a negative one)."""
    return fn not in (operator.rshift, operator.lshift) or not isinstance(args[1], ArrayVariable) \
        and 0 <= args[1].as_constant() < 63


def _bitwise_bound(fn, args: list, bounds: list) -> int:
    """The magnitude bound of a bitwise result: `&` with a non-negative constant is at most it, `|`
    and `^` stay under the next power of two, shifts scale the shifted value's bound."""
    if fn is operator.rshift:
        return bounds[0]
    if fn is operator.invert:   # ~x is -x - 1
        return bounds[0] + 1
    if fn is operator.lshift:
        return bounds[0] << args[1].as_constant()
    masks = [a.as_constant() for a in args if not isinstance(a, ArrayVariable) and a.as_constant() >= 0]
    if fn is operator.and_ and masks:
        return min(masks)
    return (1 << max(bounds).bit_length()) - 1
