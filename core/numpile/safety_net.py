"""The safety net: a compiled entry that runs slower than its function as Python runs as Python.

A user who wraps a working function and sees it run slower drops the tool, whatever the cause (a
graph break per element, a kernel worse than NumPy's). So after an entry of a function the user
compiled has run `WARMUP` times, the calls that hit it take turns: one runs the entry, the next
the function as plain Python (NumPy is the reference, so either gives the user the same result
and the same updates), each timed with its resume functions and callees (a call that compiled
something is no sample). Once the medians differ clearly (`VERDICTS`; against the compiled
entry only after `FALL_BACK_PAIRS`), or after `MAX_PAIRS`
pairs, the entry keeps its verdict: more than
`config.safety_net_margin` slower than Python, it runs as Python from then on (its guards still
choose it), said once under the `perf` log (the report page shows it) and kept on the entry
(`CacheEntry.fallback`, which `numpile.explain` of a compiled function reports). Off with
`numpile.config.safety_net = False`: what the benchmarks use to time the compiler itself.
"""

from __future__ import annotations

import statistics
import time

from . import config, logs

WARMUP = 2      # calls of an entry before its trial: first runs fill caches, check outputs
# (pairs of timed calls, how far apart the medians must be for a verdict): far apart soon, any
# distance after the most pairs (then the margin decides)
VERDICTS = ((1, 1.0), (3, 0.3))
MAX_PAIRS = 9
# pairs before a verdict against the compiled entry, which lasts: the median of three, so that one
# call a busy machine slowed does not decide
FALL_BACK_PAIRS = 3


class Trial:
    """The timed calls of one entry on trial."""

    __slots__ = ("seen", "compiled", "python")

    def __init__(self):
        self.seen, self.compiled, self.python = 0, [], []

    def python_next(self) -> bool:
        """Whether the next call runs as Python: after the warm-up, every other call."""
        return self.seen >= WARMUP and (self.seen - WARMUP) % 2 == 0

    def verdict(self) -> bool | None:
        """True: keep the compiled entry; False: run as Python; None: not yet decided."""
        pairs = min(len(self.compiled), len(self.python))
        if not pairs:
            return None
        ratio = statistics.median(self.compiled) / max(statistics.median(self.python), 1e-9)
        apart = max(ratio, 1 / max(ratio, 1e-9)) - 1
        if pairs < MAX_PAIRS and not any(pairs >= n and apart >= far for n, far in VERDICTS):
            return None
        keep = ratio <= 1 + config.safety_net_margin
        return keep if keep or pairs >= FALL_BACK_PAIRS else None


def installed(cf, entry) -> None:
    """A new entry of `cf` (the function the user compiled, or one of its resume functions and
    callees): on trial where it is one of the function the user compiled that runs compiled code
    (an entry that runs eagerly is Python already). A function that draws random numbers is never
    on trial: run as Python it would draw NumPy's stream, not numpile's, and its results would
    change with the verdict."""
    root = cf.root
    if entry.graph is not None and _draws(entry.graph):
        root.draws = True
        root.trials.clear()
    elif config.safety_net and cf is root and not entry.eager and not root.draws:
        root.trials[id(entry)] = Trial()


def _draws(graph) -> bool:
    return any(n.target == "random_bits" or any(map(_draws, n.bodies)) for n in graph.calls)


def call(cf, args, kwargs):
    """A call of `cf`, a compiled function with entries on trial (cache.CompiledFunction.__call__):
    the entry whose guards pass runs, or on its turn the function as Python, timed."""
    entry = cf.lookup(args, kwargs)
    trial = cf.trials.get(id(entry)) if entry is not None else None
    if trial is None:
        return cf.call_entries(args, kwargs)
    python = trial.python_next()
    trial.seen += 1
    compiles, start = cf.compiles(), time.perf_counter()
    result = cf.python_fn(*args, **kwargs) if python else cf.finish(entry.run(*args, **kwargs))
    seconds = time.perf_counter() - start
    if trial.seen > WARMUP and cf.compiles() == compiles:   # a call that compiled (a resume function) is no sample
        (trial.python if python else trial.compiled).append(seconds)
    keep = trial.verdict()
    if keep is not None and cf.trials.pop(id(entry), None) is not None and not keep:
        fall_back(cf, entry, trial)
    return result


def fall_back(cf, entry, trial: Trial) -> None:
    """From now on the entry runs its function as Python; said once."""
    compiled, python = statistics.median(trial.compiled), statistics.median(trial.python)
    entry.fallback = (f"the safety net runs it as Python: compiled {_us(compiled)} against Python's "
                      f"{_us(python)} a call (median of {len(trial.compiled)} each)")
    cf.run_as_python(entry)
    logs.get("perf").debug("%s: %s (numpile.config.safety_net)", cf.__qualname__, entry.fallback)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"
