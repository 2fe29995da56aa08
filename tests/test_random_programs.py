"""Random programs: numpile.fuzz writes small Python functions of NumPy code with branches (on
array data and on Python values), loops, early returns, in-place updates, views and graph breaks;
numpile's compiled function must do exactly what Python does over six calls (numpile.fuzz.check).

150 programs per run; NUMPILE_RANDOM_EXAMPLES=600 (and --hypothesis-seed=N) runs more.
NUMPILE_RANDOM_BACKEND=llvm compiles with another backend. `python -m numpile.fuzz` runs the same
programs for a budget of minutes and saves each failure as a test file.
"""

from __future__ import annotations

import os
import re

from hypothesis import HealthCheck, event, given, note, settings

from numpile.fuzz.check import check_program, make_function
from numpile.fuzz.programs import programs


@settings(max_examples=int(os.environ.get("NUMPILE_RANDOM_EXAMPLES", 150)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(programs())
def test_random_program_compiled_equals_eager(program):
    source, inputs = program
    note(f"program:\n{source}{inputs}")
    compiled = check_program(make_function(source), inputs, os.environ.get("NUMPILE_RANDOM_BACKEND", "eager"))

    entries = compiled.all_entries()
    event("graphs: " + ("none" if not any(e.graph is not None for e in entries) else "some"))
    event("breaks: " + ("none" if not any(e.graph_break is not None for e in entries) else "some"))
    for e in entries:
        if e.eager:
            event("eager: " + re.sub(r"\d+", "N", e.graph_break.reason)[:90])
