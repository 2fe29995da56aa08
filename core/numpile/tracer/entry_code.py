"""Generated Python for a cache entry: the guard check and the run function.

Both have the compiled function's own signature, so the cache calls them with
the caller's arguments unchanged. The run function fetches the graph inputs
through their Sources, calls the compiled graph, and rebuilds the return value
(tuples, lists, dicts, constants, the caller's own objects) around its outputs.
"""

from __future__ import annotations

import ast
import inspect
import types

import numpy as np

from ..exc import Unsupported
from ..graph_code import python_value
from ..shapes import SymInt
from .output_graph import MAYBE_VIEWS
from .sources import ClosureSource
from .variables import (
    ArrayMethodVariable, ArrayVariable, BoundMethodVariable, CellVariable, ConstantVariable,
    ContextExitVariable, DictVariable, ErrstateVariable, IteratorVariable, ListVariable, NestedFunctionVariable,
    ObjectVariable, PositionalIterator, SliceVariable, TupleVariable, Variable,
)
from .variables.contexts import entered_exit
from .variables.stacked import Rows


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

    def define(self, source: str, fn_name: str, filename: str, at=None):
        """Run `source` (one function definition) in the namespace and return the function. With
        `at` (a SourceLoc), the function carries the user's name, file and line, so that an
        exception raised by code it runs for the user (residual code) points at the user's line."""
        if at is None:
            exec(compile(source, filename, "exec"), self.values)
            return self.values[fn_name]
        tree = ast.parse(source)
        tree.body[0].name = at.function or fn_name
        for node in ast.walk(tree):
            if hasattr(node, "lineno"):
                node.lineno = node.end_lineno = at.lineno
        exec(compile(tree, at.filename, "exec"), self.values)
        return self.values[tree.body[0].name]


def signature_params(fn, ns: CodeNamespace) -> str:
    """The parameter list of `fn`, defaults replaced by namespace names (their objects, not copies)."""
    params, seen_kwonly_marker = [], False
    sig = inspect.signature(fn, follow_wrapped=False)
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
    for p in inspect.signature(fn, follow_wrapped=False).parameters.values():
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


