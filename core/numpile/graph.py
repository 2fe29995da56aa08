"""The Graph IR that every backend receives.

A Graph is a list of Nodes in topological order. A Node is an `input`
(one per graph argument), a `call` of a registry op, a `constant`, or the single
`output`. Calls carry their arguments in the op's canonical layout (see
ops/registry.py); arguments are Nodes or Python constants, possibly nested in
tuples and lists. Every value node has `meta` with `shape`, `dtype`, `scalar`
(NumPy returns a NumPy scalar rather than a 0-d array), `weak` (a Python float, int
or bool: a caller's Python float or int passed as an input, or Python arithmetic on
one; a backend receives Python scalars for these inputs and must treat weak values as
NumPy treats Python scalars, NEP 50 weak; it may hand them back as NumPy scalars) and
`loc`, the user source line that produced it. A call traced inside an
`np.errstate(...="ignore")` block also has `errstate`, those settings: a backend
that reports floating-point errors must not report these there.

An op with several results (np.divmod, np.histogram) is one call node whose meta has
`results`, an ArrayMeta per result, in place of shape and dtype: its value is the tuple
NumPy returns, and only `tuple_getitem(node, i)` nodes (`Graph.result`) read it, as
torch.fx reads a multi-output node through operator.getitem.

A loop (ops/control.py) is a call of op `loop` whose first argument is its body, a Graph of its
own; `Graph.loop` adds one. A body's symbols may be a scalar input's value (`symbols[k]` is
`(node, None)`): the loop index, which the sizes and indices of the body use. A cond (`Graph.cond`)
is a call of op `cond` with its two sides as Graphs; `Node.bodies` are a node's Graphs.

Nodes are nodes.py's; the graph as Python code (`python_code`, `compile_python`) is graph_code.py's.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from typing import Any, Iterator

import numpy as np

from . import ops
from .graph_code import PythonCode, render_arg, render_constant, short_name
from .nodes import BODY_NAMES, Node, SourceLoc, map_nodes, symbols_of
from .ops import ArrayMeta
from .shapes import SYMBOL_PATTERN, SymInt, evaluate, read_symbol

_IDENT = re.compile(r"[^0-9a-zA-Z_]")
_RESERVED = {"np", "operator", "float"}  # names the generated code's namespace uses (and Python's keywords)


class Graph(PythonCode):
    def __init__(self, outer: "Graph | None" = None):
        """`outer`: the graph a loop body belongs to, whose node names it shares (no name is used twice)."""
        self.nodes: list[Node] = []
        self.guards: list[str] = []  # the guards of the cache entry this graph serves, readable
        self.symbols: list = []      # symbol i -> (node, dim): an input's, or for an unbacked size the call whose result binds it;
                                     # (node, None): the value of a scalar input (a loop body's index)
        # (output position, input node): after the graph runs, the caller writes that output into that
        # input (an in-place update). A backend may compute the output in the input's memory and
        # return the input array itself: then nothing is copied.
        self.write_back: list = []
        # a loop's body: the arrays in write_back are the loop's own copies, which may be updated in
        # place even where a later step raises (nothing of the caller's is changed then)
        self.write_back_owned = False
        # a cond's side: facts about loop indices that hold where it runs (`j - i - 2 >= 0` under
        # `if i < j - 1`), as expressions >= 0; decisions lowering it may rely on them (loop_ranges.assuming)
        self.assumes: tuple = ()
        self._names: dict[str, int] = outer._names if outer is not None else {}
        self._taken: set[str] = outer._taken if outer is not None else set()

    # -- building ----------------------------------------------------------------------
    def _unique(self, hint: str) -> str:
        base = _IDENT.sub("_", hint).strip("_") or "v"
        if base[0].isdigit():
            base = "v" + base
        if base in _RESERVED or keyword.iskeyword(base) or base.startswith("impl_"):   # `lambda_` stripped
            base += "_"
        n = self._names.get(base, 0)
        name = base if n == 0 else f"{base}_{n}"
        while name in self._taken:  # a hint that itself ends in _<n> ("divmod_1", a result's name)
            n += 1
            name = f"{base}_{n}"
        self._names[base] = n + 1
        self._taken.add(name)
        return name

    def _add(self, op, target, args, kwargs, name, meta) -> Node:
        node = Node(self, op, target, args, kwargs, self._unique(name), meta)
        self.nodes.append(node)
        return node

    def input(self, name: str, meta: ArrayMeta, source: str = "", loc: SourceLoc | None = None) -> Node:
        """A graph argument; `source` says where the value came from (e.g. "self.w")."""
        return self._add("input", source or name, (), {}, name, _meta(meta, loc))

    def call(self, target: str, args: tuple, kwargs: dict, meta: ArrayMeta | tuple,
             loc: SourceLoc | None = None) -> Node:
        """A call of a registry op; `meta` is a tuple of ArrayMetas for an op with several results."""
        ops.get(target)  # fail early on a name the registry does not know
        return self._add("call", target, tuple(args), dict(kwargs), target, _meta(meta, loc))

    def result(self, node: Node, index: int) -> Node:
        """Result `index` of a call with several results (np.divmod(a, b)[1]): a tuple_getitem node."""
        return self._add("call", ops.TUPLE_GETITEM, (node, index), {}, f"{node.name}_{index}",
                         _meta(node.results[index], node.meta.get("loc")))

    def constant(self, value, loc: SourceLoc | None = None) -> Node:
        return self._add("constant", "constant", (value,), {}, "const", _meta(ArrayMeta.of(np.asarray(value)), loc))

    def loop(self, body: "Graph", start, stop, step, carried: tuple, free: tuple, loc: SourceLoc | None = None) -> Node:
        """A loop over range(start, stop, step) running `body` (see ops/control.py); its results
        are the carried values after the last iteration."""
        return self.call("loop", (body, start, stop, step, tuple(carried), tuple(free)), {},
                         tuple(n.array_meta for n in body.outputs), loc)

    def while_loop(self, body: "Graph", carried: tuple, free: tuple, loc: SourceLoc | None = None) -> Node:
        """A while loop running `body` (whose first output says whether to go on) at least once
        (see ops/control.py); its results are the carried values after the last run."""
        return self.call("while_loop", (body, tuple(carried), tuple(free)), {},
                         tuple(n.array_meta for n in body.outputs[1:]), loc)

    def cond(self, pred: Node, then_body: "Graph", else_body: "Graph", operands: tuple,
             loc: SourceLoc | None = None) -> Node:
        """The results of `then_body` where `pred` holds, else of `else_body` (see ops/control.py)."""
        return self.call("cond", (pred, then_body, else_body, tuple(operands)), {},
                         tuple(n.array_meta for n in then_body.outputs), loc)

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
        return symbols_of(self.nodes, shapes=False)

    def symbol_values(self, inputs) -> list:
        """The size each symbol stands for with these inputs (None for a symbol no input has)."""
        env = dict(zip(self.inputs, inputs))
        return [None if node not in env else int(env[node]) if dim is None else np.shape(env[node])[dim]
                for node, dim in (s if s is not None else (None, 0) for s in self.symbols)]

    def render_symbolic(self, sym: SymInt) -> str:
        """A SymInt argument as Python over the inputs' shapes: `(x.shape[0] // 2)`."""
        def sub(m):
            node, dim = self.symbols[int(m.group(1))]
            return read_symbol(node.name, dim)
        return "(" + SYMBOL_PATTERN.sub(sub, sym.expr) + ")"

    def binders(self) -> dict:
        """The nodes that bind an unbacked symbol when the graph runs -> [(symbol, dim)]."""
        found: dict = {}
        for k, s in enumerate(self.symbols):
            if s is not None and s[0].op == "call":
                found.setdefault(s[0], []).append((k, s[1]))
        return found

    def tabular(self) -> str:
        rows = [("opcode", "name", "target", "args", "kwargs", "meta", "source")]
        for n in self.nodes:
            meta = _meta_text(n)
            loc = n.meta.get("loc")
            src = f"{short_name(loc.filename)}:{loc.lineno} {loc.line}" if loc else ""
            kwargs = {k: v for k, v in n.kwargs.items()}
            rows.append((n.op, n.name, str(n.target), _fmt(n.args), _fmt(kwargs) if kwargs else "", meta, src))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        for n in self.calls:
            for what, body in zip(BODY_NAMES.get(n.target, ()), n.bodies):
                facts = "".join(f", where {gap} >= 0" for gap in body.assumes)
                lines += [f"{what} of {n.name}, inputs {', '.join(i.name for i in body.inputs)}{facts}:"]
                lines += ["    " + line for line in body.tabular().splitlines()]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        print(self.tabular())

    def loops(self) -> list[Node]:
        """The loop nodes of this graph and of the bodies inside it (and conds' sides), outermost first."""
        found = []
        for n in self.calls:
            found += [n] if n.target == "loop" else []
            for body in n.bodies:
                found += body.loops()
        return found

    def __call__(self, *inputs):
        """Run the graph eagerly through the op table; returns the tuple of outputs."""
        params = self.inputs
        if len(inputs) != len(params):
            raise TypeError(f"graph takes {len(params)} inputs ({', '.join(p.name for p in params)}), got {len(inputs)}")
        env: dict[Node, Any] = dict(zip(params, inputs))
        look = env.__getitem__
        sizes = self.symbol_values(inputs)
        binders = self.binders()
        value = lambda sym: evaluate(sym.expr, sizes)  # noqa: E731
        for n in self.nodes:
            if n.op == "call":
                with np.errstate(**n.meta.get("errstate") or {}):
                    env[n] = ops.get(n.target).impl(*map_nodes(n.args, look, value), **map_nodes(n.kwargs, look, value))
                if n.meta.get("weak"):
                    env[n] = n.array_meta.python_type(env[n])
                for k, dim in binders.get(n, ()):
                    sizes[k] = np.shape(env[n])[dim]
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
            meta = _meta_text(n)
            parts.append(f"{n.op}|{n.target if n.op != 'input' else ''}|{_canon(args)}|{meta}")
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()

    def __str__(self) -> str:
        return self.tabular()

    def __repr__(self) -> str:
        return f"<Graph {self.fingerprint()[:12]}: {len(self.calls)} ops>"


