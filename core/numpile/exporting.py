"""`numpile.export`: a whole function captured as one graph and handed to an exporter.

As `torch.export` does, the function is traced once on example arguments with no graph break
allowed (a break is `numpile.Unsupported` naming the reason and the line). What the trace
found is described to the exporter by an `ExportSignature`: which graph inputs are the
caller's arguments and which are state read from the model (its weights, stored in the
exported file, named by attribute path: `w1`, `layers.0.w`), the names of the outputs (the
result's keys or positions), and the names of symbolic dims. The exporter (a plugin, found by
`format`) writes the format.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .cache import original_of
from .exc import Unsupported
from .dynamic import DynamicInputs
from .tracer import TraceFailed, for_backend, trace
from .tracer.sources import AttrSource, ClosureSource, GlobalSource, ItemSource, LocalSource


@dataclass
class ExportSignature:
    """How an exported graph meets its caller.

    `input_names[i]` names graph input i; `weights` maps a graph input's position to the array
    the exported program stores for it (a model's attribute, a global); the others are the
    arguments, in `argument_names` order of the function's parameters. `output_names[j]` names
    graph output j; `result` is the function's result with each output as its position (an int
    wrapped in `Output`), for exporters that rebuild it. `symbol_names[k]` names symbol s<k>.
    """

    input_names: list[str]
    weights: dict[int, Any]
    output_names: list[str]
    result: Any
    symbol_names: dict[int, str] = field(default_factory=dict)
    function: str = ""


@dataclass(frozen=True)
class Output:
    """Graph output `index` inside a rebuilt result."""

    index: int


class _Argument:
    """Stands for an array argument while the residual code rebuilds the result: records the
    write-backs it receives instead of writing into the caller's array."""

    def __init__(self, name: str):
        self.name, self.written = name, False

    def __setitem__(self, key, value):
        self.written = True


def _callable(obj) -> tuple[types.FunctionType, tuple]:
    """The Python function to trace and the leading arguments (self) of a function, a bound
    method or a model object (its __call__ or forward)."""
    if isinstance(obj, types.FunctionType):
        return obj, ()
    if isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
        return obj.__func__, (obj.__self__,)
    inner = original_of(obj)   # a numpile.compile'd function or model
    if inner is not None and inner is not obj:
        return _callable(inner)
    for method in ("__call__", "forward"):
        fn = getattr(type(obj), method, None)
        if isinstance(fn, types.FunctionType):
            return fn, (obj,)
    raise TypeError(f"numpile.export expects a Python function, a method or an object with a Python "
                    f"__call__ or forward method, not {type(obj).__name__}")


def _path(source, self_name: str | None) -> str:
    """A source as an attribute path: `self.layers[0].w` -> `layers.0.w`."""
    if isinstance(source, AttrSource):
        base = _path(source.base, self_name)
        return f"{base}.{source.attr}" if base else source.attr
    if isinstance(source, ItemSource):
        base = _path(source.base, self_name)
        return f"{base}.{source.key}" if base else str(source.key)
    if isinstance(source, LocalSource):
        return "" if source.local == self_name else source.local
    if isinstance(source, GlobalSource):
        return source.global_name
    if isinstance(source, ClosureSource):
        return source.var
    return source.name()


def _dynamic(spec, params: list[str], args: tuple) -> tuple[DynamicInputs | None, dict]:
    """DynamicInputs and {(argument, dim): name} from `dynamic_shapes`: True (every dim of every
    argument), a dict by parameter name or a sequence by position, each entry None, a
    collection of dims or a dict {dim: name}."""
    if spec is None or spec is False:
        return None, {}
    if spec is True:
        spec = {p: range(np.ndim(a)) for p, a in zip(params, args) if isinstance(a, np.ndarray)}
    elif not isinstance(spec, dict):
        spec = dict(zip(params, spec))
    per_source, names = {}, {}
    for param, dims in spec.items():
        if param not in params:
            raise ValueError(f"dynamic_shapes names {param!r}, not a parameter ({', '.join(params)})")
        if dims is None:
            continue
        value = args[params.index(param)]
        named = dims if isinstance(dims, dict) else {d: None for d in dims}
        for dim, name in named.items():
            dim = dim % np.ndim(value)
            if np.shape(value)[dim] in (0, 1):
                raise ValueError(f"dynamic_shapes: dim {dim} of {param} is {np.shape(value)[dim]} in the example; "
                                 f"give an example of size 2 or more (0 and 1 are always specialised)")
            per_source.setdefault(param, set()).add(dim)
            if name is not None:
                names[(param, dim)] = str(name)
    return DynamicInputs(per_source=per_source), names


