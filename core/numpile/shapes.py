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

Some sizes only the data knows: how many elements `x[mask]` selects, the length of
`np.bincount(x)`, where `a[k:]` starts when k is an array. Such a size is an *unbacked* symbol
(torch.compile's name): it has no hint, and a graph node binds it when the graph runs (a dim of
its result). Arithmetic on it works as on any symbol; a decision that does not hold
for every size (`u == 1`, `u > 4`) raises `DataDependent`, which the tracer turns into a graph
break, and one that does (`u >= 0`: sizes are never negative) is taken without a guard.

The index of a loop captured as a loop (ops/control.py) is a *loop symbol*: its value runs over
a range (first to last, ints or expressions of other symbols) while the body runs (loop_ranges.py
sets the ranges), and its hint is the first value. A decision on a linear expression of it is taken for the whole range: the
expression is monotone in the index, so it holds everywhere when it holds at both ends, and those
two decisions are ordinary ones (guards on the other symbols). A non-linear expression with `%`
and `//` is decided on its bounds over the loops' ranges (intervals.py). A decision that differs
between the ends, or one on another non-linear expression of the index, raises DataDependent.
"""

from __future__ import annotations

import contextlib
import re
import threading
from dataclasses import dataclass

from .intervals import interval

SYMBOL_PATTERN = re.compile(r"\bs(\d+)\b")


class ShapeEnv:
    """The symbols of one trace (each the size of a dimension of an input) and the guards
    the trace relied on, as Python expressions over the symbols."""

    def __init__(self):
        self.symbols: list[tuple[str, int] | None] = []   # per symbol: (source expression of the array, dim)
        self.hints: list[int | None] = []
        self.guards: list[str] = []
        self.unbacked: dict[int, Unbacked] = {}   # symbol index -> what it counts and which node binds it
        self.loops: set[int] = set()               # the loop symbols

    def new_symbol(self, array_expr: str, dim: int, hint: int) -> "SymInt":
        self.symbols.append((array_expr, dim))
        self.hints.append(hint)
        return SymInt(f"s{len(self.symbols) - 1}", hint)

    def new_loop_symbol(self, first) -> "SymInt":
        """The index of a loop being captured, first `first`; `loop_range` says its range."""
        self.symbols.append(None)
        self.hints.append(_hint(first))
        self.loops.add(len(self.symbols) - 1)
        return SymInt(f"s{len(self.symbols) - 1}", _hint(first))

    def new_unbacked(self, what: str) -> "SymInt":
        """A size known only when the graph runs: `what` it is, for the messages of decisions on it."""
        self.symbols.append(None)
        self.hints.append(None)
        self.unbacked[len(self.symbols) - 1] = Unbacked(what)
        return SymInt(f"s{len(self.symbols) - 1}", None)

    def bind_dims(self, node, shape: tuple) -> None:
        """A new node's result has `shape`: it binds the unbacked symbols its dims are."""
        for dim, d in enumerate(shape):
            k = lone_symbol(d)
            if k in self.unbacked and self.unbacked[k].node is None:
                self.unbacked[k].node, self.unbacked[k].dim = node, dim

    def describe(self, error: "DataDependent") -> str:
        """A data-dependent decision as users read it: which sizes it needed."""
        used = sorted({int(k) for k in SYMBOL_PATTERN.findall(error.expr)} & set(self.unbacked))
        if not used:
            return f"{error.expr} is not the same for every index of the loop"
        names = ", ".join(f"s{k} ({self.unbacked[k].what})" for k in used)
        return f"{error.expr} depends on the data: {names} is known only when the graph runs"

    def record(self, expr: str) -> None:
        if expr not in self.guards:
            self.guards.append(expr)

    def source_expr(self, expr: str, array_name=None, unbacked=None) -> str:
        """`expr` with each symbol replaced by the dimension it stands for: `x.shape[0] // 2`.
        `array_name(i)` can name symbol i's array differently (e.g. by a graph input's name);
        `unbacked(u)` renders an unbacked symbol from its Unbacked (what binds it)."""
        def sub(m):
            k = int(m.group(1))
            if k in self.unbacked:
                return unbacked(self.unbacked[k])
            array, dim = self.symbols[k]
            return f"{array_name(k) if array_name else array}.shape[{dim}]"
        return SYMBOL_PATTERN.sub(sub, expr)


class _ThreadState(threading.local):
    """What decisions consult, per thread: the trace's ShapeEnv or a lowering's policy (`active`),
    and the ranges of the loops being captured or lowered (`loops`, loop symbol's name ->
    loop_ranges.LoopRange, set by loop_ranges.py). A compiled loop compiles its body when it first
    runs, on whatever thread runs it."""

    def __init__(self):
        self.active: list = []
        self.loops: dict[str, object] = {}


_STATE = _ThreadState()


def ranges_in_force() -> dict:
    """This thread's ranges of the loops being captured or lowered, innermost last (loop symbol's
    name -> loop_ranges.LoopRange): decisions on their symbols are taken over them. loop_ranges.py
    sets them; everything else reads them."""
    return _STATE.loops


