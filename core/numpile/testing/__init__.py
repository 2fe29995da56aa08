"""numpile's conformance kit: what a backend runs to show it computes what NumPy computes.

One line checks a backend on everything (see kit.py):

    numpile.testing.check_backend(MyBackend())     # raises AssertionError with a per-op report

or per case, one pytest test each (a failure names its case):

    import pytest
    from numpile.testing import check_case, conformance_cases

    @pytest.mark.parametrize("case", conformance_cases(), ids=str)
    def test_conformance(case):
        check_case(case, lambda graph, example_inputs: my_backend.compile(graph, example_inputs, {}))

A case names an op, its arguments as a NumPy user writes them (array arguments given as `Arr`
specs, made fresh from the case's own seed) and keyword arguments. `check_case` normalizes the
call to the op's canonical layout, builds the one-op Graph, compiles it with
`compile_fn(graph, example_inputs)` (a callable that takes the graph's inputs positionally and
returns the tuple of its outputs), runs it, and compares the result with NumPy's on the same
inputs: the type (NumPy scalar or ndarray), dtype and shape exactly, the values exactly for
integers and booleans and NaN-aware within a tight tolerance for floats. It also checks that the
op's meta rule predicted that result and that the inputs are unchanged.

`assert_same` compares what whole programs return (containers of arrays, NumPy and Python
scalars): the tests of the tracer, `numpile.fuzz` and the kit's random programs check compiled
programs with it.

    specs.py    Arr and Case: what a case is
    cases.py    the cases, one builder per family of ops
    compare.py  check_case, assert_same_result, assert_same
    kit.py      check_backend / run_kit: every case and random programs, a per-op report
"""

from .cases import conformance_cases
from .compare import RTOL, assert_same, assert_same_result, check_case, one_op_graph
from .kit import Failure, KitReport, check_backend, run_kit
from .specs import DTYPES, Arr, Case, metas_of

__all__ = ["Arr", "Case", "DTYPES", "RTOL", "check_case", "conformance_cases", "one_op_graph", "metas_of",
           "assert_same_result", "assert_same", "check_backend", "run_kit", "KitReport", "Failure"]
