"""A captured graph handed to its backend, for a cache entry (cache.py) to call.

The graph passes of plugins run first; a backend that says it cannot run some of the graph's ops
gets none of it (NumPy runs the graph). A backend that fails raises BackendCompilerFailed, or with
config.suppress_errors warns and NumPy runs the graph. What the backend returns is checked on its
first run against the graph's outputs (output_check.py), then called directly. A compiled graph
that raises is replayed: the frame runs as Python from the graph's start, so that NumPy raises
where the user's code sees it, and an error NumPy would not raise is said once as the backend's.
"""

from __future__ import annotations

import functools
import inspect
import time
import types
import warnings

from . import array_kinds, config, logs, output_check, progress
from .backend import Backend
from .exc import BackendCompilerFailed
from .graph import Graph

_warned_run_errors: set = set()  # (function, backend) whose run-time error was said


def compile_graph(fn, backend, graph: Graph, example_inputs: list, namespace: dict, options: dict, kind=None) -> None:
    """Compile `graph`, captured from `fn`, with `backend` and `options` into namespace["__compiled"]
    (what the entry's run calls), checked on its first run, and namespace["__replay"] (what runs
    when it raises). `kind`: (ArrayKind, location) of inputs that are CuPy arrays or tensors, met
    at a Boundary."""
    from . import plugins
    host = array_kinds.host_outputs(graph, example_inputs, kind[0]) if kind is not None else {}
    boundary = array_kinds.Boundary(*kind, tuple(backend.devices), host) if kind is not None else None
    if boundary is not None:
        example_inputs = boundary.inputs(example_inputs)
    graph = plugins.apply_graph_passes(graph, backend.name)
    if logs.enabled("graph"):
        logs.get("graph").debug("graph of %s for backend %r:\n%s", fn.__qualname__, backend.name, graph.tabular())
    namespace["__replay"] = functools.partial(_replay, fn, backend, graph)
    unsupported = backend.unsupported_ops(graph) if isinstance(backend, Backend) else []
    if unsupported:  # the backend says it cannot: NumPy runs the graph
        logs.get("perf").debug("%s: backend %r does not support %s; a graph of %d ops runs with NumPy",
                               fn.__qualname__, backend.name, ", ".join(unsupported), len(graph.calls))
        namespace["__compiled"] = graph.compile_python()
        return
    t0 = time.perf_counter()
    try:
        with progress.compiling(fn.__qualname__, backend.name, len(graph.calls)):
            compiled = backend.compile(graph, example_inputs, options)
    except Exception as e:
        if not config.suppress_errors:
            raise BackendCompilerFailed(backend.name, graph, e, plugins.distribution_of(backend)) from e
        warnings.warn(f"numpile: backend {backend.name!r} failed on {fn.__qualname__} "
                      f"({type(e).__name__}: {e}); running that graph eagerly", RuntimeWarning, stacklevel=5)
        namespace["__compiled"] = graph.compile_python()
        return
    if not callable(compiled):
        raise BackendCompilerFailed(backend.name, graph, TypeError(f"compile returned {type(compiled).__name__}, not a callable"),
                                    plugins.distribution_of(backend))
    plugins.notify_compiled(fn.__qualname__, backend.name, graph, time.perf_counter() - t0)
    if boundary is not None:
        compiled = boundary.wrap(compiled)
    namespace["__compiled"] = _first_run_checked(fn, compiled, backend, graph, namespace, kind, host)

def _first_run_checked(fn, compiled, backend, graph: Graph, namespace: dict, kind=None, host=()):
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
        warnings.warn(f"numpile: backend {backend.name!r} returned wrong outputs on {fn.__qualname__} "
                      f"({wrong}); running that graph eagerly", RuntimeWarning, stacklevel=4)
        eager = namespace["__compiled"] = graph.compile_python()
        return eager(*inputs)
    return first_run


def _replay(fn, backend, graph: Graph, error: Exception, inputs: tuple, *args, **kwargs):
    """The compiled graph raised: run this frame as Python from where the entry starts (a graph
    changes nothing before it returns), so that NumPy raises the error where the user's code
    and its handlers (try, with, finally) see it, or runs on if it does not. An error NumPy
    would not raise (the graph runs eagerly without it) is the backend's: said once, as a warning."""
    if isinstance(error, BackendCompilerFailed):
        raise error
    if isinstance(error, IndexError):
        _raise_numpys_index_error(graph, inputs)
    name = fn.__qualname__
    logs.get("perf").debug("%s: backend %r raised %s: %s; the frame runs as Python from the graph's start",
                           name, backend.name, type(error).__name__, error)
    if (name, backend.name) not in _warned_run_errors and _runs_eagerly(graph, inputs):
        _warned_run_errors.add((name, backend.name))
        from . import plugins
        warnings.warn(f"numpile: backend {backend.name!r} ({plugins.distribution_of(backend)}) raised "
                      f"{type(error).__name__}: {error} running a graph of {name} that NumPy runs without "
                      f"error; that part of {name} runs as Python when it does", RuntimeWarning, stacklevel=4)
    return fn(*args, **kwargs)


def _direct_call(compiled):
    """`compiled`, or where its class defines __call__ in Python, that bound method: calling it is
    a vectorcall, calling the object is not (about 60 ns a call saved, on calls of a microsecond)."""
    method = inspect.getattr_static(type(compiled), "__call__", None)
    return compiled.__call__ if isinstance(method, types.FunctionType) else compiled


def _raise_numpys_index_error(graph: Graph, inputs: tuple) -> None:
    """A position out of bounds the backend found in arrays whose indexing wraps it (CuPy's):
    NumPy's IndexError, raised by the graph run on host copies of them, which Python running the
    frame on those arrays would not raise."""
    kinds = [array_kinds.kind_of(x) for x in inputs]
    if not any(k is not None and k.wraps_positions for k in kinds):
        return
    try:
        graph(*[k.to_numpy(x) if k is not None else x for k, x in zip(kinds, inputs)])
    except IndexError as e:
        raise e.with_traceback(None) from None


def _runs_eagerly(graph: Graph, inputs: tuple) -> bool:
    """Whether NumPy runs the graph on these inputs without raising."""
    try:
        graph(*inputs)
    except Exception:
        return False
    return True


def forget_warnings() -> None:
    """Say the backends' run-time errors again, once each (numpile.reset)."""
    _warned_run_errors.clear()
