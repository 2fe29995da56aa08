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
from .shapes import SYMBOL_PATTERN, SymInt, evaluate, read_symbol


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
    def array_meta(self) -> ArrayMeta | tuple:
        """The node's ArrayMeta; for an op with several results, the tuple of theirs."""
        if "results" in self.meta:
            return self.meta["results"]
        return ArrayMeta(self.meta["shape"], self.meta["dtype"], self.meta.get("scalar", False), self.meta.get("weak", False))

    @property
    def results(self) -> tuple | None:
        """The ArrayMeta of each result of an op with several (np.divmod), else None."""
        return self.meta.get("results")

    @property
    def bodies(self) -> tuple:
        """The Graphs of a control-flow node (a loop's body, a cond's two sides); () for others."""
        return tuple(a for a in self.args if isinstance(a, Graph)) if self.target in _BODY_NAMES else ()

    @property
    def inputs(self) -> list["Node"]:
        """The nodes this node reads, in argument order."""
        found: list[Node] = []
        map_nodes((self.args, self.kwargs), lambda n: found.append(n) or n)
        return found

    def __repr__(self) -> str:
        return self.name


def symbols_of(nodes, shapes: bool = True) -> set[int]:
    """The indices of the symbols the nodes use in their arguments and, with `shapes`, their shapes."""
    found: set[int] = set()

    def note(sym):
        found.update(int(i) for i in SYMBOL_PATTERN.findall(sym.expr))
        return sym
    for n in nodes:
        map_nodes((n.args, n.kwargs), lambda node: node, note)
        for d in (n.meta.get("shape") or ()) if shapes else ():
            if isinstance(d, SymInt):
                note(d)
    return found


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
    """Python source that evaluates to `value` with `np` in scope (a loop's body: its name there)."""
    if isinstance(value, Graph):
        return "body"
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
_RESERVED = {"np", "operator", "float"}
_MAX_NESTING = 16  # calls nested in one generated expression  # names the generated code's namespace uses


