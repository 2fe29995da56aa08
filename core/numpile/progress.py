"""A line on the terminal while a backend compile runs long: after DELAY seconds,
`numpile: compiling step (12 ops, llvm) 1.4 s`, counting up until the compile ends, then erased.

Drawn through rich, or tqdm, whichever is installed, and only when stderr is a terminal: nothing
is written to a pipe, a file or a notebook's captured stream, nor without either library. cache.py
wraps each backend compile in `compiling(...)`; a thread of its own waits out the delay, so a
compile shorter than that costs a thread start and nothing on the screen.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import sys
import threading
import time

DELAY = 1.0      # seconds a compile runs before its line appears
INTERVAL = 0.1   # seconds between redraws of the line


@contextlib.contextmanager
def compiling(function: str, backend: str, ops: int):
    """Show the compile of `function`'s graph of `ops` ops by `backend` while it runs long."""
    stream = sys.stderr
    line = _line_writer() if _is_terminal(stream) else None
    if line is None:
        yield
        return
    done = threading.Event()
    shower = threading.Thread(target=_show, args=(line, stream, f"numpile: compiling {function} ({ops} ops, {backend})",
                                                  time.perf_counter(), done), daemon=True)
    shower.start()
    try:
        yield
    finally:
        done.set()
        shower.join()


def _show(line, stream, text: str, start: float, done: threading.Event) -> None:
    if done.wait(DELAY):
        return
    with line(stream) as draw:
        while True:
            draw(f"{text} {time.perf_counter() - start:.1f} s")
            if done.wait(INTERVAL):
                return


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):   # no isatty, or a closed stream
        return False


@functools.cache
def _line_writer():
    """How the line is drawn: rich's Live display, else a tqdm bar of text; None without either."""
    for name, writer in (("rich", _rich_line), ("tqdm", _tqdm_line)):
        if importlib.util.find_spec(name) is not None:
            return writer
    return None


@contextlib.contextmanager
def _rich_line(stream):
    from rich.console import Console
    from rich.live import Live
    from rich.text import Text

    # the caller's sys.stdout and sys.stderr are left alone: other threads may be writing to them
    with Live(console=Console(file=stream, force_terminal=True), auto_refresh=False, transient=True,
              redirect_stdout=False, redirect_stderr=False) as live:
        yield lambda text: live.update(Text(text), refresh=True)


@contextlib.contextmanager
def _tqdm_line(stream):
    from tqdm import tqdm

    bar = tqdm(file=stream, bar_format="{desc}", leave=False)
    try:
        yield bar.set_description_str
    finally:
        bar.close()
