"""The plugin system: entry-point loading, lookup by name, registration, the hooks, the eager backend."""

from __future__ import annotations

import sys
import textwrap
import types

import numpy as np
import pytest

import numpile
from numpile import plugins
from numpile.backend import Backend, BackendUnavailableError, CallableBackend, InvalidBackendError, InvalidExporterError
from numpile.backends.eager import EagerBackend
from numpile.exc import NumpileError
from numpile.graph import Graph
from numpile.hookspecs import hookimpl
from numpile.ops import ArrayMeta



@pytest.fixture(autouse=True)
def fresh_plugins(monkeypatch):
    monkeypatch.delenv(plugins.DISABLE_VARIABLE, raising=False)
    plugins.reset_plugins()
    yield
    plugins.reset_plugins()


@pytest.fixture
def install_dist(tmp_path, monkeypatch):
    """Install a fake distribution the way pip lays one out: modules beside a *.dist-info
    folder with METADATA and entry_points.txt, on a new sys.path entry."""
    imported = []

    def install(dist: str, version: str, entry_points: dict[str, str], modules: dict[str, str]) -> None:
        site = tmp_path / dist
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
        (info / "entry_points.txt").write_text(f"[{plugins.ENTRY_POINT_GROUP}]\n{lines}")
        for module, source in modules.items():
            (site / f"{module}.py").write_text(textwrap.dedent(source))
            imported.append(module)
        monkeypatch.syspath_prepend(str(site))

    yield install
    for module in imported:
        sys.modules.pop(module, None)


BACKEND_MODULE = """
    import numpile.backend, numpile.hookspecs

    class {cls}(numpile.backend.Backend):
        name = {name!r}
        description = "a test backend"

        def compile(self, graph, example_inputs, options):
            return graph.compile_python()

    @numpile.hookspecs.hookimpl
    def numpile_backends():
        return [{cls}()]
"""


def backend_module(name: str, api_version: str | None = None) -> str:
    """A plugin module offering one backend; with `api_version`, declaring that plugin API."""
    source = BACKEND_MODULE.format(cls=f"Backend_{name}", name=name)
    if api_version is not None:
        source += f"""
    @numpile.hookspecs.hookimpl
    def numpile_api_version():
        return {api_version!r}
"""
    return source


def sin_plus_graph() -> Graph:
    """np.sin(x) + y on float64[3] arrays."""
    graph = Graph()
    meta = ArrayMeta((3,), np.dtype("float64"))
    x, y = graph.input("x", meta), graph.input("y", meta)
    graph.output([graph.call("add", (graph.call("sin", (x,), {}, meta), y), {}, meta)])
    graph.guards = ["x: ndarray float64 (3,)", "y: ndarray float64 (3,)"]
    return graph


def inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(3), rng.standard_normal(3)]


def backend_named(name: str, **attributes) -> Backend:
    return type(f"Backend_{name}", (Backend,), {"name": name, "description": f"test backend {name}", **attributes})()


def offering(*backends: Backend):
    """An in-process plugin object offering `backends`."""
    plugin = types.SimpleNamespace()
    plugin.numpile_backends = hookimpl(lambda: list(backends))
    return plugin


def row(name: str) -> plugins.BackendInfo:
    return plugins.backend_info(name)


# -- the built-in backend ------------------------------------------------------------------------

def test_eager_is_always_present_as_a_builtin():
    assert isinstance(plugins.lookup("eager"), EagerBackend)
    assert row("eager") == plugins.BackendInfo("eager", "numpile", numpile.__version__, True, "",
                                               EagerBackend.description, numpile.PLUGIN_API_VERSION)


def test_eager_runs_the_graph_with_numpy():
    x, y = inputs()
    compiled = plugins.lookup("eager").compile(sin_plus_graph(), [x, y], {"mode": None})
    (result,) = compiled(x, y)
    np.testing.assert_array_equal(result, np.sin(x) + y)
    assert result.dtype == np.float64


def test_lookup_keeps_one_backend_instance():
    assert plugins.lookup("eager") is plugins.lookup("eager")


# -- entry points ------------------------------------------------------------------------------

