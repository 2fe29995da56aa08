"""The plugin manager: loading plugins, and finding backends and exporters by name.

Nothing is loaded on `import numpile`. The first call here that needs plugins
registers the built-in plugins (backends/), then imports every module of the
entry-point group "numpile" (skipping the names in NUMPILE_DISABLE_PLUGINS).
A plugin that fails to import, whose hook raises, or that is built for a plugin
API this numpile does not support (hookspecs.API_VERSION), is recorded as a
`PluginIssue` under its name and never stops the others; the issues show in
`backend_table()`, `numpile backends` and the error of a failed lookup.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Callable, Sequence

import pluggy

from . import hookspecs
from .version import __version__
from .backend import Backend, BackendUnavailableError, Exporter, InvalidBackendError, InvalidExporterError, as_backend
from .backends import BUILTIN_PLUGINS
from .exc import NumpileError
from .graph import Graph
from .hookspecs import hookimpl

ENTRY_POINT_GROUP = "numpile"
DISABLE_VARIABLE = "NUMPILE_DISABLE_PLUGINS"

_log = logging.getLogger(__name__)


class IncompatiblePlugin(NumpileError):
    """A plugin built for a plugin API this numpile does not support (see hookspecs.API_VERSION)."""

    def __init__(self, why: str, api_version: str):
        super().__init__(why)
        self.api_version = api_version


@dataclass(frozen=True)
class Origin:
    """The distribution a plugin was installed with."""

    distribution: str
    version: str

    def __str__(self) -> str:
        return f"{self.distribution} {self.version}".strip()


BUILTIN = Origin("numpile", __version__)
IN_PROCESS = Origin("(in-process)", "")  # registered by running code: pm.register, register_backend


@dataclass(frozen=True)
class PluginIssue:
    """A plugin, or part of one, that is not in use, and why."""

    plugin: str
    origin: Origin
    reason: str
    api_version: str = ""  # the plugin API it declared, when known


@dataclass(frozen=True)
class BackendInfo:
    """One row of `backend_table()`: a backend, or a plugin not in use (then `name` is the plugin's)."""

    name: str
    distribution: str
    version: str
    available: bool
    reason: str       # why it is not available; "" when it is
    description: str
    api_version: str = ""  # the plugin API its plugin is built for (hookspecs.API_VERSION for built-ins)


@dataclass(frozen=True)
class _Offer:
    item: Any         # a Backend or an Exporter
    plugin: str


class _InProcessBackend:
    """The plugin that `register_backend` registers for one backend."""

    def __init__(self, backend: Backend):
        self.backend = backend

    @hookimpl
    def numpile_backends(self) -> list[Backend]:
        return [self.backend]


class _Plugins:
    """The loaded plugin state: the manager, where each plugin came from, its issues, and what each
    hook implementation offered (called once, so that backends keep their identity and state)."""

    def __init__(self):
        self.pm = pluggy.PluginManager(ENTRY_POINT_GROUP)
        self.pm.add_hookspecs(hookspecs)
        self.origins: dict[str, Origin] = {}
        self.api_versions: dict[str, str] = {}  # plugin name -> the plugin API it is built for
        self.issues: list[PluginIssue] = []
        self.offered: dict[pluggy.HookImpl, list] = {}

    def load(self) -> None:
        for module in BUILTIN_PLUGINS:
            self.add(module, module.__name__, BUILTIN)
        disabled = {name.strip() for name in os.environ.get(DISABLE_VARIABLE, "").split(",")}
        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name):
            origin = Origin(ep.dist.name, ep.dist.version) if ep.dist else IN_PROCESS
            if ep.name in disabled:  # asked for: listed, not warned about
                self.issues.append(PluginIssue(ep.name, origin, f"disabled by {DISABLE_VARIABLE}"))
                continue
            try:
                self.add(ep.load(), ep.name, origin)
            except IncompatiblePlugin as e:
                self.record(ep.name, str(e), origin, e.api_version)
            except Exception as e:
                self.record(ep.name, f"failed to load {ep.value!r}: {type(e).__name__}: {e}", origin)

    def add(self, plugin, name: str, origin: Origin) -> None:
        """Register a plugin; raises when pluggy rejects it or it implements hooks numpile lacks."""
        self.pm.register(plugin, name)
        unknown = [caller.name for caller in self.pm.get_hookcallers(plugin)
                   if not caller.has_spec()
                   and any(impl.plugin is plugin and not impl.optionalhook for impl in caller.get_hookimpls())]
        if unknown:
            self.pm.unregister(plugin)
            known = ", ".join(hook for hook in dir(hookspecs) if hook.startswith("numpile_"))
            raise NumpileError(f"it implements {', '.join(unknown)}, which numpile does not define "
                               f"(numpile's hooks: {known}; mark hooks of newer numpiles optionalhook=True)")
        declared = self.declared_api_version(plugin)
        why = hookspecs.api_incompatibility(declared)
        if why:
            self.pm.unregister(plugin)
            raise IncompatiblePlugin(why, str(declared))
        self.origins[name] = origin
        self.api_versions[name] = declared

    def declared_api_version(self, plugin) -> str:
        """What the plugin's `numpile_api_version` returns; UNDECLARED_API_VERSION without one."""
        for impl in self.pm.hook.numpile_api_version.get_hookimpls():
            if impl.plugin is plugin:
                return impl.function()
        return hookspecs.UNDECLARED_API_VERSION

    def origin(self, plugin: str) -> Origin:
        return self.origins.get(plugin, IN_PROCESS)

    def record(self, plugin: str, reason: str, origin: Origin | None = None, api_version: str = "") -> None:
        issue = PluginIssue(plugin, origin or self.origin(plugin), reason, api_version or self.api_versions.get(plugin, ""))
        if issue not in self.issues:
            _log.warning("numpile plugin %r (%s): %s", plugin, issue.origin, reason)
            self.issues.append(issue)

    def call(self, impl: pluggy.HookImpl, hook: str, failed, **kwargs):
        """One hook implementation's result, or `failed` when it raises (recorded as an issue)."""
        try:
            return impl.function(*(kwargs[arg] for arg in impl.argnames))
        except Exception as e:
            self.record(impl.plugin_name, f"its {hook} hook raised {type(e).__name__}: {e}")
            return failed

    def listed(self, impl: pluggy.HookImpl, hook: str, **kwargs) -> list:
        """What an implementation of a list hook returned; [] when it raises or returns no list (recorded)."""
        result = self.call(impl, hook, [], **kwargs)
        if isinstance(result, (list, tuple)):
            return list(result)
        self.record(impl.plugin_name, f"its {hook} hook returned {type(result).__name__}, not a list")
        return []

    def offers(self, hook: str, kind: type) -> dict[str, _Offer]:
        """Name -> offer for everything plugins offer through the list hook `hook`; the first
        plugin to offer a name keeps it (built-ins first, then entry points by name)."""
        table: dict[str, _Offer] = {}
        with _lock:  # two threads' first lookups must not call a hook twice (two instances of a backend)
            for impl in getattr(self.pm.hook, hook).get_hookimpls():
                if impl not in self.offered:
                    self.offered[impl] = self.accepted(impl, hook, kind, table)
                for item in self.offered[impl]:
                    table.setdefault(item.name, _Offer(item, impl.plugin_name))
        return table

    def accepted(self, impl: pluggy.HookImpl, hook: str, kind: type, taken: dict[str, _Offer]) -> list:
        """What one implementation offers, less what is malformed or whose name is taken (recorded)."""
        kept = []
        for item in self.listed(impl, hook):
            if not isinstance(item, kind) or not item.name:
                self.record(impl.plugin_name, f"its {hook} hook offered {item!r}, not a named numpile.{kind.__name__}")
            elif item.name in taken:
                self.record(impl.plugin_name, f"offers {item.name!r}, which {taken[item.name].plugin} offers already")
            else:
                kept.append(item)
        return kept

    def backends(self) -> dict[str, _Offer]:
        return self.offers("numpile_backends", Backend)

    def exporters(self) -> dict[str, _Offer]:
        return self.offers("numpile_exporters", Exporter)

    def issues_note(self) -> str:
        """Lines for an error message: the plugins not in use, and why."""
        return "".join(f"\n  plugin {i.plugin!r} ({i.origin}): {i.reason}" for i in self.issues)


