"""The conformance kit (numpile.testing.check_backend) finds what a backend gets wrong, op by op and
in multi-op graphs, and counts ops a backend declares unsupported without running them."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile import testing
from numpile.backends.eager import EagerBackend


def off_by_one(outputs):
    """The outputs with every float array moved by one: a wrong answer no tolerance accepts."""
    return tuple(o + 1 if isinstance(o, np.ndarray) and o.dtype.kind == "f" else o for o in outputs)


class WrongWhen(EagerBackend):
    """Eager, except that graphs for which `wrong(graph)` holds return off-by-one floats."""

    def __init__(self, name, wrong):
        self.name, self.wrong = name, wrong

    def compile(self, graph, example_inputs, options):
        run = graph.compile_python()
        if not self.wrong(graph):
            return run
        return lambda *inputs: off_by_one(run(*inputs))


def test_a_correct_backend_passes_with_a_per_op_report():
    report = testing.check_backend(EagerBackend(), programs=8, ops=["add", "sin", "sum"])
    assert report.ok and report.programs == 8 and not report.programs_failing
    assert set(report.cases_passed) == {"add", "sin", "sum"}
    assert report.cases_passed["add"] == len(testing.conformance_cases(["add"]))
    assert sum(report.programs_passed.values()) > 8  # the programs' graphs hold several ops each
    n = len(testing.conformance_cases(["add", "sin", "sum"]))
    assert report.summary().startswith(f"backend 'eager' (registered in this process): {n} cases passed") and report.table().split()[:3] == ["op", "cases", "passed"]


def test_an_op_the_backend_gets_wrong_fails_that_op_alone():
    backend = WrongWhen("wrong_sin", lambda graph: any(n.target == "sin" for n in graph.calls))
    report = testing.run_kit(backend, programs=0, ops=["sin", "cos"])
    with np.errstate(all="ignore"):
        results = [np.sin(*c.inputs()) for c in testing.conformance_cases(["sin"])]
    moved = [r for r in results if isinstance(r, np.ndarray) and r.size]  # off_by_one leaves NumPy scalars be
    assert report.cases_failed["sin"] == len(moved) > 0
    assert report.cases_failed["cos"] == 0 and report.cases_passed["cos"] > 0
    assert "values differ" in report.failures[0].message
    with pytest.raises(AssertionError, match="(?s)numpile conformance kit:.*case sin"):
        testing.check_backend(backend, programs=0, ops=["sin"])


def test_random_programs_catch_a_backend_wrong_only_on_fused_graphs():
    backend = WrongWhen("wrong_fused", lambda graph: len(graph.calls) >= 4)
    report = testing.run_kit(backend, programs=12, ops=["add", "tanh"])
    assert not report.cases_failed  # one op at a time it is right
    assert report.programs_failing > 0 and sum(report.programs_failed.values()) > 0
    failure = next(f for f in report.failures if f.what.startswith("program"))
    assert "def f(x, y, n):" in failure.source and "program:" in str(failure)


class OnlyPointwise(EagerBackend):
    name = "only_pointwise"
    supported_ops = frozenset({"add", "multiply", "sin"})

    def __init__(self):
        self.compiled = []

    def compile(self, graph, example_inputs, options):
        self.compiled.append(sorted({n.target for n in graph.calls}))
        return super().compile(graph, example_inputs, options)


def test_ops_declared_unsupported_are_counted_not_run():
    report = testing.check_backend(OnlyPointwise(), programs=0, ops=["add", "sin", "sum", "cumsum"])
    assert set(report.cases_passed) == {"add", "sin"}
    assert set(report.cases_unsupported) == {"sum", "cumsum"}
    assert report.cases_unsupported["sum"] == len(testing.conformance_cases(["sum"]))


def test_a_graph_with_an_unsupported_op_runs_with_numpy(rng, capfd):
    backend = OnlyPointwise()

    def f(x, y):
        return np.sin(x) * y + 1.0

    def g(x):
        return np.cumsum(np.sin(x))

    x, y = rng.standard_normal(5), rng.standard_normal(5)
    testing.assert_same(numpile.compile(f, backend=backend)(x, y), f(x, y))
    assert backend.compiled == [["add", "multiply", "sin"]]
    numpile.set_logs("perf")
    try:
        testing.assert_same(numpile.compile(g, backend=backend)(x), g(x))
    finally:
        numpile.set_logs()
    assert backend.compiled == [["add", "multiply", "sin"]]  # not handed the graph with cumsum
    assert "backend 'only_pointwise' does not support cumsum; a graph of 2 ops runs with NumPy" in capfd.readouterr().err


def test_the_command_prints_the_report_and_fails_on_a_failure(capsys):
    from numpile.testing.__main__ import main

    assert main(["--backend", "eager", "--programs", "0", "--ops", "negative"]) == 0
    out = capsys.readouterr().out
    assert "negative" in out and "0 failed" in out
    assert main(["--backend", "no_such_backend", "--programs", "0"]) == 2
    assert "unknown backend 'no_such_backend'" in capsys.readouterr().err
