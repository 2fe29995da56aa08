"""A numpile Graph as an ONNX ModelProto: the driver that walks the graph and calls the op table.

Graph inputs become ONNX inputs (or initializers, for a model's weights); each call node is
converted by its row of `table.TABLE`; outputs are renamed to the names asked for. Symbolic
dims become named `dim_param`s, one name per symbol.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

import numpile
from numpile import ops
from numpile.graph import Node, map_nodes
from numpile.ops import TUPLE_GETITEM
from numpile.shapes import SymInt, lone_symbol

from . import emit, loops
from .emit import Emitter, OnnxUnsupported, Value, tensor_type
from .table import TABLE, UNSUPPORTED

PRODUCER = "numpile-onnx"


class ExportError(numpile.Unsupported):
    """An op, a form of an op or a value the ONNX export cannot express: names the op, the
    user's line and the opset."""


def unsupported(node: Node, why: str) -> ExportError:
    return ExportError(f"ONNX export (opset {emit.OPSET}) cannot express {node.target}: {why}", node.meta.get("loc"))


def dim_names(graph, names: dict | None = None) -> dict:
    """symbol index -> the dim_param naming it: `names` where the user named it, else s<k>."""
    names = dict(names or {})
    return {k: names.get(k, f"s{k}") for k in range(len(graph.symbols))}


def _type(node: Node, dims: dict) -> onnx.TypeProto:
    shape = []
    for d in node.shape:
        k = lone_symbol(d) if isinstance(d, SymInt) else None
        if isinstance(d, SymInt) and k is None:
            raise unsupported(node, f"an input dim {d.expr} that is not a lone symbol")
        shape.append(dims[k] if k is not None else int(d))
    try:
        return tensor_type(node.dtype, shape)
    except OnnxUnsupported as e:   # complex inputs
        raise ExportError(f"ONNX export (opset {emit.OPSET}) cannot take input {node.name}: {e}", None) from None


def to_model(graph, input_names: list[str] | None = None, output_names: list[str] | None = None,
             initializers: dict | None = None, symbol_names: dict | None = None,
             graph_name: str = "numpile") -> onnx.ModelProto:
    """The ONNX model of `graph`. `input_names[i]` names graph input i (default: its node name);
    `initializers` maps an input position to the array stored in the model (a weight) instead of
    an ONNX input; `symbol_names` maps a symbol index to its dim_param."""
    inputs = graph.inputs
    input_names = input_names or [n.name for n in inputs]
    initializers = initializers or {}
    dims = dim_names(graph, symbol_names)
    env: dict[Node, Value] = {}
    onnx_inputs, onnx_inits = [], []
    for i, (node, name) in enumerate(zip(inputs, input_names)):
        if i in initializers:
            onnx_inits.append(numpy_helper.from_array(np.asarray(initializers[i], dtype=node.dtype, order="C"), name))
        else:
            onnx_inputs.append(helper.make_value_info(name, _type(node, dims)))
        env[node] = Value(name, node.dtype, node.shape, bool(node.meta.get("weak")))
    outs = graph.outputs
    output_names = output_names or [f"output_{i}" for i in range(len(outs))]
    cx = Emitter(reserved=[*input_names, *output_names])
    convert_graph(cx, graph, env)
    onnx_outputs = []
    for value, name in zip(outs, output_names):
        v = env[value] if isinstance(value, Node) else cx.const(value)
        cx.nodes.append(helper.make_node("Identity", [v.name], [name], name=f"out_{name}"))
        meta = value if isinstance(value, Node) else None
        shape = [dims[lone_symbol(d)] if isinstance(d, SymInt) and lone_symbol(d) is not None else
                 (None if isinstance(d, SymInt) else int(d)) for d in (meta.shape if meta is not None else np.shape(value))]
        onnx_outputs.append(helper.make_value_info(name, tensor_type(v.dtype, shape)))
    onnx_graph = helper.make_graph(cx.nodes, graph_name, onnx_inputs, onnx_outputs, initializer=onnx_inits)
    model = helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", emit.OPSET)],
                              producer_name=PRODUCER, producer_version=numpile.__version__)
    model.ir_version = 8   # onnx 1.13's: the oldest that opset 18 needs, for the widest range of runtimes
    return model


def convert_graph(cx: Emitter, graph, env: dict) -> None:
    """Emit the constants and calls of `graph` (a model's graph, or a loop's body into the Loop's
    subgraph) into `cx`; `env` maps its inputs to their Values, and gets every node's."""
    cx.symbol_sizes = {k: (env[s[0]].name, s[1]) for k, s in enumerate(graph.symbols) if s is not None and s[0] in env}
    for node in graph.nodes:
        if node.op == "constant":
            env[node] = cx.const(node.args[0], node.dtype)
        elif node.op == "call":
            env[node] = _as_node(_convert(cx, node, env), node)


def _as_node(out, node: Node):
    """A converter's result, with the node's shape (and dtype, which must be NumPy's)."""
    metas = getattr(node, "results", None)
    if metas is not None:
        return tuple(_as_node(v, m) for v, m in zip(out, metas))
    if out.dtype != node.dtype:   # node: a Node, or the ArrayMeta of one of its results
        raise AssertionError(f"ONNX converter of {getattr(node, 'target', '?')} gives {out.dtype}, NumPy {node.dtype}")
    return Value(out.name, node.dtype, tuple(node.shape))


def _convert(cx: Emitter, node: Node, env: dict):
    if node.target == TUPLE_GETITEM:   # one result of an op with several, or an item of a tuple
        results = map_nodes(node.args[0], env.__getitem__)
        return results[node.args[1]]
    convert = _LOOP if node.target == loops.LOOP else TABLE.get(node.target)
    if convert is None:
        raise unsupported(node, UNSUPPORTED.get(node.target, "the ONNX exporter has no rule for it"))
    args, kwargs = map_nodes((node.args, node.kwargs), env.__getitem__)
    try:
        if ops.get(node.target).kind == ops.POINTWISE:   # a loop's index as an operand: a Python int's value
            args = tuple(Value(cx.scalar_size(a).name, emit.INT64, (), weak=True) if isinstance(a, SymInt) else a
                         for a in args)
        out = convert(cx, node, *args, **kwargs)
    except OnnxUnsupported as e:
        raise unsupported(node, str(e)) from None
    return out


_LOOP = loops.converter(convert_graph)   # a loop's body is a graph of its own, which this driver converts
