"""Functions and methods the tracer calls by inlining them, and the closure cells they read."""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

from ...exc import Unsupported
from ..sources import Source
from .base import Variable


@dataclass(eq=False)
class BoundMethodVariable(Variable):
    """`obj.method` looked up but not yet called: `fn` gets `self_var` as its first argument."""

    fn: Variable
    self_var: Variable
    source: Source | None = None

    def describe(self) -> str:
        return f"method {self.fn.describe()}"

    def call(self, tx, args: list, kwargs: dict) -> Variable:
        return self.fn.call(tx, [self.self_var, *args], kwargs)

    def truth(self, tx) -> bool:
        return True


@dataclass(eq=False)
class NestedFunctionVariable(Variable):
    """A function made by MAKE_FUNCTION inside the traced code (closures, lambdas, comprehensions)."""

    code: types.CodeType
    f_globals: dict
    defaults: tuple = ()                         # Variables
    kwdefaults: dict = field(default_factory=dict)
    closure: tuple = ()                          # CellVariables
    globals_source: Any = None                   # how guards reach f_globals: a callable name -> Source

    def describe(self) -> str:
        return f"function {self.code.co_name}"

    def call(self, tx, args: list, kwargs: dict) -> Variable:
        return tx.inline_nested(self, args, kwargs)

    def truth(self, tx) -> bool:
        return True


@dataclass(eq=False)
class CellVariable(Variable):
    """A closure cell. `contents` is None while the cell is empty."""

    contents: Variable | None = None
    source: Source | None = None   # set for cells of the compiled function's own closure (read-only)

    def describe(self) -> str:
        return "cell"

    def read(self, tx) -> Variable:
        if self.contents is None:
            if self.source is None:
                raise Unsupported("free variable referenced before assignment")
            self.contents = tx.output.wrap(tx.output.read_source(self.source), self.source)
        return self.contents
