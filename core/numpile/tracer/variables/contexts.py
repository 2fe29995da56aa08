"""Context managers the tracer follows into their with block (as Dynamo follows torch.no_grad).

`np.errstate` with every setting "ignore" is one: it changes no result, only which floating-point
errors NumPy reports. Ops traced in its block carry the settings in their node meta ("errstate"),
so a backend that reports floating-point errors (eager) stays quiet there as NumPy does; compiled
kernels report none anyway. Other context managers break the graph at the with statement: the
residual code enters them as Python and the body is captured again (errstate with settings other
than "ignore" runs its whole block as Python: it changes what NumPy raises). At a break inside the
block, the residual code enters a real errstate with the same settings, whose `__exit__` the
resumed code calls as CPython would.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...exc import Unsupported
from .base import Variable
from .objects import ConstantVariable

_ERROR_KINDS = ("divide", "over", "under", "invalid")


@dataclass(eq=False)
class ErrstateVariable(Variable):
    """np.errstate(**settings), not entered yet."""

    settings: dict       # error kind -> "ignore", "all" expanded

    def describe(self) -> str:
        return f"np.errstate({', '.join(f'{k}={v!r}' for k, v in self.settings.items())})"


@dataclass(eq=False)
class ContextExitVariable(Variable):
    """The bound `__exit__` that BEFORE_WITH leaves on the stack for the end of the block."""

    context: ErrstateVariable

    def describe(self) -> str:
        return f"the __exit__ of {self.context.describe()}"

    def call(self, tx, args: list, kwargs: dict) -> Variable:
        """The end of the block without an exception: `__exit__(None, None, None)`."""
        if len(args) != 3 or not all(a.is_constant() and a.as_constant() is None for a in args):
            raise Unsupported(f"calling {self.describe()} with an exception")
        tx.output.errstate.pop()
        return ConstantVariable(None)


def errstate(tx, args: list, kwargs: dict) -> ErrstateVariable:
    if args or not all(v.is_constant() for v in kwargs.values()):
        raise Unsupported("np.errstate with positional or non-constant arguments")
    given = {k: v.as_constant() for k, v in kwargs.items()}
    settings = {}
    for key, value in given.items():
        if key not in (*_ERROR_KINDS, "all"):
            raise Unsupported(f"np.errstate({key}=...) is not supported")
        if value is None:
            continue
        if value != "ignore":
            raise Unsupported(f"np.errstate({key}={value!r}): compiled code reports no floating-point errors; "
                              "only 'ignore' is captured")
        settings.update(dict.fromkeys(_ERROR_KINDS if key == "all" else (key,), value))
    return ErrstateVariable(settings)


# callables that make a context manager the tracer follows: callable -> handler(tx, args, kwargs)
CONTEXT_FACTORIES = {np.errstate: errstate}


def enter(tx, ctx: Variable) -> Variable:
    """BEFORE_WITH: push the exit callable and return what `__enter__` returns."""
    if not isinstance(ctx, ErrstateVariable):
        raise Unsupported(f"with {ctx.describe()}: the tracer follows only np.errstate(...='ignore'); "
                          "the manager is entered as Python and its body captured after it")
    tx.output.errstate.append(ctx.settings)
    tx.push(ContextExitVariable(ctx))
    return ConstantVariable(None)  # errstate.__enter__ returns None


def entered_exit(settings: dict):
    """Residual code at a break inside the block: a real errstate, entered, and its `__exit__`."""
    context = np.errstate(**settings)
    context.__enter__()
    return context.__exit__
