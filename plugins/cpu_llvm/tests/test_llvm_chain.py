"""Runs of small kernels called as one native function (chain.py), and small reads of an array
stored before the array is updated in place (lowering's in_place.early_reads): the results are
NumPy's, the arguments end as NumPy leaves them, and a kernel that stops the chain (an input
of other strides, an index out of bounds) is taken up where it stopped."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.testing import assert_same
from numpile_llvm.kernels import chain
from test_llvm import programs

rng = np.random.default_rng()


def upwind(q, cfl, steps):
    for _ in range(steps):
        q[0] = q[-2]
        q[-1] = q[1]
        q[1:-1] -= cfl * (q[1:-1] - q[:-2])
    return q.sum()


def lotka_volterra(state, dt, steps):
    traj = np.empty((steps, 2))
    for t in range(steps):
        prey, pred = state[0], state[1]
        state[0] += dt * (1.1 * prey - 0.4 * prey * pred)
        state[1] += dt * (0.1 * prey * pred - 0.4 * pred)
        traj[t] = state
    return traj


def gather_then_scale(x, idx):
    y = x * 2
    y[0] = y[-1]
    return y[idx] + 1


def _run_like_numpy(fn, *args):
    compile_llvm, made = programs()
    compiled = numpile.compile(fn, backend=compile_llvm)
    mine = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    theirs = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    assert_same(compiled(*mine), fn(*theirs))
    for got, want in zip(mine, theirs):
        if isinstance(want, np.ndarray):
            assert_same(got, want)
    return compiled, made


def test_runs_of_kernels_are_one_native_call():
    _, made = _run_like_numpy(upwind, rng.standard_normal(12), 0.5, 4)
    (program,) = made
    assert "status = chain" in program.source and program.source.count("status = chain") == 1, program.source
    assert not program.fallbacks


def test_reads_before_an_update_let_it_store_in_place():
    _, made = _run_like_numpy(lotka_volterra, np.abs(rng.standard_normal(2)) + 1, 0.01, 8)
    (program,) = made
    assert "setitem" not in program.source and "extern" not in str(program.program).replace("extern empty", ""), \
        str(program.program)


def test_a_kernel_that_stops_the_chain_is_taken_up_where_it_stopped():
    compiled, made = _run_like_numpy(upwind, rng.standard_normal(12), 0.5, 3)
    for q in (rng.standard_normal(24)[::2], rng.standard_normal(12)):   # other strides: relayouts mid-chain
        mine, theirs = q.copy() if q.flags.c_contiguous else q, q.copy()
        assert_same(compiled(mine, 0.5, 3), upwind(theirs, 0.5, 3))
        assert_same(mine, theirs)
    assert len(made) == 1 and any(ks.variants for ks in made[0].steps.values())   # the strided layout's


def test_an_index_out_of_bounds_in_a_chain_raises_numpys_error():
    x, idx = rng.standard_normal(8), np.array([1, 3, 7])
    compiled, _ = _run_like_numpy(gather_then_scale, x, idx)
    bad = np.array([1, 9])
    with pytest.raises(IndexError) as want:
        gather_then_scale(x.copy(), bad)
    with pytest.raises(IndexError) as got:
        compiled(x.copy(), bad)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("steps, expected", [
    ([True, True, False, True, True, True, False, True], [[0, 1], [3, 4, 5]]),
    ([True, False, True], []), ([], []), ([True, True], [[0, 1]]),
])
def test_runs_are_the_longest_stretches_of_two_or_more(steps, expected):
    assert chain.runs(steps, bool) == expected