def capture(obj, args: tuple, dynamic_shapes=None, exporter=None):
    """Trace `obj(*args)` whole: (graph, example inputs, ExportSignature), with the control flow
    `exporter` writes (loop nodes where it says so) kept as nodes."""
    fn, lead = _callable(obj)
    params = list(inspect.signature(fn, follow_wrapped=False).parameters)
    self_name = params[0] if lead else None
    call_args = lead + tuple(args)
    user_params = params[len(lead):]
    dynamic, dim_names = _dynamic(dynamic_shapes, user_params, tuple(args))
    dynamic = for_backend(dynamic, exporter)
    try:
        tr = trace(fn, call_args, {}, resumable=False, dynamic=dynamic)
    except TraceFailed as failed:
        err = failed.error
        if isinstance(err, Unsupported):
            raise Unsupported(f"numpile.export captures the whole function as one graph: {err.reason}",
                              err.loc).with_traceback(None) from None
        loc = failed.user_stack[-1] if failed.user_stack else None
        raise Unsupported(f"numpile.export: the tracer failed: {type(err).__name__}: {err}", loc) from err
    _check_sizes(tr, fn, call_args, dynamic, dim_names)
    graph = tr.graph
    names, weights = [], {}
    for i, source in enumerate(tr.input_sources):
        root = source.root()
        names.append(_path(source, self_name) or source.name())
        if not (isinstance(root, LocalSource) and root.local in user_params):
            weights[i] = tr.example_inputs[i]
    inputs = graph.inputs
    symbol_names = {}
    for k, owner in enumerate(graph.symbols):
        if owner is not None and owner[0] in inputs:
            position = inputs.index(owner[0])
            key = (names[position], owner[1])
            symbol_names[k] = dim_names.get(key, f"{names[position]}_{owner[1]}")
    result, outputs = _rebuild(tr, fn, call_args, user_params, names, weights)
    output_node = next(n for n in graph.nodes if n.op == "output")
    output_node.args = (tuple(outputs),)
    graph.write_back = []
    leaves = _leaves(result, "output")
    signature = ExportSignature(names, weights, [name for name, _ in leaves], result, symbol_names, fn.__qualname__)
    return graph, list(tr.example_inputs), signature


class _Sized:
    """An argument with another shape, for evaluating the trace's decisions on dims."""

    def __init__(self, shape):
        self.shape = shape


def _check_sizes(tr, fn, call_args, dynamic, dim_names) -> None:
    """The trace's decisions on dynamic dims (`x.shape[0] != 1`, `s0 * s1 % s0 == 0`) must hold
    for every size of 2 and more, as the exported model claims: they are evaluated at sizes
    drawn for each dim (dims named alike the same), and one that fails is an error naming it."""
    relied = [g for g in tr.guards if g.kind == "expr"]
    if not relied or dynamic is None:
        return
    bound = inspect.signature(fn, follow_wrapped=False).bind(*call_args).arguments
    rng = np.random.default_rng(0)
    for trial in range(8):
        sizes: dict = {}
        env = {"__G": fn.__globals__, "__C": fn.__closure__ or (), **bound}
        for param, dims in dynamic.per_source.items():
            shape = list(np.shape(bound[param]))
            for d in dims:
                key = dim_names.get((param, d), (param, d))
                sizes.setdefault(key, int(rng.choice([2, 3, 5, 8, 64, 97])) if trial else 2)
                shape[d] = sizes[key]
            env[param] = _Sized(tuple(shape))
        failed = [g.describe() for g in relied if not eval(g.source.expr(), dict(env))]
        if failed:
            raise Unsupported(f"numpile.export: the function's code decides on its dynamic dims "
                              f"({'; '.join(failed)}), which does not hold for every size: make those dims "
                              f"static, or compute without deciding on them")


