"""The shared conformance suite on "triton" (through Triton's interpreter without a GPU): every
op, dtype, broadcast, 0-d, empty, non-contiguous and negative-stride input, NaN and inf, exactly
as on "eager". On a GPU the suite runs again on CuPy arrays of the same layouts (strides, offsets
and 0-strides kept), the results read back against NumPy's."""

import numpy as np
import pytest

from numpile.testing import assert_same_result, check_case, conformance_cases


def compile_triton(graph, example_inputs):
    from numpile_triton.backend import TritonBackend
    return TritonBackend().compile(graph, example_inputs, {})


@pytest.mark.parametrize("case", conformance_cases(), ids=str)
def test_conformance(case):
    check_case(case, compile_triton)


def device_twin(cupy, x):
    """A CuPy array of x's values with x's strides (negative and 0 ones too) into a buffer of its own."""
    if not isinstance(x, np.ndarray) or x.ndim == 0 or x.size == 0:
        return cupy.asarray(x) if isinstance(x, np.ndarray) else x
    low = sum(min(0, (n - 1) * s) for n, s in zip(x.shape, x.strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(x.shape, x.strides)) + x.itemsize
    host = np.zeros(high - low, np.uint8)
    np.ndarray(x.shape, x.dtype, buffer=host, offset=-low, strides=x.strides)[...] = x
    memory = cupy.asarray(host)
    return cupy.ndarray(x.shape, x.dtype, memory.data + (-low), x.strides)


def compiler_on_cupy(cupy):
    """A compile function for check_case: the graph compiled for CuPy arguments, called with NumPy ones."""
    return lambda graph, example_inputs: compile_triton_on_cupy(cupy, graph, example_inputs)


def compile_triton_on_cupy(cupy, graph, example_inputs):
    """The graph compiled for CuPy arguments, called with NumPy ones: each argument goes up as its
    device twin, each result comes back to the host, a NumPy scalar where the graph has one (CuPy
    gives 0-d arrays for them, as its own reductions do). A case CuPy eager (the graph run op by op
    on the twins) cannot run, or runs to other values than NumPy's (eigenvectors' signs, scatters of
    repeated indices, float16 sums: numpile calls CuPy's function there), is skipped, saying why."""
    twins = [device_twin(cupy, x) for x in example_inputs]
    eager = graph.compile_python()
    try:
        cupy_results = eager(*twins)
    except Exception as e:   # noqa: BLE001  CuPy lacks the function or an argument of it
        pytest.skip(f"CuPy eager cannot run it: {type(e).__name__}: {e}")
    for got, want in zip(cupy_results, eager(*[np.copy(x) if isinstance(x, np.ndarray) else x for x in example_inputs])):
        if not _close(cupy.asnumpy(got), want):
            pytest.skip("CuPy eager's own function gives other values than NumPy's here")
    compiled = compile_triton(graph, twins)
    scalars = [n.meta.get("scalar", False) for n in graph.outputs]

    def host(value, scalar):
        if not isinstance(value, cupy.ndarray):
            return value
        return cupy.asnumpy(value)[()] if scalar else cupy.asnumpy(value)

    def call(*args):
        return tuple(map(host, compiled(*[device_twin(cupy, x) for x in args]), scalars))
    return call


def _close(got, want) -> bool:
    """Whether CuPy's values are NumPy's, as check_case compares them (its dtype put right first, as
    numpile does with an extern's result)."""
    want = np.asarray(want)
    try:
        assert_same_result(np.asarray(got).astype(want.dtype), want)
    except (AssertionError, TypeError, ValueError):
        return False
    return True


def test_device_twins_keep_values_and_strides(cupy):
    x = np.arange(24.0).reshape(4, 6)
    for view in (x, x.T, x[::-1, ::2], x[1:, 3:], np.broadcast_to(x[:1], (4, 6)), x[::-2, ::-1].T):
        twin = device_twin(cupy, view)
        assert twin.strides == view.strides
        np.testing.assert_array_equal(cupy.asnumpy(twin), view)


@pytest.mark.parametrize("case", conformance_cases(), ids=str)
def test_conformance_on_cupy_arrays(case, cupy):
    check_case(case, compiler_on_cupy(cupy))
