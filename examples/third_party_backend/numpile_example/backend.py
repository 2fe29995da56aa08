"""The backend itself: a numpile.Backend subclass.

It compiles a graph into a list of steps, one per call node, each a NumPy function applied to
the values of the node's arguments. Replace `KERNELS` and `step` with your compiler: fuse the
pointwise chains into one kernel, generate code, call a library. What the template shows is how
to read a Graph: node kinds, arguments nested in tuples (numpile.graph.map_nodes), the `meta`
keys (`weak`, `errstate`), and what to return.
"""

from __future__ import annotations

import numpy as np

import numpile
from numpile import ops
from numpile.graph import map_nodes

# op name -> the function computing it, called with the node's arguments in the op's canonical
# layout. The template takes NumPy's for every pointwise op; yours maps each to your own kernel.
KERNELS = {op.name: op.impl for op in ops.REGISTRY.values() if op.kind == ops.POINTWISE}


class ExampleBackend(numpile.Backend):
    name = "example"                    # numpile.compile(fn, backend="example")
    description = "template backend: pointwise ops, one NumPy call per node"
    devices = ("cpu",)                  # where the arrays it accepts live
    supports_dynamic_shapes = False     # graphs have concrete shapes (a new shape compiles again)
    modes = (None,)                     # add "reduce-overhead", "max-autotune" once they mean something here
    supported_ops = frozenset(KERNELS)  # graphs calling other ops run with NumPy instead

    def compile(self, graph, example_inputs, options):
        # `graph` lists its nodes in topological order: "input" nodes (one per argument of the
        # compiled callable, in order), "constant", "call" (node.target names a numpile.ops op)
        # and one "output". `options` holds the user's options= and "mode".
        steps = [step(node) for node in graph.calls]
        inputs, outputs = graph.inputs, graph.outputs
        constants = {node: node.args[0] for node in graph if node.op == "constant"}

        def run(*args):
            values = {**constants, **dict(zip(inputs, args))}
            for node, fn in steps:
                values[node] = fn(values)
            # the outputs, in graph.outputs order, as a tuple: arrays, NumPy scalars, or Python
            # scalars for weak ones. An input returned as an output may be the input itself.
            return tuple(map_nodes(outputs, values.__getitem__))
        return run


def step(node):
    """(node, fn): fn(values) computes the node from the values of the nodes before it."""
    kernel = KERNELS[node.target] if node.target != ops.TUPLE_GETITEM else _item
    errstate = node.meta.get("errstate") or {}  # the user's np.errstate(...="ignore") around this op
    weak = node.meta.get("weak", False)         # a Python scalar in the user's program (NEP 50 weak)
    python_type = node.array_meta.python_type if weak else None

    def fn(values):
        args = map_nodes(node.args, values.__getitem__)  # Nodes, nested in tuples and lists, -> values
        kwargs = map_nodes(node.kwargs, values.__getitem__)
        with np.errstate(**errstate):
            result = kernel(*args, **kwargs)
        return python_type(result) if weak else result
    return node, fn


def _item(results, index):
    """tuple_getitem: one result of an op with several (np.divmod, np.modf, np.frexp)."""
    return results[index]
