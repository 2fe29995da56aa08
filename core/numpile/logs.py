"""Log categories, switched on by NUMPILE_LOGS=graph_breaks,guards,... or numpile.set_logs(...).

Each category is a child of the standard `numpile` logger (`numpile.guards`, ...),
so the usual logging configuration applies too.
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
_handler: logging.Handler | None = None


def get(category: str) -> logging.Logger:
    return logging.getLogger(f"numpile.{category}")


def set_logs(*categories: str, **flags: bool) -> None:
    """Turn log categories on: set_logs("guards", "recompiles") or set_logs(guards=True).
    Called with nothing, turns them all off. Output goes to stderr."""
    wanted = set(categories) | {k for k, v in flags.items() if v}
    if "all" in wanted:
        wanted = set(CATEGORIES)
    unknown = wanted - set(CATEGORIES)
    if unknown:
        raise ValueError(f"unknown log categories {sorted(unknown)}; known: {', '.join(CATEGORIES)}")
    global _handler
    if _handler is None:
        _handler = _StderrHandler()
        _handler.setFormatter(logging.Formatter("[numpile:%(category)s] %(message)s"))
        _handler.addFilter(_add_category)
        root.addHandler(_handler)
        root.propagate = False
    for name in CATEGORIES:
        get(name).setLevel(logging.DEBUG if name in wanted else logging.WARNING)
    root.setLevel(logging.DEBUG if wanted else logging.WARNING)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (pytest and notebooks replace it)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


def _add_category(record: logging.LogRecord) -> bool:
    record.category = record.name.split(".", 1)[-1]
    return True


def enabled(category: str) -> bool:
    return get(category).isEnabledFor(logging.DEBUG)


def from_environment() -> None:
    value = os.environ.get("NUMPILE_LOGS", "")
    if value:
        set_logs(*(c.strip() for c in value.split(",") if c.strip()))
