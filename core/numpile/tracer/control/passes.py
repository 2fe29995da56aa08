"""A loop traced pass after pass: each pass finds what the body changes that the loop node must
carry (`Unstable` says what), the next carries it, until a pass settles; or the loop is given up
(unrolled, or peeled: one more iteration unrolled before it is tried again). For loops (fors.py)
and while loops (whiles.py) alike."""

from __future__ import annotations

from ... import logs
from ...exc import Unsupported
from .state import PEELS


class Unstable(Exception):
    """A value the body changes in a way a loop node cannot carry; `peel` if unrolling one more
    iteration may settle it. `rebound` (locals rebound to arrays), `stale` (arrays the body
    updates whose views made before the loop it reads), `period` (iterations after which the
    arrays that locals swap are back where they were), `appends` (lists appended to:
    appends.py) and `late` (arrays first read in the body, and updated there: an attribute's, a
    global's) are for the next pass to carry."""

    def __init__(self, reason: str, peel: bool, rebound: dict | None = None, stale: set = frozenset(),
                 period: int = 1, appends: dict | None = None, late: frozenset = frozenset()):
        super().__init__(reason)
        self.reason, self.peel, self.rebound, self.stale, self.period = reason, peel, rebound or {}, stale, period
        self.appends, self.late = appends or {}, late


def trace_passes(tx, key, state, make_body):
    """The body `make_body(rebound, stale, period).trace()` gives once what must be carried has
    settled (a pass finds it; the next carries it, the lists appended to as the body's `appends`),
    or None (given up; the trace is as it was)."""
    rebound, stale, period, appends, late = {}, set(), 1, {}, set()
    for _ in range(4):
        try:
            body = make_body(rebound, stale, period)
            body.appends = dict(appends)
            return body.trace()
        except Unstable as e:
            state.restore()
            if not e.rebound and not e.stale and e.period == period and not set(e.appends) - set(appends) \
                    and not e.late - late:
                return give_up(tx, key, e.reason, peel=e.peel) or None
            appends.update(e.appends)
            late |= e.late
            rebound.update(e.rebound)
            stale |= e.stale
            period = e.period
        except Unsupported as e:
            state.restore()
            return give_up(tx, key, e.reason, peel=False) or None
    state.restore()
    return give_up(tx, key, "its values do not settle", peel=False) or None


def give_up(tx, key, reason: str, peel: bool) -> bool:
    if not peel:
        tx.output.control.attempts[key] = PEELS + 1
    logs.get("graph").debug("%s: the loop %s: %s", tx.loc, "is peeled (its first iteration unrolled)" if peel
                            else "is unrolled", reason)
    return False
