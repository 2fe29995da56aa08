"""Without a GPU the backend's tests run through Triton's interpreter: TRITON_INTERPRET=1 is set
here, before anything imports triton (pytest loads this file before the test modules), unless
NUMPILE_TRITON_GPU=1 asks for the real GPU (tests/run_on_gpu.sh). Without torch or triton every
test here is skipped, saying which is missing (dev.py installs the plugin only where a CPU
build of torch is to be had)."""

import os
from pathlib import Path

import pytest

os.environ.setdefault("TRITON_INTERPRET", "0" if os.environ.get("NUMPILE_TRITON_GPU") == "1" else "1")

HERE = Path(__file__).parent


def _availability() -> tuple[bool, str]:
    try:
        from numpile_triton import device
    except ImportError as e:
        return False, f"numpile-triton is not installed ({e})"
    return device.availability()


def pytest_collection_modifyitems(config, items):
    available, why_not = _availability()
    if available:
        return
    skip = pytest.mark.skip(reason=f"backend 'triton' is not available: {why_not}")
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(skip)


@pytest.fixture(params=["persistent", "looped", "split"])
def layout(request, monkeypatch):
    """Row kernels in each layout on small arrays: rows longer than 4 elements loop 4 at a time,
    and whole-array reductions of more than 8 split over the programs."""
    from numpile_triton import kernel, launch
    if request.param != "persistent":
        monkeypatch.setattr(kernel, "PERSISTENT_MAX", 4)
        monkeypatch.setattr(launch, "LOOP_RBLOCK", 4)
    if request.param == "split":
        monkeypatch.setattr(kernel, "SPLIT_MIN", 8)
    return request.param


@pytest.fixture
def cupy():
    """CuPy with a CUDA device, on the real GPU (not the interpreter), or a skip saying why."""
    from numpile_triton import device
    if device.interpreting():
        pytest.skip("CuPy arrays need the GPU, not Triton's interpreter")
    cupy = pytest.importorskip("cupy")
    if not cupy.cuda.is_available():
        pytest.skip("no CUDA device")
    return cupy


@pytest.fixture
def compiled():
    """fn -> (fn compiled on "triton", the list of CompiledPrograms it makes): for tests that look at
    a program's fallbacks, kernels and launch modes."""
    import numpile
    from numpile_triton.backend import TritonBackend

    def compile_(fn):
        made = []

        def backend(graph, example_inputs):
            made.append(TritonBackend().compile(graph, example_inputs, {}))
            return made[-1]
        return numpile.compile(fn, backend=backend), made
    return compile_
