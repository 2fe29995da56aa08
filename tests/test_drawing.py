"""numpile.explain's pictures: the graphs, their fused kernels and the breaks with reason and line,
as DOT (checked structurally: Graphviz is optional) and as the text fallback."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import numpile
from numpile import drawing


def bar(a, b):
    x = a / (np.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return (x * b).sum(axis=0)


BREAK_LINE = "if b.sum() < 0:"


@pytest.fixture
def report(rng):
    return numpile.explain(bar)(rng.standard_normal((3, 4)), -np.abs(rng.standard_normal((3, 4))))


def test_segments_follow_compile_order(report):
    assert [(g is not None, b is not None) for g, b in report.segments] == [(True, True), (True, False)]


def test_dot_has_a_cluster_per_graph_the_kernels_and_the_break(report):
    dot = report.to_dot()
    assert dot.startswith("digraph numpile {") and dot.count("{") == dot.count("}")
    assert re.findall(r"subgraph (cluster_g\d+)", dot) == ["cluster_g0", "cluster_g1"]
    declared = set(re.findall(r"^\s*(\w+) \[label=", dot, re.M))
    for tail, head in re.findall(r"^\s*(\w+) -> (\w+)", dot, re.M):  # every edge joins drawn nodes
        assert tail in declared and head in declared, (tail, head)
    [label] = re.findall(r'b0 \[label="(graph break: [^"]*)"', dot)
    assert "data-dependent jump" in label and f"test_drawing.py:{bar.__code__.co_firstlineno + 2}: {BREAK_LINE}" in label
    assert 'b0 -> g1_b [style=dashed, label="resumes"]' in dot
    kernels = re.findall(r'k1_\d+ \[label="([^"]*)"', dot)
    assert kernels == ["kernel0\\nmultiply, sum\\nx, b -> sum"]


def test_text_picture_when_graphviz_is_missing(report, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz raises ImportError
    written = report.draw(tmp_path / "bar")
    assert written == tmp_path / "bar.txt"
    text = written.read_text().splitlines()
    assert text[0] == "[graph 1] a, b -> less, divide  (5 ops)"
    assert text[1] == "    kernel0: absolute, add, divide   (a -> divide)"
    assert any(line.startswith("  x graph break: data-dependent jump") for line in text)
    assert any(line.strip().endswith(BREAK_LINE) for line in text)
    assert "    kernel0: multiply, sum   (x, b -> sum)" in text


def test_svg_through_graphviz(report, tmp_path):
    pytest.importorskip("graphviz")
    if drawing.shutil.which("dot") is None:
        pytest.skip("Graphviz's dot program is not installed")
    svg = report.draw(tmp_path / "bar").read_text()
    assert svg.lstrip().startswith("<?xml") and "graph break" in svg and BREAK_LINE.replace("<", "&lt;") in svg
