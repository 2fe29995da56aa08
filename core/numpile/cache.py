"""The per-function cache: compiled entries, their guards, recompilation and its limit,
and the resume functions that continue a frame after a graph break.

A `CompiledFunction` is what `numpile.compile` returns. Each call runs the
guard check of its entries, most recently used first; the first that passes
runs. The most recently used entry is tried through its `hit`, its guards and
its run generated as one function, so that a hit costs one call. A miss traces
the call, compiles the graph with the backend and adds an entry; code the
tracer cannot capture at all gets an entry that runs the function eagerly under
the same guards. An entry that ends in a graph break
returns a `TailCall` of a resume function; `__call__` runs those in a loop, so
a loop whose body breaks does not deepen the Python stack.

Threads: a cache hit takes no lock. Entry lists are never changed in place, only replaced,
so a reader always walks a whole list. Tracing and backend compiles run under one process-wide
lock (the tracer keeps per-trace state in module globals, and a backend need not be
thread-safe), which a miss takes before looking again: another thread may have compiled the
entry while this one waited. Compiled code runs outside the lock.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
import types
import warnings
import weakref
from dataclasses import dataclass

from . import array_kinds, config, logs, output_check, progress, safety_net
from .backend import Backend
from .exc import BackendCompilerFailed, Unsupported
from .graph import Graph
from .dynamic import DynamicInputs
from .tracer import GraphBreak, Trace, TraceFailed, for_backend, trace
from .tracer.entry_code import MISS, CodeNamespace, call_args, define_entry, signature_params
from .tracer.guards import GuardSet, same_float
from .tracer.python_scalars import INT_INPUT_BOUND
from .tracer.resume import make_resume_function, resume_code
from .tracer.variables import is_library_code

_LIVE: "weakref.WeakSet[CompiledFunction]" = weakref.WeakSet()
_live_lock = threading.RLock()  # a thread adding to _LIVE while another copies it: "Set changed size"
_NO_SELF = object()
_STOP = object()  # next()'s default in residual code: the iterator is exhausted
_compile_lock = threading.RLock()  # re-entrant: compiling a resume function may need a callee's frame


class TailCall:
    """Returned by residual code: continue in `target` (a ResumePoint) with `args`."""

    __slots__ = ("target", "args")

    def __init__(self, target, args):
        self.target, self.args = target, args


@dataclass
class CacheEntry:
    check: object                 # the generated guard function
    run: object                   # the generated run function (or the function itself when eager)
    hit: object                   # check and run as one function: run's result, or MISS
    guards: GuardSet
    graph: Graph | None           # None when nothing was captured
    backend: str
    compile_seconds: float = 0.0
    graph_break: GraphBreak | None = None
    eager: bool = False           # the tracer could not capture this frame at all
    fallback: str | None = None   # why the safety net runs it as Python (safety_net.py)

    @property
    def break_reason(self) -> str | None:
        return self.graph_break.reason if self.graph_break is not None else None


@dataclass
class CompileEvent:
    """What one compilation did; handed to listeners (explain) and logs."""

    function: str
    entry: CacheEntry
    trace_seconds: float
    backend_seconds: float


_listeners: list = []
_logged_breaks: set = set()
_warned_run_errors: set = set()  # (function, backend) whose run-time error was said


def add_listener(fn) -> None:
    _listeners.append(fn)


def remove_listener(fn) -> None:
    _listeners.remove(fn)


class CompiledFunction:
    """A function (or model) compiled by numpile; call it like the original."""

    def __init__(self, fn: types.FunctionType, original, backend, *, fullgraph: bool = False,
                 dynamic: bool | None = None, mode: str | None = None, options: dict | None = None,
                 bound_self=_NO_SELF, root: "CompiledFunction | None" = None):
        self._fn = fn
        self._orig = original
        self._backend_spec = backend
        self._backend = None
        self._default_backends: dict[str, object] = {}   # by device, with no backend given
        self.fullgraph, self.dynamic, self.mode = fullgraph, dynamic, mode
        self.options = dict(options or {})
        self._self = bound_self
        self.root = root or self                         # the function the user compiled
        self.entries: list[CacheEntry] = []
        self._limit_warned = False
        self._resume_points: dict = {}                   # (code, layout, native) -> ResumePoint, on the root
        self._frames: dict = {}                          # code -> CompiledFunction (or _PER_CALL), on the root
        self._dynamic = DynamicInputs(all=dynamic is True)  # grows as dims and scalars change between compiles
        self.trials: dict = {}                           # id(entry) -> safety_net.Trial, on the root
        self._compiled = 0                               # entries made for it, on the root
        self.draws = False                               # it draws random numbers (safety_net.py), on the root
        functools.update_wrapper(self, original if hasattr(original, "__name__") else fn, updated=())
        with _live_lock:
            _LIVE.add(self)
        if backend is not None:
            self.backend  # an unknown name or a missing mode is an error now, not at the first call

    def __call__(self, *args, **kwargs):
        if self._self is not _NO_SELF:
            args = (self._self, *args)
        if self.trials:
            return safety_net.call(self, args, kwargs)
        entries = self.entries   # _run's first lines, inlined: a hit costs no further frame
        result = (entries[0].hit(*args, **kwargs) if kwargs else entries[0].hit(*args)) if entries else MISS
        if result is MISS:
            result = self._dispatch(args, kwargs)
        while type(result) is TailCall:
            result = result.target.call(result.args)
        return result

    @staticmethod
    def finish(result):
        """A frame's result, its tail calls (the resume functions after graph breaks) run."""
        while type(result) is TailCall:
            result = result.target.call(result.args)
        return result

    def call_entries(self, args, kwargs):
        """What `__call__` does with `args` (self included), out of line."""
        return self.finish(self._run(args, kwargs))

    @property
    def python_fn(self):
        """The function itself, run as Python (args with self included)."""
        return self._fn

    def compiles(self) -> int:
        """How many entries the function the user compiled has had made, resume functions' and
        callees' included (safety_net.py leaves out calls that compiled)."""
        return self.root._compiled

    def run_as_python(self, entry: CacheEntry) -> None:
        """From now on `entry` runs the function as Python where its guards pass."""
        check, fn = entry.check, self._fn

        def hit(*args, **kwargs):
            try:
                passed = check(*args, **kwargs)
            except Exception:  # a source that can no longer be read is a miss
                return MISS
            return fn(*args, **kwargs) if passed else MISS
        entry.run, entry.hit = fn, hit

    def _run(self, args, kwargs):
        """This frame's result (may be a TailCall): the most recently used entry's `hit` (its guards
        and its run in one call), else the first entry whose guards pass, compiling one on a miss."""
        entries = self.entries
        result = entries[0].hit(*args, **kwargs) if entries else MISS
        return self._dispatch(args, kwargs) if result is MISS else result

    def _dispatch(self, args, kwargs):
        """Run the first entry whose guards pass, compiling one on a miss; may return a TailCall."""
        entry = self.lookup(args, kwargs)
        if entry is None:
            with _compile_lock:
                entry = self.lookup(args, kwargs) or self._miss(args, kwargs)
        return entry.run(*args, **kwargs)

    def lookup(self, args, kwargs) -> CacheEntry | None:
        """The first entry whose guards pass, moved to the front of the list."""
        entries = self.entries
        for i, entry in enumerate(entries):
            try:
                hit = entry.check(*args, **kwargs)
            except Exception:  # a source that can no longer be read is a miss
                hit = False
            if hit:
                # most recently used first; skipped while another thread compiles (its entry must not be lost)
                if i and _compile_lock.acquire(blocking=False):
                    try:
                        self.entries = [entry, *(e for e in self.entries if e is not entry)]
                    finally:
                        _compile_lock.release()
                return entry
        return None

    def __get__(self, instance, owner=None):
        """`@numpile.compile` on a method: `obj.method(x)` passes obj as self."""
        return self if instance is None else types.MethodType(self, instance)

    def __getattr__(self, name):
        # a compiled model still answers for its attributes (weights, sub-objects)
        if name.startswith("__") or name in ("_orig", "_fn"):
            raise AttributeError(name)
        return getattr(self._orig, name)

    def __repr__(self) -> str:
        return f"<numpile compiled {self._fn.__qualname__} backend={self.backend_name}>"

    # -- backends ------------------------------------------------------------------------
    @property
    def backend(self):
        """The backend given, or with none given the CPU's default (calls with CUDA arrays pick
        the CUDA default: backend_for)."""
        if self._backend is None:
            from . import plugins
            if self._backend_spec is None:
                self._backend = self.backend_for("cpu")
            else:
                self._backend = plugins.resolve_backend(self._backend_spec, self.mode)
        return self._backend

    def backend_for(self, device: str):
        """The backend of calls whose arrays are on `device`: the one given, or the first
        available of config.default_backends[device]."""
        if self._backend_spec is not None:
            return self.backend
        if device not in self._default_backends:
            from . import plugins
            self._default_backends[device] = plugins.default_backend(config.default_backends[device], device, self.mode)
        return self._default_backends[device]

    @property
    def backend_name(self) -> str:
        if self._backend is not None:
            return self._backend.name
        spec = self._backend_spec
        return spec if isinstance(spec, str) else getattr(spec, "name", getattr(spec, "__name__", "default"))

    def _child(self, fn: types.FunctionType) -> "CompiledFunction":
        """A compiled function for code reached from this one (a resume function, a callee run
        from residual code) with the same backend and settings."""
        child = CompiledFunction(fn, fn, None, fullgraph=self.fullgraph, dynamic=self.dynamic, mode=self.mode,
                                 options=self.options, root=self.root)
        child._backend_spec, child._backend = self._backend_spec, self._backend
        child._default_backends = self._default_backends
        return child

    # -- misses --------------------------------------------------------------------------
    def _miss(self, args, kwargs) -> "CacheEntry | _Eager":
        """Trace and compile an entry for this call (under _compile_lock); what the caller runs."""
        name = self._fn.__qualname__
        if len(self.entries) >= config.cache_size_limit:
            if not self._limit_warned:
                self._limit_warned = True
                warnings.warn(f"numpile: {name} reached config.cache_size_limit={config.cache_size_limit} "
                              f"compiled entries; it runs eagerly from now on", RuntimeWarning, stacklevel=4)
            return _Eager(self._fn)
        if self.entries and logs.enabled("recompiles"):
            logs.get("recompiles").debug("%s", self._recompile_reason(args, kwargs))
        backend = self.backend_for(array_kinds.call_device(args, kwargs))
        t0 = time.perf_counter()
        dynamic = for_backend(self._dynamic_inputs(args, kwargs, backend), backend)
        try:
            tr = trace(self._fn, args, kwargs, resumable=not self.fullgraph, dynamic=dynamic)
        except TraceFailed as failed:
            return self._run_eagerly(failed, time.perf_counter() - t0)
        if tr.graph_break is not None:
            self._log_break(tr.graph_break, resumed=True)
        t1 = time.perf_counter()
        entry = self._compile(tr, backend)
        t2 = time.perf_counter()
        entry.compile_seconds = t2 - t0
        self._install(entry, CompileEvent(name, entry, t1 - t0, t2 - t1))
        return entry

    def _dynamic_inputs(self, args, kwargs, backend) -> DynamicInputs | None:
        """What this compile leaves unspecialised. Dims: all with dynamic=True; with automatic
        dynamic shapes, every dim of an input whose size differs from what an earlier entry was
        compiled for; none for a backend without dynamic shapes. Python floats and ints: with
        automatic dynamic scalars, those whose value differs from an earlier entry's constant.
        Nothing with dynamic=False."""
        if self.dynamic is False:
            return None
        dims = getattr(backend, "supports_dynamic_shapes", False)
        if self.entries:
            env = self._frame_env(args, kwargs)
            for entry in self.entries:
                for guard in entry.guards:
                    if guard.kind in ("array", "kind_array") and dims and self.dynamic is None and config.automatic_dynamic_shapes:
                        self._note_changed_dims(guard, env)
                    elif guard.kind == "const" and type(guard.expected) in (float, int) and config.automatic_dynamic_scalars:
                        self._note_changed_scalar(guard, env)
        return self._dynamic if dims else DynamicInputs(scalars=self._dynamic.scalars)

    def _note_changed_dims(self, guard, env) -> None:
        try:
            now = eval(guard.source.expr(), dict(env)).shape
        except Exception:
            return
        before = guard.expected[2]
        changed = {i for i, (b, n) in enumerate(zip(before, now)) if b is not None and b != n}
        if len(now) == len(before) and changed:
            self._dynamic.per_source.setdefault(guard.source.name(), set()).update(changed)

    def _note_changed_scalar(self, guard, env) -> None:
        try:
            now = eval(guard.source.expr(), dict(env))
        except Exception:
            return
        before = guard.expected
        if type(now) is not type(before):
            return
        changed = not same_float(now, before) if type(now) is float else \
            now != before and max(abs(now), abs(before)) < INT_INPUT_BOUND
        if changed:
            self._dynamic.scalars.add(guard.source.name())

    def _frame_env(self, args, kwargs) -> dict:
        """The names Sources' expressions use, for this call."""
        bound = inspect.signature(self._fn, follow_wrapped=False).bind(*args, **kwargs)
        bound.apply_defaults()
        return {"__G": self._fn.__globals__, "__C": self._fn.__closure__ or (), **bound.arguments}

    def _compile(self, tr: Trace, backend) -> CacheEntry:
        ns = tr.ns
        graph = tr.graph
        body = []
        if graph.calls:
            self._backend_compile(backend, graph, tr.example_inputs, ns.values, tr.array_kind)
            inputs = "".join(f"{s.expr()}, " for s in tr.input_sources)
            # the replay runs outside the except clause: its error must not chain to the graph's
            body += ["try:", f"    __o = __compiled({inputs})",
                     "except Exception as __e:", "    __failed = __e", "else:", "    __failed = None",
                     "if __failed is not None:", f"    return __replay(__failed, ({inputs}), {call_args(self._fn)})"]
        body += tr.lines
        if tr.result_expr is not None:
            body.append(f"return {tr.result_expr}")
        ns.values.update({"__tail": TailCall, "__STOP": _STOP, "__frame": self.root._frame_for})
        for i, r in enumerate(tr.resumes):
            ns.values[f"__resume{i}"] = self.root._resume_point(self._fn, tr.code, r.layout, r.native)
            body += r.lines
            call = f"return __tail(__resume{i}, ({''.join(a + ', ' for a in r.args)}))"
            body += [f"if {r.test}:", f"    {call}"] if r.test else [call]
        check, run, hit = define_entry(tr.guards, tr.params, ns, body, f"<numpile run {self._fn.__qualname__}>",
                                        tr.graph_break.loc if tr.graph_break is not None else None)
        return CacheEntry(check, run, hit, tr.guards, graph if graph.calls else None, backend.name,
                          graph_break=tr.graph_break)

    def _backend_compile(self, backend, graph: Graph, example_inputs: list, namespace: dict, kind=None) -> None:
        """Compile `graph` with `backend` into namespace["__compiled"] (what the entry's run calls),
        checked on its first run, and namespace["__replay"] (what runs when it raises). `kind`:
        (ArrayKind, location) of inputs that are CuPy arrays or tensors, met at a Boundary."""
        from . import plugins
        host = array_kinds.host_outputs(graph, example_inputs, kind[0]) if kind is not None else {}
        boundary = array_kinds.Boundary(*kind, tuple(backend.devices), host) if kind is not None else None
        if boundary is not None:
            example_inputs = boundary.inputs(example_inputs)
        graph = plugins.apply_graph_passes(graph, backend.name)
        if logs.enabled("graph"):
            logs.get("graph").debug("graph of %s for backend %r:\n%s", self._fn.__qualname__, backend.name, graph.tabular())
        options = {**self.options, "mode": self.mode}
        namespace["__replay"] = functools.partial(self._replay, backend, graph)
        unsupported = backend.unsupported_ops(graph) if isinstance(backend, Backend) else []
        if unsupported:  # the backend says it cannot: NumPy runs the graph
            logs.get("perf").debug("%s: backend %r does not support %s; a graph of %d ops runs with NumPy",
                                   self._fn.__qualname__, backend.name, ", ".join(unsupported), len(graph.calls))
            namespace["__compiled"] = graph.compile_python()
            return
        t0 = time.perf_counter()
        try:
            with progress.compiling(self._fn.__qualname__, backend.name, len(graph.calls)):
                compiled = backend.compile(graph, example_inputs, options)
        except Exception as e:
            if not config.suppress_errors:
                raise BackendCompilerFailed(backend.name, graph, e, plugins.distribution_of(backend)) from e
            warnings.warn(f"numpile: backend {backend.name!r} failed on {self._fn.__qualname__} "
                          f"({type(e).__name__}: {e}); running that graph eagerly", RuntimeWarning, stacklevel=5)
            namespace["__compiled"] = graph.compile_python()
            return
        if not callable(compiled):
            raise BackendCompilerFailed(backend.name, graph, TypeError(f"compile returned {type(compiled).__name__}, not a callable"),
                                        plugins.distribution_of(backend))
        plugins.notify_compiled(self._fn.__qualname__, backend.name, graph, time.perf_counter() - t0)
        if boundary is not None:
            compiled = boundary.wrap(compiled)
        namespace["__compiled"] = self._first_run_checked(compiled, backend, graph, namespace, kind, host)

    def _first_run_checked(self, compiled, backend, graph: Graph, namespace: dict, kind=None, host=()):
        """`compiled`, checking what its first run returns against the graph's outputs; from then on
        the entry calls `compiled` itself. Wrong outputs raise BackendCompilerFailed (through the
        replay), or with config.suppress_errors warn once and run the graph eagerly."""
        def first_run(*inputs):
            outputs = compiled(*inputs)
            wrong = output_check.mismatch(outputs, graph, inputs, kind and kind[0], host)
            if wrong is None:
                namespace["__compiled"] = _direct_call(compiled)
                return outputs
            from . import plugins
            failure = BackendCompilerFailed(backend.name, graph, TypeError(wrong), plugins.distribution_of(backend),
                                            "returned wrong outputs for")
            if not config.suppress_errors:
                raise failure
            warnings.warn(f"numpile: backend {backend.name!r} returned wrong outputs on {self._fn.__qualname__} "
                          f"({wrong}); running that graph eagerly", RuntimeWarning, stacklevel=4)
            eager = namespace["__compiled"] = graph.compile_python()
            return eager(*inputs)
        return first_run

    def _run_eagerly(self, failed: TraceFailed, seconds: float) -> CacheEntry:
        err = failed.error
        if self.fullgraph:
            if isinstance(err, Unsupported):
                raise err.with_traceback(None)
            raise Unsupported(f"the tracer failed: {type(err).__name__}: {err}") from err
        reason = err.reason if isinstance(err, Unsupported) else f"{type(err).__name__}: {err}"
        loc = err.loc if isinstance(err, Unsupported) else (failed.user_stack[-1] if failed.user_stack else None)
        brk = GraphBreak(reason, loc, failed.user_stack)
        self._log_break(brk, resumed=False)
        ns = CodeNamespace(self._fn.__globals__, self._fn.__closure__)
        params = signature_params(self._fn, ns)
        ns.values["__fn"] = self._fn
        check, run, hit = define_entry(failed.guards, params, ns, [f"return __fn({call_args(self._fn)})"], "<numpile eager>")
        entry = CacheEntry(check, run, hit, failed.guards, None, "eager", seconds, brk, eager=True)
        self._install(entry, CompileEvent(self._fn.__qualname__, entry, seconds, 0.0))
        return entry

    def _replay(self, backend, graph: Graph, error: Exception, inputs: tuple, *args, **kwargs):
        """The compiled graph raised: run this frame as Python from where the entry starts (a graph
        changes nothing before it returns), so that NumPy raises the error where the user's code
        and its handlers (try, with, finally) see it, or runs on if it does not. An error NumPy
        would not raise (the graph runs eagerly without it) is the backend's: said once, as a warning."""
        if isinstance(error, BackendCompilerFailed):
            raise error
        name = self._fn.__qualname__
        logs.get("perf").debug("%s: backend %r raised %s: %s; the frame runs as Python from the graph's start",
                               name, backend.name, type(error).__name__, error)
        if (name, backend.name) not in _warned_run_errors and _runs_eagerly(graph, inputs):
            _warned_run_errors.add((name, backend.name))
            from . import plugins
            warnings.warn(f"numpile: backend {backend.name!r} ({plugins.distribution_of(backend)}) raised "
                          f"{type(error).__name__}: {error} running a graph of {name} that NumPy runs without "
                          f"error; that part of {name} runs as Python when it does", RuntimeWarning, stacklevel=4)
        return self._fn(*args, **kwargs)

    def _log_break(self, brk: GraphBreak, resumed: bool) -> None:
        key = (str(brk.loc), brk.reason)
        if logs.enabled("graph_breaks") and key not in _logged_breaks:  # each break once
            _logged_breaks.add(key)
            stack = "\n".join(f"  {f}: {f.line}" for f in brk.user_stack)
            then = "the graph so far is compiled and capture resumes after it" if resumed else "the frame runs eagerly"
            logs.get("graph_breaks").debug("graph break in %s: %s\n%s\n  (%s)", self._fn.__qualname__, brk.reason, stack, then)

    def _install(self, entry: CacheEntry, event: CompileEvent) -> None:
        self.entries = [entry, *self.entries]
        self.root._compiled += 1
        safety_net.installed(self, entry)
        if logs.enabled("guards"):
            logs.get("guards").debug("guards of %s (entry %d):\n%s", self._fn.__qualname__, len(self.entries),
                                     "\n".join("  " + g for g in entry.guards.describe()) or "  (none)")
        if logs.enabled("perf"):
            logs.get("perf").debug("%s: traced in %.1f ms, backend %r compiled in %.1f ms", event.function,
                                   event.trace_seconds * 1e3, entry.backend, event.backend_seconds * 1e3)
        for listener in list(_listeners):
            listener(self, event)

    def _recompile_reason(self, args, kwargs) -> str:
        env = self._frame_env(args, kwargs)
        reasons = [e.guards.first_failure(env) or "guards passed but the entry was skipped" for e in self.entries]
        return f"recompiling {self._fn.__qualname__}: " + "; ".join(reasons)

    # -- what residual code calls (on the root) -------------------------------------------
    def _resume_point(self, fn, code, layout, native: bool) -> "ResumePoint":
        key = (code, layout, native)
        if key not in self._resume_points:
            self._resume_points[key] = ResumePoint(self, fn, code, layout, native)
        return self._resume_points[key]

    def _frame_for(self, callee):
        """What residual code calls for `callee`: a user's Python function is compiled as its own
        frame; library code (SciPy's Python functions, say) runs as it is."""
        if isinstance(callee, types.FunctionType) and not getattr(callee, "_numpile_disable", False) \
                and not is_library_code(callee.__code__) \
                and not callee.__code__.co_flags & 0x3A0:  # generators and coroutines run as they are
            frame = self._frames.get(callee.__code__)
            if frame is None:
                with _compile_lock:
                    frame = self._frames.get(callee.__code__)
                    if frame is None:
                        frame = self._frames[callee.__code__] = self._child(callee)
            if frame is _PER_CALL or frame._fn is not callee and not _same_function(frame._fn, callee):
                self._frames[callee.__code__] = _PER_CALL
                return callee
            return frame
        return callee

    def all_entries(self) -> list[CacheEntry]:
        """The entries of this function and of every resume function and callee compiled for it."""
        return [e for cf in _live() if cf.root is self for e in cf.entries]

    def reset(self) -> None:
        """Drop the entries, and on a root the resume functions and callees compiled for it."""
        self.entries = []
        self.trials = {}
        self._limit_warned = False
        self._resume_points, self._frames = {}, {}


