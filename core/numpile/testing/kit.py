"""The conformance kit: a backend checked against NumPy in one call, op by op and on random programs.

    import numpile.testing

    def test_numpile_conformance():
        numpile.testing.check_backend(MyBackend())    # or a registered name: check_backend("mine")

or from a shell, `python -m numpile.testing --backend mine`. Two parts:

- every conformance case (`conformance_cases()`: each registry op as a one-op graph, over dtypes,
  broadcasting, 0-d, empty, non-contiguous inputs, NaN and inf), compiled by the backend directly;
- random multi-op programs from numpile's program generator (needs hypothesis and scipy:
  `pip install 'numpile[testing]'`), compiled through `numpile.compile(fn, backend=...)` as a
  user's code is: graphs of many ops, which a backend that fuses ops must get right together,
  with graph breaks, in-place updates, views and recompiles around them. Each program runs six
  calls against NumPy eager (see numpile.fuzz.check).

The report counts, per op, the one-op cases passed, failed and declared unsupported (ops outside
`Backend.supported_ops`, never run), and the programs whose compiled graphs used the op that
passed and failed; then each failure with its message (and a failing program's source).
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from dataclasses import dataclass, field

from .. import cache, plugins
from ..backend import Backend
from .cases import conformance_cases
from .compare import check_case

PROGRAMS = 40          # random programs per run, by default
SHOWN_FAILURES = 10    # failures whose messages the report prints in full


@dataclass(frozen=True)
class Failure:
    """One failed case or program: what it was, what differed, and a program's source."""

    what: str
    message: str
    source: str = ""

    def __str__(self) -> str:
        text = f"{self.what}: {self.message}"
        return text + ("\n  program:\n" + "".join(f"    {line}\n" for line in self.source.splitlines())
                       if self.source else "")


@dataclass
class KitReport:
    """What a run of the kit found. Counters are keyed by op name."""

    backend: str
    cases_passed: Counter = field(default_factory=Counter)
    cases_failed: Counter = field(default_factory=Counter)
    cases_unsupported: Counter = field(default_factory=Counter)
    programs_passed: Counter = field(default_factory=Counter)  # programs whose compiled graphs used the op
    programs_failed: Counter = field(default_factory=Counter)
    programs: int = 0
    programs_failing: int = 0
    failures: list[Failure] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def ops(self) -> list[str]:
        counters = (self.cases_passed, self.cases_failed, self.cases_unsupported,
                    self.programs_passed, self.programs_failed)
        return sorted(set().union(*counters))

    def table(self) -> str:
        """One row per op: one-op cases passed / failed / declared unsupported, programs passed / failed."""
        head = ("op", "cases passed", "failed", "unsupported", "programs passed", "failed")
        rows = [head] + [(op, *(str(c[op]) for c in (self.cases_passed, self.cases_failed, self.cases_unsupported,
                                                     self.programs_passed, self.programs_failed)))
                         for op in self.ops()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                         for r in rows)

    def summary(self) -> str:
        cases = (f"{sum(self.cases_passed.values())} cases passed, {sum(self.cases_failed.values())} failed, "
                 f"{sum(self.cases_unsupported.values())} declared unsupported")
        return (f"backend {self.backend}: {cases}; {self.programs - self.programs_failing} of {self.programs} "
                f"random programs passed")

    def __str__(self) -> str:
        parts = [self.table(), self.summary()]
        if self.failures:
            parts.append("failures:")
            parts += [str(f) for f in self.failures[:SHOWN_FAILURES]]
            if len(self.failures) > SHOWN_FAILURES:
                parts.append(f"... and {len(self.failures) - SHOWN_FAILURES} more")
        return "\n".join(parts)


def check_backend(backend, *, programs: int = PROGRAMS, seed: int = 0, ops=None) -> KitReport:
    """Run the kit (`run_kit`) and raise AssertionError with the report when anything failed;
    returns the report when all passed."""
    report = run_kit(backend, programs=programs, seed=seed, ops=ops)
    if not report.ok:
        raise AssertionError(f"numpile conformance kit:\n{report}")
    return report


def run_kit(backend, *, programs: int = PROGRAMS, seed: int = 0, ops=None) -> KitReport:
    """Check `backend` (a registered name, a `numpile.Backend`, or a plain callable
    `backend(graph, example_inputs)`) on every conformance case of the ops in `ops` (all when
    None) and on `programs` random programs drawn from `seed` (0: no programs, no hypothesis)."""
    resolved = plugins.resolve_backend(backend)
    report = KitReport(f"{resolved.name!r} ({plugins.distribution_of(resolved)})")
    _run_cases(resolved, report, ops)
    if programs:
        _run_programs(resolved, report, programs, seed)
    return report


def _run_cases(backend: Backend, report: KitReport, names) -> None:
    def compile_fn(graph, example_inputs):
        return backend.compile(graph, example_inputs, {"mode": None})

    for case in conformance_cases(names):
        if backend.supported_ops is not None and case.op not in backend.supported_ops:
            report.cases_unsupported[case.op] += 1
            continue
        try:
            check_case(case, compile_fn)
        except Exception as e:  # an AssertionError says what differs; anything else is the backend's
            report.cases_failed[case.op] += 1
            message = str(e) if isinstance(e, AssertionError) else f"raised {type(e).__name__}: {e}"
            report.failures.append(Failure(f"case {case}", message.removeprefix(f"{case}: ")))
        else:
            report.cases_passed[case.op] += 1


def _run_programs(backend: Backend, report: KitReport, count: int, seed: int) -> None:
    try:
        import hypothesis
        import scipy.special  # noqa: F401  (the programs call it)
    except ImportError as e:
        raise ImportError(f"the kit's random programs need {e.name}: pip install 'numpile[testing]' "
                          f"(or programs=0 for the one-op cases alone)") from e
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings

    from ..fuzz.check import Mismatch, check_program, make_function
    from ..fuzz.programs import programs as program_strategy

    used: set[str] = set()  # the ops of the graphs the backend compiled for the current program

    def record(compiled_function, event) -> None:
        graph = event.entry.graph
        if graph is not None and event.entry.backend == backend.name and not backend.unsupported_ops(graph):
            used.update(n.target for n in graph.calls)

    @hypothesis.seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    @given(program_strategy())
    def one(program) -> None:
        source, inputs = program
        used.clear()
        report.programs += 1
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # what a backend prints
                check_program(make_function(source), inputs, backend)
        except Mismatch as e:
            report.programs_failing += 1
            report.programs_failed.update(used)
            report.failures.append(Failure(f"program {report.programs}", str(e).splitlines()[0], source))
        else:
            report.programs_passed.update(used)

    cache.add_listener(record)
    try:
        one()
    finally:
        cache.remove_listener(record)