class Reconstructor:
    """Python that rebuilds Variables after the graph ran (`__o` holds its outputs).

    `expr(var)` is an expression for the value; objects that must be built once and shared
    (new lists, dicts, cells, functions made in the frame) are bound to temporaries by the
    statements collected in `lines`, which run before any expression is used.
    """

    def __init__(self, ns: CodeNamespace, refresh=lambda var: None, shape_env=None, check=lambda var, what, arrays: None):
        self.ns = ns
        self.refresh = refresh  # brings a view up to date with its updated base
        self.check = check      # refuses an array that stands for another (OutputGraph.check_held_apart)
        self.shape_env = shape_env  # renders symbolic dims as expressions over the frame's arrays
        self.outputs: list = []  # graph nodes the code reads, in output order
        self.lines: list[str] = []
        self._temps: dict[int, str] = {}
        ns.values.update({"__scalar": _scalar, "__make_cell": types.CellType, "__make_function": _make_function})

    def _temp(self, var, build) -> str:
        if id(var) not in self._temps:
            name = f"__t{len(self._temps)}"
            self._temps[id(var)] = name
            self.lines.append(f"{name} = {build()}")
        return self._temps[id(var)]

    def rebuilt(self, var) -> bool:
        """Whether the residual code has made an object for `var` (a cell, a list) so far."""
        return id(var) in self._temps

    def node_expr(self, node) -> str:
        if node not in self.outputs:
            self.outputs.append(node)
        out = f"__o[{self.outputs.index(node)}]"
        if node.meta["weak"]:
            return python_value(node, out)
        return f"__scalar({out})" if node.meta["scalar"] else out

    def _unbacked(self, u) -> str:
        """An unbacked symbol's value after the graph ran: read off the output of the node that binds it."""
        return f"{self.node_expr(u.node)}.shape[{u.dim}]"

    def apply_side_effects(self, arrays: list, containers: list, attr_writes) -> None:
        """Statements that make the caller see what the traced code did: updated arrays written
        back, lists and dicts given their new contents, attributes assigned, in order. Every new
        value is computed before anything is stored, as the traced code computed it from the
        values before."""
        # a backend that computed the new value in the caller's array returns that array: nothing to copy
        stores = [f"if {value} is not {target}: {target}[...] = {value}"
                  for target, value in ((v.source.expr(), self._bind(self.node_expr(v.node))) for v in arrays)]
        for c in containers:
            if isinstance(c, ListVariable):
                stores.append(f"{c.source.expr()}[:] = {self._bind('[' + ', '.join(self.expr(v) for v in c.items) + ']')}")
            else:
                items = self._bind("{" + ", ".join(f"{self.ns.const(k)}: {self.expr(v)}" for k, v in c.items.items()) + "}")
                stores += [f"{c.source.expr()}.clear()", f"{c.source.expr()}.update({items})"]
        for obj, name, value in attr_writes:
            stores.append(f"{obj.source.expr()}.{name} = {self._bind(self.expr(value))}")
        self.lines += stores

    def _bind(self, expr: str) -> str:
        name = f"__v{len(self.lines)}"
        self.lines.append(f"{name} = {expr}")
        return name

    def _view_call(self, var: ArrayVariable) -> str:
        """The call that makes `var` from its base again, as the user spelled it (a method call
        stays one: x.reshape(-1, 2) is not np.reshape(x, -1, 2))."""
        op, rest, kwargs, method = var.view_op
        base = self.expr(var.base)
        args = [*map(self.expr, rest), *(f"{k}={self.expr(v)}" for k, v in kwargs.items())]
        if method is not None:
            return f"{base}.{method}({', '.join(args)})"
        return f"{self.ns.const(op.impl)}({', '.join([base, *args])})"

    def _constant(self, value) -> str:
        """A constant's source; one holding symbolic sizes (`0:x.shape[0]`, a slice) reads them."""
        if isinstance(value, SymInt):
            return f"({self.shape_env.source_expr(value.expr, unbacked=self._unbacked)})"
        if isinstance(value, slice):
            return f"slice({self._constant(value.start)}, {self._constant(value.stop)}, {self._constant(value.step)})"
        if type(value) is tuple and any(isinstance(v, (SymInt, slice, tuple)) for v in value):
            return "(" + "".join(self._constant(v) + ", " for v in value) + ")"
        return self.ns.const(value)

    def expr(self, var: Variable) -> str:
        if isinstance(var, ArrayVariable):
            if var.spelled is not None:
                return self.expr(var.spelled)
            if var.source is not None:
                return var.source.expr()  # the caller's own array (written back if updated), identity kept
            self.check(var, "seen by Python", False)
            if _views_caller_array(var):
                # a view of the caller's array stays a view of it, as NumPy made it (one object, made
                # once): later updates through either are seen by both
                return self._temp(var, lambda: self._view_call(var))
            self.refresh(var)
            return self.node_expr(var.node)
        if isinstance(var, CellVariable) and isinstance(var.source, ClosureSource):
            return f"__C[{var.source.index}]"   # the compiled function's own cell, shared as Python shares it
        if var.source is not None:
            return var.source.expr()
        if isinstance(var, TupleVariable):
            items = "(" + "".join(self.expr(v) + ", " for v in var.items) + ")"
            return items if var.cls is tuple else f"{self.ns.const(var.cls)}{items}"
        if isinstance(var, ListVariable) and isinstance(var.items, Rows):   # NumPy's list(rows), of lists
            return self._temp(var, lambda: f"list(map(list, {self.expr(var.rows)}))" if var.lists
                              else f"list({self.expr(var.rows)})")
        if isinstance(var, ListVariable):
            return self._temp(var, lambda: "[" + ", ".join(self.expr(v) for v in var.items) + "]")
        if isinstance(var, DictVariable):
            return self._temp(var, lambda: "{" + ", ".join(
                f"{self.ns.const(k)}: {self.expr(v)}" for k, v in var.items.items()) + "}")
        if isinstance(var, ConstantVariable):
            return self._constant(var.value)
        if isinstance(var, ObjectVariable):
            return self.ns.const(var.value)
        if isinstance(var, SliceVariable):
            return f"slice({self.expr(var.start)}, {self.expr(var.stop)}, {self.expr(var.step)})"
        if isinstance(var, PositionalIterator):  # NumPy's or Python's own iterator, at the same position
            return self._temp(var, lambda: var.residual(self.expr, self.ns.const, var.index))
        if isinstance(var, IteratorVariable):
            return self._temp(var, lambda: "iter([" + ", ".join(self.expr(v) for v in var.rest()) + "])")
        if isinstance(var, CellVariable):
            return self._temp(var, lambda: "__make_cell()" if var.contents is None else f"__make_cell({self.expr(var.contents)})")
        if isinstance(var, BoundMethodVariable):
            return f"{self.expr(var.fn)}.__get__({self.expr(var.self_var)})"
        if isinstance(var, ArrayMethodVariable):
            return f"{self.expr(var.array)}.{var.name}"
        if isinstance(var, ContextExitVariable):  # a break in the block: enter a real one
            return self._temp(var, lambda: f"{self.ns.const(entered_exit)}({self.ns.const(var.context.settings)})")
        if isinstance(var, ErrstateVariable):
            return self._temp(var, lambda: f"{self.ns.const(np.errstate)}(**{self.ns.const(var.settings)})")
        if isinstance(var, NestedFunctionVariable):
            return self._temp(var, lambda: "__make_function({}, {}, ({}), {{{}}}, ({}))".format(
                self.ns.const(var.code), self.ns.const(var.f_globals),
                "".join(self.expr(v) + ", " for v in var.defaults),
                ", ".join(f"{k!r}: {self.expr(v)}" for k, v in var.kwdefaults.items()),
                "".join(self.expr(c) + ", " for c in var.closure)))
        raise Unsupported(f"{var.describe()} cannot be rebuilt outside the graph")


