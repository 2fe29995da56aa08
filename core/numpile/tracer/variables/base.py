"""What every Variable can be asked, and the answers of a value that does not say otherwise.

The translator asks a Variable what an instruction means for it: `getattr`, `call`, `truth`,
`iterate`, `getitem`, `setitem`, `contains`, `length`, `apply_inplace`. Each family of values (arrays, constants and
objects, containers, functions) answers in its own module; the defaults here raise the reason
users see, or compute the answer in Python where the value is known at compile time. Every
method takes the translator `tx` first: through it a Variable reaches the graph (`tx.output`),
inlining, operators, and the families above its own module (`tx.call_known`,
`tx.constant_result`), which keeps the modules of this package free of import cycles.
"""

from __future__ import annotations

import operator

import numpy as np

from ...exc import Unsupported
from ...shapes import SymInt
from ..sources import Source

# Values known at compile time, guarded by type and value.
CONSTANT_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, range, np.dtype, SymInt)


class Variable:
    source: Source | None = None

    def is_constant(self) -> bool:
        return False

    def as_constant(self):
        """The Python value this Variable stands for, when it is fully known."""
        raise Unsupported(f"{self.describe()} is not a constant known at compile time")

    def describe(self) -> str:
        return type(self).__name__

    def python_type(self) -> type:
        """type(value), for isinstance() and type() in the traced code."""
        if self.is_constant():
            return type(self.as_constant())
        raise Unsupported(f"type of {self.describe()}")

    def getattr(self, tx, name: str) -> "Variable":
        raise Unsupported(f"attribute {name!r} of {self.describe()} is not supported")

    def call(self, tx, args: list, kwargs: dict) -> "Variable":
        if self.is_constant():  # no constant is callable: the eager run raises Python's TypeError
            raise Unsupported(unsupported_call_reason(self.as_constant()))
        raise Unsupported(f"calling {self.describe()} is not supported")

    def truth(self, tx) -> bool:
        """bool(value) at compile time, or a graph break when it is not known."""
        if self.is_constant():
            return bool(self.as_constant())
        raise Unsupported(f"truth value of {self.describe()}")

    def iterate(self, tx, what: str) -> "IteratorVariable":
        """iter(value) over items known at compile time; `what` names the statement in errors."""
        if self.is_constant():
            try:
                items = list(self.as_constant())
            except TypeError:
                raise Unsupported(f"{what} over {self.describe()}") from None
            return IteratorVariable([tx.constant_result(v) for v in items])
        raise Unsupported(f"{what} over {self.describe()}")

    def unpack(self, tx, what: str) -> list["Variable"]:
        """The items a statement unpacks or a loop takes; an array gives its rows (x[0], x[1], ...)."""
        return self.iterate(tx, what).rest()

    def known_items(self, tx, what: str) -> list["Variable"]:
        """The items, where their number is known without array data (an array's is not asked)."""
        return self.unpack(tx, what)

    def length(self, tx) -> int:
        """len(value)."""
        return len(self.as_constant())

    def apply_inplace(self, tx, fn, other: "Variable") -> "Variable":
        """`self op= other` for the operator `fn` (operator.add for +=): a value that cannot be
        updated in place is rebound to `fn(self, other)`, as Python does."""
        return tx.apply_operator(fn, [self, other])

    def as_key(self, container: "Variable"):
        """This Variable's value as an index of `container`, a value that is not an array."""
        return self.as_constant()

    def getitem(self, tx, index: "Variable") -> "Variable":
        index.as_key(self)
        if self.is_constant():
            return tx.apply_operator(operator.getitem, [self, index])
        raise Unsupported(f"indexing {self.describe()}")

    def setitem(self, tx, index: "Variable", value: "Variable") -> None:
        index.as_constant()
        raise Unsupported(f"item assignment into {self.describe()}")

    def contains(self, tx, item: "Variable") -> bool:
        """`item in self`."""
        if self.is_constant() and item.is_constant():
            return item.as_constant() in self.as_constant()
        raise Unsupported(f"`in` with {item.describe()} and {self.describe()}")


class IteratorVariable(Variable):
    """An iterator over values known at compile time (unrolled loops)."""

    def __init__(self, items: list, index: int = 0):
        self.items, self.index = items, index

    def next(self) -> Variable | None:
        if self.index >= len(self.items):
            return None
        self.index += 1
        return self.items[self.index - 1]

    def rest(self) -> list[Variable]:
        """The items not taken yet (without taking them)."""
        return self.items[self.index:]

    def iterate(self, tx, what: str) -> "IteratorVariable":
        return self


class NullVariable(Variable):
    """The NULL CPython pushes beside callables."""

    def describe(self) -> str:
        return "NULL"


NULL = NullVariable()


def unsupported_call_reason(value) -> str:
    """Why a call of `value`, a Python callable known at compile time, is not captured."""
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
    if module.startswith("numpy.random") or isinstance(getattr(value, "__self__", None), np.random.Generator):
        return f"{name}: random draws run as Python, never captured as constants"
    if getattr(value, "__name__", None) == "__exit__" and hasattr(value, "__self__"):
        return f"the end of a with block entered as Python ({type(value.__self__).__qualname__}.__exit__) runs as Python"
    if module.split(".")[0] == "numpy":
        return f"np.{getattr(value, '__name__', name)} is not supported by numpile yet"
    where = f"{module}.{name}" if module and module != "builtins" else name
    if isinstance(value, type):
        return f"creating a {where} object is not supported"
    return f"call to {where} cannot be compiled"
