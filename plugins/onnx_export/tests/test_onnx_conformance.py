"""The shared conformance suite through ONNX: every case whose op exports is checked by
onnx.checker (full check) and strict shape inference, run in onnxruntime against NumPy, and run
in onnx.reference.ReferenceEvaluator against onnxruntime. A case whose op or form the exporter
declares unsupported (an ExportError naming it) is skipped with that reason, never failed."""

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from numpile.testing import assert_same_result, check_case, conformance_cases
from numpile_onnx.backend import Runner, session
from numpile_onnx.convert import ExportError, to_model


def compile_checked(graph, example_inputs):
    try:
        model = to_model(graph)
    except ExportError as e:
        pytest.skip(f"declared unsupported: {e.reason}")
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    runner = Runner(session(model), graph)
    reference = ReferenceEvaluator(model)

    def run(*inputs):
        got = runner(*inputs)
        feed = dict(zip(runner.names, (np.asarray(x, dtype=dt, order="C") for x, dt in zip(inputs, runner.dtypes))))
        for i, (ref, ort) in enumerate(zip(reference.run(None, feed), got)):
            assert_same_result(np.asarray(ref), np.asarray(ort), what=f"ReferenceEvaluator output {i}")
        return got
    return run


@pytest.mark.parametrize("case", conformance_cases(), ids=str)
def test_conformance(case):
    check_case(case, compile_checked)