@contextlib.contextmanager
def active(env: ShapeEnv):
    """Decisions on SymInts made inside are guards of `env`."""
    _STATE.active.append(env)
    try:
        yield env
    finally:
        _STATE.active.pop()


@dataclass
class Unbacked:
    """An unbacked symbol: what it counts, and the graph node that binds it when the graph runs
    (dim `dim` of the node's result)."""

    what: str
    node: object = None
    dim: int = 0


def unbacked(what: str) -> "SymInt":
    """A new unbacked symbol of the trace under way (ShapeEnv.new_unbacked); a meta rule asks for
    one for a result size only the data knows. Outside a trace there is none to make."""
    env = next((e for e in reversed(_STATE.active) if isinstance(e, ShapeEnv)), None)
    if env is None:
        raise NotImplementedError(f"{what} is known only from the data, and no trace is under way to name it")
    return env.new_unbacked(what)



def _loop_symbol_in(x: "SymInt") -> str | None:
    """A loop symbol that x uses (the innermost first), or None."""
    names = set(SYMBOL_PATTERN.findall(x.expr))
    return next((name for name in reversed(_STATE.loops) if name[1:] in names), None)


def substitute_loop_symbol(x: "SymInt", name: str, value):
    """x with loop symbol `name` replaced by `value`."""
    if x.opaque is not None:
        text = re.sub(rf"\b{name}\b", _atom(value), x.expr)
        return eval(text, {}) if not SYMBOL_PATTERN.search(text) else SymInt(hint=_hint(x), opaque=text)
    terms = dict(x.terms)
    coeff = terms.pop(name)
    own = _STATE.loops[name].hint
    rest_hint = None if x.hint is None or own is None else x.hint - coeff * own
    return SymInt._make((terms, x.const), rest_hint) + coeff * value


def substitute_index(x: "SymInt", index: "SymInt", value):
    """x, linear in loop symbol `index` (its range active), with the index replaced by `value`."""
    return substitute_loop_symbol(x, index.expr, value)


def _sizes_part(x: "SymInt"):
    """Linear x without its terms in loop symbols: what it is at every index."""
    for name in [n for n, _ in x.terms if n in _STATE.loops]:
        x = substitute_loop_symbol(x, name, 0)
    return x


def _decide_over_loop(difference: "SymInt", name: str, sym: str, question: str) -> bool:
    """`difference sym 0` for every value of loop symbol `name` (see the module docstring)."""
    if difference.opaque is None:
        ends = [substitute_loop_symbol(difference, name, v) for v in (_STATE.loops[name].first, _STATE.loops[name].last)]
    elif (ends := interval(difference, _STATE.loops, _sizes_part)) is None:   # `%`, `//`: bounds over the loops' ranges
        raise DataDependent(question)
    if sym in ("==", "!="):
        apart = all(e > 0 for e in ends) or all(e < 0 for e in ends)
        if not apart:
            raise DataDependent(question)
        return sym == "!="
    compare = {"<": lambda e: e < 0, "<=": lambda e: e <= 0, ">": lambda e: e > 0, ">=": lambda e: e >= 0}[sym]
    at_first, at_last = (compare(e) for e in ends)
    if at_first != at_last:
        raise DataDependent(question)
    return at_first


class NewGuard(Exception):
    """A decision on symbolic dims that no guard of the trace covers, asked for after the trace."""


class DataDependent(NewGuard):
    """A decision on a size only the data knows (an unbacked symbol) that does not hold for every size."""

    def __init__(self, expr: str):
        self.expr = expr
        super().__init__(f"{expr} depends on sizes known only when the graph runs")


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
    if _STATE.active:
        _STATE.active[-1].record(expr)
    return value


def _hint(x) -> int | None:
    return x.hint if isinstance(x, SymInt) else int(x)


def _hinted(fn, *values) -> int | None:
    """fn of the values' hints; None (no hint) where one is unbacked."""
    hints = [_hint(v) for v in values]
    return None if None in hints else fn(*hints)


def lone_symbol(x) -> int | None:
    """k where x is exactly the symbol s<k>, else None."""
    if isinstance(x, SymInt) and x.opaque is None and not x.const and len(x.terms) == 1 and x.terms[0][1] == 1:
        return int(x.terms[0][0][1:])
    return None


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


# The comparison that holds where each one does not.
NEGATED = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}


