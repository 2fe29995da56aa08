"""The compile trace: `NUMPILE_TRACE_DIR=dir` (or `numpile.set_trace_dir(dir)`) records every compile
event of the run into a file of its own in `dir`, for `numpile report dir` (report.py) to read.

The file holds one JSON object a line, each written and flushed as it happens, so a run that
crashes keeps everything before the crash:

- `"kind": "run"`, first: the process (pid, argv, Python, numpile, start time);
- `"kind": "log"`: every record of every log category (logs.CATEGORIES), at DEBUG whatever
  NUMPILE_LOGS says: category, level, message, thread, time;
- `"kind": "compile"`: one per cache entry compiled, from the cache's listener: the function the
  user compiled and the frame compiled (the function itself, a resume function after a break, a
  callee run from residual code), the entry's number in its frame, backend, the graph as a table
  and its ops, the guards, the graph break (reason, and the user's frames with their source
  lines), and the trace and backend seconds.

[Note: which compile a log line belongs to] Compiles run one at a time (cache.py's lock) and a
compile line is written as each ends, saying how long it ran. A log line belongs to the compile
that next ends on its thread when it was written while that compile ran (report.SLACK before its
timed start still counts: the recompile reason is logged just before); other lines (a backend's
fallback at run time) were written between compiles. report.py sorts them so.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import sys
import threading
import time
from pathlib import Path

from . import cache, logs
from .version import __version__

_recorder: "_TraceHandler | None" = None


def set_trace_dir(directory: str | os.PathLike | None) -> Path | None:
    """Record every compile event of this process (graphs, breaks with the user's source lines,
    guards, recompile reasons, generated code, compile times) into a new file in `directory`, as
    NUMPILE_TRACE_DIR does; `numpile report DIRECTORY` makes a web page of it. None stops
    recording. Returns the file."""
    global _recorder
    if _recorder is not None:
        logs.stop_recording(_recorder)
        cache.remove_listener(_recorder.compiled)
        _recorder.close()
        _recorder = None
    if directory is None:
        return None
    _recorder = _TraceHandler(Path(directory))
    logs.record_everything(_recorder)
    cache.add_listener(_recorder.compiled)
    return _recorder.path


def from_environment() -> None:
    if os.environ.get("NUMPILE_TRACE_DIR"):
        set_trace_dir(os.environ["NUMPILE_TRACE_DIR"])


class _TraceHandler(logging.Handler):
    """Writes the trace lines of this process; a forked child starts a file of its own."""

    def __init__(self, directory: Path):
        super().__init__(logging.DEBUG)
        self.directory = directory
        self.path: Path | None = None
        self._file = None
        self._pid = None
        self._start()   # the run line, now: the file exists from the start

    def _write(self, fields: dict) -> None:
        with self.lock:
            if self._pid != os.getpid():
                self._start()
            self._file.write(json.dumps(fields, default=str) + "\n")
            self._file.flush()

    def _start(self) -> None:
        self._pid = os.getpid()
        self.directory.mkdir(parents=True, exist_ok=True)
        self.path = self.directory / f"numpile-{time.strftime('%Y%m%d-%H%M%S')}-{self._pid}.jsonl"
        self._file = open(self.path, "a", encoding="utf-8")
        self._file.write(json.dumps({"kind": "run", "pid": self._pid, "argv": sys.argv, "time": time.time(),
                                     "python": platform.python_version(), "numpile": __version__}) + "\n")

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._write({"kind": "log", "time": record.created, "thread": record.thread,
                         "category": logs.category_of(record), "level": record.levelname,
                         "message": record.getMessage()})
        except Exception:
            self.handleError(record)

    def compiled(self, cf, event) -> None:
        """The cache's listener: one compile line per entry compiled."""
        entry, brk, root = event.entry, event.entry.graph_break, cf.root
        code = getattr(getattr(root, "__wrapped__", None), "__code__", None)
        self._write({
            "kind": "compile", "time": time.time(), "thread": threading.get_ident(),
            "seconds": entry.compile_seconds, "trace_seconds": event.trace_seconds,
            "backend_seconds": event.backend_seconds,
            "function": root.__qualname__, "function_id": id(root),
            "defined_at": f"{code.co_filename}:{code.co_firstlineno}" if code is not None else None,
            "frame": event.function, "entry": len(cf.entries), "backend": entry.backend, "eager": entry.eager,
            "graph": entry.graph.tabular() if entry.graph is not None else None,
            "ops": [n.target for n in entry.graph.calls] if entry.graph is not None else [],
            "guards": entry.guards.describe(),
            "break": None if brk is None else {
                "reason": brk.reason, "at": _place(brk.loc), "stack": [_place(f) for f in brk.user_stack]},
        })

    def close(self) -> None:
        with self.lock:
            if self._file is not None:
                self._file.close()
        super().close()


def _place(loc) -> dict | None:
    """A user's source place: file, line number, function, and the line's text."""
    if loc is None:
        return None
    return {"file": loc.filename, "line": loc.lineno, "function": loc.function, "source": loc.line}