def _make_function(code, f_globals, defaults, kwdefaults, closure):
    fn = types.FunctionType(code, f_globals, code.co_name, defaults or None, closure or None)
    fn.__kwdefaults__ = kwdefaults or None
    return fn


def _views_caller_array(var: ArrayVariable) -> bool:
    """Whether var is a chain of views ending at one of the caller's arrays, so that the view ops
    applied to that array after write-back make it as NumPy did: a reshape or ravel (a view or a
    copy, as NumPy decides on the strides) only if its base was not updated after it was made."""
    while var.base is not None:
        if var.view_op[0].name in MAYBE_VIEWS and var.base_version != var.base.version:
            return False
        var = var.base
    return var.source is not None and var.numpy_views


MISS = object()   # what an entry's `hit` returns when its guards fail


def define_entry(guards, params: str, ns: CodeNamespace, body: list[str], filename: str, at=None):
    """A cache entry's generated functions: its guard check, its run (`body`), and `hit`, the two
    in one call, which returns MISS where a guard fails or cannot be read (a source gone); errors
    raised by the body propagate."""
    test = guards.code(ns.const)
    check = ns.define(f"def __check({params}):\n    return {test}\n", "__check", "<numpile guards>")
    run = ns.define(f"def __run({params}):\n" + "".join(f"    {line}\n" for line in body), "__run", filename, at=at)
    ns.values["__MISS"] = MISS
    guarded = ["try:", f"    if not ({test}):", "        return __MISS",
               "except Exception:", "    return __MISS", *body]
    hit = ns.define(f"def __hit({params}):\n" + "".join(f"    {line}\n" for line in guarded), "__hit", filename, at=at)
    return check, run, hit
