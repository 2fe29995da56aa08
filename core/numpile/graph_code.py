"""A Graph as Python (NumPy) code: `Graph.python_code()`, readable, and `Graph.compile_python()`,
that code compiled (what the eager backend runs), from `PythonCode`, a mixin of graph.py's Graph.
A value used once, by the next op that needs it, is written inside that op's expression with
NumPy's operators, as a user would write it; a loop or cond node's Graphs become nested functions
run by ops/control.py. Arguments and constants render as Python source here too (`render_arg`,
`render_constant`), for the graph's table as well.
"""

from __future__ import annotations

import operator

import numpy as np

from . import ops
from .nodes import BODY_NAMES, Node
from .shapes import SymInt

_MAX_NESTING = 16  # calls nested in one generated expression


class PythonCode:
    """What makes a Graph Python code (graph.py's Graph is one): it reads the graph's nodes,
    inputs, calls, binders() and render_symbolic()."""

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
                lines.append(f"    # {short_name(loc.filename)}:{loc.lineno}: {loc.line}")
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
                outs = ", ".join(render_arg(v) for v in n.args[0])
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

    def compile_python(self, fn_name: str = "forward"):
        """The function python_code() describes, compiled; what the eager backend runs."""
        namespace = code_namespace(self)
        # one file name for every graph: CPython keeps each distinct one for good (interned)
        code = compile(self.python_code(fn_name), "<numpile graph>", "exec")
        exec(code, namespace)
        return namespace[fn_name]


def render_constant(value) -> str:
    """Python source that evaluates to `value` with `np` in scope (a loop's body: its name there)."""
    if isinstance(value, PythonCode):   # a Graph: a loop's body, its name there
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


def render_arg(value, sym=repr, node=lambda n: n.name) -> str:
    """An argument as Python source: `sym` renders symbolic dims, `node` graph values."""
    def r(v):
        return render_arg(v, sym, node)
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



def short_name(filename: str) -> str:
    """A file's name without its folders, as comments and tables show it."""
    return filename.rsplit("/", 1)[-1]



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
        return render_arg(a, sym, node)
    op = ops.get(n.target)
    form = _operator_form(op, n)
    if form is not None:
        return form.format(*map(arg, n.args))
    args = [arg(a) for a in n.args] + [f"{k}={arg(v)}" for k, v in n.kwargs.items()]
    return f"{_spelling(op)}({', '.join(args)})"


def python_value(n: Node, expr: str) -> str:
    """A weak node's value as the Python scalar it stands for (NumPy's ops hand back NumPy scalars)."""
    return f"{n.array_meta.python_type.__name__}({expr})" if n.meta.get("weak") else expr


def code_namespace(graph: PythonCode) -> dict:
    """The names a graph's Python code uses: np, the ops' implementations, its bodies."""
    ns = {"np": np, "operator": operator, "float": float, "bool": bool}
    for n in graph.calls:
        op = ops.get(n.target)
        ns[f"impl_{op.name}"] = op.impl
        for what, body in zip(BODY_NAMES.get(n.target, ()), n.bodies):
            ns.update(code_namespace(body))
            ns[f"{n.name}_{what}"] = body
    return ns


def _render_loop(n: Node, sym) -> list[str]:
    """A loop node as Python: its body as a nested function, run by ops/control.py's run_loop."""
    body, *bounds = n.args
    lines = ["    " + line for line in body.python_code(f"{n.name}_run").splitlines()]
    args = ", ".join(render_arg(v, sym) for v in bounds)
    return lines + [f"    {n.name} = impl_loop({n.name}_body, {args}, run={n.name}_run)"]


def _render_cond(n: Node, sym) -> list[str]:
    """A cond node as Python: its sides as nested functions, one called as the `if` picks."""
    pred, then_body, else_body, operands = n.args
    lines = ["    " + line for line in then_body.python_code(f"{n.name}_then").splitlines()]
    lines += ["    " + line for line in else_body.python_code(f"{n.name}_else").splitlines()]
    args = ", ".join(render_arg(v, sym) for v in operands)
    return lines + [f"    {n.name} = {n.name}_then({args}) if {render_arg(pred, sym)} else {n.name}_else({args})"]


def _render_while(n: Node, sym) -> list[str]:
    """A while_loop node as Python: its body as a nested function, run by ops/control.py's run_while."""
    body, carried, free = n.args
    lines = ["    " + line for line in body.python_code(f"{n.name}_run").splitlines()]
    return lines + [f"    {n.name} = impl_while_loop({n.name}_body, {render_arg(carried, sym)}, "
                    f"{render_arg(free, sym)}, run={n.name}_run)"]


_RENDER_CONTROL = {"loop": _render_loop, "cond": _render_cond, "while_loop": _render_while}
