"""The backend itself: a numpile.Backend subclass."""

from __future__ import annotations

import numpile


class ExampleBackend(numpile.Backend):
    name = "example"                    # numpile.compile(fn, backend="example")
    description = "template backend: runs each graph as NumPy code"
    devices = ("cpu",)                  # where the arrays it accepts live
    supports_dynamic_shapes = True      # graphs with symbolic dims (dynamic=True) are fine
    modes = (None,)                     # add "reduce-overhead", "max-autotune" once they mean something here

    def compile(self, graph, example_inputs, options):
        # Replace this with your compiler. `graph` lists its nodes in topological order
        # (`for node in graph`): inputs, calls of numpile.ops ops (`node.target`, `node.args`,
        # `node.kwargs`, `node.meta["shape"]`, `node.meta["dtype"]`) and one output.
        # Return a callable that takes the graph's inputs positionally and returns the tuple
        # of its outputs, in graph.outputs order. `options` holds the user's options and "mode".
        return graph.compile_python()
