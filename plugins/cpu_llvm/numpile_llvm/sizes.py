"""Symbolic sizes in kernels: a graph with dynamic shapes has sizes, strides and index constants
that are SymInts over its symbols (s0, s1, ...), whose values a kernel takes as i64 arguments.

`Sizes` turns such an expression into an IR value, computed once at the function's entry
(where it dominates every use, and no division by a size is left inside a loop).
`strides_of` gives the strides a kernel assumes for an array it did not allocate: a buffer of
static shape has its example's (constants, as ever); one of symbolic shape has, per dimension,
the C-order stride (an expression of the sizes) where the example has it, a constant where the
example's is 0 or ±1 (a contiguous innermost loop is what vectorises), and otherwise a stride
read from the array at run time, a size parameter named by `stride_parameter`.
"""

from __future__ import annotations

import ast

import numpy as np

from numpile.lowering.reference import size
from numpile.shapes import SymInt

from .irbuilder import I64, Function, V, literal


def as_python(size) -> str:
    """A size as runner source (symbols are the runner's variables s0, s1, ...)."""
    return f"({size.expr})" if isinstance(size, SymInt) else repr(size)


def stride_parameter(buffer: str, dim: int) -> str:
    """A Python name (size expressions are parsed as Python): `nonzero[1]`, result 1 of an extern,
    is `nonzero_r1`."""
    return f"stride{dim}_{buffer.replace('[', '_r').replace(']', '')}"


def read_at_run_time(buffer: str, dim: int, stride) -> bool:
    return isinstance(stride, SymInt) and stride.expr == stride_parameter(buffer, dim)


def c_strides(shape: tuple) -> tuple:
    """Element strides of a C-ordered array of this shape (a symbolic size of 0 leaves it empty:
    nothing is addressed, so its strides need not be NumPy's)."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step = step * (n if isinstance(n, SymInt) else max(n, 1))
    return tuple(reversed(strides))


def strides_of(name: str, shape: tuple, array: np.ndarray, symbols: list) -> tuple | None:
    """The element strides kernels assume for `array` as buffer `name` (see the module docstring),
    or None when one is not a whole number of elements. `symbols`: the symbols' values (by
    number) for this array."""
    if any(s % array.itemsize for s in array.strides):
        return None
    actual = tuple(s // array.itemsize for s in array.strides)
    if not any(isinstance(n, SymInt) for n in shape):
        return actual
    layout = []
    for d, (n, c, s) in enumerate(zip(shape, c_strides(shape), actual)):
        if size(c, symbols) == s:   # a layout, not a guard: the kernel's entry checks it on every call
            layout.append(c)
        elif s in (-1, 0, 1) or not isinstance(n, SymInt) and n <= 1:
            layout.append(s)
        else:
            layout.append(SymInt(stride_parameter(name, d), s))
    return tuple(layout)


def layout_key(strides: tuple | None):
    """strides_of's result as a hashable key."""
    return None if strides is None else tuple(s.expr if isinstance(s, SymInt) else s for s in strides)


_ARITHMETIC = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul"}


class Sizes:
    """Size expressions as i64 values of one function. `params` maps the names in expressions
    (symbols, strides read at run time) to values; `lines` go right after the entry label."""

    def __init__(self, fn: Function, params: dict):
        self.fn, self.params = fn, params
        self.lines: list[str] = []
        self.values: dict[str, V] = {}

    def __call__(self, x) -> V:
        if not isinstance(x, SymInt):
            return literal(x, I64)
        if x.expr not in self.values:
            self.values[x.expr] = self.at_entry(lambda: self._emit(ast.parse(x.expr, mode="eval").body))
        return self.values[x.expr]

    def at_entry(self, emit):
        """The result of emit(), its instructions placed at the function's entry."""
        lines, self.fn.lines = self.fn.lines, self.lines
        try:
            return emit()
        finally:
            self.fn.lines = lines

    def _emit(self, node) -> V:
        fn = self.fn
        if isinstance(node, ast.Name):
            return self.params[node.id]
        if isinstance(node, ast.Constant):
            return literal(node.value, I64)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return fn.binary("sub", literal(0, I64), self._emit(node.operand))
        if isinstance(node, ast.Call) and node.func.id in ("max", "min"):
            a, b = (self._emit(arg) for arg in node.args)
            return fn.intrinsic("s" + node.func.id, [a, b], I64)
        a, b = self._emit(node.left), self._emit(node.right)
        if type(node.op) in _ARITHMETIC:
            return fn.binary(_ARITHMETIC[type(node.op)], a, b)
        # Python's floor division and modulo (signs of the divisor); a divisor of 0 (a shape
        # the runner could not have made: Python raised first) must not trap
        b = fn.select(fn.compare("icmp", "eq", b, literal(0, I64)), literal(1, I64), b)
        quotient, remainder = fn.binary("sdiv", a, b), fn.binary("srem", a, b)
        signs_differ = fn.compare("icmp", "slt", fn.binary("xor", remainder, b), literal(0, I64))
        adjust = fn.binary("and", fn.compare("icmp", "ne", remainder, literal(0, I64)), signs_differ)
        if isinstance(node.op, ast.FloorDiv):
            return fn.binary("sub", quotient, fn.convert("zext", adjust, I64))
        return fn.select(adjust, fn.binary("add", remainder, b), remainder)