def test_entry_point_plugin_loads_lazily_with_its_distribution(install_dist):
    install_dist("numpile-fake", "1.2.3", {"fake": "fake_plugin"}, {"fake_plugin": backend_module("fake")})
    assert "fake_plugin" not in sys.modules  # nothing loads before the first lookup
    assert plugins.lookup("fake").name == "fake"
    assert "fake_plugin" in sys.modules
    assert row("fake") == plugins.BackendInfo("fake", "numpile-fake", "1.2.3", True, "", "a test backend", "1.0")


def test_plugin_that_fails_to_import_is_reported_and_the_others_work(install_dist):
    install_dist("numpile-broken", "0.1", {"broken": "broken_plugin"},
                 {"broken_plugin": "raise ImportError('needs libfrob')"})
    install_dist("numpile-good", "0.2", {"good": "good_plugin"}, {"good_plugin": backend_module("good")})
    assert plugins.lookup("good").name == "good"
    broken = row("broken")
    assert (broken.distribution, broken.version, broken.available) == ("numpile-broken", "0.1", False)
    assert "ImportError: needs libfrob" in broken.reason
    with pytest.raises(InvalidBackendError, match="(?s)unknown backend 'brokn'.*'broken'.*needs libfrob"):
        plugins.lookup("brokn")


def test_plugin_whose_hook_raises_is_reported_and_the_others_work(install_dist):
    install_dist("numpile-raising", "1.0", {"raising": "raising_plugin"}, {"raising_plugin": """
        import numpile.hookspecs

        @numpile.hookspecs.hookimpl
        def numpile_backends():
            raise RuntimeError("no config file")
    """})
    assert plugins.lookup("eager")
    assert "numpile_backends hook raised RuntimeError: no config file" in row("raising").reason


def test_hook_that_returns_no_list_is_reported():
    plugins.get_plugin_manager().register(types.SimpleNamespace(numpile_backends=hookimpl(lambda: None)), "forgetful")
    assert plugins.lookup("eager")
    assert row("forgetful").reason == "its numpile_backends hook returned NoneType, not a list"


def test_plugin_with_a_misspelt_hook_is_reported(install_dist):
    install_dist("numpile-typo", "1.0", {"typo": "typo_plugin"}, {"typo_plugin": """
        import numpile.hookspecs

        @numpile.hookspecs.hookimpl
        def numpile_backend():
            return []
    """})
    assert "numpile_backend, which numpile does not define" in row("typo").reason


def test_disabled_plugins_are_not_imported(install_dist, monkeypatch):
    install_dist("numpile-fake", "1.0", {"fake": "fake_plugin"}, {"fake_plugin": backend_module("fake")})
    install_dist("numpile-other", "1.0", {"other": "other_plugin"}, {"other_plugin": backend_module("other")})
    monkeypatch.setenv(plugins.DISABLE_VARIABLE, "fake, unrelated")
    with pytest.raises(InvalidBackendError, match="disabled by NUMPILE_DISABLE_PLUGINS"):
        plugins.lookup("fake")
    assert "fake_plugin" not in sys.modules
    assert plugins.lookup("other").name == "other"
    assert row("fake").reason == "disabled by NUMPILE_DISABLE_PLUGINS"


def test_first_plugin_keeps_a_name_two_offer(install_dist):
    install_dist("numpile-fake", "1.0", {"fake": "fake_plugin"}, {"fake_plugin": backend_module("eager")})
    assert isinstance(plugins.lookup("eager"), EagerBackend)
    assert "offers 'eager', which numpile.backends.eager offers already" in row("fake").reason


# -- names and the table ---------------------------------------------------------------------

def test_list_backends_gives_names_and_backend_info_the_details(install_dist):
    install_dist("numpile-fake", "1.2.3", {"fake": "fake_plugin"}, {"fake_plugin": backend_module("fake")})
    plugins.get_plugin_manager().register(offering(backend_named("down", is_available=lambda self: (False, "no frob"))))
    names = plugins.list_backends()
    assert names[0] == "eager" and names.index("fake") < names.index("down") == len(names) - 1  # built-ins, entry points, in-process
    assert "fake" in numpile.list_backends() and "down" not in numpile.list_backends(available_only=True)
    assert row("down").reason == "no frob" and row("fake").version == "1.2.3"
    with pytest.raises(InvalidBackendError, match="unknown backend 'nope'; known backends: eager, .*fake.*, down"):
        plugins.backend_info("nope")


