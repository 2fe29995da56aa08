"""Where a value came from, relative to the compiled frame: guards and residual code name values by Source.

`expr()` is the Python expression that fetches the value inside generated code,
where the frame's arguments are local names, `__G` is the function's globals and
`__C` its closure cells.
"""

from __future__ import annotations

from dataclasses import dataclass


class Source:
    def expr(self) -> str:
        raise NotImplementedError

    def name(self) -> str:
        """How a user reads this source in logs: `x`, `self.w`, `__G['np']`."""
        return self.expr()

    def root(self) -> "Source":
        return self


@dataclass(frozen=True)
class LocalSource(Source):
    local: str

    def expr(self) -> str:
        return self.local


@dataclass(frozen=True)
class GlobalSource(Source):
    global_name: str

    def expr(self) -> str:
        return f"__G[{self.global_name!r}]"


@dataclass(frozen=True)
class ModuleSource(Source):
    """A module by its name in sys.modules: what an import statement in the compiled frame reads."""

    module: str

    def expr(self) -> str:
        return f"__import__('sys').modules[{self.module!r}]"

    def name(self) -> str:
        return f"sys.modules[{self.module!r}]"


@dataclass(frozen=True)
class ClosureSource(Source):
    """The contents of the compiled function's closure cell `index` (free variable `var`)."""

    index: int
    var: str

    def expr(self) -> str:
        return f"__C[{self.index}].cell_contents"

    def name(self) -> str:
        return f"<closure {self.var}>"


@dataclass(frozen=True)
class AttrSource(Source):
    base: Source
    attr: str

    def expr(self) -> str:
        return f"{self.base.expr()}.{self.attr}"

    def name(self) -> str:
        return f"{self.base.name()}.{self.attr}"

    def root(self) -> Source:
        return self.base.root()


@dataclass(frozen=True)
class ItemSource(Source):
    base: Source
    key: object  # an int, str or other constant key

    def expr(self) -> str:
        return f"{self.base.expr()}[{self.key!r}]"

    def name(self) -> str:
        return f"{self.base.name()}[{self.key!r}]"

    def root(self) -> Source:
        return self.base.root()


@dataclass(frozen=True)
class ExprSource(Source):
    """A Python expression over the frame's values, e.g. a relation between two dims."""

    code: str

    def expr(self) -> str:
        return f"({self.code})"

    def name(self) -> str:
        return self.code


@dataclass(frozen=True)
class SeedSource(Source):
    """A fresh seed of numpile's random stream, drawn from the NumPy generator at `base` (a
    RandomState or a Generator) at each call: 7 of its bytes, as an int (tracer/variables/draws.py)."""

    base: Source

    def expr(self) -> str:
        return f"int.from_bytes({self.base.expr()}.bytes(7), 'little')"

    def name(self) -> str:
        return f"seed_of_{self.base.name()}"

    def root(self) -> Source:
        return self.base.root()