_state: _Plugins | None = None
_lock = threading.RLock()  # re-entrant: a plugin may call register_backend while it is being imported


def _loaded() -> _Plugins:
    global _state
    with _lock:
        if _state is None:
            _state = _Plugins()
            _state.load()
        return _state


def get_plugin_manager() -> pluggy.PluginManager:
    """numpile's pluggy PluginManager, with every plugin loaded.

    `get_plugin_manager().register(module_or_object)` adds a plugin in process:
    its hook implementations are used from the next lookup on.
    """
    return _loaded().pm


def reset_plugins() -> None:
    """Forget every loaded plugin and in-process registration; the next lookup loads afresh (for tests)."""
    global _state
    with _lock:
        _state = None


def register_backend(name: str | Callable | None = None, fn: Callable | type[Backend] | Backend | None = None):
    """Register a backend under `name`, as torch._dynamo.register_backend does.

    `fn` is a plain callable `fn(graph, example_inputs) -> callable`, a
    `numpile.Backend` subclass or instance. Usable as a call,
    `register_backend("mine", fn)`, or as a decorator, `@register_backend("mine")`
    or bare `@register_backend` (named after the function, or the Backend's
    `name`). Returns `fn`, so a decorated function stays as it was. A name that
    is already taken is an InvalidBackendError.
    """
    if name is not None and not isinstance(name, str):
        name, fn = None, name
    if fn is None:
        return lambda fn: register_backend(name, fn)
    backend = as_backend(fn, name)
    if not backend.name:
        raise InvalidBackendError(f"{backend!r} has no name: pass one, register_backend(name, fn)")
    state = _loaded()
    with _lock:  # the name is checked and taken in one step
        taken = state.backends().get(backend.name)
        if taken is not None:
            raise InvalidBackendError(f"a backend named {backend.name!r} exists already, from plugin "
                                      f"{taken.plugin!r} ({state.origin(taken.plugin).distribution})")
        state.pm.register(_InProcessBackend(backend), f"register_backend:{backend.name}")
    return fn


