"""`numpile demo`: the tutorial's scenarios, run on the backends given (default: eager and debug),
printing what a user should see."""

from __future__ import annotations

import argparse
import time

import numpy as np

import numpile


def _title(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 70 - len(text)))


def foo(x, y):
    return np.sin(x) + np.cos(y)


class LinearReLU:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return np.maximum(x @ self.w + self.b, 0)


def scenario_basic(backend: str, rng) -> None:
    _title(f"1. basic use: np.sin(x) + np.cos(y) on {backend!r}")
    compiled = numpile.compile(foo, backend=backend)
    for dtype in (np.float32, np.float64):
        x, y = rng.standard_normal((3, 4)).astype(dtype), rng.standard_normal((3, 4)).astype(dtype)
        got, want = compiled(x, y), foo(x, y)
        print(f"{np.dtype(dtype)}: equal to NumPy: {np.allclose(got, want) and got.dtype == want.dtype}")


def scenario_model(backend: str, rng) -> None:
    _title(f"2. a model relu(x @ w + b) on {backend!r}")
    model = LinearReLU(rng.standard_normal((4, 3), dtype=np.float32), rng.standard_normal(3, dtype=np.float32))
    compiled = numpile.compile(model, backend=backend)
    x = rng.standard_normal((2, 4), dtype=np.float32)
    print("first call equal to NumPy:", np.allclose(compiled(x), model(x)))
    model.w *= 2
    print("after an in-place update of w:", np.allclose(compiled(x), model(x)), f"({len(compiled.entries)} entry)")
    model.w = rng.standard_normal((4, 5), dtype=np.float32)
    model.b = rng.standard_normal(5, dtype=np.float32)
    print("after w and b change shape:", np.allclose(compiled(x), model(x)), f"({len(compiled.entries)} entries: recompiled)")


class MLP:
    """A small float32 network: two residual blocks of layer norm, a linear layer and tanh."""

    def __init__(self, rng, width: int = 512):
        self.w = [rng.standard_normal((width, width), dtype=np.float32) / np.float32(width ** 0.5) for _ in range(2)]
        self.b = [rng.standard_normal(width, dtype=np.float32) for _ in range(2)]

    def __call__(self, x):
        for w, b in zip(self.w, self.b):
            mu = x.mean(axis=-1, keepdims=True)
            h = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
            x = x + np.tanh(h @ w + b) * np.exp(-h * h)
        return x


def scenario_speedup(rng) -> None:
    backend = numpile.plugins.default_backend(numpile.config.default_backends["cpu"], "cpu")
    _title(f"3. speed-up: a small float32 network, eager vs the default CPU backend {backend.name!r}")
    model = MLP(rng)
    compiled = numpile.compile(model)
    x = rng.standard_normal((2048, 512), dtype=np.float32)

    def times(fn, n=10):
        out = []
        for _ in range(n):
            t0 = time.perf_counter()
            fn(x)
            out.append(time.perf_counter() - t0)
        return out
    eager, numpiled = times(model), times(compiled)
    same = np.allclose(compiled(x), model(x), rtol=1e-4, atol=1e-4)
    print(f"first compiled call (compiles): {numpiled[0] * 1e3:.1f} ms; equal to NumPy: {same}")
    print(f"median of the other calls: NumPy {np.median(eager[1:]) * 1e3:.2f} ms, "
          f"numpile {np.median(numpiled[1:]) * 1e3:.2f} ms ({np.median(eager[1:]) / np.median(numpiled[1:]):.2f}x)")


def scenario_scalars(backend: str, rng) -> None:
    _title(f"5. Python scalars keep NumPy's dtypes on {backend!r}")
    compiled = numpile.compile(lambda x, y: x + y, backend=backend)
    for dtype in (np.int8, np.float32):
        x = rng.integers(1, 9, 3).astype(dtype)
        print(f"{np.dtype(dtype)} array + 3 -> {compiled(x, 3).dtype} (NumPy: {(x + 3).dtype})")


def scenario_guards_and_recompiles() -> None:
    _title("11/12. guards and recompiles (NUMPILE_LOGS=guards,recompiles)")

    def fn(x):
        return x + 1
    numpile.set_logs("guards", "recompiles")
    try:
        compiled = numpile.compile(fn, backend="eager")
        compiled(np.ones((3, 3)))
        compiled(np.ones((4, 4)))
    finally:
        numpile.set_logs()


def scenario_backends() -> None:
    _title("13. backends (numpile backends)")
    print(f"  numpile.list_backends() = {numpile.list_backends()}")
    for info in numpile.backend_table():
        state = "available" if info.available else f"unavailable: {info.reason}"
        print(f"  {info.name:<12} {info.distribution:<16} {state}")


def scenario_explain_and_reset(rng) -> None:
    _title("explain and reset")

    def f(x):
        y = x * 2
        print("  (a print inside the compiled function)")
        return y + 1
    print(numpile.explain(f)(rng.standard_normal(3)))
    compiled = numpile.compile(foo, backend="eager")
    x = rng.standard_normal(3)
    compiled(x, x)
    numpile.reset()
    t0 = time.perf_counter()
    compiled(x, x)
    print(f"16. after numpile.reset() the next call compiles again ({(time.perf_counter() - t0) * 1e3:.1f} ms)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="numpile demo", description=__doc__)
    parser.add_argument("--backend", action="append", help="a backend to run on (repeatable)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    for backend in args.backend or ["eager", "debug"]:
        scenario_basic(backend, rng)
        scenario_model(backend, rng)
        scenario_scalars(backend, rng)
    scenario_speedup(rng)
    scenario_guards_and_recompiles()
    scenario_backends()
    scenario_explain_and_reset(rng)
    return 0