def _meta(meta: ArrayMeta | tuple, loc: SourceLoc | None) -> dict:
    if isinstance(meta, tuple):
        return {"results": meta, "loc": loc}
    return {"shape": tuple(meta.shape), "dtype": meta.dtype, "scalar": meta.scalar, "weak": meta.weak, "loc": loc}


def _meta_text(n: Node) -> str:
    """A node's meta as the graph's table shows it: `float64[3, 4]`, `(int64[10], float64[11])`."""
    if n.results is not None:
        return "(" + ", ".join(map(str, n.results)) + ("," if len(n.results) == 1 else "") + ")"
    return str(n.array_meta) if "shape" in n.meta else ""


def _fmt(value) -> str:
    return render_arg(value) if not isinstance(value, dict) else "{" + ", ".join(f"{k}: {render_arg(v)}" for k, v in value.items()) + "}"


def _canon(value) -> str:
    """A repr of constants that does not depend on object identity."""
    if isinstance(value, (tuple, list)):
        return "(" + ",".join(_canon(v) for v in value) + ")"
    if isinstance(value, np.ndarray):
        return f"array({value.dtype},{value.shape},{hashlib.sha256(value.tobytes()).hexdigest()})"
    if isinstance(value, Graph):
        return f"graph({value.fingerprint()},{value.write_back and _canon(value.write_back)},{list(map(str, value.assumes))})"
    return f"{type(value).__name__}:{render_constant(value)}"
