"""The fuzzing loop: hypothesis generates programs, `check_program` runs each compiled by the
backend under test against NumPy eager, and a failing program is shrunk by hypothesis and saved
as a regression test.

A budget of wall time does not fit hypothesis's fixed example counts, so the loop runs batches
of up to BATCH examples, each its own hypothesis run with a seed drawn from the run's seed,
until the minutes or the programs are spent. A batch ends at its first failure, which hypothesis
shrinks for at most SHRINK_SECONDS; the shortest failing program seen is the one saved. Past
either budget the test returns at once, which hypothesis takes as passing, so the batch or the
shrinking ends within milliseconds (and hypothesis may then call the failure flaky: expected).
"""

from __future__ import annotations

import contextlib
import io
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis.errors import Flaky

from .. import cache
from . import regressions
from .check import Mismatch, check_program, make_function
from .programs import programs

BATCH = 200
SHRINK_SECONDS = 60   # per failure: an llvm check compiles for a second or more


@dataclass
class Report:
    """What a run did: programs checked (not counting hypothesis's shrinking runs), graph ops
    compiled for them, and each mismatch found as its regression file and first line."""

    backend: str
    seed: int
    programs: int = 0
    ops: int = 0
    mismatches: dict[Path, str] = field(default_factory=dict)
    interrupted: bool = False

    def summary(self) -> str:
        return f"{self.programs} programs, {self.ops} ops, {len(self.mismatches)} mismatches"


class _Found(Exception):
    """A mismatch, raised to hypothesis (which then shrinks the program)."""


def fuzz(backend: str, *, minutes: float | None = None, examples: int | None = None, seed: int | None = None,
         shrink_seconds: float = SHRINK_SECONDS, save_dir: Path = Path("tests/regressions"), log=print) -> Report:
    """Fuzz `backend` (a registered name) until `minutes` of wall time or `examples` programs are
    spent, whichever comes first; saves each failing program, shrunk for at most `shrink_seconds`,
    under `save_dir`."""
    report = Report(backend, random.randrange(2**32) if seed is None else seed)
    stop_at = time.monotonic() + minutes * 60 if minutes is not None else math.inf
    limit = examples if examples is not None else math.inf
    command = f"python -m numpile.fuzz --backend {backend} --seed {report.seed}"
    compiled_ops = [0]

    def count_ops(compiled_function, event):
        if event.entry.graph is not None:
            compiled_ops[0] += len(event.entry.graph.calls)

    def budget_left() -> bool:
        return report.programs < limit and time.monotonic() < stop_at

    def batch(batch_seed: int, size: int) -> None:
        failure = None          # (source, inputs, message) of the shortest failing program so far
        shrink_until = math.inf

        @hypothesis.seed(batch_seed)
        @settings(max_examples=size, database=None, deadline=None, phases=[Phase.generate, Phase.shrink],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False,
                  report_multiple_bugs=False)
        @given(programs())
        def one(program):
            nonlocal failure, shrink_until
            if failure is None and not budget_left() or failure is not None and time.monotonic() > shrink_until:
                return  # hypothesis takes it as passing: the batch, or the shrinking, ends in milliseconds
            counted = failure is None
            source, inputs = program
            ops_before = compiled_ops[0]
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # what a backend prints (debug: every graph)
                    check_program(make_function(source), inputs, backend)
            except Mismatch as e:
                message = str(e)
            else:
                return
            finally:
                if counted:
                    report.programs += 1
                    report.ops += compiled_ops[0] - ops_before
            if failure is None:
                shrink_until = time.monotonic() + shrink_seconds
            if failure is None or len(source) <= len(failure[0]):
                failure = source, inputs, message
            raise _Found(message)  # outside the except: every mismatch is one failure to hypothesis

        try:
            one()
        except Exception as e:
            if failure is None or any(not isinstance(x, (_Found, Flaky)) for x in _leaves(e)):
                raise
            path, new = regressions.save(save_dir, backend, *failure, command)
            report.mismatches[path] = failure[2].splitlines()[0]
            log(f"mismatch: {report.mismatches[path]}\n  {'saved as' if new else 'saved before as'} {path}")

    budget = " and ".join(([f"{minutes:g} minutes"] if minutes is not None else [])
                          + ([f"{examples} programs"] if examples is not None else []))
    log(f"fuzzing backend {backend!r} for {budget or 'ever'}, seed {report.seed}; failures are saved under {save_dir}")
    seeds = random.Random(report.seed)
    start = time.monotonic()
    cache.add_listener(count_ops)
    try:
        while budget_left():
            batch(seeds.getrandbits(64), int(min(BATCH, limit - report.programs)))
            log(f"[{time.monotonic() - start:.0f} s] {report.summary()}")
    except KeyboardInterrupt:
        report.interrupted = True
    finally:
        cache.remove_listener(count_ops)
    return report


def _leaves(error: BaseException):
    """The exceptions in what hypothesis raised: one, or those of a group."""
    if isinstance(error, BaseExceptionGroup):
        for e in error.exceptions:
            yield from _leaves(e)
    else:
        yield error