class Graph:
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
        if base in _RESERVED or base.startswith("impl_"):
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
            src = f"{_short(loc.filename)}:{loc.lineno} {loc.line}" if loc else ""
            kwargs = {k: v for k, v in n.kwargs.items()}
            rows.append((n.op, n.name, str(n.target), _fmt(n.args), _fmt(kwargs) if kwargs else "", meta, src))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        for n in self.calls:
            for what, body in zip(_BODY_NAMES.get(n.target, ()), n.bodies):
                facts = "".join(f", where {gap} >= 0" for gap in body.assumes)
                lines += [f"{what} of {n.name}, inputs {', '.join(i.name for i in body.inputs)}{facts}:"]
                lines += ["    " + line for line in body.tabular().splitlines()]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        print(self.tabular())

    def python_code(self, fn_name: str = "forward") -> str:
        """Readable Python (NumPy) that computes the graph: `def forward(inputs...): return (outputs,)`.
        A value used once, by the next op that needs it, is written inside that op's expression with
        NumPy's operators, as a user would write it: then NumPy reuses its temporary buffers."""
        inline = self._inlined()
        render = lambda n: _render_expr(n, inline, self.render_symbolic)  # noqa: E731
        lines = [f"def {fn_name}({', '.join(n.name for n in self.inputs)}):"]
        last_loc = None
        for n in self.nodes:
            if n in inline:
                continue
            loc = n.meta.get("loc")
            if n.op in ("call", "constant") and loc and loc != last_loc:
                lines.append(f"    # {_short(loc.filename)}:{loc.lineno}: {loc.line}")
                last_loc = loc
            if n.op == "call" and n.target in _RENDER_CONTROL:
                lines += _RENDER_CONTROL[n.target](n, self.render_symbolic)
            elif n.op == "call" and n.meta.get("errstate"):
                lines.append(f"    with np.errstate({', '.join(f'{k}={v!r}' for k, v in n.meta['errstate'].items())}):")
                lines.append(f"        {n.name} = {python_value(n, render(n))}")
            elif n.op == "call":
                lines.append(f"    {n.name} = {python_value(n, render(n))}")
            elif n.op == "constant":
                lines.append(f"    {n.name} = {render_constant(n.args[0])}")
            elif n.op == "output":
                outs = ", ".join(_render_arg(v) for v in n.args[0])
                lines.append(f"    return ({outs}{',' if len(n.args[0]) == 1 else ''})")
        if len(lines) == 1 or not lines[-1].lstrip().startswith("return"):
            lines.append("    return ()")
        return "\n".join(lines) + "\n"

    def _inlined(self) -> set:
        """Call nodes used exactly once, by a later call: written inside their user's expression,
        nested at most _MAX_NESTING deep (Python's parser has a limit), and run under the same
        np.errstate as their user."""
        uses: dict[Node, int] = {}
        user_errstate: dict[Node, dict | None] = {}
        for n in self.nodes:
            for i in (n.inputs if n.op != "output" else [v for v in n.args[0] if isinstance(v, Node)]):
                uses[i] = uses.get(i, 0) + (1 if n.op == "call" and not n.bodies else 2)  # nor an output, nor a loop's value
                user_errstate[i] = n.meta.get("errstate")
        inline, depth = set(), {}
        binders = self.binders()  # named, for the sizes they bind
        for n in self.calls:
            depth[n] = 1 + max((depth[i] for i in n.inputs if i in inline), default=0)
            if uses.get(n) == 1 and depth[n] < _MAX_NESTING and n.meta.get("errstate") == user_errstate.get(n) \
                    and n not in binders and not n.bodies:
                inline.add(n)
        return inline

    def loops(self) -> list[Node]:
        """The loop nodes of this graph and of the bodies inside it (and conds' sides), outermost first."""
        found = []
        for n in self.calls:
            found += [n] if n.target == "loop" else []
            for body in n.bodies:
                found += body.loops()
        return found

    def compile_python(self, fn_name: str = "forward"):
        """The function python_code() describes, compiled; what the eager backend runs."""
        namespace = code_namespace(self)
        # one file name for every graph: CPython keeps each distinct one for good (interned)
        code = compile(self.python_code(fn_name), "<numpile graph>", "exec")
        exec(code, namespace)
        return namespace[fn_name]

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
    if isinstance(value, Graph):
        return f"graph({value.fingerprint()},{value.write_back and _canon(value.write_back)},{list(map(str, value.assumes))})"
    return f"{type(value).__name__}:{render_constant(value)}"


def _render_arg(value, sym=repr, node=lambda n: n.name) -> str:
    """An argument as Python source: `sym` renders symbolic dims, `node` graph values."""
    def r(v):
        return _render_arg(v, sym, node)
    if isinstance(value, Node):
        return node(value)
    if isinstance(value, SymInt):
        return sym(value)
    if isinstance(value, tuple):
        inner = ", ".join(map(r, value))
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return "[" + ", ".join(map(r, value)) + "]"
    if isinstance(value, slice):
        return f"slice({r(value.start)}, {r(value.stop)}, {r(value.step)})"
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


# NumPy's operators: `a + b` is np.add(a, b) exactly, and lets NumPy reuse temporaries
_OPERATOR_FORMS = {
    operator.add: "{} + {}", operator.sub: "{} - {}", operator.mul: "{} * {}", operator.truediv: "{} / {}",
    operator.floordiv: "{} // {}", operator.mod: "{} % {}", operator.pow: "{} ** {}", operator.matmul: "{} @ {}",
    operator.and_: "{} & {}", operator.or_: "{} | {}", operator.xor: "{} ^ {}", operator.lshift: "{} << {}",
    operator.rshift: "{} >> {}", operator.lt: "{} < {}", operator.le: "{} <= {}", operator.eq: "{} == {}",
    operator.ne: "{} != {}", operator.gt: "{} > {}", operator.ge: "{} >= {}", operator.neg: "-{}",
    operator.pos: "+{}", operator.invert: "~{}", operator.getitem: "{}[{}]",
}


