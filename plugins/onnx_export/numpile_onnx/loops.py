"""A loop node (numpile.ops.control) as an ONNX `Loop`: the model's size does not grow with the
trip count.

`loop(body, start, stop, step, carried, free)` becomes `Loop(M, true, *carried)`, M the length
of range(start, stop, step) computed in the graph (start and stop may be sizes of the inputs, an
enclosing loop's index, or integers the graph computes: `range(indptr[i], indptr[i + 1])`), and a body subgraph whose inputs are the iteration number, the
condition and the carried values, and which computes the index as start + iteration * step.
Free values are read from the outer graph by name, as ONNX subgraphs may. Updates in place of a
carried array are functional here (ScatterND, as everywhere in the exporter): the Loop's output
is the array after the last iteration.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from numpile.graph import Node
from numpile.shapes import SymInt

from .emit import BOOL, INT64, Emitter, OnnxUnsupported, Value, tensor_type

LOOP = "loop"   # the registry's op; converted here with the driver's graph walk (convert.py)


def converter(convert_graph):
    """The converter of a loop node, `convert_graph(emitter, graph, env)` emitting its body."""
    def convert(cx, node, body, start, stop, step, carried, free):
        return _loop(cx, convert_graph, body, start, stop, step, carried, free)
    return convert


def _loop(cx: Emitter, convert_graph, body, start, stop, step, carried, free) -> tuple:
    if not isinstance(step, int):
        raise OnnxUnsupported("a range whose step is computed in the graph")
    if not carried:   # nothing survives the loop: nothing to compute
        return ()
    index, *inputs = body.inputs
    carried_in, free_in = inputs[:len(carried)], inputs[len(carried):]
    first = _bound(cx, start)
    inner = cx.subgraph()
    iteration, condition = Value(inner.fresh("iteration"), INT64, ()), Value(inner.fresh("cond"), BOOL, ())
    env = {index: _weak(inner.op("Add", first, inner.op("Mul", iteration, inner.const(np.array(step, np.int64)),
                                                        dtype=INT64, shape=()), dtype=INT64, shape=()), index)}
    env.update({n: _weak(Value(inner.fresh(n.name), n.dtype, n.shape), n) for n in carried_in})
    env.update({n: _weak(_free(cx, v, n), n) for n, v in zip(free_in, free)})
    convert_graph(inner, body, env)
    nexts = [inner.op("Identity", inner.cast(env[o] if isinstance(o, Node) else o, n.dtype), dtype=n.dtype)
             for o, n in zip(body.outputs, carried_in)]
    cond_out = inner.op("Identity", condition, dtype=BOOL)
    graph = helper.make_graph(
        inner.nodes, inner.fresh("body"),
        [helper.make_value_info(v.name, tensor_type(v.dtype, [])) for v in (iteration, condition)]
        + [helper.make_value_info(env[n].name, _type(n)) for n in carried_in],
        [helper.make_value_info(cond_out.name, tensor_type(BOOL, []))]
        + [helper.make_value_info(v.name, _type(n)) for v, n in zip(nexts, carried_in)])
    initial = [cx.cast(v, n.dtype) for v, n in zip(carried, carried_in)]
    out = cx.op("Loop", _trip_count(cx, start, stop, step), cx.const(np.array(True)), *initial,
                dtype=tuple(n.dtype for n in carried_in), outputs=len(carried), body=graph)
    return out if len(carried) > 1 else (out,)


def _weak(v: Value, node) -> Value:
    """v as the body's input `node` holds it: a Python scalar (NEP 50) where the node is weak."""
    return Value(v.name, node.dtype, tuple(node.shape), bool(node.meta.get("weak")))


def _type(node):
    """The ONNX type of a carried value: its dims that are sizes of the inputs left open."""
    return tensor_type(node.dtype, [None if isinstance(d, SymInt) else int(d) for d in node.shape])


def _free(cx: Emitter, v, node) -> Value:
    """A free value as the body reads it from the outer graph: a value, an enclosing loop's
    index or size (a SymInt), or a constant."""
    if isinstance(v, Value):
        return v
    if isinstance(v, SymInt):
        return cx.scalar_size(v)
    return cx.cast(v, node.dtype)


def _bound(cx: Emitter, b) -> Value:
    """A range's bound as a 0-d int64 tensor: an int, a size or index (SymInt), or a graph value."""
    return cx.cast(b, np.dtype(np.int64)) if isinstance(b, Value) else cx.scalar_size(b)


def _trip_count(cx: Emitter, start, stop, step: int) -> Value:
    """len(range(start, stop, step)): max(0, (stop - start + step - 1) // step) for a positive
    step (the mirror for a negative one); a negative numerator clamps to 0 whether ONNX's Div
    truncates or floors."""
    if not any(isinstance(b, (SymInt, Value)) for b in (start, stop)):
        return cx.const(np.array(len(range(start, stop, step)), np.int64))
    ahead, behind = (stop, start) if step > 0 else (start, stop)
    span = cx.op("Sub", _bound(cx, ahead), _bound(cx, behind), dtype=INT64, shape=())
    rounded = cx.op("Add", span, cx.const(np.array(abs(step) - 1, np.int64)), dtype=INT64, shape=())
    count = cx.op("Div", rounded, cx.const(np.array(abs(step), np.int64)), dtype=INT64, shape=())
    return cx.op("Max", count, cx.const(np.array(0, np.int64)), dtype=INT64, shape=())