class SymInt:
    """A symbolic dimension: a linear form over the symbols (kept simple for readable guards)
    or, past + - and scaling, an opaque expression."""

    __slots__ = ("terms", "const", "opaque", "hint", "tree")

    def __init__(self, expr: str | None = None, hint: int = 0, terms=(), const: int = 0, opaque: str | None = None,
                 tree: tuple | None = None):
        if expr is not None:  # a fresh symbol
            terms, opaque = ((expr, 1),), None
        self.terms = tuple(sorted((k, v) for k, v in dict(terms).items() if v)) if opaque is None else ()
        self.const, self.opaque = (const if opaque is None else 0), opaque
        self.hint = None if hint is None else int(hint)   # None: unbacked
        self.tree = tree   # an opaque one's (op, a, b), for its bounds over loops (intervals.py)

    @classmethod
    def _make(cls, linear, hint, opaque=None, tree=None):
        if opaque is not None:
            return cls(hint=hint, opaque=opaque, tree=tree)
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
        hint = _hinted(lambda p, q: p + sign * q, a, b)
        la, lb = _linear(a), _linear(b)
        if la is None or lb is None:
            op = "+" if sign > 0 else "-"
            return SymInt._make(None, hint, f"{_atom(a)} {op} {_atom(b)}", (op, a, b))
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
        hint = _hinted(lambda p, q: p * q, self, o)
        if isinstance(o, SymInt) or self.opaque is not None:
            return SymInt._make(None, hint, f"{_atom(self)} * {_atom(o)}", ("*", self, o))
        terms, const = _linear(self)
        return SymInt._make(({k: v * o for k, v in terms.items()}, const * o), hint)

    __rmul__ = __mul__

    def _opaque(self, other, sym: str, fn, reverse=False):
        if not _is_int(other):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        if sym == "//" and not isinstance(b, SymInt) and b == 1:
            return a
        return SymInt._make(None, _hinted(fn, a, b), f"{_atom(a)} {sym} {_atom(b)}", (sym, a, b))

    def __floordiv__(self, o): return self._opaque(o, "//", lambda a, b: a // b)
    def __rfloordiv__(self, o): return self._opaque(o, "//", lambda a, b: a // b, True)
    def __mod__(self, o): return self._opaque(o, "%", lambda a, b: a % b)
    def __rmod__(self, o): return self._opaque(o, "%", lambda a, b: a % b, True)
    def __pow__(self, o): return self.specialize() ** o    # not a size: a loop's index raises (unrolled)
    def __rpow__(self, o): return o ** self.specialize()
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
        difference = self - other
        if not isinstance(difference, SymInt):  # the symbols cancel: the same for every size
            return fn(difference, 0)
        loop = _loop_symbol_in(difference) if _STATE.loops else None
        if loop is not None:
            return _decide_over_loop(difference, loop, sym, f"{_render(self)} {sym} {_render(other)}")
        if difference.hint is None:
            return _decide_for_every_size(difference, sym, f"{_render(self)} {sym} {_render(other)}")
        result = fn(self.hint, _hint(other))
        return _decide(f"{_render(self)} {sym if result else NEGATED[sym]} {_render(other)}", result)

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
        if self.hint is None or (_STATE.loops and _loop_symbol_in(self) is not None):
            raise DataDependent(f"int({self.expr})")
        _decide(f"{_render(self)} == {self.hint}", True)
        return self.hint

    __index__ = specialize
    __int__ = specialize

    def __hash__(self):
        raise TypeError("a symbolic dimension cannot be hashed (it may equal several values)")


def _decide_for_every_size(difference: SymInt, sym: str, question: str) -> bool:
    """`difference sym 0` where it holds, or fails, for every size (symbols are never negative);
    else DataDependent, naming the `question`."""
    at_least_zero, at_least_one = _nonnegative(difference), _nonnegative(difference - 1)
    at_most_minus_one = _nonnegative(-difference - 1)
    known = {">=": at_least_zero or (False if at_most_minus_one else None),
             ">": at_least_one or (False if _nonnegative(-difference) else None),
             "==": False if at_least_one or at_most_minus_one else None}
    known["<"] = None if known[">="] is None else not known[">="]
    known["<="] = None if known[">"] is None else not known[">"]
    known["!="] = None if known["=="] is None else not known["=="]
    if known[sym] is None:
        raise DataDependent(question)
    return known[sym]


def hint(x) -> int | None:
    """The value of a dimension for the call being traced (None for an unbacked one)."""
    return _hint(x)


def is_unbacked(x) -> bool:
    """Whether a dim (an int or SymInt) uses a size only the data knows."""
    return isinstance(x, SymInt) and x.hint is None


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


def sym_max(a, b, fn=max):
    """max(a, b) (with fn=min, min(a, b)) without a decision: a or b where one is known to be the
    larger, else a symbolic `max(a, b)`, bounded over loops (intervals.py)."""
    if _nonnegative(a - b) or _nonnegative(b - a):
        return (a if _nonnegative(a - b) else b) if fn is max else (b if _nonnegative(a - b) else a)
    return SymInt(hint=_hinted(fn, a, b), opaque=f"{fn.__name__}({_render(a)}, {_render(b)})", tree=(fn.__name__, a, b))


def read_symbol(array: str, dim: int | None) -> str:
    """Python reading a symbol's value off `array`: its size along `dim`, or with dim None its
    value (a loop body's index, a scalar input: Graph.symbols)."""
    return f"int({array})" if dim is None else f"{array}.shape[{dim}]"


def evaluate(expr: str, symbol_values: list[int]) -> int:
    """The value of a symbolic expression for given symbol values."""
    return eval(SYMBOL_PATTERN.sub(lambda m: str(symbol_values[int(m.group(1))]), expr), {})


def loop_dependent(*values) -> bool:
    """Whether a value is an expression of the index of a loop being traced or lowered."""
    return bool(_STATE.loops) and any(isinstance(v, SymInt) and _loop_symbol_in(v) is not None for v in values)