def _rebuild(tr, fn, call_args, user_params, names, weights):
    """The function's result with Output(j) for each value it returns, and the graph values
    (nodes, or constants) those outputs are. An argument updated in place must be returned:
    an exported program is a pure function."""
    graph = tr.graph
    outs = list(graph.outputs)
    bound = inspect.signature(fn, follow_wrapped=False).bind(*call_args)
    stand_ins = {p: _Argument(p) if isinstance(v, np.ndarray) and p in user_params else v
                 for p, v in bound.arguments.items()}
    ns = dict(tr.ns.values)
    ns.update({"__o": tuple(Output(i) for i in range(len(outs))), "__scalar": lambda v: v})
    source = f"def __result({', '.join(stand_ins)}):\n" + "".join(f"    {line}\n" for line in tr.lines) \
        + f"    return {tr.result_expr}\n"
    exec(compile(source, "<numpile export>", "exec"), ns)
    try:
        result = ns["__result"](*stand_ins.values())
    except Exception as e:
        raise Unsupported(f"numpile.export: the result of {fn.__qualname__} is not arrays in tuples, lists "
                          f"and dicts ({type(e).__name__}: {e})") from None
    updated = {node: k for k, node in graph.write_back}
    inputs = graph.inputs
    for node, k in updated.items():
        name = names[inputs.index(node)]
        returned = any(isinstance(leaf, _Argument) and leaf.name == name for _, leaf in _leaves(result, ""))
        if not returned or inputs.index(node) in weights:
            loc = outs[k].meta.get("loc") if hasattr(outs[k], "meta") else None
            raise Unsupported(f"numpile.export: {fn.__qualname__} updates {name} in place, and an exported "
                              f"program is a pure function: return the updated array instead", loc)
    by_name = {names[i]: node for i, node in enumerate(inputs)}
    new_outputs = []

    def place(leaf):
        if isinstance(leaf, Output):
            value = outs[leaf.index]
        elif isinstance(leaf, _Argument):   # a returned argument: its updated value, or itself
            node = by_name.get(leaf.name)
            if node is None:
                raise Unsupported(f"numpile.export: {fn.__qualname__} returns its argument {leaf.name} unchanged")
            value = outs[updated[node]] if node in updated else node
        elif isinstance(leaf, (np.ndarray, np.generic, int, float, bool)):
            value = leaf
        else:
            raise Unsupported(f"numpile.export: {fn.__qualname__} returns a {type(leaf).__name__}, not an array")
        new_outputs.append(value)
        return Output(len(new_outputs) - 1)
    return _map_leaves(result, place), new_outputs


def _map_leaves(value, fn):
    if isinstance(value, dict):
        return {k: _map_leaves(v, fn) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_map_leaves(v, fn) for v in value)
    return fn(value)


def _leaves(value, prefix: str) -> list[tuple[str, Any]]:
    """(name, leaf) of a result: `output` alone, `output_0`... of a tuple, a dict's keys, and
    nested ones joined with dots."""
    if isinstance(value, dict):
        return [pair for k, v in value.items() for pair in _leaves(v, str(k) if prefix == "output" else f"{prefix}.{k}")]
    if isinstance(value, (tuple, list)):
        return [pair for i, v in enumerate(value)
                for pair in _leaves(v, f"output_{i}" if prefix == "output" else f"{prefix}.{i}")]
    return [(prefix, value)]


def export(fn, *example_args, dynamic_shapes=None, format: str = "onnx", **kwargs):
    """Capture `fn(*example_args)` (a function, a method or a model object) whole and export it
    with the exporter `format` (a plugin's: numpile-onnx provides "onnx"). Returns the
    exporter's program (for "onnx": `to_onnx()`, `save(path)`, `run(*args)`, `input_names`,
    `output_names`). `dynamic_shapes`: True for every dim of every argument, or per argument
    (a dict by parameter name, or a sequence by position) the dims to leave symbolic, as a
    list or as {dim: "name"} (one name for dims that are the same size). Other keyword
    arguments go to the exporter as options."""
    from . import plugins
    exporter = plugins.lookup_exporter(format)
    graph, example_inputs, signature = capture(fn, example_args, dynamic_shapes, exporter)
    return exporter.export(graph, example_inputs, {**kwargs, "signature": signature})
