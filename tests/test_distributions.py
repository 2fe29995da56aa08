"""The distributions as users install them: every one builds an sdist and a wheel that pass
`twine check`; the wheels, installed (not editable) into a fresh virtual environment beside each
other, run `numpile demo`, list the template backend, select it by name, and pass its own tests
(numpile's conformance kit). The extras of the core name every plugin of plugins/.

The slow tests build and pip install (a minute or two): CI runs them once, on the default Python.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import tomllib
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import dev  # noqa: E402  (the repository's build script: what CI runs)

sys.path.remove(str(ROOT))


def project(path: Path) -> dict:
    return tomllib.loads((path / "pyproject.toml").read_text())["project"]


CORE = project(ROOT)
PLUGINS = {d.name: project(d) for d in dev.distributions()[1:]}


# -- metadata (fast) ---------------------------------------------------------------------------

def test_every_plugin_has_an_extra_on_the_core_and_is_in_all():
    extras = CORE["optional-dependencies"]
    for folder, plugin in PLUGINS.items():
        [extra] = [name for name, reqs in extras.items() if name != "all" and any(
            r.split(">")[0].split("=")[0].strip() == plugin["name"] for r in reqs)]
        assert extra in extras["all"][0], f"numpile[all] lacks numpile[{extra}] ({plugin['name']}, plugins/{folder})"


def test_every_plugin_bounds_the_numpile_it_runs_with():
    version = tuple(int(p) for p in CORE["version"].split(".")[:2])
    for folder, plugin in PLUGINS.items():
        [numpile] = [r for r in plugin["dependencies"] if r.startswith("numpile>") or r.startswith("numpile ")]
        assert f">={version[0]}.{version[1]}" in numpile and f"<{version[0]}.{version[1] + 1}" in numpile, \
            f"plugins/{folder}: {numpile!r} should accept this numpile and not the next minor version"
        assert "numpile" in plugin["entry-points"], f"plugins/{folder} declares no [project.entry-points.numpile]"


# -- built and installed (slow) ----------------------------------------------------------------

@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> list[Path]:
    return dev.build_dists(Path(sys.executable), tmp_path_factory.mktemp("dist"))


def wheel(dists: list[Path], name: str) -> Path:
    [found] = [p for p in dists if p.suffix == ".whl" and p.name.split("-")[0] == name.replace("-", "_")]
    return found


@pytest.fixture(scope="module")
def fresh_env(dists, tmp_path_factory) -> Path:
    """A new virtual environment with the core (with its testing extra), the llvm and debug plugins
    and the template installed from their wheels; triton is left out (torch is gigabytes)."""
    env = tmp_path_factory.mktemp("env")
    venv.EnvBuilder(with_pip=True).create(env)
    py = dev.venv_python(env)
    wheels = [f"{wheel(dists, 'numpile')}[testing]", wheel(dists, "numpile-llvm"), wheel(dists, "numpile-debug"),
              wheel(dists, "numpile-example-backend")]
    subprocess.run([str(py), "-m", "pip", "install", "-q", "pytest", *map(str, wheels)], check=True)
    return py


def run_in(py: Path, *args: str, cwd: Path) -> str:
    """Run in the fresh environment, away from the repository's sources; its stdout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMPILE_DISABLE_PLUGINS")}
    result = subprocess.run([str(py), *args], capture_output=True, text=True, cwd=cwd, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.slow
def test_every_distribution_builds_an_sdist_and_a_wheel(dists):
    names = [ROOT, *dev.distributions()[1:], dev.TEMPLATE]
    for d in names:
        stem = project(d)["name"].replace("-", "_")
        built = sorted(p.name.removeprefix(stem + "-") for p in dists if p.name.startswith(stem + "-"))
        version = project(d)["version"]
        assert built == [f"{version}-py3-none-any.whl", f"{version}.tar.gz"], (d, built)


@pytest.mark.slow
def test_installed_wheels_list_and_select_the_template(fresh_env, tmp_path):
    table = run_in(fresh_env, "-m", "numpile", "backends", cwd=tmp_path)
    rows = {line.split()[0]: line.split() for line in table.splitlines()[1:]}
    assert rows["example"][:5] == ["example", "numpile-example-backend", "0.1.0", "1.1", "yes"]
    assert rows["llvm"][4] == "yes" and rows["debug"][4] == "yes"
    program = textwrap.dedent("""
        import numpy as np, numpile, numpile_example
        def f(x):
            return np.sin(x) * 2 + 1
        x = np.arange(6.0).reshape(2, 3)
        compiled = numpile.compile(f, backend="example")
        np.testing.assert_array_equal(compiled(x), f(x))
        [entry] = compiled.all_entries()
        print(entry.backend, "site-packages" in numpile_example.__file__, "site-packages" in numpile.__file__)
    """)
    assert run_in(fresh_env, "-c", program, cwd=tmp_path).split() == ["example", "True", "True"]


@pytest.mark.slow
def test_the_template_passes_its_own_tests_there(fresh_env, tmp_path):
    shutil.copytree(dev.TEMPLATE / "tests", tmp_path / "tests")  # its tests, not its sources
    out = run_in(fresh_env, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "tests",
                 cwd=tmp_path)
    assert "3 passed" in out


@pytest.mark.slow
def test_numpile_demo_runs_from_the_wheels(fresh_env, tmp_path):
    out = run_in(fresh_env, "-m", "numpile", "demo", cwd=tmp_path)
    assert "numpile.list_backends() = ['eager', 'debug', 'example', 'llvm']" in out
