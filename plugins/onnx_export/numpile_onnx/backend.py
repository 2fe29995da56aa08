"""The backend "onnxrt": a graph exported to ONNX and run in onnxruntime.

Every graph the tracer captures goes through the exporter, so the conformance suite and the
random programs test export continuously. Options (`numpile.compile(options=...)`):
`threads` (intra-op threads, default onnxruntime's), `graph_optimization_level`
("disable", "basic", "extended", "all"; default "all") and `providers` (onnxruntime's execution
providers, default the CPU's; with onnxruntime-gpu, "CUDAExecutionProvider" runs the model on the
GPU, its NumPy inputs copied there and back).
"""

from __future__ import annotations

import numpy as np

import numpile
from numpile import logs, ops

from . import convert, emit

LEVELS = ("disable", "basic", "extended", "all")
KNOWN_OPTIONS = {"threads", "graph_optimization_level", "providers", "mode"}


def session_options(options: dict):
    import onnxruntime as ort
    unknown = set(options) - KNOWN_OPTIONS
    if unknown:
        raise ValueError(f"onnxrt: unknown options {sorted(unknown)}; known: {sorted(KNOWN_OPTIONS - {'mode'})}")
    so = ort.SessionOptions()
    level = options.get("graph_optimization_level", "all")
    if level not in LEVELS:
        raise ValueError(f"onnxrt: graph_optimization_level must be one of {LEVELS}, not {level!r}")
    so.graph_optimization_level = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[level]
    if "threads" in options:
        so.intra_op_num_threads = int(options["threads"])
    so.log_severity_level = 3   # errors only: onnxruntime's warnings are about its own choices
    return so


def session(model, options: dict | None = None):
    """An onnxruntime InferenceSession of `model` (a ModelProto or bytes)."""
    import onnxruntime as ort
    options = dict(options or {})
    providers = options.get("providers") or ["CPUExecutionProvider"]
    data = model if isinstance(model, bytes) else model.SerializeToString()
    return ort.InferenceSession(data, session_options(options), providers=providers)


SHOWN_ELEMENTS = 16   # initializers larger than this are listed by name, dtype and shape, not printed


def show(model) -> str:
    """The model as ONNX's textual syntax (onnx.printer), its large initializers (weights) listed
    rather than printed."""
    import onnx
    import onnx.printer
    from onnx import numpy_helper
    big = [t for t in model.graph.initializer if np.prod(t.dims, dtype=np.int64) > SHOWN_ELEMENTS]
    if not big:
        return onnx.printer.to_text(model)
    shown = onnx.ModelProto()
    shown.CopyFrom(model)
    kept = [t for t in shown.graph.initializer if np.prod(t.dims, dtype=np.int64) <= SHOWN_ELEMENTS]
    del shown.graph.initializer[:]
    shown.graph.initializer.extend(kept)
    listed = "".join(f"#   {t.name}: {numpy_helper.to_array(t).dtype}{list(t.dims)}\n" for t in big)
    return f"# initializers stored in the model, not shown:\n{listed}" + onnx.printer.to_text(shown)


def view_plans(graph) -> dict:
    """Outputs that NumPy makes as views of other outputs (`a = c[:]`, both returned): output
    position -> (the output it views, the view ops from it). Onnxruntime's outputs are separate
    arrays; these are remade from their base with NumPy, so that an update through one is seen
    through the other, as in NumPy."""
    outputs = list(graph.outputs)
    position = {o: i for i, o in reversed(list(enumerate(outputs))) if isinstance(o, numpile.Node)}
    plans = {}
    for j, out in enumerate(outputs):
        steps, node = [], out
        while isinstance(node, numpile.Node) and node.op == "call" and ops.get(node.target).kind == ops.VIEW \
                and isinstance(node.args[0], numpile.Node) and all(n is node.args[0] for n in node.inputs):
            steps.append(node)
            node = node.args[0]
            if node in position and position[node] != j:
                plans[j] = (position[node], list(reversed(steps)))
                break
    return plans


def _replay(base, steps):
    for node in steps:
        base = ops.get(node.target).impl(base, *node.args[1:], **node.kwargs)
    return base


class Runner:
    """Calls a session with a graph's inputs (contiguous arrays of the graph's dtypes) and hands
    back its outputs as NumPy would: NumPy scalars where the graph has scalars, views of each
    other where NumPy's are (view_plans)."""

    def __init__(self, sess, graph):
        self.session = sess
        self.names = [i.name for i in sess.get_inputs()]
        self.dtypes = [n.dtype for n in graph.inputs]
        self.outputs = [o.array_meta if isinstance(o, numpile.Node) else None for o in graph.outputs]
        self.views = view_plans(graph)

    def __call__(self, *inputs):
        feed = {name: np.asarray(x, dtype=dt, order="C") for name, x, dt in zip(self.names, inputs, self.dtypes)}
        results = [as_numpy(r, meta) for r, meta in zip(self.session.run(None, feed), self.outputs)]
        for j, (i, steps) in self.views.items():
            if isinstance(results[i], np.ndarray):
                results[j] = as_numpy(np.asarray(_replay(results[i], steps)), self.outputs[j])
        return tuple(results)


def as_numpy(result: np.ndarray, meta):
    """An output as NumPy hands it back: int64, not the C long long of the same size that
    onnxruntime's arrays may carry; a NumPy scalar where NumPy returns one."""
    if meta is None:
        return result
    if result.dtype.type is not meta.dtype.type:
        result = result.view(meta.dtype)
    return result[()] if meta.scalar else result


class OnnxrtBackend(numpile.Backend):
    name = "onnxrt"
    description = "exports each graph to ONNX (opset %d) and runs it in onnxruntime" % emit.OPSET
    devices = ("cpu",)
    supports_dynamic_shapes = True
    supports_loops = True   # a loop node is an ONNX Loop (loops.py)

    def is_available(self) -> tuple[bool, str]:
        try:
            import onnxruntime  # noqa: F401
        except ImportError as e:
            return False, f"onnxruntime is not installed ({e})"
        return True, ""

    def compile(self, graph, example_inputs, options):
        if not graph.outputs:   # nothing to compute (the graph only read its inputs): no model
            return lambda *inputs: ()
        model = convert.to_model(graph)
        code_log = logs.get("output_code")
        if logs.enabled("output_code"):
            code_log.debug("onnxrt: ONNX model (opset %d):\n%s", emit.OPSET, show(model))
        return Runner(session(model, options), graph)
