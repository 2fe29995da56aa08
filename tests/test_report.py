"""The compile trace (NUMPILE_TRACE_DIR) and its web page (`numpile report`): a program with a graph
break and a recompile, traced in a process of its own that dies without cleaning up, then the page
read as HTML and as headless Chromium renders it."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import numpile
from numpile import logs, report

PROGRAM = textwrap.dedent("""
    import logging, os
    import numpy as np
    import numpile

    def python_code(graph, example_inputs):    # a backend that says what it generated, as llvm does
        logging.getLogger("numpile.output_code").debug("python code:\\n%s", graph.python_code())
        return graph.compile_python()

    @numpile.compile(backend=python_code)
    def step(x, y):
        z = np.sin(x) * 2
        if z.sum() < 0 and "<b>" != "":    # a data-dependent branch: a graph break
            z = z + y
        return z * y

    rng = np.random.default_rng(0)
    step(rng.random((3, 3)), rng.random((3, 3)))
    step(rng.random((4, 4)), rng.random((4, 4)))    # another shape: a recompile
    os._exit(3)   # no clean-up: the trace must already hold everything
""")
BREAK_SOURCE = 'if z.sum() < 0 and "<b>" != "":    # a data-dependent branch: a graph break'


def python_env(**extra) -> dict:
    """The environment of a child Python that imports the numpile these tests import."""
    path = [str(Path(numpile.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMPILE_")}
    return {**env, "PYTHONPATH": os.pathsep.join(filter(None, path)), **extra}


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """(trace directory, report page) of PROGRAM run under NUMPILE_TRACE_DIR."""
    work = tmp_path_factory.mktemp("traced")
    (work / "app.py").write_text(PROGRAM)
    run = subprocess.run([sys.executable, "app.py"], cwd=work, capture_output=True, text=True,
                         env=python_env(NUMPILE_TRACE_DIR="trace"))
    assert run.returncode == 3, run.stderr
    assert run.stderr == ""   # tracing prints nothing
    made = subprocess.run([sys.executable, "-m", "numpile", "report", "trace", "-o", "page.html"], cwd=work,
                          capture_output=True, text=True, env=python_env())
    assert made.returncode == 0, made.stderr
    assert made.stdout == "wrote page.html\n"
    return work / "trace", work / "page.html"


def test_the_trace_has_every_compile_with_its_break_guards_and_code(traced):
    directory, _ = traced
    [path] = directory.glob("*.jsonl")
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    assert lines[0]["kind"] == "run" and lines[0]["argv"] == ["app.py"]
    compiles = [line for line in lines if line["kind"] == "compile"]
    resumed = compiles[1]["frame"]   # named by its bytecode offset, which differs between Pythons
    assert resumed.startswith("step.<resume at ")
    assert [(c["frame"], c["entry"]) for c in compiles] == [("step", 1), (resumed, 1), ("step", 2), (resumed, 2)]
    first = compiles[0]
    assert first["ops"] == ["sin", "multiply", "sum", "less"] and "input   x" in first["graph"]
    assert first["break"]["at"]["source"] == BREAK_SOURCE and first["break"]["at"]["file"].endswith("app.py")
    assert "x: ndarray, dtype float64, shape (3, 3)" in first["guards"]
    categories = {line["category"] for line in lines if line["kind"] == "log"}
    assert {"graph_breaks", "graph", "guards", "perf", "recompiles", "output_code"} <= categories


def test_each_compile_gets_the_log_lines_it_wrote(traced):
    directory, _ = traced
    [run] = report.read_runs(directory)
    [function] = run.functions
    assert function.name == "step" and function.defined_at.endswith("app.py:10")
    first, resumed, again, _ = function.compiles
    assert first.messages("recompiles") == [] and len(first.messages("output_code")) == 1
    assert again.messages("recompiles") == ["recompiling step: shape of x changed from (3, 3) to (4, 4)"]
    assert "multiply = z * y" in resumed.messages("output_code")[0]
    assert run.between == []


def test_the_page_summarises_and_escapes(traced):
    _, page = traced
    text = page.read_text()
    assert "<script" not in text and "http" not in text   # stands alone, fetches nothing
    summary = dict(zip(re.findall(r"<th>([^<]*)</th>", text)[:6], re.findall(r"<td>([^<]*)</td>", text)[:6]))
    assert {k: summary[k] for k in ("functions", "compiles", "graphs", "graph breaks", "recompiles")} == \
        {"functions": "1", "compiles": "4", "graphs": "4", "graph breaks": "2", "recompiles": "2"}
    assert html.escape(BREAK_SOURCE) in text and BREAK_SOURCE not in text
    assert "recompiling step: shape of x changed from (3, 3) to (4, 4)" in text
    assert text.count("Generated code (") == 4 and "python code:" in text


def browser() -> str | None:
    return next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))), None)


@pytest.mark.skipif(browser() is None, reason="no chromium here (apt-get install chromium; .ci/run installs it): "
                                              "the page is not rendered")
def test_the_page_renders_in_a_browser(traced):
    _, page = traced
    dom = subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    shown = html.unescape(re.sub(r"<[^>]+>", "", dom))   # the page's text as the browser has it
    assert "numpile compile report" in shown
    assert "Graph break: data-dependent jump" in shown
    assert BREAK_SOURCE in shown
    assert "x: ndarray, dtype float64, shape (3, 3)" in shown
    assert "Recompiled: recompiling step: shape of x changed from (3, 3) to (4, 4)" in shown


def test_set_trace_dir_in_process_and_lines_between_compiles(tmp_path):
    path = numpile.set_trace_dir(tmp_path)
    try:
        assert logs.enabled("graph") and logs.enabled("output_code")
        f = numpile.compile(lambda x: np.cos(x) + 1, backend="eager")
        f(np.ones(3))
        logs.get("perf").debug("a fallback at run time")
    finally:
        assert numpile.set_trace_dir(None) is None
    assert not logs.enabled("graph")
    with open(path, "a") as f:   # a process killed while writing a line leaves part of it
        f.write('{"kind": "log", "ti')
    [run] = report.read_runs(tmp_path)
    [function] = run.functions
    assert function.name.endswith("<lambda>") and len(function.compiles) == 1
    assert [log["message"] for log in run.between] == ["a fallback at run time"]
    assert run.path == path


def test_report_without_traces_says_so(tmp_path, capsys):
    from numpile import cli
    assert cli.main(["report", str(tmp_path)]) == 1
    assert "no numpile trace files" in capsys.readouterr().err
