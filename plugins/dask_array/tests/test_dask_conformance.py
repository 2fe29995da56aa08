"""The shared conformance suite on "dask": each op's one-op graph over Dask arrays of uneven
chunks, computed on the threaded scheduler, equals NumPy on the whole arrays. A case that
dask.array itself does not run (np.reshape splitting dims unevenly, some fancy indexing, ...)
is skipped when "dask" raises for it too; a result dask.array would give in another shape
than NumPy's is an error (NotImplementedError), never a wrong value. The chunk kernels
use the inner backend "eager" here (the suite checks the partition into Dask operations, and
"llvm" runs the same suite on its own); tests/test_dask.py runs "llvm" inside chunks."""

import dask
import numpy as np
import pytest

from numpile import ops
from numpile.testing import check_case, conformance_cases
from numpile_dask.backend import DaskBackend

from helpers import chunked, computed

BACKEND = DaskBackend()


class Raised(Exception):
    """The backend raised compiling or running the case (not one of check_case's comparisons)."""


def compile_dask(graph, example_inputs):
    try:
        program = BACKEND.compile(graph, [chunked(x) for x in example_inputs], {"inner": "eager"})
    except Exception as e:
        raise Raised(e) from e

    def run(*inputs):
        try:
            return computed(program(*[chunked(x) for x in inputs]), graph)
        except Exception as e:
            raise Raised(e) from e
    return run


@pytest.mark.parametrize("case", conformance_cases(), ids=str)
def test_conformance(case):
    try:
        check_case(case, compile_dask)
    except Raised as raised:
        e = raised.args[0]
        if isinstance(e, NotImplementedError) and "numpile-dask" in str(e):
            pytest.skip(str(e)[:120])   # a clear error: what numpile-dask does not run yet
        if not _dask_cannot(case):
            raise
        pytest.skip(f"dask.array does not run it either: {type(e).__name__}: {str(e)[:80]}")


def _dask_cannot(case) -> bool:
    """dask.array raises for this call, or gives a result of another shape than NumPy's."""
    op = ops.get(case.op)
    inputs = case.inputs()
    args, kwargs = op.normalize(*case.bind([chunked(x) for x in inputs]))
    try:
        got = dask.compute(op.impl(*args, **kwargs), scheduler="sync")[0]
    except Exception:
        return True
    want = op.impl(*op.normalize(*case.bind(inputs))[0], **op.normalize(*case.bind(inputs))[1])
    shapes = lambda v: [np.shape(r) for r in v] if isinstance(v, tuple) else np.shape(v)  # noqa: E731
    return shapes(got) != shapes(want)
