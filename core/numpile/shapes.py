"""Symbolic dimensions for dynamic shapes.

A `SymInt` stands for a dimension that may change between calls. It carries an
expression over the shape symbols (`s0`, `s1`, ...) and its value for the call
being traced (its *hint*). Arithmetic on SymInts gives SymInts; any decision
(`==`, `<`, `bool`, using it as a Python int) is taken on the hint and recorded
as a guard on the active `ShapeEnv`, so the compiled code is reused exactly when
the same decisions hold. Meta rules therefore compute shapes with plain Python
arithmetic and comparisons, and never hash a dimension.

After the trace nothing can add a guard: code that lowers a symbolic graph runs under
`no_new_guards()`, where a decision raises `NewGuard` instead of being taken on the hints
(which would be right for this call's sizes only). Where it repeats a decision the trace
took, it says so with `replaying()`.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

SYMBOL_PATTERN = re.compile(r"\bs(\d+)\b")


class ShapeEnv:
    """The symbols of one trace (each the size of a dimension of an input) and the guards
    the trace relied on, as Python expressions over the symbols."""

    def __init__(self):
        self.symbols: list[tuple[str, int]] = []   # per symbol: (source expression of the array, dim)
        self.hints: list[int] = []
        self.guards: list[str] = []

    def new_symbol(self, array_expr: str, dim: int, hint: int) -> "SymInt":
        self.symbols.append((array_expr, dim))
        self.hints.append(hint)
        return SymInt(f"s{len(self.symbols) - 1}", hint)

    def record(self, expr: str) -> None:
        if expr not in self.guards:
            self.guards.append(expr)

    def source_expr(self, expr: str, array_name=None) -> str:
        """`expr` with each symbol replaced by the dimension it stands for: `x.shape[0] // 2`.
        `array_name(i)` can name symbol i's array differently (e.g. by a graph input's name)."""
        def sub(m):
            array, dim = self.symbols[int(m.group(1))]
            return f"{array_name(int(m.group(1))) if array_name else array}.shape[{dim}]"
        return SYMBOL_PATTERN.sub(sub, expr)


_active: list[ShapeEnv] = []


@contextlib.contextmanager
def active(env: ShapeEnv):
    """Decisions on SymInts made inside are guards of `env`."""
    _active.append(env)
    try:
        yield env
    finally:
        _active.pop()


class NewGuard(Exception):
    """A decision on symbolic dims that no guard of the trace covers, asked for after the trace."""


class _Forbidden:
    def record(self, expr: str) -> None:
        raise NewGuard(f"{expr} is not guarded")


class _Replayed:
    def record(self, expr: str) -> None:
        pass  # the trace took this decision on the same values, and guarded it


def no_new_guards():
    """Decisions on SymInts made inside raise NewGuard (see the module docstring)."""
    return active(_Forbidden())


def replaying():
    """Decisions made inside repeat ones the trace took and guarded: taken on the hints."""
    return active(_Replayed())


def _decide(expr: str, value: bool) -> bool:
    if _active:
        _active[-1].record(expr)
    return value


def _hint(x) -> int:
    return x.hint if isinstance(x, SymInt) else int(x)


def _is_int(x) -> bool:
    return isinstance(x, SymInt) or (isinstance(x, int) and not isinstance(x, bool))


def _linear(x) -> tuple[dict, int] | None:
    """x as (symbol -> coefficient, constant), or None when it is not linear."""
    if isinstance(x, SymInt):
        return None if x.opaque is not None else (dict(x.terms), x.const)
    return {}, int(x)


def _render(x) -> str:
    return x.expr if isinstance(x, SymInt) else repr(int(x))


def _atom(x) -> str:
    """x's expression, parenthesised unless it is one symbol or a number."""
    text = _render(x)
    return text if text.lstrip("-").isalnum() else f"({text})"


_NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


