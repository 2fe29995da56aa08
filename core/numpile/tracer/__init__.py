"""The bytecode tracer: `trace(fn, args, kwargs)` captures one call of `fn` as a Graph plus
the guards it relied on and the residual Python that runs after the graph: the code that
rebuilds the return value or, at a graph break, the unsupported instruction and the tail
call of a resume function."""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass, field

from ..exc import Unsupported
from .. import shapes
from ..graph import Graph
from ..dynamic import DynamicInputs
from . import bytecode_compat as bc
from .entry_code import CodeNamespace, Reconstructor, signature_params
from .control import for_backend
from .control.liveness import live_at
from .guards import GuardSet
from ..exc import Retrace
from .output_graph import OutputGraph
from .residual import LASTI_SLOT, NULL_SLOT, Branch, branches_at
from . import resume
from .resume import ResumeLayout
from .sources import ClosureSource, GlobalSource, LocalSource
from . import flow_handlers, handlers  # noqa: F401  (register the opcode handlers in dispatch.DISPATCH)
from .translator import InstructionTranslator
from .variables import NULL, CellVariable


@dataclass
class GraphBreak:
    """Where and why a trace stopped before the end of its frame."""

    reason: str
    loc: object                  # SourceLoc of the user line
    user_stack: list

    def __str__(self) -> str:
        where = f"{self.loc}: {self.loc.line}" if self.loc is not None else "<unknown>"
        return f"{self.reason}\n    at {where}"


@dataclass
class Resume:
    """One way out of a graph break: run `lines`, and when `test` holds (or always), tail-call the
    resume function for `layout` with `args`."""

    test: str | None
    lines: list
    layout: ResumeLayout
    args: list                   # Python expressions
    native: bool                 # the resume function runs uncompiled


@dataclass
class Trace:
    graph: Graph
    guards: GuardSet
    input_sources: list          # Sources of the graph inputs, in order
    example_inputs: list
    ns: CodeNamespace
    params: str                  # the compiled function's parameter list, as source text
    code: types.CodeType
    lines: list                  # statements run after the graph
    result_expr: str | None      # the frame's return value, when it ran to the end
    resumes: list = field(default_factory=list)   # at a graph break
    graph_break: GraphBreak | None = None
    array_kind: tuple | None = None   # (ArrayKind, location) when the inputs are CuPy arrays or tensors


class TraceFailed(Exception):
    """Tracing stopped at `error`; `guards` are the facts it had relied on until then, and `point`
    the (offset, count) of the root-frame instruction it stopped at (None if it cannot resume)."""

    def __init__(self, error: BaseException, guards: GuardSet, user_stack: list, point):
        super().__init__(str(error))
        self.error, self.guards, self.user_stack, self.point = error, guards, user_stack, point


def trace(fn: types.FunctionType, args: tuple, kwargs: dict, resumable: bool = True,
          dynamic: DynamicInputs | None = None) -> Trace:
    """Trace a call. At the first thing it cannot capture, trace again up to that instruction and
    end the graph there (a graph break), unless `resumable` is False. `dynamic` says which input
    dims are symbolic."""
    hints = frozenset()
    while True:
        try:
            return _trace_to_break(fn, args, kwargs, resumable, dynamic, hints)
        except TraceFailed as failed:
            if not isinstance(failed.error, Retrace):
                raise
            hints |= {failed.error.hint}


def _trace_to_break(fn, args, kwargs, resumable, dynamic, hints) -> Trace:
    try:
        return _trace(fn, args, kwargs, None, dynamic, hints)
    except TraceFailed as failed:
        if not resumable or failed.point is None or isinstance(failed.error, Retrace):
            raise
        err = failed.error
        tr = _trace(fn, args, kwargs, failed.point, dynamic, hints, GraphBreak(err.reason, err.loc, failed.user_stack))
        if _python_loop(fn.__code__, failed.point) and not _array_work(tr.graph):
            raise failed from None   # resumed each iteration for nothing to run: the frame runs as Python
        return tr


def _python_loop(code, point: tuple) -> bool:
    """Whether a break at `point` (offset, times reached) is in a loop whose iterations this trace
    went through: inside its body, or at its head after iterations (the unroll limit). A break
    at the head the first time it is reached (an iterator the tracer cannot take: a resumed
    frame's) has traced no iteration to judge the loop by."""
    offset, reached = point
    at_head = next(i for i in bc.instructions(code) if i.offset == offset).opname == "FOR_ITER"
    return bc.inside_loop(code, offset) and not (at_head and reached <= 1)


def _array_work(graph) -> bool:
    """Whether a graph computes an array, or runs a loop or a branch: Python numbers alone run
    faster as Python than as a graph and a resume on every iteration of a loop that breaks."""
    return any(n.results is not None or not n.meta["scalar"] or n.bodies for n in graph.calls)


