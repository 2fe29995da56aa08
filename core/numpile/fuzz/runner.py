"""The fuzzing loop: hypothesis generates programs, `check_program` runs each compiled by the
backend under test against NumPy eager, and a failing program is shrunk by hypothesis and saved
as a regression test.

A budget of wall time does not fit hypothesis's fixed example counts, so the loop runs batches
of up to BATCH examples, each its own hypothesis run with a seed drawn from the run's seed,
until the minutes or the programs are spent. Inside a batch whose budget ran out the test
returns at once (hypothesis then ends the batch in milliseconds), except while a failure is
being shrunk: shrinking always completes, so what is saved is the smallest program.
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

from .. import cache
from . import regressions
from .check import Mismatch, check_program, make_function
from .programs import programs

BATCH = 200


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
    """Raised out of the hypothesis test so that the program it shrank to comes back with it."""

    def __init__(self, source: str, inputs, message: str):
        super().__init__(message)
        self.source, self.inputs, self.message = source, inputs, message


def fuzz(backend: str, *, minutes: float | None = None, examples: int | None = None, seed: int | None = None,
         save_dir: Path = Path("tests/regressions"), log=print) -> Report:
    """Fuzz `backend` (a registered name) until `minutes` of wall time or `examples` programs are
    spent, whichever comes first; saves each shrunk failing program under `save_dir`."""
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
        failing = False

        @hypothesis.seed(batch_seed)
        @settings(max_examples=size, database=None, deadline=None, phases=[Phase.generate, Phase.shrink],
                  suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet, print_blob=False)
        @given(programs())
        def one(program):
            nonlocal failing
            counted = not failing and budget_left()
            if not counted and not failing:
                return
            source, inputs = program
            ops_before = compiled_ops[0]
            try:
                with contextlib.redirect_stdout(io.StringIO()):  # what a backend prints (debug: every graph)
                    check_program(make_function(source), inputs, backend)
            except Mismatch as e:
                failing = True
                raise _Found(source, inputs, str(e)) from e
            finally:
                if counted:
                    report.programs += 1
                    report.ops += compiled_ops[0] - ops_before

        try:
            one()
        except Exception as e:
            found = list(_found_in(e))
            if not found:
                raise
            for f in found:
                path, new = regressions.save(save_dir, backend, f.source, f.inputs, f.message, command)
                report.mismatches[path] = f.message.splitlines()[0]
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


def _found_in(error: BaseException):
    """The _Found failures in what hypothesis raised: one, or a group of distinct ones."""
    if isinstance(error, _Found):
        yield error
    elif isinstance(error, BaseExceptionGroup):
        for e in error.exceptions:
            yield from _found_in(e)
