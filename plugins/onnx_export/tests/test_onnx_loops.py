"""Loops exported as ONNX `Loop`s (numpile_onnx/loops.py): NumPy functions with `for` loops over
ranges compiled on "onnxrt", against NumPy on fresh random inputs, each graph checked to hold its
loops as loop nodes (not unrolled) and its model to pass onnx.checker; a model's size does not
grow with the trip count; what a body cannot express is named."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import numpile
from numpile.testing import assert_same_result
from numpile.testing.loop_programs import (
    jacobi, rebinding, sparse_rows, sparse_rows_args, sum_of_squares, sweep, triangular,
)
from numpile_onnx.backend import OnnxrtBackend
from numpile_onnx.convert import to_model

rng = np.random.default_rng()


@pytest.fixture(autouse=True)
def loops_kept_however_small(monkeypatch):
    """These loops are small: numpile would unroll them (config.loop_unroll_ops)."""
    monkeypatch.setattr(numpile.config, "loop_unroll_ops", 0)


class Recording(OnnxrtBackend):
    """"onnxrt", keeping each graph it compiles and its model."""

    name = "onnxrt-recording"

    def __init__(self):
        self.graphs, self.models = [], []

    def compile(self, graph, example_inputs, options):
        self.graphs.append(graph)
        self.models.append(to_model(graph))
        return super().compile(graph, example_inputs, options)










def nested(A, T):
    for t in range(T):
        for i in range(1, A.shape[0]):
            A[i] = A[i] * 0.5 + A[i - 1] * 0.25
    return A




def column_elimination(A):
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def strided_ints(a):
    for i in range(9, 0, -2):
        a[1:] = a[:-1] * 2 + i
    return a


def float32_steps(x, n):
    for i in range(n):
        x = x * np.float32(0.9) + 1
    return x


def well_conditioned(n):
    return rng.random((n, n)) + n * np.eye(n)


PROGRAMS = [
    (jacobi, lambda: (rng.random(12), rng.random(12), 7)),
    (sweep, lambda: (rng.random((6, 5)),)),
    (sum_of_squares, lambda: (rng.random(9),)),
    (rebinding, lambda: (rng.random(5), 6)),
    (nested, lambda: (rng.random((5, 3)), 4)),
    (triangular, lambda: (rng.random((6, 6)),)),
    (column_elimination, lambda: (well_conditioned(6),)),
    (strided_ints, lambda: (rng.integers(-9, 9, 4),)),
    (float32_steps, lambda: (rng.random(5).astype(np.float32), 5)),
    (sparse_rows, lambda: sparse_rows_args(rng, 9)),   # a range read from the data: a computed trip count
]


def loop_count(model_graph) -> int:
    """Loop nodes in an ONNX graph and in its subgraphs."""
    return sum((n.op_type == "Loop") + sum(loop_count(a.g) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)
               for n in model_graph.node)


def node_count(model_graph) -> int:
    return sum(1 + sum(node_count(a.g) for a in n.attribute if a.type == onnx.AttributeProto.GRAPH)
               for n in model_graph.node)


def copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("fn, make_args", PROGRAMS, ids=[fn.__name__ for fn, _ in PROGRAMS])
def test_loops_against_numpy(fn, make_args):
    backend = Recording()
    compiled = numpile.compile(fn, backend=backend, fullgraph=True)
    for _ in range(3):   # fresh values each call
        args = make_args()
        want = fn(*copies(args))
        got = compiled(*copies(args))
        for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
            assert_same_result(g, w)
    assert backend.graphs and all(g.loops() for g in backend.graphs), "the loops reached the backend unrolled"
    for model in backend.models:
        assert loop_count(model.graph) == len(backend.graphs[0].loops())
        onnx.checker.check_model(model, full_check=True)


def test_model_size_does_not_grow_with_the_trip_count():
    sizes = {}
    for steps in (5, 50):
        backend = Recording()
        A, B = rng.random(12), rng.random(12)
        numpile.compile(jacobi, backend=backend, fullgraph=True)(A, B, steps)
        sizes[steps] = node_count(backend.models[0].graph)
    assert sizes[5] == sizes[50], sizes


def test_symbolic_dims_inside_a_body():
    """Dims left symbolic: shapes and slice bounds in the bodies computed from Shape at run time,
    and the trip count of a range over a dim too: one model for every size."""
    backend = Recording()
    compiled = numpile.compile(sweep, backend=backend, dynamic=True, fullgraph=True)
    for n, m in ((5, 4), (5, 7), (8, 6)):
        A = rng.random((n, m))
        assert_same_result(compiled(A.copy()), sweep(A.copy()))
    assert all(g.loops() for g in backend.graphs) and len(backend.models) == 1


def test_the_exporter_writes_loops_it_is_given(tmp_path):
    """A graph with loop nodes (traced with loop capture; numpile.export itself traces without it)
    through the exporter "onnx": a saved model that onnxruntime runs alone, as the graph runs."""
    from numpile import plugins
    from numpile.dynamic import DynamicInputs
    from numpile.tracer import trace
    args = (well_conditioned(6),)
    graph = trace(column_elimination, copies(args), {}, resumable=False, dynamic=DynamicInputs(loops=True)).graph
    program = plugins.lookup_exporter("onnx").export(graph, list(args), {})
    assert loop_count(program.to_onnx().graph) == 1
    session = ort.InferenceSession(program.save(tmp_path / "elimination.onnx"))
    (got,) = session.run(None, dict(zip(program.input_names, args)))
    assert_same_result(got, graph(*copies(args))[0])


def test_what_a_body_cannot_express_is_named():
    def body_with_slogdet(A, n):
        s = np.zeros(())
        for i in range(n):
            s = s + np.linalg.slogdet(A)[1]
        return s
    with pytest.raises(numpile.BackendCompilerFailed, match=r"(?s)cannot express slogdet"):
        numpile.compile(body_with_slogdet, backend="onnxrt")(well_conditioned(3), 5)


def smoothed(A, B, steps):
    A, B = A.copy(), B.copy()
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A


def test_numpile_export_writes_a_time_loop_as_one_loop():
    rng = np.random.default_rng()
    A, B = rng.random(40), rng.random(40)
    program = numpile.export(smoothed, A, B, 200)
    assert [n.op_type for n in program.to_onnx().graph.node].count("Loop") == 1
    got = program.run(A, B)
    assert_same_result(got[0] if isinstance(got, (tuple, list)) else got, smoothed(A, B, 200), what="smoothed")