class SymInt:
    """A symbolic dimension: a linear form over the symbols (kept simple for readable guards)
    or, past + - and scaling, an opaque expression."""

    __slots__ = ("terms", "const", "opaque", "hint")

    def __init__(self, expr: str | None = None, hint: int = 0, terms=(), const: int = 0, opaque: str | None = None):
        if expr is not None:  # a fresh symbol
            terms, opaque = ((expr, 1),), None
        self.terms = tuple(sorted((k, v) for k, v in dict(terms).items() if v)) if opaque is None else ()
        self.const, self.opaque, self.hint = (const if opaque is None else 0), opaque, int(hint)

    @classmethod
    def _make(cls, linear, hint, opaque=None):
        if opaque is not None:
            return cls(hint=hint, opaque=opaque)
        terms, const = linear
        if not any(terms.values()):
            return const  # the symbols cancelled: a plain int
        return cls(hint=hint, terms=terms, const=const)

    @property
    def expr(self) -> str:
        if self.opaque is not None:
            return self.opaque
        parts = []
        for name, coeff in self.terms:
            term = name if abs(coeff) == 1 else f"{abs(coeff)}*{name}"
            parts.append(("- " if coeff < 0 else "+ ") + term)
        if self.const:
            parts.append(("- " if self.const < 0 else "+ ") + str(abs(self.const)))
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else "-" + text[2:]

    def __repr__(self) -> str:
        return self.expr

    # arithmetic gives new symbolic values
    def _add(self, other, sign: int, reverse=False):
        if not _is_int(other):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        hint = _hint(a) + sign * _hint(b)
        la, lb = _linear(a), _linear(b)
        if la is None or lb is None:
            return SymInt._make(None, hint, f"{_atom(a)} {'+' if sign > 0 else '-'} {_atom(b)}")
        terms = dict(la[0])
        for k, v in lb[0].items():
            terms[k] = terms.get(k, 0) + sign * v
        return SymInt._make((terms, la[1] + sign * lb[1]), hint)

    def __add__(self, o): return self._add(o, 1)
    def __radd__(self, o): return self._add(o, 1, True)
    def __sub__(self, o): return self._add(o, -1)
    def __rsub__(self, o): return self._add(o, -1, True)

    def __mul__(self, o):
        if not _is_int(o):
            return NotImplemented
        hint = self.hint * _hint(o)
        if isinstance(o, SymInt) or self.opaque is not None:
            return SymInt._make(None, hint, f"{_atom(self)} * {_atom(o)}")
        terms, const = _linear(self)
        return SymInt._make(({k: v * o for k, v in terms.items()}, const * o), hint)

    __rmul__ = __mul__

    def _opaque(self, other, sym: str, fn, reverse=False):
        if not _is_int(other):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        if sym == "//" and not isinstance(b, SymInt) and b == 1:
            return a
        return SymInt._make(None, fn(_hint(a), _hint(b)), f"{_atom(a)} {sym} {_atom(b)}")

    def __floordiv__(self, o): return self._opaque(o, "//", lambda a, b: a // b)
    def __rfloordiv__(self, o): return self._opaque(o, "//", lambda a, b: a // b, True)
    def __mod__(self, o): return self._opaque(o, "%", lambda a, b: a % b)
    def __rmod__(self, o): return self._opaque(o, "%", lambda a, b: a % b, True)
    def __neg__(self): return self * -1
    def __pos__(self): return self

    def __truediv__(self, o):  # a float result is a value, not a dimension
        return self.specialize() / o

    def __rtruediv__(self, o):
        return o / self.specialize()

    # decisions are guards
    def _compare(self, other, sym: str, fn):
        if not _is_int(other):
            return NotImplemented
        result = fn(self.hint, _hint(other))
        if not isinstance(self - other, SymInt):  # the symbols cancel: true for every size
            return result
        return _decide(f"{_render(self)} {sym if result else _NEGATED[sym]} {_render(other)}", result)

    def __eq__(self, o): return self._compare(o, "==", lambda a, b: a == b)
    def __ne__(self, o): return self._compare(o, "!=", lambda a, b: a != b)
    def __lt__(self, o): return self._compare(o, "<", lambda a, b: a < b)
    def __le__(self, o): return self._compare(o, "<=", lambda a, b: a <= b)
    def __gt__(self, o): return self._compare(o, ">", lambda a, b: a > b)
    def __ge__(self, o): return self._compare(o, ">=", lambda a, b: a >= b)

    def __bool__(self) -> bool:
        return self._compare(0, "!=", lambda a, b: a != b)

    def specialize(self) -> int:
        """The value as a plain int; guarded to stay this value."""
        _decide(f"{_render(self)} == {self.hint}", True)
        return self.hint

    __index__ = specialize
    __int__ = specialize

    def __hash__(self):
        raise TypeError("a symbolic dimension cannot be hashed (it may equal several values)")


def hint(x) -> int:
    """The value of a dimension for the call being traced."""
    return _hint(x)


def is_symbolic(shape) -> bool:
    return any(isinstance(d, SymInt) for d in shape)


def identical(a, b) -> bool:
    """Whether two dims (or shapes) are the same expression: equal for every size, no decision
    taken. Different expressions may still be equal (under a guard, or by chance)."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b) and all(map(identical, a, b))
    return isinstance(a, SymInt) == isinstance(b, SymInt) and _render(a) == _render(b)


def _nonnegative(x) -> bool:
    """Whether x >= 0 holds for every size (symbols are sizes, never negative)."""
    linear = _linear(x)
    return linear is not None and linear[1] >= 0 and all(c >= 0 for c in linear[0].values())


def sym_max(a, b):
    """max(a, b) without a decision: a or b where one is known to be the larger, else a symbolic
    `max(a, b)`."""
    if _nonnegative(a - b):
        return a
    if _nonnegative(b - a):
        return b
    return SymInt(hint=max(_hint(a), _hint(b)), opaque=f"max({_render(a)}, {_render(b)})")


def evaluate(expr: str, symbol_values: list[int]) -> int:
    """The value of a symbolic expression for given symbol values."""
    return eval(SYMBOL_PATTERN.sub(lambda m: str(symbol_values[int(m.group(1))]), expr), {})


@dataclass
class DynamicInputs:
    """What a trace leaves unspecialised: input dimensions made symbolic ("all", or per source name
    a set of dims), and the sources of Python floats and ints that become graph inputs instead of
    constants."""

    all: bool = False
    per_source: dict = field(default_factory=dict)
    scalars: set = field(default_factory=set)

    def wants(self, source_name: str, dim: int, size: int) -> bool:
        if size in (0, 1):  # 0 and 1 change broadcasting and emptiness: always specialised
            return False
        return self.all or dim in self.per_source.get(source_name, ())


def slice_length(s: slice, size):
    """len(range(*s.indices(size))) for a size that may be symbolic; the comparisons it makes on
    the size become guards."""
    if not isinstance(size, SymInt):
        return len(range(*s.indices(size)))
    start, stop, step = _bounds(s, size)
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


def slice_start(s: slice, size):
    """s.indices(size)[0] for a size that may be symbolic (the comparisons slice_length makes)."""
    return s.indices(size)[0] if not isinstance(size, SymInt) else _bounds(s, size)[0]


def _bounds(s: slice, size) -> tuple:
    """(start, stop, step) as slice.indices resolves them, for a symbolic size."""
    step = 1 if s.step is None else s.step
    lo, hi = (0, size) if step > 0 else (-1, size - 1)
    first, last = (lo, hi) if step > 0 else (hi, lo)
    start = first if s.start is None else _clamp(s.start, size, lo, hi)
    stop = last if s.stop is None else _clamp(s.stop, size, lo, hi)
    return start, stop, step


def _clamp(bound: int, size, lo, hi):
    """A slice bound as slice.indices resolves it: negatives count from the end, then clamped to [lo, hi]."""
    value = bound + size if bound < 0 else bound
    return max(lo, min(value, hi))
