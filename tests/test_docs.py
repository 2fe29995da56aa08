"""Every Python code block of README.md and docs/*.md runs: the blocks of one page run in order in
one namespace (a page is a script told in pieces), in a scratch directory, and must not raise.
Blocks in other languages (```sh, ```toml, ```text) are not run; a Python block is never skipped."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest

import numpile

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(page: Path) -> list[tuple[int, str]]:
    """(line number, source) of each ```python block of the page."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


def test_the_pages_have_python_blocks():
    counts = {page.name: len(python_blocks(page)) for page in PAGES}
    assert counts["README.md"] >= 1 and counts["writing-a-backend.md"] >= 8, counts


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what a block writes stays in the scratch directory
    namespace = {"__name__": f"docs.{page.stem}"}
    rng_state = np.random.get_state()
    try:
        for line, source in python_blocks(page):
            code = compile("\n" * (line - 1) + source, str(page), "exec")  # tracebacks name the page's line
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)
    finally:
        np.random.set_state(rng_state)
        numpile.set_logs()
