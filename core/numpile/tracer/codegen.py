"""Generated Python for a cache entry: the guard check and the run function.

Both have the compiled function's own signature, so the cache calls them with
the caller's arguments unchanged. The run function fetches the graph inputs
through their Sources, calls the compiled graph, and rebuilds the return value
(tuples, lists, dicts, constants, the caller's own objects) around its outputs.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..exc import Unsupported
from .variables import (
    ArrayVariable, ConstantVariable, DictVariable, ListVariable, ObjectVariable, TupleVariable, Variable,
)


class CodeNamespace:
    """Names for the objects generated code refers to."""

    def __init__(self, f_globals: dict, closure: tuple):
        self.values = {"__G": f_globals, "__C": closure or (), "ndarray": np.ndarray}
        self._ids: dict[int, str] = {}

    def const(self, obj) -> str:
        key = id(obj)
        if key not in self._ids:
            name = f"__k{len(self._ids)}"
            self._ids[key] = name
            self.values[name] = obj
        return self._ids[key]

    def define(self, source: str, fn_name: str, filename: str):
        exec(compile(source, filename, "exec"), self.values)
        return self.values[fn_name]


def signature_params(fn, ns: CodeNamespace) -> str:
    """The parameter list of `fn`, defaults replaced by namespace names (their objects, not copies)."""
    params, seen_kwonly_marker = [], False
    sig = inspect.signature(fn)
    last_posonly = max((i for i, p in enumerate(sig.parameters.values()) if p.kind is p.POSITIONAL_ONLY), default=None)
    for i, p in enumerate(sig.parameters.values()):
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text, seen_kwonly_marker = "*" + p.name, True
        elif p.kind is p.VAR_KEYWORD:
            text = "**" + p.name
        elif p.kind is p.KEYWORD_ONLY and not seen_kwonly_marker:
            params.append("*")
            seen_kwonly_marker = True
        if p.default is not p.empty:
            text += f"={ns.const(p.default)}"
        params.append(text)
        if i == last_posonly:
            params.append("/")
    return ", ".join(params)


def call_args(fn) -> str:
    """How the run function passes its own parameters on to `fn` unchanged."""
    out = []
    for p in inspect.signature(fn).parameters.values():
        if p.kind is p.VAR_POSITIONAL:
            out.append("*" + p.name)
        elif p.kind is p.VAR_KEYWORD:
            out.append("**" + p.name)
        elif p.kind is p.KEYWORD_ONLY:
            out.append(f"{p.name}={p.name}")
        else:
            out.append(p.name)
    return ", ".join(out)


def _scalar(value):
    """A backend's 0-d array output where NumPy returns a NumPy scalar."""
    return value[()] if type(value) is np.ndarray else value


class ResultBuilder:
    """Python expressions that rebuild a Variable after the graph ran (`__o` holds its outputs)."""

    def __init__(self, ns: CodeNamespace):
        self.ns = ns
        self.outputs: list = []  # graph nodes the result needs, in output order
        ns.values["__scalar"] = _scalar

    def expr(self, var: Variable) -> str:
        if isinstance(var, ArrayVariable):
            if var.node.op == "input":
                return var.source.expr()  # the caller's own array, identity kept
            if var.node not in self.outputs:
                self.outputs.append(var.node)
            out = f"__o[{self.outputs.index(var.node)}]"
            return f"__scalar({out})" if var.node.meta["scalar"] else out
        if isinstance(var, TupleVariable):
            inner = "".join(self.expr(v) + ", " for v in var.items)
            return f"({inner})"
        if isinstance(var, ListVariable):
            if var.source is not None:
                return var.source.expr()
            return "[" + ", ".join(self.expr(v) for v in var.items) + "]"
        if isinstance(var, DictVariable):
            if var.source is not None:
                return var.source.expr()
            return "{" + ", ".join(f"{self.ns.const(k)}: {self.expr(v)}" for k, v in var.items.items()) + "}"
        if isinstance(var, ConstantVariable):
            return var.source.expr() if var.source is not None else self.ns.const(var.value)
        if isinstance(var, ObjectVariable):
            return var.source.expr() if var.source is not None else self.ns.const(var.value)
        raise Unsupported(f"returning {var.describe()} from compiled code is not supported")
