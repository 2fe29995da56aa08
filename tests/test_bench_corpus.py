"""The kernel corpus of benchmarks/corpus.py: at least 40 kernels, random inputs, and each NumPy
program agreeing with the loop version written for Numba, on tiny inputs. The loop versions run as
plain Python (a Numba dispatcher's py_func), so this needs no compile and no Numba."""

import copy
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def load_runner():
    """benchmarks/corpus.py, its kernels loaded. benchmarks/ is on sys.path only meanwhile (the
    runner imports benchmarks/host.py): left there, benchmarks/dask.py would stand for the dask
    package in the tests that run after this module."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        spec = importlib.util.spec_from_file_location("bench_corpus", BENCHMARKS / "corpus.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module, module.load_kernels()
    finally:
        sys.path.remove(str(BENCHMARKS))


runner, KERNELS = load_runner()


def test_at_least_40_kernels_with_two_sizes():
    assert len(KERNELS) >= 40
    assert len({k.name for k in KERNELS}) == len(KERNELS)
    assert all({"tiny", "small", "large"} <= k.sizes.keys() for k in KERNELS)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: k.name)
def test_loops_agree_with_numpy(kernel):
    template = kernel.args("tiny", np.random.default_rng(0))
    arrays = [a for a in template if isinstance(a, np.ndarray)]
    assert arrays and all(a.any() for a in arrays), "inputs are random, never all zeros"
    args = copy.deepcopy(template)
    want = (kernel.numpy(*args), args)
    loops = getattr(kernel.loops, "py_func", kernel.loops)
    loop_args = copy.deepcopy(template)
    got = (loops(*loop_args), loop_args)
    assert runner.mismatch(got, want) is None, runner.mismatch(got, want)