def _trace(fn, args, kwargs, stop_at, dynamic, hints, graph_break: GraphBreak | None = None) -> Trace:
    bound = inspect.signature(fn, follow_wrapped=False).bind(*args, **kwargs)
    bound.apply_defaults()
    closure = fn.__closure__ or ()
    output = OutputGraph({"__G": fn.__globals__, "__C": closure, **bound.arguments}, dynamic, hints)
    code = fn.__code__
    # parameters by name (code order puts keyword-only ones before *args, signature order after);
    # inspect renames a comprehension's ".0" to "implicit0", the name generated code uses
    try:
        symbolic_locals = {(".0" if name == "implicit0" and ".0" in code.co_varnames else name): output.wrap(value, LocalSource(name))
                           for name, value in bound.arguments.items()}
    except Unsupported as e:  # an argument it cannot take (an ndarray subclass): the frame runs as Python
        raise TraceFailed(e, output.guards, [], None) from e
    for i, name in enumerate(code.co_freevars):
        symbolic_locals[name] = CellVariable(source=ClosureSource(i, name))
    tx = InstructionTranslator(output, code, fn.__globals__, symbolic_locals, GlobalSource)
    tx.stop_at = stop_at
    ns = CodeNamespace(fn.__globals__, closure)
    rc = Reconstructor(ns, output.refresh, output.shape_env, output.check_held_apart)
    try:
        with shapes.active(output.shape_env):
            result = tx.run()
        output.check_disjoint_updates()
        rc.apply_side_effects(output.mutated_arrays, output.mutated, output.attr_writes.values())
        if result is not None:
            result_expr, resumes = rc.expr(result), []
        else:
            result_expr, resumes = None, _resumes(tx, rc)
        output.guard_shapes()
    except Exception as e:
        stack = getattr(e, "user_stack", None) or tx.user_stack()
        point = tx.current if isinstance(e, Unsupported) and stop_at is None else None
        raise TraceFailed(e, output.guards, stack, point) from e
    output.prune_unused_inputs(rc.outputs)
    output.graph.output(rc.outputs)
    inputs = {node.target: node for node in output.graph.inputs}   # by the source each input came from
    output.graph.write_back = [(rc.outputs.index(v.node), inputs[v.source.name()]) for v in output.mutated_arrays
                               if v.node in rc.outputs and v.source.name() in inputs]
    output.graph.guards = output.guards.describe()
    return Trace(output.graph, output.guards, output.input_sources, output.example_inputs, ns,
                 signature_params(fn, ns), resume.origin(code)[0], rc.lines, result_expr, resumes, graph_break,
                 output.array_kind)


def _resumes(tx: InstructionTranslator, rc: Reconstructor) -> list[Resume]:
    """The residual exits of a trace that stopped at `tx.break_inst`."""
    code, shift = resume.origin(tx.code)
    stack = [NULL_SLOT if v is NULL else rc.expr(v) for v in tx.stack]
    cells = [c for c in code.co_cellvars if c not in code.co_varnames
             and isinstance(tx.locals.get(c), CellVariable) and tx.locals[c].contents is not None]
    cell_args = [rc.expr(tx.locals[c].contents) for c in cells]
    out = []
    for b in branches_at(tx, tx.break_inst, stack, bc.user_protected_offsets(tx.code)):
        local_args, unbound = _locals_passed(tx, rc, code, tx.index_of[b.offset])
        layout = ResumeLayout(b.offset - shift, tuple(e is not NULL_SLOT for e in b.stack), tuple(unbound), tuple(cells))
        values = [e for e in b.stack if e is not NULL_SLOT]
        if b.raised_at is not None:  # the handler's RERAISE points tracebacks at this code unit
            prologue = resume.origin(resume.resume_code(code, layout))[1]
            values[values.index(LASTI_SLOT)] = str((b.raised_at - shift + prologue) // 2)
        out.append(Resume(b.test, b.lines, layout, [*local_args, *values, *cell_args], b.native))
    _check_cells_shared(tx, rc, code, tx.break_inst.offset - shift)
    return out


def _check_cells_shared(tx: InstructionTranslator, rc: Reconstructor, code, offset: int) -> None:
    """A function made before the break that closes over a variable of the frame is rebuilt with a
    cell of its own, and the resume function gets the variable's value in another: one the code
    after the break assigns (`pts = []` then `add(p)`, appending to `pts`) would not be seen by
    the function. Such a frame runs as Python."""
    for name in code.co_cellvars:
        cell = tx.locals.get(name)
        if isinstance(cell, CellVariable) and rc.rebuilt(cell) and (bc.inside_loop(code, offset) or any(
                i.opname in ("STORE_DEREF", "DELETE_DEREF") and i.argval == name and i.offset >= offset
                for i in bc.instructions(code))):
            raise Unsupported(f"a function made before the break closes over {name!r}, which the code after "
                              "the break assigns: resuming would give the function a cell of its own")


_READS_LOCALS = frozenset({"locals", "vars", "eval", "exec"})   # builtins that read a frame's locals by name


def _locals_passed(tx: InstructionTranslator, rc: Reconstructor, code, k: int) -> tuple[list, list]:
    """(the resume function's local arguments, the locals it starts unbound): the locals by slot,
    a resume function's own names for the original's (pytest's `@py_assert1` is its
    `_local__py_assert1`, which a break inside it passes on to the original's next resume); one
    nothing reads from instruction k on is passed unbound (no argument, no guard on it), unless a
    closure may read it (a cell) or the code reads its frame's locals by name (`locals()`, `eval`)."""
    local_args, unbound = [], []
    every = bool(_READS_LOCALS & set(code.co_names))
    for name, own in zip(code.co_varnames, tx.code.co_varnames):
        value = tx.locals.get(own)
        dead = not (every or isinstance(value, CellVariable) or live_at(tx, own, k))
        if isinstance(value, CellVariable):
            value = value.contents
        if value is None or value is NULL or dead:
            unbound.append(name)
            local_args.append("None")
        else:
            local_args.append(rc.expr(value))
    return local_args, unbound


__all__ = ["trace", "Trace", "TraceFailed", "GraphBreak", "Resume", "Branch", "for_backend"]
