"""The fuzzing tool itself (numpile.fuzz): it runs and counts, a wrong backend is caught, and what
it saves is a test that fails while the bug is there."""

from __future__ import annotations

import importlib.util
import inspect
import io
import re
import subprocess
import sys

import numpy as np
import pytest

from numpile import plugins
from numpile.fuzz.__main__ import main
from numpile.fuzz.check import Inputs, Mismatch, check_program, compare, make_args
from numpile.fuzz.regressions import file_name

SUMMARY = re.compile(r"^(\d+) programs, (\d+) ops, (\d+) mismatches$")


@pytest.fixture
def wrong_backend():
    """A backend that adds 1 to every float its graphs return."""
    def off_by_one(graph, example_inputs):
        def run(*inputs):
            return tuple(o + o.dtype.type(1) if isinstance(o, (np.ndarray, np.generic)) and o.dtype.kind == "f" else o
                         for o in graph(*inputs))
        return run
    plugins.reset_plugins()
    plugins.register_backend("off_by_one", off_by_one)
    yield "off_by_one"
    plugins.reset_plugins()


def load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_run_counts_programs_and_ops(tmp_path, capsys):
    assert main(["--backend", "eager", "--examples", "4", "--seed", "1", "--save-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    programs, ops, mismatches = map(int, SUMMARY.match(lines[-1]).groups())
    assert (programs, mismatches) == (4, 0) and ops > 0
    assert "seed 1" in lines[0]
    assert not list(tmp_path.iterdir())


def test_a_wrong_backend_is_caught_and_saved_as_a_failing_test(tmp_path, capsys, wrong_backend):
    argv = ["--backend", wrong_backend, "--examples", "2", "--seed", "5", "--save-dir", str(tmp_path)]
    assert main(argv) == 1
    out = capsys.readouterr().out
    saved = sorted(tmp_path.glob("test_fuzz_off_by_one_*.py"))
    assert saved and int(SUMMARY.match(out.splitlines()[-1]).group(3)) == len(saved)
    assert "mismatch: call 1: " in out
    for path in saved:
        regression = load(path)
        with pytest.raises(Mismatch):
            regression.test_compiled_equals_numpy_eager()
        check_program(regression.f, regression.INPUTS, "eager")   # the program is fine: the backend is wrong
        assert len(inspect.getsource(regression.f).splitlines()) <= 4   # shrunk to a line or two

    assert main(argv) == 1                             # the same failures again: nothing saved twice
    assert sorted(tmp_path.iterdir()) == saved
    assert "saved before as" in capsys.readouterr().out


def test_a_failure_past_the_shrinking_budget_is_saved_as_found(tmp_path, wrong_backend):
    argv = ["--backend", wrong_backend, "--examples", "2", "--seed", "5", "--shrink-seconds", "0",
            "--save-dir", str(tmp_path)]
    assert main(argv) == 1
    [path] = tmp_path.iterdir()
    with pytest.raises(Mismatch):
        load(path).test_compiled_equals_numpy_eager()


def test_regression_file_names_hash_backend_program_and_inputs():
    inputs = Inputs(shape=(3,), other=(2,), n1=1, n2=2, layout="C", seed=5)
    name = file_name("llvm", "def f(x, y, n):\n    return x\n", inputs)
    assert name == file_name("llvm", "def f(x, y, n):\n    return x\n", inputs)
    assert re.fullmatch(r"test_fuzz_llvm_[0-9a-f]{12}\.py", name)
    assert name != file_name("eager", "def f(x, y, n):\n    return x\n", inputs)
    assert name != file_name("llvm", "def f(x, y, n):\n    return y\n", inputs)


def test_exceptions_are_compared_by_type():
    build, buf = make_args(np.random.default_rng(0), (3,), "C", False), io.StringIO()

    def index(x, y, n):
        return x[n + 10]
    compare(index, index, buf, build, 1, "call 1")     # both raise IndexError: they agree

    def crash(x, y, n):
        raise RuntimeError("kernel crashed")
    with pytest.raises(Mismatch, match="call 1: compiled raised RuntimeError: kernel crashed, NumPy eager returned"):
        compare(crash, lambda x, y, n: x + y, buf, build, 1, "call 1")


def test_unknown_backend_is_an_error_naming_the_known_ones(capsys):
    assert main(["--backend", "no-such-backend", "--examples", "1"]) == 2
    assert "eager" in capsys.readouterr().err


def test_without_hypothesis_it_says_what_to_install():
    hide = "import runpy, sys; sys.modules['hypothesis'] = None; runpy.run_module('numpile.fuzz', run_name='__main__')"
    done = subprocess.run([sys.executable, "-c", hide, "--examples", "1"], capture_output=True, text=True)
    assert done.returncode == 2
    assert "needs hypothesis" in done.stderr and "pip install 'numpile[fuzz]'" in done.stderr
