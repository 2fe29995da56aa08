"""The corpus of NumPy code others wrote (../shared/corpora/numpy-benchmarks, read in place), called
with CuPy arrays in place of the NumPy arrays its set-up makes: CuPy eager (the function as written)
against numpile (default backend: "triton" for CuPy inputs), on the same card.

    python benchmarks/gpu_corpus.py [--corpus PATH] [--only NAME ...] [--repeat N]

Per kernel: whether numpile's results (returned values and the arguments a call mutates) match CuPy
eager's and NumPy's, the first call (trace and compile included), the median device-synchronised
time of each, and the speed-up. Kernels whose set-up makes no array run on the host for both and are
listed apart. The geometric mean is over the kernels both ran, numpile correctly.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import statistics
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

import numpile

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "numpy-benchmarks"


def kernels(folder: Path, only) -> list:
    """(name, function, setup source, run expression) of each file."""
    found = []
    for path in sorted(folder.glob("*.py")):
        lines = path.read_text().splitlines()
        setup = next(line[len("#setup:"):].strip() for line in lines if line.startswith("#setup:"))
        run = next(line[len("#run:"):] for line in lines if line.startswith("#run:")).strip()
        if only and path.stem not in only:
            continue
        spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        found.append((path.stem, getattr(module, run.split("(")[0]), setup, run))
    return found


def arguments(setup: str, run: str):
    """The run expression's arguments after the set-up, as a tuple (NumPy)."""
    names: dict = {}
    exec(setup, names)
    return eval(f"(lambda *a: a){run[run.index('('):]}", names)


def on_device(value, cupy):
    if isinstance(value, np.ndarray):
        return cupy.asarray(value)
    if isinstance(value, tuple):
        return tuple(on_device(v, cupy) for v in value)
    return value


def on_host(value, cupy):
    if isinstance(value, cupy.ndarray):
        return cupy.asnumpy(value)
    if isinstance(value, (tuple, list)):
        return type(value)(on_host(v, cupy) for v in value)
    return value


def mismatch(got, want, path="result") -> str | None:
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return f"{path}: {type(got).__name__} instead of {len(want)} values"
        return next((m for i, (g, w) in enumerate(zip(got, want)) if (m := mismatch(g, w, f"{path}[{i}]"))), None)
    if not isinstance(want, (np.ndarray, np.generic, float, complex)):
        return None if got == want else f"{path}: {got!r} != {want!r}"
    want, got = np.asarray(want), np.asarray(got)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"{path}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    if want.dtype.kind in "fc":
        rtol = 1e-4 if np.finfo(want.dtype).bits <= 32 else 1e-7
        scale = float(np.nanmax(np.abs(want))) if want.size else 0.0
        if np.allclose(got, want, rtol=rtol, atol=rtol * scale, equal_nan=True):
            return None
    elif np.array_equal(got, want):
        return None
    return f"{path}: values differ"


def timed(fn, make, cupy, repeat: int) -> float:
    """Median seconds of a call on fresh device copies of the arguments, synchronised."""
    times = []
    for _ in range(repeat):
        args = make()
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        fn(*args)
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--repeat", type=int, default=20)
    options = parser.parse_args()
    import cupy
    print(f"card: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, CuPy {cupy.__version__}")
    print(f"{'kernel':24} {'match':28} {'first s':>8} {'CuPy ms':>9} {'numpile ms':>10} {'speed-up':>8}")
    speedups, host = [], []
    for name, fn, setup, run in kernels(options.corpus, options.only):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            numpy_args = arguments(setup, run)
            if not any(isinstance(a, np.ndarray) for a in numpy_args):
                host.append(name)
                continue
            make = lambda: on_device(arguments(setup, run), cupy)   # noqa: E731
            want_args = arguments(setup, run)
            want = fn(*want_args)
            args = make()
            try:
                eager = on_host((fn(*args), args), cupy)
            except Exception as e:   # the function as written does not run on CuPy arrays
                print(f"{name:24} CuPy eager fails ({type(e).__name__}): not compared")
                continue
            compiled = numpile.compile(fn)
            args = make()
            try:
                start = time.perf_counter()
                got = compiled(*args)
                cupy.cuda.Device().synchronize()
                first = time.perf_counter() - start
            except Exception as e:
                print(f"{name:24} FAILS {type(e).__name__}: {str(e).splitlines()[0][:150] if str(e) else ''}")
                traceback.print_exc(limit=-3)
                continue
            got = on_host((got, args), cupy)
            wrong = mismatch(got, (want, want_args)) or mismatch(got, eager)
            t_eager = timed(fn, make, cupy, options.repeat)
            t_numpile = timed(compiled, make, cupy, options.repeat)
        speed = t_eager / t_numpile
        if not wrong:
            speedups.append(speed)
        print(f"{name:24} {(wrong or 'yes')[:28]:28} {first:8.2f} {t_eager * 1e3:9.3f} {t_numpile * 1e3:10.3f} {speed:7.2f}x")
    if speedups:
        print(f"geometric mean over {len(speedups)} correct: {math.exp(statistics.mean(map(math.log, speedups))):.2f}x "
              f"CuPy eager; below 0.95x: {sum(s < 0.95 for s in speedups)}")
    print(f"no array arguments (host, not timed): {', '.join(host)}")


if __name__ == "__main__":
    main()
