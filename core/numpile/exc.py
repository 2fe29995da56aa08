"""numpile's exceptions."""

from __future__ import annotations


class NumpileError(Exception):
    """Base class of every error numpile raises on its own account."""


class Unsupported(NumpileError):
    """The tracer met something it cannot capture. `reason` says what, `loc` where in the user's code."""

    def __init__(self, reason: str, loc=None):
        self.reason, self.loc = reason, loc
        self.user_stack: list | None = None  # the traced user frames, outermost first
        super().__init__(self._message())

    def _message(self) -> str:
        if self.loc is None:
            return self.reason
        line = self.loc.line
        return f"{self.reason}\n  at {self.loc}" + (f": {line}" if line else "")

    def at(self, loc) -> "Unsupported":
        """The same error, placed at `loc` unless it already has a place."""
        if self.loc is None:
            self.loc = loc
            self.args = (self._message(),)
        return self


class Retrace(Unsupported):
    """What the trace took for granted does not hold: trace the frame again knowing `hint`
    (tracer.trace collects the hints; OutputGraph.hints holds them)."""

    def __init__(self, reason: str, hint: tuple):
        super().__init__(reason)
        self.hint = hint


class BackendCompilerFailed(NumpileError):
    """A backend raised while compiling a graph, or what its compiled graph returned is not the
    graph's outputs (`failed` says which: "failed to compile", "returned wrong outputs for")."""

    def __init__(self, backend: str, graph, error: BaseException, distribution: str = "",
                 failed: str = "failed to compile"):
        self.backend, self.graph, self.error, self.distribution = backend, graph, error, distribution
        origin = f" ({distribution})" if distribution else ""
        super().__init__(f"backend {backend!r}{origin} {failed} a graph of {len(graph.calls)} ops: "
                         f"{type(error).__name__}: {error}\n{graph.tabular()}")
