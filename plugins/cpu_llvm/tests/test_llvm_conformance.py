"""The shared conformance suite on "llvm": every op, dtype, broadcast, 0-d, empty, non-contiguous
and negative-stride input, NaN and inf, exactly as on "eager"."""

import pytest

from numpile.testing import check_case, conformance_cases
from numpile_llvm.backend import LLVMBackend

BACKEND = LLVMBackend()


def compile_llvm(graph, example_inputs):
    return BACKEND.compile(graph, example_inputs, {})


@pytest.mark.parametrize("case", conformance_cases(), ids=str)
def test_conformance(case):
    check_case(case, compile_llvm)
