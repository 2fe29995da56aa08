"""Log categories, switched on by NUMPILE_LOGS=graph_breaks,guards,... or numpile.set_logs(...).

Each category is a child of the standard `numpile` logger (`numpile.guards`, ...),
so the usual logging configuration applies too. Two kinds of listener hear them: stderr, for the
categories set_logs asked for, and recorders (the compile trace, NUMPILE_TRACE_DIR), for every
category whatever set_logs asked for.
"""

from __future__ import annotations

import logging
import os
import sys

CATEGORIES = {
    "graph_breaks": "each graph break, once, with its reason and user stack",
    "guards": "the guards of each new cache entry",
    "recompiles": "why a function compiles again (which guard failed)",
    "graph": "each captured graph, as a table",
    "output_code": "the code a backend generated",
    "perf": "compile times, and what runs with NumPy instead of compiled code, and why",
}

root = logging.getLogger("numpile")
_stderr: logging.Handler | None = None
_wanted: set[str] = set()                 # the categories stderr shows
_recorders: list[logging.Handler] = []    # handlers that hear every category


def get(category: str) -> logging.Logger:
    return logging.getLogger(f"numpile.{category}")


def category_of(record: logging.LogRecord) -> str:
    return record.name.split(".", 1)[-1]


def set_logs(*categories: str, **flags: bool) -> None:
    """Turn log categories on: set_logs("guards", "recompiles") or set_logs(guards=True).
    Called with nothing, turns them all off. Output goes to stderr."""
    wanted = set(categories) | {k for k, v in flags.items() if v}
    if "all" in wanted:
        wanted = set(CATEGORIES)
    unknown = wanted - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown log categories {sorted(unknown)}; known: {', '.join(CATEGORIES)}")
    _wanted.clear()
    _wanted.update(wanted)
    _set_levels()


def record_everything(handler: logging.Handler) -> None:
    """Send `handler` every category's records at DEBUG, whatever set_logs chose for stderr."""
    root.addHandler(handler)
    _recorders.append(handler)
    _set_levels()


def stop_recording(handler: logging.Handler) -> None:
    root.removeHandler(handler)
    _recorders.remove(handler)
    _set_levels()


def _set_levels() -> None:
    global _stderr
    if _stderr is None:
        # numpile's own handler from now on: records below WARNING that a recorder asked for must
        # not reach the application's handlers, and warnings must still reach stderr
        _stderr = _StderrHandler()
        _stderr.setFormatter(logging.Formatter("[numpile:%(category)s] %(message)s"))
        _stderr.addFilter(_shown_on_stderr)
        root.addHandler(_stderr)
        root.propagate = False
    everything = bool(_recorders)
    for name in CATEGORIES:
        get(name).setLevel(logging.DEBUG if everything or name in _wanted else logging.WARNING)
    root.setLevel(logging.DEBUG if everything or _wanted else logging.WARNING)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (pytest and notebooks replace it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _shown_on_stderr(record: logging.LogRecord) -> bool:
    record.category = category_of(record)
    return record.levelno >= logging.WARNING or record.category in _wanted


def enabled(category: str) -> bool:
    return get(category).isEnabledFor(logging.DEBUG)


def from_environment() -> None:
    value = os.environ.get("NUMPILE_LOGS", "")
    if value:
        set_logs(*(c.strip() for c in value.split(",") if c.strip()))
