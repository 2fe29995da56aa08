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

The contract is versioned (API_VERSION, "major.minor"), apart from numpile's own
version: a minor version adds hooks, hook arguments or Backend attributes and
breaks no plugin; a major version removes or changes something. Each hook and
Backend attribute says the API version it arrived in (`.. versionadded::`). A
plugin says which API it was built for with `numpile_api_version`; numpile
refuses a plugin built for another major version, or for a newer minor version
than its own, and `numpile backends` shows why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import pluggy

if TYPE_CHECKING:
    from .backend import Backend, Exporter
    from .graph import Graph

hookspec = pluggy.HookspecMarker("numpile")
hookimpl = pluggy.HookimplMarker("numpile")

#: The version of the plugin contract this numpile implements.
API_VERSION = "1.1"
#: What a plugin that does not implement `numpile_api_version` is taken to be built for.
UNDECLARED_API_VERSION = "1.0"


def parse_api_version(text) -> tuple[int, int] | None:
    """(major, minor) of an API version string such as "1.1"; None when it is not one."""
    parts = text.split(".") if isinstance(text, str) else []
    return (int(parts[0]), int(parts[1])) if len(parts) == 2 and all(p.isdigit() for p in parts) else None


def api_incompatibility(declared) -> str:
    """Why a plugin built for API `declared` cannot be used by this numpile; "" when it can."""
    major, minor = parse_api_version(API_VERSION)
    supported = f"{major}.0 to {API_VERSION}"
    version = parse_api_version(declared)
    if version is None:
        return f"declares plugin API {declared!r}, which is not a version \"major.minor\" (numpile supports {supported})"
    if version[0] != major or version[1] > minor:
        return f"is built for plugin API {declared}; this numpile supports plugin API {supported}"
    return ""


# -- what a plugin is ---------------------------------------------------------------------------

@hookspec(firstresult=True)
def numpile_api_version() -> str:
    """The version of this contract the plugin was built for, "major.minor" (optional).

    Called once per plugin, when numpile loads it and before any other hook of
    it. A plugin built for another major version than API_VERSION, or for a
    newer minor version, is refused: it is not registered, and
    `numpile backends` lists it as unavailable with both versions. Without this
    hook a plugin is taken to be built for UNDECLARED_API_VERSION ("1.0").

    .. versionadded:: 1.1
    """


# -- what a plugin offers -----------------------------------------------------------------------


@hookspec
def numpile_backends() -> list[Backend]:
    """The backends this plugin offers, as `numpile.Backend` instances.

    Called once per plugin, when numpile first needs the list of backends (a
    lookup by name, a default choice, `numpile.list_backends()`); the instances
    are kept and reused for every compilation until `reset_plugins()`. Return
    unavailable backends too: their `is_available()` says why not.

    .. versionadded:: 1.0
    """


@hookspec
def numpile_exporters() -> list[Exporter]:
    """The export formats this plugin offers, as `numpile.Exporter` instances.

    Called once per plugin, when numpile first looks an exporter up (`numpile.export`).

    .. versionadded:: 1.0
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

    .. versionadded:: 1.0
    """


# -- observers ----------------------------------------------------------------------------------



@hookspec
def numpile_compiled(fn_name: str, backend_name: str, graph: Graph, compile_seconds: float) -> None:
    """Observe a compilation (optional): called after `backend_name` compiled `graph`,
    captured from the function `fn_name`, in `compile_seconds` of wall-clock time
    (tracing, graph passes and the backend together). Its return value is ignored;
    an observer that raises is logged and never fails the compilation.

    .. versionadded:: 1.0
    """
