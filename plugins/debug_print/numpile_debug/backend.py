"""The backend "debug": shows what the tracer captured, then runs it as the eager backend does."""

from __future__ import annotations

import numpile


class DebugBackend(numpile.Backend):
    name = "debug"
    description = "prints the graph, its Python code and the guards, then runs it with NumPy"
    devices = ("cpu", "cuda")  # it runs what NumPy runs, as "eager" does
    supports_dynamic_shapes = True

    def compile(self, graph, example_inputs, options):
        print(report(graph))
        return graph.compile_python()


def report(graph) -> str:
    """The graph as a table, as Python code and with its guards, each under a heading."""
    guards = "\n".join(f"  {guard}" for guard in graph.guards) or "  (none)"
    sections = [
        (f"graph (inputs: {len(graph.inputs)}, ops: {len(graph.calls)}, outputs: {len(graph.outputs)})", graph.tabular()),
        ("Python code", graph.python_code().rstrip()),
        (f"guards ({len(graph.guards)})", guards),
    ]
    return "\n\n".join(f"=== numpile debug: {heading} ===\n{body}" for heading, body in sections) + "\n"
