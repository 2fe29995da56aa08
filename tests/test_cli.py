"""The `numpile` command: --version, backends, demo."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

import numpile
from numpile import cli, plugins
from numpile.backend import Backend


@pytest.fixture(autouse=True)
def fresh_plugins():
    plugins.reset_plugins()
    yield
    plugins.reset_plugins()


def run_numpile(*args: str) -> subprocess.CompletedProcess:
    """`python -m numpile ARGS` importing the numpile package these tests import."""
    path = [str(Path(numpile.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, path))}
    return subprocess.run([sys.executable, "-m", "numpile", *args], capture_output=True, text=True, env=env)


def test_version():
    result = run_numpile("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"numpile {numpile.__version__}\n"


def test_backends_lists_eager():
    result = run_numpile("backends")
    assert result.returncode == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split() == ["name", "distribution", "version", "api", "available", "description"]
    [eager] = [r for r in rows if r.split()[0] == "eager"]
    assert eager.split()[:5] == ["eager", "numpile", numpile.__version__, numpile.PLUGIN_API_VERSION, "yes"]


def test_backends_table_says_why_a_backend_is_unavailable(capsys):
    class Gpu(Backend):
        name = "gpu"
        description = "runs on a GPU"

        def is_available(self):
            return False, "no CUDA device"

    plugins.register_backend(Gpu)
    assert cli.main(["backends"]) == 0
    lines = capsys.readouterr().out.splitlines()
    widths = lines[0].index("available"), lines[0].index("description")
    [gpu] = [line for line in lines if line.startswith("gpu ")]
    assert gpu[widths[0]:].startswith("no: no CUDA device")
    assert gpu[widths[1]:] == "runs on a GPU"


def test_command_is_required_and_stray_arguments_refused(capsys):
    for argv in ([], ["backends", "extra"], ["nope"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 2
    assert "usage: numpile" in capsys.readouterr().err


def test_demo_gets_every_argument_after_it(monkeypatch):
    received = []
    demo = types.ModuleType("numpile.demo")
    demo.main = lambda argv: received.append(argv) or 3
    monkeypatch.setitem(sys.modules, "numpile.demo", demo)
    monkeypatch.setattr(numpile, "demo", demo, raising=False)
    assert cli.main(["demo", "--backend", "eager", "--help"]) == 3
    assert received == [["--backend", "eager", "--help"]]


def test_demo_help_runs():
    try:
        import numpile.demo  # noqa: F401
    except ImportError:
        pytest.skip("numpile.demo is not written yet")
    result = run_numpile("demo", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: numpile demo")