# -- the plugin API version ---------------------------------------------------------------------

@pytest.mark.parametrize("declared", [None, "1.0", numpile.PLUGIN_API_VERSION])
def test_plugin_built_for_a_supported_api_is_used(install_dist, declared):
    install_dist("numpile-fake", "1.2.3", {"fake": "fake_plugin"}, {"fake_plugin": backend_module("fake", declared)})
    assert plugins.lookup("fake").name == "fake"
    assert row("fake").api_version == (declared or "1.0")  # undeclared: the contract before declarations


@pytest.mark.parametrize("declared, why", [
    ("2.0", "is built for plugin API 2.0; this numpile supports plugin API 1.0 to " + numpile.PLUGIN_API_VERSION),
    ("1.99", "is built for plugin API 1.99; this numpile supports plugin API 1.0 to " + numpile.PLUGIN_API_VERSION),
    ("one", "declares plugin API 'one', which is not a version"),
])
def test_plugin_built_for_another_api_is_refused_naming_both(install_dist, declared, why, caplog):
    install_dist("numpile-future", "3.1", {"future": "future_plugin"},
                 {"future_plugin": backend_module("future", declared)})
    install_dist("numpile-good", "0.2", {"good": "good_plugin"}, {"good_plugin": backend_module("good")})
    assert plugins.lookup("good").name == "good"  # the others go on
    refused = row("future")
    assert (refused.distribution, refused.version, refused.available) == ("numpile-future", "3.1", False)
    assert refused.reason.startswith(why) and refused.api_version == declared
    assert "future" not in plugins.list_backends()  # its backend is not registered
    assert "numpile plugin 'future' (numpile-future 3.1): " + why in caplog.text
    with pytest.raises(InvalidBackendError, match=r"(?s)unknown backend 'future'.*plugin 'future' \(numpile-future 3.1\)"):
        plugins.lookup("future")