def _operator_form(op, n: Node) -> str | None:
    """The operator spelling of a call, when one of its NumPy spellings (an op the tracer emits: its
    implementation) is an operator taking exactly its arguments and one operand is an array or a
    tuple of results (so that the operator dispatches to NumPy, or indexes the tuple)."""
    if n.kwargs or not any(isinstance(a, Node) and not a.meta.get("scalar") for a in n.args[:1] + n.args[-1:]):
        return None
    for fn in op.numpy or (op.impl,):
        form = _OPERATOR_FORMS.get(fn) if callable(fn) else None
        if form is not None and form.count("{}") == len(n.args):
            return form
    return None


def _render_expr(n: Node, inline: set, sym) -> str:
    """A call as an expression; arguments that are inlined calls become nested expressions."""
    def node(a):
        return f"({python_value(a, _render_expr(a, inline, sym))})" if a in inline else a.name

    def arg(a):
        return _render_arg(a, sym, node)
    op = ops.get(n.target)
    form = _operator_form(op, n)
    if form is not None:
        return form.format(*map(arg, n.args))
    args = [arg(a) for a in n.args] + [f"{k}={arg(v)}" for k, v in n.kwargs.items()]
    return f"{_spelling(op)}({', '.join(args)})"


def python_value(n: Node, expr: str) -> str:
    """A weak node's value as the Python scalar it stands for (NumPy's ops hand back NumPy scalars)."""
    return f"{n.array_meta.python_type.__name__}({expr})" if n.meta.get("weak") else expr


def code_namespace(graph: Graph) -> dict:
    ns = {"np": np, "operator": operator, "float": float, "bool": bool}
    for n in graph.calls:
        op = ops.get(n.target)
        ns[f"impl_{op.name}"] = op.impl
        for what, body in zip(_BODY_NAMES.get(n.target, ()), n.bodies):
            ns.update(code_namespace(body))
            ns[f"{n.name}_{what}"] = body
    return ns


def _render_loop(n: Node, sym) -> list[str]:
    """A loop node as Python: its body as a nested function, run by ops/control.py's run_loop."""
    body, *bounds = n.args
    lines = ["    " + line for line in body.python_code(f"{n.name}_run").splitlines()]
    args = ", ".join(_render_arg(v, sym) for v in bounds)
    return lines + [f"    {n.name} = impl_loop({n.name}_body, {args}, run={n.name}_run)"]


def _render_cond(n: Node, sym) -> list[str]:
    """A cond node as Python: its sides as nested functions, one called as the `if` picks."""
    pred, then_body, else_body, operands = n.args
    lines = ["    " + line for line in then_body.python_code(f"{n.name}_then").splitlines()]
    lines += ["    " + line for line in else_body.python_code(f"{n.name}_else").splitlines()]
    args = ", ".join(_render_arg(v, sym) for v in operands)
    return lines + [f"    {n.name} = {n.name}_then({args}) if {_render_arg(pred, sym)} else {n.name}_else({args})"]


def _render_while(n: Node, sym) -> list[str]:
    """A while_loop node as Python: its body as a nested function, run by ops/control.py's run_while."""
    body, carried, free = n.args
    lines = ["    " + line for line in body.python_code(f"{n.name}_run").splitlines()]
    return lines + [f"    {n.name} = impl_while_loop({n.name}_body, {_render_arg(carried, sym)}, "
                    f"{_render_arg(free, sym)}, run={n.name}_run)"]


_RENDER_CONTROL = {"loop": _render_loop, "cond": _render_cond, "while_loop": _render_while}
_BODY_NAMES = {"loop": ("body",), "cond": ("then", "else"), "while_loop": ("body",)}
