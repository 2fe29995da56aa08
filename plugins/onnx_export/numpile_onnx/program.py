"""The exporter "onnx" and what it returns: an exported program (the graph, its ONNX model, its
input and output names) that saves to a file and runs through onnxruntime."""

from __future__ import annotations

import os
from types import SimpleNamespace

import numpy as np
from onnx import helper

import numpile
from numpile import logs

from . import backend, convert, emit


class ExportedProgram:
    """A function exported whole. `input_names`: the arguments the model takes, in order (the
    function's parameters; a model's weights are stored in it as initializers); `output_names`:
    its results (`output`, `output_0`..., or a dict's keys); `to_onnx()`: the onnx.ModelProto;
    `save(path)`; `run(*args)`: the result through onnxruntime, shaped as the function's."""

    def __init__(self, graph, model, signature, options: dict | None = None):
        self.graph, self.signature = graph, signature
        self._model = model
        self._options = dict(options or {})
        self._session = None
        weights = signature.weights
        self.input_names = [n for i, n in enumerate(signature.input_names) if i not in weights]
        self.output_names = list(signature.output_names)
        self.opset = emit.OPSET

    def to_onnx(self):
        return self._model

    def save(self, path) -> str:
        path = os.fspath(path)
        with open(path, "wb") as f:
            f.write(self._model.SerializeToString())
        return path

    def run(self, *args):
        """The exported function on `args` (the arguments, in order), in onnxruntime."""
        if len(args) != len(self.input_names):
            raise TypeError(f"the exported {self.signature.function} takes {len(self.input_names)} arguments "
                            f"({', '.join(self.input_names)}), got {len(args)}")
        if self._session is None:
            self._session = backend.session(self._model, self._options)
        metas = [n for i, n in enumerate(self.graph.inputs) if i not in self.signature.weights]
        feed = {name: np.asarray(x, dtype=node.dtype, order="C") for name, x, node in zip(self.input_names, args, metas)}
        results = self._session.run(self.output_names, feed)
        outs = self.graph.outputs
        values = [backend.as_numpy(r, o.array_meta if isinstance(o, numpile.Node) else None) for r, o in zip(results, outs)]
        return _rebuild(self.signature.result, values)

    def describe(self) -> str:
        """The inputs and outputs with their types (`x float32[batch, 784]`) and the opset."""
        def line(info) -> str:
            t = info.type.tensor_type
            dims = ", ".join(d.dim_param or str(d.dim_value) for d in t.shape.dim)
            return f"{info.name} {np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))}[{dims}]"
        graph = self._model.graph
        return "\n".join([f"inputs:  {'; '.join(line(i) for i in graph.input) or '(none)'}",
                          f"outputs: {'; '.join(line(o) for o in graph.output)}",
                          f"opset:   {self.opset} (ONNX {onnx_version()})"])

    def __str__(self) -> str:
        return backend.show(self._model)

    def __repr__(self) -> str:
        return (f"<ExportedProgram {self.signature.function}: inputs {', '.join(self.input_names)}; "
                f"outputs {', '.join(self.output_names)}; ONNX opset {self.opset}>")


def onnx_version() -> str:
    import onnx
    return onnx.__version__


def _rebuild(result, values):
    if isinstance(result, dict):
        return {k: _rebuild(v, values) for k, v in result.items()}
    if isinstance(result, (tuple, list)):
        return type(result)(_rebuild(v, values) for v in result)
    return values[result.index]


class OnnxExporter(numpile.Exporter):
    name = "onnx"
    description = "an ONNX model (opset %d) that onnxruntime runs without Python or numpile" % emit.OPSET
    supports_loops = True   # a loop node is an ONNX Loop (loops.py)

    def export(self, graph, example_inputs, options):
        options = dict(options)
        signature = options.pop("signature", None)
        if signature is None:   # a bare graph: its inputs are the arguments, outputs by position
            outs = range(len(graph.outputs))
            signature = SimpleNamespace(input_names=[n.name for n in graph.inputs], weights={}, symbol_names={},
                                        output_names=[f"output_{i}" for i in outs], function="graph",
                                        result=tuple(SimpleNamespace(index=i) for i in outs))
        taken = set(signature.input_names)
        clash = [n for n in signature.output_names if n in taken]
        if clash:
            raise numpile.Unsupported(f"ONNX export: the outputs {clash} have the names of inputs; "
                                      f"ONNX values have one name each")
        model = convert.to_model(graph, signature.input_names, signature.output_names, signature.weights,
                                 signature.symbol_names, graph_name=signature.function.replace(".", "_") or "numpile")
        if logs.enabled("output_code"):
            logs.get("output_code").debug("onnx: exported %s (opset %d):\n%s", signature.function, emit.OPSET,
                                          backend.show(model))
        return ExportedProgram(graph, model, signature, options)