def test_backends_command_shows_the_api_version(install_dist, capsys):
    from numpile import cli

    install_dist("numpile-future", "3.1", {"future": "future_plugin"}, {"future_plugin": backend_module("future", "2.0")})
    assert cli.main(["backends"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "distribution", "version", "api", "available", "description"]
    [eager] = [line.split() for line in lines if line.startswith("eager ")]
    assert eager[:5] == ["eager", "numpile", numpile.__version__, numpile.PLUGIN_API_VERSION, "yes"]
    [future] = [line.split() for line in lines if line.startswith("future ")]
    assert future[:6] == ["future", "numpile-future", "3.1", "2.0", "no:", "is"]


def test_every_hook_says_since_which_api_version():
    from numpile import hookspecs

    hooks = [name for name in dir(hookspecs) if name.startswith("numpile_")]
    assert len(hooks) >= 5
    for name in hooks:
        doc = getattr(hookspecs, name).__doc__
        assert ".. versionadded:: " in doc, name
        since = doc.split(".. versionadded:: ")[1].split()[0]
        assert hookspecs.parse_api_version(since) <= hookspecs.parse_api_version(hookspecs.API_VERSION), name


# -- in-process registration --------------------------------------------------------------------

def test_plugin_registered_in_process():
    plugins.get_plugin_manager().register(offering(backend_named("mine")))
    assert plugins.lookup("mine").name == "mine"
    assert (row("mine").distribution, row("mine").version) == ("(in-process)", "")


def test_register_backend_as_a_call():
    def fn(graph, example_inputs):
        return graph

    assert plugins.register_backend("by_call", fn) is fn
    backend = plugins.lookup("by_call")
    assert isinstance(backend, CallableBackend) and backend.fn is fn


def test_register_backend_as_decorators():
    @plugins.register_backend("named")
    def fn(graph, example_inputs):
        """Runs the graph as it is."""
        return graph

    @plugins.register_backend
    def bare(graph, example_inputs):
        return graph

    @plugins.register_backend
    class Cls(Backend):
        name = "cls"

    assert callable(fn) and callable(bare) and Cls.name == "cls"
    assert plugins.lookup("named").description == "Runs the graph as it is."
    assert plugins.lookup("bare").fn is bare
    assert isinstance(plugins.lookup("cls"), Cls)


def test_register_backend_instance_under_another_name():
    plugins.register_backend("renamed", backend_named("original"))
    assert plugins.lookup("renamed").name == "renamed"


def test_register_backend_refuses_a_taken_name():
    with pytest.raises(InvalidBackendError, match="'eager' exists already.*numpile"):
        plugins.register_backend("eager", lambda graph, example_inputs: graph)


def test_register_backend_refuses_what_is_no_backend():
    with pytest.raises(InvalidBackendError, match="not int"):
        plugins.register_backend("number", 3)
    with pytest.raises(InvalidBackendError, match="has no name"):
        plugins.register_backend(Backend)


# -- lookup errors -------------------------------------------------------------------------------

def test_unknown_backend_lists_the_known_ones():
    plugins.register_backend("mine", lambda graph, example_inputs: graph)
    with pytest.raises(InvalidBackendError, match="unknown backend 'nope'; known backends: eager, .*mine") as info:
        plugins.lookup("nope")
    assert isinstance(info.value, NumpileError) and isinstance(info.value, ValueError)


def test_unavailable_backend_says_why():
    plugins.register_backend(backend_named("gpu", is_available=lambda self: (False, "no CUDA device")))
    with pytest.raises(BackendUnavailableError, match="backend 'gpu' is not available: no CUDA device"):
        plugins.lookup("gpu")
    assert (row("gpu").available, row("gpu").reason) == (False, "no CUDA device")


def test_backend_whose_availability_check_raises_is_unavailable():
    def is_available(self):
        raise OSError("driver crashed")

    plugins.register_backend(backend_named("flaky", is_available=is_available))
    with pytest.raises(BackendUnavailableError, match="is_available\\(\\) raised OSError: driver crashed"):
        plugins.lookup("flaky")


# -- resolving what numpile.compile is given -------------------------------------------------------

def test_resolve_backend_accepts_names_backends_and_callables():
    def custom_backend(graph, example_inputs):
        return graph

    instance = backend_named("inst")
    assert isinstance(plugins.resolve_backend("eager"), EagerBackend)
    assert plugins.resolve_backend(instance) is instance
    assert isinstance(plugins.resolve_backend(EagerBackend), EagerBackend)
    resolved = plugins.resolve_backend(custom_backend)
    assert isinstance(resolved, CallableBackend) and resolved.name == "custom_backend"


def test_resolve_backend_checks_availability_of_objects_too():
    with pytest.raises(BackendUnavailableError, match="needs a frobnicator"):
        plugins.resolve_backend(backend_named("frob", is_available=lambda self: (False, "needs a frobnicator")))


def test_mode_the_backend_lacks_is_an_error_naming_its_modes():
    with pytest.raises(InvalidBackendError, match="backend 'eager' has no mode 'max-autotune'; its modes: None"):
        plugins.resolve_backend("eager", mode="max-autotune")
    tuned = backend_named("tuned", modes=(None, "max-autotune"))
    assert plugins.resolve_backend(tuned, mode="max-autotune") is tuned


# -- the default backend -------------------------------------------------------------------------

def test_default_backend_is_the_first_usable_candidate():
    plugins.register_backend(backend_named("off", is_available=lambda self: (False, "switched off")))
    plugins.register_backend(backend_named("gpu_only", devices=("cuda",)))
    assert isinstance(plugins.default_backend(["not-installed", "off", "gpu_only", "eager"], "cpu"), EagerBackend)
    assert plugins.default_backend(["gpu_only", "eager"], "cuda").name == "gpu_only"


def test_default_backend_says_why_each_candidate_was_passed_over():
    plugins.register_backend(backend_named("off", is_available=lambda self: (False, "switched off")))
    plugins.register_backend(backend_named("gpu_only", devices=("cuda",)))
    with pytest.raises(BackendUnavailableError) as info:
        plugins.default_backend(["not-installed", "off", "gpu_only", "eager"], "cpu", mode="max-autotune")
    assert str(info.value) == (
        "no backend for device 'cpu' and mode 'max-autotune' among not-installed, off, gpu_only, eager: "
        "not-installed: not installed; off: switched off; gpu_only: runs on cuda, not cpu; "
        "eager: has no mode 'max-autotune'; its modes: None")


# -- plain-function backends ---------------------------------------------------------------------

def test_tutorial_custom_backend_prints_and_runs_the_graph(capsys):
    def custom_backend(graph, example_inputs):
        graph.print_tabular()
        return graph

    graph, (x, y) = sin_plus_graph(), inputs()
    compiled = CallableBackend(custom_backend).compile(graph, [x, y], {"mode": None})
    assert capsys.readouterr().out == graph.tabular() + "\n"
    np.testing.assert_array_equal(compiled(x, y)[0], np.sin(x) + y)


def test_callable_backend_that_returns_no_callable_is_named():
    def forgetful(graph, example_inputs):
        graph.print_tabular()

    with pytest.raises(InvalidBackendError, match="backend 'forgetful' returned NoneType, not a callable"):
        CallableBackend(forgetful).compile(sin_plus_graph(), inputs(), {"mode": None})


def test_callable_backend_gets_options_only_when_given():
    seen = []

    def with_options(graph, example_inputs, options=None):
        seen.append(options)
        return graph

    backend = CallableBackend(with_options)
    backend.compile(sin_plus_graph(), inputs(), {"mode": None})
    backend.compile(sin_plus_graph(), inputs(), {"mode": None, "verbose": True})
    assert seen == [None, {"verbose": True}]


# -- exporters -----------------------------------------------------------------------------------

def test_exporters_are_found_by_name():
    exporter = type("Fmt", (numpile.backend.Exporter,), {"name": "fmt"})()
    plugin = types.SimpleNamespace(numpile_exporters=hookimpl(lambda: [exporter]))
    plugins.get_plugin_manager().register(plugin)
    assert plugins.lookup_exporter("fmt") is exporter
    # the installed plugins' exporters are listed too (numpile-onnx's "onnx")
    with pytest.raises(InvalidExporterError, match=r"unknown exporter 'tflite'; known exporters: .*\bfmt\b"):
        plugins.lookup_exporter("tflite")


# -- the optional hooks --------------------------------------------------------------------------

def test_graph_passes_run_in_order_for_the_backend_asked():
    calls = []

    def first(graph):
        calls.append("first")
        return graph

    def replace(graph):
        calls.append("replace")
        return sin_plus_graph()

    def passes(backend_name):
        return [first, replace] if backend_name == "eager" else []

    plugins.get_plugin_manager().register(types.SimpleNamespace(numpile_graph_passes=hookimpl(passes)))
    graph = sin_plus_graph()
    graph.guards = ["the entry's guard"]
    assert plugins.apply_graph_passes(graph, "debug") is graph and calls == []
    result = plugins.apply_graph_passes(graph, "eager")
    assert calls == ["first", "replace"] and result is not graph
    assert result.guards == ["the entry's guard"]


def test_graph_pass_must_return_a_graph():
    def in_place_only(graph):
        return None

    plugin = types.SimpleNamespace(numpile_graph_passes=hookimpl(lambda: [in_place_only]))
    plugins.get_plugin_manager().register(plugin, "passes")
    with pytest.raises(NumpileError, match="graph pass 'in_place_only' of plugin 'passes' returned NoneType"):
        plugins.apply_graph_passes(sin_plus_graph(), "eager")


def test_compiled_observers_are_told_and_one_that_raises_breaks_nothing():
    seen = []

    def observe(fn_name, backend_name, compile_seconds):
        seen.append((fn_name, backend_name, compile_seconds))

    def crash(graph):
        raise RuntimeError("observer bug")

    manager = plugins.get_plugin_manager()
    manager.register(types.SimpleNamespace(numpile_compiled=hookimpl(crash)), "crashing")
    manager.register(types.SimpleNamespace(numpile_compiled=hookimpl(observe)), "observer")
    plugins.notify_compiled("f", "eager", sin_plus_graph(), 0.25)
    assert seen == [("f", "eager", 0.25)]
    assert "numpile_compiled hook raised RuntimeError: observer bug" in row("crashing").reason