def _unavailable(backend: Backend) -> str:
    """Why `backend` cannot run here; "" when it can."""
    try:
        available, why = backend.is_available()
    except Exception as e:
        return f"is_available() raised {type(e).__name__}: {e}"
    return "" if available else (why or "is_available() says no")


def _unsuitable(backend: Backend, device: str | None, mode: str | None) -> str:
    """Why `backend` does not fit the device or the mode asked for; "" when it does."""
    if device is not None and device not in backend.devices:
        return f"runs on {', '.join(backend.devices)}, not {device}"
    if mode not in backend.modes:
        return f"has no mode {mode!r}; its modes: {', '.join(map(repr, backend.modes))}"
    return ""


def _require_available(backend: Backend) -> Backend:
    why = _unavailable(backend)
    if why:
        raise BackendUnavailableError(f"backend {backend.name!r} is not available: {why}")
    return backend


def lookup(name: str) -> Backend:
    """The available backend registered as `name`.

    Raises InvalidBackendError listing the known names (and the plugins that
    did not load) for an unknown name, BackendUnavailableError saying why for
    one that cannot run here.
    """
    state = _loaded()
    table = state.backends()
    if name not in table:
        raise InvalidBackendError(f"unknown backend {name!r}; known backends: {', '.join(table)}"
                                  + state.issues_note())
    return _require_available(table[name].item)


def resolve_backend(backend: str | Backend | type[Backend] | Callable, mode: str | None = None) -> Backend:
    """The Backend that `numpile.compile(fn, backend=..., mode=...)` means: a registered name, a
    Backend (subclass or instance) or a plain callable; checked to be available and to have `mode`."""
    resolved = lookup(backend) if isinstance(backend, str) else _require_available(as_backend(backend))
    why = _unsuitable(resolved, None, mode)
    if why:
        raise InvalidBackendError(f"backend {resolved.name!r} {why}")
    return resolved