def original_of(obj):
    """What `numpile.compile` was given, for what it returned (a CompiledFunction, or a method
    bound from one); None for anything else."""
    return getattr(obj, "_orig", None)


class _Eager:
    """What a function past its cache size limit runs: itself."""

    __slots__ = ("run",)

    def __init__(self, fn):
        self.run = fn


class ResumePoint:
    """A resume function of a root compiled function, made and compiled on its first call."""

    def __init__(self, root: CompiledFunction, fn, code, layout, native: bool):
        self.root, self.fn, self.code, self.layout, self.native = root, fn, code, layout, native
        self._target = None

    def call(self, args):
        if self._target is None:
            with _compile_lock:
                if self._target is None:
                    resume_fn = make_resume_function(self.fn, resume_code(self.code, self.layout))
                    self._target = resume_fn if self.native else self.root._child(resume_fn)
        if self.native:
            return self._target(*args)
        return self._target._run(args, {})


_PER_CALL = object()   # _frames' mark of code made into a function with a closure of its own on every call


def _same_function(a, b) -> bool:
    """Whether two functions of one code object run alike: no closure (whose cells an entry's code
    reads), the same globals and defaults. A nested function, or a 3.11 comprehension, is made
    anew on every call of the code that defines it; with a closure of its own each time, its
    entries (made for one closure) cannot run another, so it runs as it is."""
    return a.__closure__ is None and b.__closure__ is None and a.__globals__ is b.__globals__ \
        and a.__defaults__ == b.__defaults__ and a.__kwdefaults__ == b.__kwdefaults__


def _direct_call(compiled):
    """`compiled`, or where its class defines __call__ in Python, that bound method: calling it is
    a vectorcall, calling the object is not (about 60 ns a call saved, on calls of a microsecond)."""
    method = inspect.getattr_static(type(compiled), "__call__", None)
    return compiled.__call__ if isinstance(method, types.FunctionType) else compiled


def _runs_eagerly(graph: Graph, inputs: tuple) -> bool:
    """Whether NumPy runs the graph on these inputs without raising."""
    try:
        graph(*inputs)
    except Exception:
        return False
    return True


def _live() -> list[CompiledFunction]:
    with _live_lock:
        return list(_LIVE)


def reset_all() -> None:
    with _compile_lock:   # not between a compile's look at a function's entries and its new list
        _logged_breaks.clear()
        _warned_run_errors.clear()
        for cf in _live():
            cf.reset()
