"""The progress line of long compiles: on a terminal only, only past the delay, erased after."""

from __future__ import annotations

import importlib.util
import io
import re
import sys
import time

import numpy as np
import pytest

import numpile
from numpile import progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def slow(graph, example_inputs):
    """A backend that takes its time."""
    time.sleep(0.4)
    return graph.compile_python()


def step(x):
    return np.sin(x) * 2 + 1


def compile_and_run(stderr, monkeypatch, backend=slow) -> str:
    """What a compile with `backend` writes on `stderr` (the delay cut to 50 ms)."""
    monkeypatch.setattr(progress, "DELAY", 0.05)
    monkeypatch.setattr(sys, "stderr", stderr)
    numpile.compile(step, backend=backend)(np.ones(4))
    return stderr.getvalue()


WRITERS = [pytest.param(name, marks=pytest.mark.skipif(importlib.util.find_spec(name) is None,
                                                        reason=f"{name} is not installed"))
           for name in ("rich", "tqdm")]


@pytest.mark.parametrize("library", WRITERS)
def test_a_long_compile_shows_a_line_on_a_terminal(library, monkeypatch):
    monkeypatch.setattr(progress, "_line_writer", lambda: {"rich": progress._rich_line,
                                                           "tqdm": progress._tqdm_line}[library])
    shown = compile_and_run(Terminal(), monkeypatch)
    seconds = [float(s) for s in re.findall(r"numpile: compiling step \(3 ops, slow\) (\d+\.\d) s", shown)]
    assert seconds and seconds == sorted(seconds) and 0.0 <= seconds[-1] <= 1.0, shown


def test_nothing_when_stderr_is_not_a_terminal(monkeypatch):
    assert compile_and_run(io.StringIO(), monkeypatch) == ""


def test_nothing_for_a_short_compile(monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 1.0)
    monkeypatch.setattr(sys, "stderr", Terminal())
    numpile.compile(step, backend="eager")(np.ones(4))
    assert sys.stderr.getvalue() == ""


def test_nothing_without_rich_or_tqdm(monkeypatch):
    monkeypatch.setattr(progress, "_line_writer", lambda: None)
    assert compile_and_run(Terminal(), monkeypatch) == ""
