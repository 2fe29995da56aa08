"""The conformance suite (numpile.testing) against the two NumPy executors of a Graph:
the interpreter (`Graph.__call__`, through the ops' impl) and the generated Python code."""

import pytest

from numpile.testing import check_case, conformance_cases

COMPILERS = {
    "interpreter": lambda graph, example_inputs: graph,
    "python_code": lambda graph, example_inputs: graph.compile_python(),
}


@pytest.mark.parametrize("compiler", COMPILERS)
@pytest.mark.parametrize("case", conformance_cases(), ids=str)
def test_conformance(case, compiler):
    check_case(case, COMPILERS[compiler])
