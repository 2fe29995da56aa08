"""The plugin contract: numpile's pluggy hook specifications.

A plugin is a module (or any object) with functions marked `@numpile.hookimpl`
whose names are hooks below. A distribution makes its plugin known through
the entry-point group "numpile":

    [project.entry-points.numpile]
    mybackend = "my_package.plugin"

numpile imports every such module on its first backend lookup. An
implementation may take fewer arguments than its spec (pluggy passes only the
ones it names), so hooks can grow arguments without breaking plugins. Each
implementation is called on its own: one that raises is recorded against its
plugin (see `numpile backends`) and the others go on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import pluggy

if TYPE_CHECKING:
    from .backend import Backend, Exporter
    from .graph import Graph

hookspec = pluggy.HookspecMarker("numpile")
hookimpl = pluggy.HookimplMarker("numpile")


@hookspec
def numpile_backends() -> list[Backend]:
    """The backends this plugin offers, as `numpile.Backend` instances.

    Called once per plugin, when numpile first needs the list of backends (a
    lookup by name, a default choice, `numpile.list_backends()`); the instances
    are kept and reused for every compilation until `reset_plugins()`. Return
    unavailable backends too: their `is_available()` says why not.
    """


@hookspec
def numpile_exporters() -> list[Exporter]:
    """The export formats this plugin offers, as `numpile.Exporter` instances.

    Called once per plugin, when numpile first looks an exporter up (`numpile.export`).
    """


@hookspec
def numpile_graph_passes(backend_name: str) -> list[Callable[[Graph], Graph]]:
    """Graph passes to run on every graph before `backend_name` compiles it (optional).

    Called once per compilation, after the tracer has captured a graph and
    before the backend's `compile`. Each pass takes a Graph and returns the
    Graph to compile (the same one edited in place, or a new one computing the
    same outputs from the same inputs). Passes run in plugin order, the
    built-ins first, and each plugin's in the order it lists them. Return []
    for backends the plugin's passes do not apply to.
    """


@hookspec
def numpile_compiled(fn_name: str, backend_name: str, graph: Graph, compile_seconds: float) -> None:
    """Observe a compilation (optional): called after `backend_name` compiled `graph`,
    captured from the function `fn_name`, in `compile_seconds` of wall-clock time
    (tracing, graph passes and the backend together). Its return value is ignored;
    an observer that raises is logged and never fails the compilation.
    """