def default_backend(candidates: Sequence[str], device: str = "cpu", mode: str | None = None) -> Backend:
    """The first of `candidates` (backend names, e.g. config.default_backends[device]) that is
    installed, available, runs on `device` and has `mode`; BackendUnavailableError naming why
    each one was passed over when none is."""
    table = _loaded().backends()
    passed_over = []
    for name in candidates:
        offer = table.get(name)
        why = "not installed" if offer is None else (_unavailable(offer.item) or _unsuitable(offer.item, device, mode))
        if not why:
            return offer.item
        passed_over.append(f"{name}: {why}")
    wanted = f"device {device!r}" + (f" and mode {mode!r}" if mode else "")
    raise BackendUnavailableError(f"no backend for {wanted} among {', '.join(candidates) or 'no candidates'}: "
                                  + "; ".join(passed_over))


def distribution_of(backend: Backend) -> str:
    """Where a backend came from, for messages: "numpile-llvm 0.1.0", or "registered in this process"."""
    state = _loaded()
    offer = state.backends().get(backend.name)
    origin = state.origin(offer.plugin) if offer is not None and offer.item is backend else IN_PROCESS
    return "registered in this process" if origin is IN_PROCESS else f"{origin.distribution} {origin.version}"


def list_backends(available_only: bool = False) -> list[str]:
    """The names of the registered backends, as `torch._dynamo.list_backends()` gives them: the
    built-in ones first, then the plugins' in the order of their entry points' names. With
    `available_only`, only those that can run here. `backend_info(name)` and `backend_table()`
    say more: distribution, version, availability and why not, description."""
    state = _loaded()
    return [name for name, offer in state.backends().items() if not available_only or not _unavailable(offer.item)]


def backend_info(name: str) -> BackendInfo:
    """The row of `backend_table()` for the backend `name`; InvalidBackendError for an unknown name."""
    for row in backend_table():
        if row.name == name:
            return row
    raise InvalidBackendError(f"unknown backend {name!r}; known backends: {', '.join(list_backends())}"
                              + _loaded().issues_note())


def backend_table() -> list[BackendInfo]:
    """What `numpile backends` shows: every backend with its distribution, version, availability,
    description and plugin API version; then the plugins that are not in use (failed to import,
    disabled, built for another plugin API, a hook that raised), unavailable, with the reason."""
    state = _loaded()
    rows = []
    for name, offer in state.backends().items():
        origin, why = state.origin(offer.plugin), _unavailable(offer.item)
        rows.append(BackendInfo(name, origin.distribution, origin.version, not why, why, offer.item.description,
                                state.api_versions.get(offer.plugin, "")))
    rows += [BackendInfo(i.plugin, i.origin.distribution, i.origin.version, False, i.reason, "", i.api_version)
             for i in state.issues]
    return rows


def lookup_exporter(name: str) -> Exporter:
    """The exporter registered as `name`; InvalidExporterError listing the known ones otherwise."""
    state = _loaded()
    table = state.exporters()
    if name not in table:
        raise InvalidExporterError(f"unknown exporter {name!r}; known exporters: {', '.join(table) or 'none'}"
                                   + state.issues_note())
    return table[name].item


def apply_graph_passes(graph: Graph, backend_name: str) -> Graph:
    """Run the plugins' `numpile_graph_passes` for `backend_name` on `graph`, in order; the
    graph to hand to the backend. Called by the compile step just before `backend.compile`."""
    state = _loaded()
    for impl in state.pm.hook.numpile_graph_passes.get_hookimpls():
        for graph_pass in state.listed(impl, "numpile_graph_passes", backend_name=backend_name):
            result = graph_pass(graph)
            if not isinstance(result, Graph):
                raise NumpileError(f"graph pass {getattr(graph_pass, '__name__', graph_pass)!r} of plugin "
                                   f"{impl.plugin_name!r} returned {type(result).__name__}, not a Graph")
            if result is not graph:
                result.guards = graph.guards  # they belong to the cache entry, not to one pass's graph
            graph = result
    return graph


def notify_compiled(fn_name: str, backend_name: str, graph: Graph, compile_seconds: float) -> None:
    """Tell the `numpile_compiled` observers about a compilation; one that raises is recorded and logged."""
    state = _loaded()
    for impl in state.pm.hook.numpile_compiled.get_hookimpls():
        state.call(impl, "numpile_compiled", None, fn_name=fn_name, backend_name=backend_name,
                   graph=graph, compile_seconds=compile_seconds)
