"""The bytecode tracer: `trace(fn, args, kwargs)` captures one call of `fn` as a Graph plus
the guards it relied on and the code that rebuilds its return value."""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass

from ..exc import Unsupported
from ..graph import Graph
from .codegen import CodeNamespace, ResultBuilder, signature_params
from .guards import GuardSet
from .output_graph import OutputGraph
from .sources import ClosureSource, GlobalSource, LocalSource
from .translator import InstructionTranslator
from .variables import CellVariable


@dataclass
class Trace:
    graph: Graph
    guards: GuardSet
    input_sources: list          # Sources of the graph inputs, in order
    example_inputs: list
    result_expr: str             # Python expression over `__o` (graph outputs) and the frame's names
    ns: CodeNamespace
    params: str                  # the compiled function's parameter list, as source text


class TraceFailed(Exception):
    """Tracing stopped at `error`; `guards` are the facts it had relied on until then."""

    def __init__(self, error: BaseException, guards: GuardSet, user_stack: list):
        super().__init__(str(error))
        self.error, self.guards, self.user_stack = error, guards, user_stack


def trace(fn: types.FunctionType, args: tuple, kwargs: dict) -> Trace:
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    closure = fn.__closure__ or ()
    env = {"__G": fn.__globals__, "__C": closure, **bound.arguments}
    output = OutputGraph(env)
    code = fn.__code__
    symbolic_locals = {name: output.wrap(value, LocalSource(name)) for name, value in bound.arguments.items()}
    for i, name in enumerate(code.co_freevars):
        symbolic_locals[name] = CellVariable(source=ClosureSource(i, name))
    tx = InstructionTranslator(output, code, fn.__globals__, symbolic_locals, GlobalSource)
    try:
        result = tx.run()
        ns = CodeNamespace(fn.__globals__, closure)
        builder = ResultBuilder(ns)
        result_expr = builder.expr(result)
    except Exception as e:
        stack = getattr(e, "user_stack", None) or tx.user_stack()
        raise TraceFailed(e, output.guards, stack) from e
    output.prune_unused_inputs(builder.outputs)
    output.graph.output(builder.outputs)
    output.graph.guards = output.guards.describe()
    return Trace(output.graph, output.guards, output.input_sources, output.example_inputs,
                 result_expr, ns, signature_params(fn, ns))
