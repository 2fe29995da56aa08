"""np.roll, np.diff, np.indices and np.fill_diagonal as programs call them: captured in one graph
with no break, equal to NumPy on eager and llvm on fresh random inputs (fill_diagonal's update
of its argument included); a stencil of rolls, a diff and the grids of np.indices are one
kernel each; the forms not captured break with the reason."""

import numpy as np
import pytest

import numpile
from conftest import rand, run_like_numpy
from numpile import lowering
from numpile.lowering import Kernel


def laplacian(Z):
    return np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0) + np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z


def rolls(x):
    return np.roll(x, (1, -7), (0, 1)) + np.roll(x, 13) * np.roll(x[::-1], -2, axis=-1)


def diffs(x, y):
    return np.diff(x, axis=0).sum() + np.diff(y, n=2, prepend=0.5, append=y[:, -1:]) * np.diff(x > 0, axis=1)


def int_diffs(x):
    return np.diff(x, 3), np.diff(x.T.astype(np.uint8), axis=0)   # integers wrap as NumPy's do


def grids(x):
    i, j = np.indices(x.shape)
    r, c = np.indices(x.shape, sparse=True)
    return x * i - j + r * c, np.indices((2, 3, 4), dtype=np.float32)


def fill_diagonal(x, v):
    np.fill_diagonal(x, 0.0)
    y = x[1:, 1:]
    np.fill_diagonal(y, v, wrap=True)   # through a view: x sees it
    return x.sum(axis=0)


PROGRAMS = {
    "laplacian": (laplacian, lambda rng: (rand(rng, (9, 7)),)),
    "rolls": (rolls, lambda rng: (rand(rng, (5, 6), np.int32),)),
    "diffs": (diffs, lambda rng: (rand(rng, (4, 8)), rand(rng, (4, 7)))),
    "int_diffs": (int_diffs, lambda rng: (rand(rng, (3, 8), np.int16),)),
    "grids": (grids, lambda rng: (rand(rng, (3, 5)),)),
    "fill_diagonal": (fill_diagonal, lambda rng: (rand(rng, (9, 3)), rand(rng, (2,)))),
}


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_program(rng, name, backend):
    fn, make_args = PROGRAMS[name]
    explained = numpile.explain(fn)(*make_args(rng))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
    run_like_numpy(fn, backend, lambda call: make_args(rng))


class Recorder:
    """A backend that keeps the Program each graph lowers to, and runs it with the reference renderer."""

    def __init__(self):
        self.programs = []

    def __call__(self, graph, example_inputs):
        self.programs.append(lowering.schedule(graph))
        return lowering.compile_program(self.programs[-1])


@pytest.mark.parametrize("fn, shapes", [(laplacian, [(9, 7)]), (lambda x: np.diff(x, 2, axis=0), [(5, 4)]),
                                        (lambda x: np.indices(x.shape) * x, [(3, 4)]),
                                        (lambda x: np.roll(x, (1, -7), (0, 1)) * np.roll(x[::-1], 15, axis=-1), [(5, 6)])])
def test_each_is_one_kernel_and_no_numpy_call(rng, fn, shapes):
    # (a roll of the flattened array, np.roll(x, 13) of a 2-d x, stays a NumPy call)
    recorder = Recorder()
    numpile.compile(fn, backend=recorder, fullgraph=True)(*(rand(rng, s) for s in shapes))
    [program] = recorder.programs
    assert len(program.steps) == 1 and isinstance(program.steps[0], Kernel), str(program)


def test_fill_diagonal_stores_into_its_argument(rng):
    recorder = Recorder()
    x = rand(rng, (4, 4))
    numpile.compile(lambda x: np.fill_diagonal(x, 2.0), backend=recorder)(x)
    assert np.array_equal(np.diag(x), [2.0] * 4)
    [program] = recorder.programs
    assert all(isinstance(step, Kernel) for step in program.steps), str(program)


@pytest.mark.parametrize("fn, reason", [
    (lambda x: np.diff(x, n=0), "diff: n=0 (NumPy returns a itself"),
    (lambda x: np.roll(x, 1.5), "roll()"),
])
def test_forms_not_captured_break_with_the_reason(rng, fn, reason):
    x = rand(rng, (3, 4))
    explained = numpile.explain(fn)(x)
    assert explained.graph_break_count >= 1
    assert any(reason in str(b.reason) for b in explained.break_reasons), explained.break_reasons
    run_like_numpy(fn, "eager", lambda call: (rand(rng, (3, 4)),), graphs=None)
