"""The per-function cache: compiled entries, their guards, recompilation and its limit.

A `CompiledFunction` is what `numpile.compile` returns. Each call runs the
guard check of its entries, most recently used first; the first that passes
runs. A miss traces the call, compiles the graph with the backend and adds an
entry; code the tracer cannot capture gets an entry that runs the function
eagerly under the same guards.
"""

from __future__ import annotations

import functools
import time
import types
import warnings
import weakref
from dataclasses import dataclass, field

from . import config, logs
from .backend import check_mode
from .exc import BackendCompilerFailed, Unsupported
from .graph import Graph
from .tracer import Trace, TraceFailed, trace
from .tracer.codegen import CodeNamespace, call_args, signature_params
from .tracer.guards import GuardSet

_LIVE: "weakref.WeakSet[CompiledFunction]" = weakref.WeakSet()
_NO_SELF = object()


@dataclass
class CacheEntry:
    check: object                 # the generated guard function
    run: object                   # the generated run function (or the function itself when eager)
    guards: GuardSet
    graph: Graph | None           # None for an entry that runs eagerly
    backend: str
    compile_seconds: float = 0.0
    break_reason: str | None = None
    break_loc: object = None
    user_stack: list = field(default_factory=list)


@dataclass
class CompileEvent:
    """What one compilation did; handed to listeners (explain) and logs."""

    function: str
    entry: CacheEntry
    trace_seconds: float
    backend_seconds: float


_listeners: list = []


def add_listener(fn) -> None:
    _listeners.append(fn)


def remove_listener(fn) -> None:
    _listeners.remove(fn)


