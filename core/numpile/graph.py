"""The Graph IR that every backend receives.

A Graph is a list of Nodes in topological order. A Node is an `input`
(one per graph argument), a `call` of a registry op, a `constant`, or the single
`output`. Calls carry their arguments in the op's canonical layout (see
ops/registry.py); arguments are Nodes or Python constants, possibly nested in
tuples and lists. Every value node has `meta` with `shape`, `dtype`, `scalar`
(NumPy returns a NumPy scalar rather than a 0-d array) and `loc`, the user
source line that produced it.
"""

from __future__ import annotations

import hashlib
import linecache
import operator
import re
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from . import ops
from .ops import ArrayMeta
from .shapes import SYMBOL_PATTERN, SymInt, evaluate


@dataclass(frozen=True)
class SourceLoc:
    """Where in the user's code a value was made."""

    filename: str
    lineno: int
    function: str = ""

    @property
    def line(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"


class Node:
    __slots__ = ("graph", "op", "target", "args", "kwargs", "name", "meta")

    def __init__(self, graph: "Graph", op: str, target, args: tuple, kwargs: dict, name: str, meta: dict):
        self.graph, self.op, self.target = graph, op, target
        self.args, self.kwargs, self.name, self.meta = args, kwargs, name, meta

    @property
    def shape(self) -> tuple:
        return self.meta["shape"]

    @property
    def dtype(self) -> np.dtype:
        return self.meta["dtype"]

    @property
    def array_meta(self) -> ArrayMeta:
        return ArrayMeta(self.meta["shape"], self.meta["dtype"], self.meta.get("scalar", False))

    @property
    def inputs(self) -> list["Node"]:
        """The nodes this node reads, in argument order."""
        found: list[Node] = []
        map_nodes((self.args, self.kwargs), lambda n: found.append(n) or n)
        return found

    def __repr__(self) -> str:
        return self.name


def map_nodes(value, fn, sym_fn=None):
    """Apply fn to every Node (and sym_fn, if given, to every SymInt) inside a possibly nested
    tuple/list/dict/slice of arguments."""
    if isinstance(value, Node):
        return fn(value)
    if sym_fn is not None and isinstance(value, SymInt):
        return sym_fn(value)
    if isinstance(value, tuple):
        return tuple(map_nodes(v, fn, sym_fn) for v in value)
    if isinstance(value, list):
        return [map_nodes(v, fn, sym_fn) for v in value]
    if isinstance(value, dict):
        return {k: map_nodes(v, fn, sym_fn) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(map_nodes(value.start, fn, sym_fn), map_nodes(value.stop, fn, sym_fn), map_nodes(value.step, fn, sym_fn))
    return value


def render_constant(value) -> str:
    """Python source that evaluates to `value` with `np` in scope."""
    if isinstance(value, np.dtype):
        return f"np.dtype({str(value)!r})"
    if isinstance(value, type) and issubclass(value, np.generic):
        return f"np.{value.__name__}"
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, np.ndarray):
        return f"np.array({value.tolist()!r}, dtype={str(value.dtype)!r})"
    if isinstance(value, float) and not np.isfinite(value):
        return f"float({str(value)!r})"
    return repr(value)


_IDENT = re.compile(r"[^0-9a-zA-Z_]")
_RESERVED = {"np", "operator", "float"}  # names the generated code's namespace uses


class Graph:
    def __init__(self):
        self.nodes: list[Node] = []
        self.guards: list[str] = []  # the guards of the cache entry this graph serves, readable
        self.symbols: list = []      # symbol i of a dynamic dim -> (input node, dim), for SymInt arguments
        self._names: dict[str, int] = {}

    # -- building ----------------------------------------------------------------------
    def _unique(self, hint: str) -> str:
        base = _IDENT.sub("_", hint).strip("_") or "v"
        if base[0].isdigit():
            base = "v" + base
        if base in _RESERVED or base.startswith("impl_"):
            base += "_"
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def _add(self, op, target, args, kwargs, name, meta) -> Node:
        node = Node(self, op, target, args, kwargs, self._unique(name), meta)
        self.nodes.append(node)
        return node

    def input(self, name: str, meta: ArrayMeta, source: str = "", loc: SourceLoc | None = None) -> Node:
        """A graph argument; `source` says where the value came from (e.g. "self.w")."""
        return self._add("input", source or name, (), {}, name, _meta(meta, loc))

    def call(self, target: str, args: tuple, kwargs: dict, meta: ArrayMeta, loc: SourceLoc | None = None) -> Node:
        ops.get(target)  # fail early on a name the registry does not know
        return self._add("call", target, tuple(args), dict(kwargs), target, _meta(meta, loc))

    def constant(self, value, loc: SourceLoc | None = None) -> Node:
        return self._add("constant", "constant", (value,), {}, "const", _meta(ArrayMeta.of(np.asarray(value)), loc))

    def output(self, values) -> Node:
        if any(n.op == "output" for n in self.nodes):
            raise ValueError("graph already has an output")
        return self._add("output", "output", (tuple(values),), {}, "output", {})

    # -- reading -----------------------------------------------------------------------
    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    @property
    def inputs(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "input"]

    @property
    def calls(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "call"]

    @property
    def outputs(self) -> tuple:
        for n in self.nodes:
            if n.op == "output":
                return n.args[0]
        return ()

    def symbols_used(self) -> set[int]:
        """The indices of the symbols that node arguments use (their values are needed at run time)."""
        found: set[int] = set()
        for n in self.nodes:
            map_nodes((n.args, n.kwargs), lambda node: node,
                      lambda sym: found.update(int(i) for i in SYMBOL_PATTERN.findall(sym.expr)) or sym)
        return found

    def render_symbolic(self, sym: SymInt) -> str:
        """A SymInt argument as Python over the inputs' shapes: `(x.shape[0] // 2)`."""
        def sub(m):
            node, dim = self.symbols[int(m.group(1))]
            return f"{node.name}.shape[{dim}]"
        return "(" + SYMBOL_PATTERN.sub(sub, sym.expr) + ")"

    def tabular(self) -> str:
        rows = [("opcode", "name", "target", "args", "kwargs", "meta", "source")]
        for n in self.nodes:
            meta = str(n.array_meta) if "shape" in n.meta else ""
            loc = n.meta.get("loc")
            src = f"{_short(loc.filename)}:{loc.lineno} {loc.line}" if loc else ""
            kwargs = {k: v for k, v in n.kwargs.items()}
            rows.append((n.op, n.name, str(n.target), _fmt(n.args), _fmt(kwargs) if kwargs else "", meta, src))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def print_tabular(self) -> None:
        print(self.tabular())

    def python_code(self, fn_name: str = "forward") -> str:
        """Readable Python (NumPy) that computes the graph: `def forward(inputs...): return (outputs,)`."""
        lines = [f"def {fn_name}({', '.join(n.name for n in self.inputs)}):"]
        last_loc = None
        for n in self.nodes:
            loc = n.meta.get("loc")
            if n.op in ("call", "constant") and loc and loc != last_loc:
                lines.append(f"    # {_short(loc.filename)}:{loc.lineno}: {loc.line}")
                last_loc = loc
            if n.op == "call":
                lines.append(f"    {n.name} = {_render_call(n, self.render_symbolic)}")
            elif n.op == "constant":
                lines.append(f"    {n.name} = {render_constant(n.args[0])}")
            elif n.op == "output":
                outs = ", ".join(_render_arg(v) for v in n.args[0])
                lines.append(f"    return ({outs}{',' if len(n.args[0]) == 1 else ''})")
        if len(lines) == 1 or not lines[-1].lstrip().startswith("return"):
            lines.append("    return ()")
        return "\n".join(lines) + "\n"

    def compile_python(self, fn_name: str = "forward"):
        """The function python_code() describes, compiled; what the eager backend runs."""
        namespace = code_namespace(self)
        code = compile(self.python_code(fn_name), f"<numpile graph {self.fingerprint()[:12]}>", "exec")
        exec(code, namespace)
        return namespace[fn_name]

    def __call__(self, *inputs):
        """Run the graph eagerly through the op table; returns the tuple of outputs."""
        params = self.inputs
        if len(inputs) != len(params):
            raise TypeError(f"graph takes {len(params)} inputs ({', '.join(p.name for p in params)}), got {len(inputs)}")
        env: dict[Node, Any] = dict(zip(params, inputs))
        look = env.__getitem__
        sizes = [env[node].shape[dim] if node in env else None for node, dim in
                 (s if s is not None else (None, 0) for s in self.symbols)]
        value = lambda sym: evaluate(sym.expr, sizes)  # noqa: E731
        for n in self.nodes:
            if n.op == "call":
                env[n] = ops.get(n.target).impl(*map_nodes(n.args, look, value), **map_nodes(n.kwargs, look, value))
            elif n.op == "constant":
                env[n] = n.args[0]
            elif n.op == "output":
                return tuple(map_nodes(n.args[0], look))
        return ()

    def fingerprint(self) -> str:
        """A stable hash of the graph's structure, targets, constants and metas (not its source lines)."""
        index = {n: i for i, n in enumerate(self.nodes)}
        parts = []
        for n in self.nodes:
            args = map_nodes((n.args, sorted(n.kwargs.items())), lambda a: f"%{index[a]}")
            meta = str(n.array_meta) if "shape" in n.meta else ""
            parts.append(f"{n.op}|{n.target if n.op != 'input' else ''}|{_canon(args)}|{meta}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def __str__(self) -> str:
        return self.tabular()


def _meta(meta: ArrayMeta, loc: SourceLoc | None) -> dict:
    return {"shape": tuple(meta.shape), "dtype": meta.dtype, "scalar": meta.scalar, "loc": loc}


def _short(filename: str) -> str:
    return filename.rsplit("/", 1)[-1]


def _fmt(value) -> str:
    return _render_arg(value) if not isinstance(value, dict) else "{" + ", ".join(f"{k}: {_render_arg(v)}" for k, v in value.items()) + "}"


def _canon(value) -> str:
    """A repr of constants that does not depend on object identity."""
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canon(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        return f"array({value.dtype},{value.shape},{hashlib.sha256(value.tobytes()).hexdigest()})"
    return f"{type(value).__name__}:{render_constant(value)}"


def _render_arg(value, sym=repr) -> str:
    if isinstance(value, Node):
        return value.name
    if isinstance(value, SymInt):
        return sym(value)
    if isinstance(value, tuple):
        inner = ", ".join(_render_arg(v, sym) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(_render_arg(v, sym) for v in value) + "]"
    if isinstance(value, slice):
        return f"slice({_render_arg(value.start, sym)}, {_render_arg(value.stop, sym)}, {_render_arg(value.step, sym)})"
    return render_constant(value)


def _spelling(op) -> str:
    """How generated code names an op's implementation: np.<name> or operator.<name> when that
    is exactly the implementation, else impl_<op> from the code namespace."""
    name = getattr(op.impl, "__name__", None)
    if name and getattr(np, name, None) is op.impl:
        return f"np.{name}"
    if name and getattr(operator, name, None) is op.impl:
        return f"operator.{name}"
    return f"impl_{op.name}"


def _render_call(n: Node, sym) -> str:
    op = ops.get(n.target)
    args = [_render_arg(a, sym) for a in n.args]
    args += [f"{k}={_render_arg(v, sym)}" for k, v in n.kwargs.items()]
    return f"{_spelling(op)}({', '.join(args)})"


def code_namespace(graph: Graph) -> dict:
    ns = {"np": np, "operator": operator, "float": float}
    for n in graph.calls:
        op = ops.get(n.target)
        ns[f"impl_{op.name}"] = op.impl
    return ns
