"""The shared conformance suite on "triton" (through Triton's interpreter without a GPU): every
op, dtype, broadcast, 0-d, empty, non-contiguous and negative-stride input, NaN and inf, exactly
as on "eager"."""

import pytest

from numpile.testing import check_case, conformance_cases


def compile_triton(graph, example_inputs):
    from numpile_triton.backend import TritonBackend
    return TritonBackend().compile(graph, example_inputs, {})


@pytest.mark.parametrize("case", conformance_cases(), ids=str)
def test_conformance(case):
    check_case(case, compile_triton)