class CompiledFunction:
    """A function (or model) compiled by numpile; call it like the original."""

    def __init__(self, fn: types.FunctionType, original, backend, *, fullgraph: bool = False,
                 dynamic: bool | None = None, mode: str | None = None, options: dict | None = None,
                 bound_self=_NO_SELF):
        self._fn = fn
        self._orig = original
        self._backend_spec = backend
        self._backend = None
        self.fullgraph, self.dynamic, self.mode = fullgraph, dynamic, mode
        if backend is not None:
            self.backend  # an unknown name or a missing mode is an error now, not at the first call
        self.options = dict(options or {})
        self._self = bound_self
        self.entries: list[CacheEntry] = []
        self._limit_warned = False
        functools.update_wrapper(self, original if callable(original) and hasattr(original, "__name__") else fn,
                                 updated=())
        _LIVE.add(self)

    def __call__(self, *args, **kwargs):
        if self._self is not _NO_SELF:
            args = (self._self, *args)
        entries = self.entries
        for i, entry in enumerate(entries):
            try:
                hit = entry.check(*args, **kwargs)
            except Exception:  # a source that can no longer be read is a miss
                hit = False
            if hit:
                if i:
                    entries.insert(0, entries.pop(i))
                return entry.run(*args, **kwargs)
        return self._miss(args, kwargs)

    def __get__(self, instance, owner=None):
        """`@numpile.compile` on a method: `obj.method(x)` passes obj as self."""
        return self if instance is None else types.MethodType(self, instance)

    def __getattr__(self, name):
        # a compiled model still answers for its attributes (weights, sub-objects)
        if name.startswith("__") or name in ("_orig", "_fn"):
            raise AttributeError(name)
        return getattr(self._orig, name)

    def __repr__(self) -> str:
        return f"<numpile compiled {getattr(self._fn, '__qualname__', self._fn)} backend={self.backend_name}>"

    # -- misses --------------------------------------------------------------------------
    @property
    def backend(self):
        if self._backend is None:
            from . import plugins
            if self._backend_spec is None:
                self._backend = plugins.default_backend(config.default_backends["cpu"])
            else:
                self._backend = plugins.resolve_backend(self._backend_spec)
            check_mode(self._backend, self.mode)
        return self._backend

    @property
    def backend_name(self) -> str:
        spec = self._backend_spec
        if self._backend is not None:
            return self._backend.name
        return spec if isinstance(spec, str) else getattr(spec, "name", getattr(spec, "__name__", "default"))

    def _miss(self, args, kwargs):
        name = self._fn.__qualname__
        if len(self.entries) >= config.cache_size_limit:
            if not self._limit_warned:
                self._limit_warned = True
                warnings.warn(f"numpile: {name} reached config.cache_size_limit={config.cache_size_limit} "
                              f"compiled entries; it runs eagerly from now on", RuntimeWarning, stacklevel=3)
            return self._fn(*args, **kwargs)
        if self.entries and logs.enabled("recompiles"):
            logs.get("recompiles").debug("%s", self._recompile_reason(args, kwargs))
        backend = self.backend
        t0 = time.perf_counter()
        try:
            tr = trace(self._fn, args, kwargs)
        except TraceFailed as failed:
            return self._run_eagerly(failed, time.perf_counter() - t0, args, kwargs)
        t1 = time.perf_counter()
        entry = self._compile(tr, backend)
        t2 = time.perf_counter()
        entry.compile_seconds = t2 - t0
        self._install(entry, CompileEvent(name, entry, t1 - t0, t2 - t1))
        return entry.run(*args, **kwargs)

    def _compile(self, tr: Trace, backend) -> CacheEntry:
        ns = tr.ns
        check = _define_check(tr.guards, tr.params, ns)
        graph = tr.graph
        if graph.calls:
            ns.values["__compiled"] = self._backend_compile(backend, graph, tr.example_inputs)
            inputs = ", ".join(s.expr() for s in tr.input_sources)
            body = f"    __o = __compiled({inputs})\n    return {tr.result_expr}\n"
        else:
            body = f"    return {tr.result_expr}\n"
        run = ns.define(f"def __run({tr.params}):\n{body}", "__run", f"<numpile run {self._fn.__qualname__}>")
        return CacheEntry(check, run, tr.guards, graph if graph.calls else None, backend.name)

    def _backend_compile(self, backend, graph: Graph, example_inputs: list):
        if logs.enabled("graph"):
            logs.get("graph").debug("graph of %s for backend %r:\n%s", self._fn.__qualname__, backend.name, graph.tabular())
        options = {**self.options, "mode": self.mode}
        try:
            compiled = backend.compile(graph, example_inputs, options)
        except Exception as e:
            if not config.suppress_errors:
                raise BackendCompilerFailed(backend.name, graph, e) from e
            warnings.warn(f"numpile: backend {backend.name!r} failed on {self._fn.__qualname__} "
                          f"({type(e).__name__}: {e}); running that graph eagerly", RuntimeWarning, stacklevel=4)
            return graph.compile_python()
        if not callable(compiled):
            raise BackendCompilerFailed(backend.name, graph, TypeError(f"compile returned {type(compiled).__name__}, not a callable"))
        return compiled

    def _run_eagerly(self, failed: TraceFailed, seconds: float, args, kwargs):
        err = failed.error
        if self.fullgraph:
            if isinstance(err, Unsupported):
                raise err.with_traceback(None)
            raise Unsupported(f"the tracer failed: {type(err).__name__}: {err}") from err
        reason = err.reason if isinstance(err, Unsupported) else f"{type(err).__name__}: {err}"
        loc = err.loc if isinstance(err, Unsupported) else (failed.user_stack[-1] if failed.user_stack else None)
        if logs.enabled("graph_breaks"):
            stack = "\n".join(f"  {f}: {f.line}" for f in failed.user_stack)
            logs.get("graph_breaks").debug("graph break in %s: %s\n%s\n  (until resumption lands, the whole frame runs eagerly)",
                                           self._fn.__qualname__, reason, stack)
        ns = CodeNamespace(self._fn.__globals__, self._fn.__closure__)
        params = signature_params(self._fn, ns)
        check = _define_check(failed.guards, params, ns)
        ns.values["__fn"] = self._fn
        run = ns.define(f"def __run({params}):\n    return __fn({call_args(self._fn)})\n", "__run", "<numpile eager>")
        entry = CacheEntry(check, run, failed.guards, None, "eager (graph break)", seconds,
                           reason, loc, failed.user_stack)
        self._install(entry, CompileEvent(self._fn.__qualname__, entry, seconds, 0.0))
        return self._fn(*args, **kwargs)

    def _install(self, entry: CacheEntry, event: CompileEvent) -> None:
        self.entries.insert(0, entry)
        if logs.enabled("guards"):
            logs.get("guards").debug("guards of %s (entry %d):\n%s", self._fn.__qualname__, len(self.entries),
                                     "\n".join("  " + g for g in entry.guards.describe()) or "  (none)")
        if logs.enabled("perf"):
            logs.get("perf").debug("%s: traced in %.1f ms, backend %r compiled in %.1f ms", event.function,
                                   event.trace_seconds * 1e3, entry.backend, event.backend_seconds * 1e3)
        for listener in list(_listeners):
            listener(self, event)

    def _recompile_reason(self, args, kwargs) -> str:
        import inspect
        bound = inspect.signature(self._fn).bind(*args, **kwargs)
        bound.apply_defaults()
        env = {"__G": self._fn.__globals__, "__C": self._fn.__closure__ or (), **bound.arguments}
        reasons = [e.guards.first_failure(env) or "guards passed but the entry was skipped" for e in self.entries]
        return f"recompiling {self._fn.__qualname__}: " + "; ".join(reasons)

    def reset(self) -> None:
        self.entries.clear()
        self._limit_warned = False


def _define_check(guards: GuardSet, params: str, ns: CodeNamespace):
    return ns.define(f"def __check({params}):\n    return {guards.code(ns.const)}\n", "__check", "<numpile guards>")


def reset_all() -> None:
    for cf in list(_LIVE):
        cf.reset()
