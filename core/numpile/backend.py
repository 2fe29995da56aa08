"""What a backend and an exporter are: the base classes third parties subclass.

A backend turns a captured `numpile.Graph` into a callable. Plugins offer
backends through the `numpile_backends` hook (see hookspecs.py); a plain
function `backend(graph, example_inputs) -> callable`, as torch.compile's
custom backends are written, is adapted by `CallableBackend`.
"""

from __future__ import annotations

from typing import Any, Callable

from .exc import NumpileError
from .ops import TUPLE_GETITEM


class InvalidBackendError(NumpileError, ValueError):
    """A backend that cannot be used as asked: an unknown name, a mode it lacks, not a backend at all,
    or a compile that returned something other than a callable."""


class BackendUnavailableError(InvalidBackendError):
    """A known backend whose `is_available()` says no; the message says why."""


class InvalidExporterError(NumpileError, ValueError):
    """An unknown exporter name."""


class Backend:
    """Base class of numpile backends.

    Subclasses set the class attributes and implement `compile`; override
    `is_available` when the backend needs something that may be missing (a
    library, a GPU). Keep the module that defines a backend cheap to import:
    numpile imports every plugin when it first looks a backend up, so import
    heavy dependencies inside `is_available` and `compile`.
    """

    #: The name users pass as `numpile.compile(fn, backend=name)`.
    name: str = ""
    #: One line for `numpile backends`.
    description: str = ""
    #: Where the arrays it runs on live: "cpu", "cuda".
    devices: tuple[str, ...] = ("cpu",)
    #: Whether a graph with symbolic dimensions (dynamic=True) may be handed to it.
    supports_dynamic_shapes: bool = False
    #: Whether it may be handed graphs with loop nodes (op `loop`, ops/control.py: a `for` loop kept
    #: as a loop, its body a Graph). Without it, loops are unrolled for it as they always were.
    supports_loops: bool = False
    #: Whether it may be handed graphs with cond nodes (op `cond`, ops/control.py: an `if` on a graph
    #: value inside a loop, both sides Graphs). Without it, such an `if` breaks the graph (the loop
    #: is then unrolled).
    supports_conditionals: bool = False
    #: The values of `numpile.compile(mode=...)` it accepts; None is the default mode.
    modes: tuple[str | None, ...] = (None,)
    #: The registry ops (`numpile.ops` names) it compiles; None: all of them. A graph that calls
    #: another op is not handed to it: numpile runs that graph with NumPy (logged under "perf"),
    #: and the conformance kit counts that op as declared unsupported. `tuple_getitem` (reading
    #: one result of an op with several) goes with the op it reads from and need not be listed.
    #: (API 1.1)
    supported_ops: frozenset[str] | None = None

    def is_available(self) -> tuple[bool, str]:
        """(True, "") when it can compile here, else (False, why not), e.g. (False, "no CUDA device").

        Called on every lookup of the backend: cache the answer if finding it out is slow.
        """
        return True, ""

    def unsupported_ops(self, graph) -> list[str]:
        """The ops `graph` calls that this backend does not declare in `supported_ops`, sorted."""
        if self.supported_ops is None:
            return []
        return sorted({n.target for n in graph.calls} - self.supported_ops - {TUPLE_GETITEM})

    def compile(self, graph, example_inputs: list, options: dict) -> Callable[..., tuple]:
        """Compile `graph` and return a callable that takes the graph's inputs positionally and
        returns the tuple of its outputs, in `graph.outputs` order.

        `example_inputs` are the real values of this call, one per graph input. `options` holds
        the user's `numpile.compile(options=...)` and "mode", None or one of `self.modes`.
        """
        raise NotImplementedError(f"backend {self.name!r} does not implement compile()")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class CallableBackend(Backend):
    """A plain function `fn(graph, example_inputs) -> callable` as a Backend.

    As with torch.compile's custom backends, `fn` is called with
    `options=...` only when the user gave options, and returning the graph
    itself runs it as it is:

        def custom_backend(graph, example_inputs):
            graph.print_tabular()
            return graph
    """

    supports_dynamic_shapes = True  # it is handed whatever graph there is; the function copes or raises

    def __init__(self, fn: Callable[..., Any], name: str | None = None):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", type(fn).__name__)
        self.description = ((getattr(fn, "__doc__", None) or "").strip().splitlines() or ["custom backend"])[0]

    def compile(self, graph, example_inputs: list, options: dict) -> Callable[..., tuple]:
        user_options = {k: v for k, v in options.items() if k != "mode"}  # the mode is checked before compile
        compiled = self.fn(graph, example_inputs, **({"options": user_options} if user_options else {}))
        if not callable(compiled):
            raise InvalidBackendError(
                f"backend {self.name!r} returned {type(compiled).__name__}, not a callable: a backend returns "
                f"a function that takes the graph's inputs and returns the tuple of its outputs "
                f"(`return graph` runs the graph as it is)")
        return compiled


class Exporter:
    """Base class of exporters: whole-program formats that `numpile.export(...)` can write (e.g. "onnx")."""

    #: The name users pass to choose it.
    name: str = ""
    #: One line for listings.
    description: str = ""
    #: Whether the graphs it is given may hold loop nodes (see Backend.supports_loops).
    supports_loops: bool = False

    def export(self, graph, example_inputs: list, options: dict) -> Any:
        """Translate `graph` and return an object with a `save(path)` method that writes it."""
        raise NotImplementedError(f"exporter {self.name!r} does not implement export()")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def as_backend(spec, name: str | None = None) -> Backend:
    """A Backend from a Backend instance, a Backend subclass (instantiated) or a plain callable.

    `name`, when given, names the result (what `register_backend(name, fn)` registers it as).
    """
    if isinstance(spec, type) and issubclass(spec, Backend):
        spec = spec()
    if isinstance(spec, Backend):
        if name:
            spec.name = name
        return spec
    if callable(spec):
        return CallableBackend(spec, name)
    raise InvalidBackendError(f"a backend is a name, a numpile.Backend or a callable "
                              f"backend(graph, example_inputs), not {type(spec).__name__}")

