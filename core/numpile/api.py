"""The public entry points: compile, explain, export, reset, disable."""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass, field

from . import cache
from .exc import Unsupported
from .exporting import export
from .tracer import GraphBreak

# torch.compile's modes; what each does is the backend's (Backend.modes lists those it has)
MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(obj=None, *, backend=None, fullgraph: bool = False, dynamic: bool | None = None,
            mode: str | None = None, options: dict | None = None):
    """Compile a function, a bound method or a callable object (a model).

    `backend` is a registered name ("eager", "debug", "llvm", ...), a `numpile.Backend`, or a
    plain callable `backend(graph, example_inputs) -> callable`; None picks the default for the
    inputs' device. Usable as `@numpile.compile` or `@numpile.compile(backend="debug")`.
    """
    if obj is None:
        return functools.partial(compile, backend=backend, fullgraph=fullgraph, dynamic=dynamic,
                                 mode=mode, options=options)
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, MODES))}, not {mode!r}")
    mode = None if mode == "default" else mode
    kwargs = dict(backend=backend, fullgraph=fullgraph, dynamic=dynamic, mode=mode, options=options)
    if isinstance(obj, cache.CompiledFunction):
        obj = cache.original_of(obj)  # compiling again (say with another backend) starts from the original
    if isinstance(obj, types.FunctionType):
        return cache.CompiledFunction(obj, obj, **kwargs)
    if isinstance(obj, types.MethodType) and isinstance(obj.__func__, types.FunctionType):
        return cache.CompiledFunction(obj.__func__, obj, bound_self=obj.__self__, **kwargs)
    for method in ("__call__", "forward"):
        fn = getattr(type(obj), method, None)
        if isinstance(fn, types.FunctionType):
            return cache.CompiledFunction(fn, obj, bound_self=obj, **kwargs)
    raise TypeError(f"numpile.compile expects a Python function, a method or an object with a Python "
                    f"__call__ or forward method, not {type(obj).__name__}")


def disable(fn):
    """Mark `fn` to always run as ordinary Python: the tracer never inlines or compiles it."""
    target = fn.__func__ if isinstance(fn, types.MethodType) else fn
    target._numpile_disable = True
    return fn


def reset() -> None:
    """Drop every compiled entry of every compiled function, with the resume functions and
    callees compiled for them; the next calls compile again (docs/reliability.md says what stays)."""
    cache.reset_all()


@dataclass
class ExplainOutput:
    """What `numpile.explain(fn)(*args)` found; `print()` it for a readable report."""

    graphs: list = field(default_factory=list)
    graph_count: int = 0
    graph_break_count: int = 0
    break_reasons: list = field(default_factory=list)     # GraphBreak
    ops_per_graph: list = field(default_factory=list)     # [[op names of graph 0], ...]
    guards: list = field(default_factory=list)            # [[readable guards of entry 0], ...]
    compile_times: list = field(default_factory=list)     # seconds per compilation
    segments: list = field(default_factory=list)          # (graph or None, GraphBreak or None) per entry, in order
    fallbacks: list = field(default_factory=list)         # entries the safety net runs as Python: why

    def draw(self, path="numpile-explain"):
        """Draw the graphs, their fused kernels and the breaks (reason, source line): an SVG through
        Graphviz when the `graphviz` package is installed, else a text picture. Returns the file."""
        from . import drawing
        return drawing.draw(self, path)

    def to_dot(self) -> str:
        """The picture in Graphviz's DOT language."""
        from . import drawing
        return drawing.to_dot(self)

    def __str__(self) -> str:
        lines = [f"Graph count: {self.graph_count}", f"Graph break count: {self.graph_break_count}"]
        if self.break_reasons:
            lines.append("Break reasons:")
            lines += [f"  {i + 1}. {b}" for i, b in enumerate(self.break_reasons)]
        for i, (names, graph) in enumerate(zip(self.ops_per_graph, self.graphs)):
            lines.append(f"Ops of graph {i + 1} ({len(names)}): {', '.join(names)}")
        for i, guards in enumerate(self.guards):
            lines.append(f"Guards of entry {i + 1}:")
            lines += [f"  {g}" for g in guards] or ["  (none)"]
        if self.compile_times:
            lines.append("Compile times: " + ", ".join(f"{t * 1e3:.1f} ms" for t in self.compile_times))
        lines += [f"Safety net: {why}" for why in self.fallbacks]
        return "\n".join(lines)


def explain(fn, **compile_kwargs):
    """`numpile.explain(fn)(*args)`: compile fn afresh on the eager backend, run it once, and
    report what was captured: graphs, breaks with reasons and places, ops, guards, compile times.
    Given a function compiled earlier (`numpile.compile(f)` after its calls), the report also says
    which of its entries the safety net runs as Python, and why."""
    def run(*args, **kwargs) -> ExplainOutput:
        report = ExplainOutput()
        compiled = compile(fn, backend=compile_kwargs.pop("backend", "eager"), **compile_kwargs)

        def record(cf, event: cache.CompileEvent):
            if cf.root is not compiled:
                return
            entry = event.entry
            if entry.graph is not None:
                report.graphs.append(entry.graph)
                report.ops_per_graph.append([n.target for n in entry.graph.calls])
            if entry.graph_break is not None:
                report.break_reasons.append(entry.graph_break)
            report.segments.append((entry.graph, entry.graph_break))
            report.guards.append(entry.guards.describe())
            report.compile_times.append(entry.compile_seconds)

        cache.add_listener(record)
        try:
            compiled(*args, **kwargs)
        finally:
            cache.remove_listener(record)
        report.graph_count = len(report.graphs)
        report.graph_break_count = len(report.break_reasons)
        if isinstance(fn, cache.CompiledFunction):
            report.fallbacks = [e.fallback for e in fn.all_entries() if e.fallback]
        return report
    return run


__all__ = ["compile", "disable", "reset", "explain", "export", "ExplainOutput", "GraphBreak", "Unsupported"]
