"""numpile "triton" on the unchanged NumPy functions with CuPy inputs, against the GPU peers.

Peers in one process, medians of `triton.testing.do_bench` (device events): CuPy eager (the
same NumPy function on CuPy arrays), `cupy.fuse` where the function is pointwise, torch eager and
torch.compile on the equivalent torch code, JAX `jit` on the equivalent `jnp` code. "vs floor" is
the time over the memory floor: bytes each input read once and each output written once, at the
device-to-device copy bandwidth measured in the same run. The 1024-element chain is timed per
call on the host clock (what a user waits), since its kernels take microseconds. Peers that are
not installed are skipped with a note.

`--first-call` times instead the first call of a 12-op graph on CuPy arrays in new processes, with
cold and then warm disk caches, imports included, and says whether torch was imported.

`--matmul` times instead a linear layer with its ReLU, `np.maximum(x @ w + b, 0)` in float32, at
shapes from tiny to the MLP's: numpile's Triton template (the product with the bias and ReLU as its
epilogue, one launch) against numpile's cuBLAS call and epilogue kernel, whichever numpile_triton's
`matmul.use_template` picks, and torch.compile; device time, per-call wall time where it is small,
and the template's error against float64.

    python benchmarks/gpu.py [--only chain softmax jacobi ...] [--matmul] [--first-call]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import numpile
from cpu import chain, layer_norm, softmax, squared_distance   # the same NumPy functions as on the CPU
from numpile.testing.loop_programs import jacobi   # a time loop of two stencils updating in place

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def mlp(x, w1, b1, w2, b2):   # cpu.py's with a ReLU after the second layer too
    h = np.maximum(x @ w1 + b1, 0)
    return np.maximum(h @ w2 + b2, 0)


def standardize(x):   # three kernels: two full reductions, then the pointwise step
    return (x - x.mean()) / x.std()


JACOBI_STEPS = 50


def jacobi_torch(A, B, steps):
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A, B


def jacobi_jax(A, B, steps):
    import jax

    def step(_, ab):
        a, b = ab
        b = b.at[1:-1].set(0.33333 * (a[:-2] + a[1:-1] + a[2:]))
        return a.at[1:-1].set(0.33333 * (b[:-2] + b[1:-1] + b[2:])), b
    return jax.lax.fori_loop(0, steps, step, (A, B))


def workloads(cp):
    """(name, function, CuPy arguments, bytes at the floor: None for none, "call" for per-call time)."""
    f32 = cp.float32
    x, y = (cp.random.standard_normal(1 << 26, dtype=f32) for _ in range(2))
    m = cp.random.standard_normal((8192, 8192), dtype=f32)
    g, b = cp.random.standard_normal(8192, dtype=f32), cp.random.standard_normal(8192, dtype=f32)
    small = cp.random.standard_normal(1024, dtype=f32)
    grid = cp.random.standard_normal((2048, 2048), dtype=f32)
    layers = (cp.random.standard_normal((4096, 1024), dtype=f32), cp.random.standard_normal((1024, 4096), dtype=f32) / 32,
              cp.random.standard_normal(4096, dtype=f32), cp.random.standard_normal((4096, 1024), dtype=f32) / 64,
              cp.random.standard_normal(1024, dtype=f32))
    return [("chain", chain, (x,), 2 * x.nbytes), ("squared_distance", squared_distance, (x, y), 2 * x.nbytes),
            ("softmax", softmax, (m,), 2 * m.nbytes), ("layer_norm", layer_norm, (m, g, b), 2 * m.nbytes),
            ("mlp", mlp, layers, None), ("chain_1024", chain, (small,), "call"),
            ("standardize_1024", standardize, (small,), "call"),
            ("jacobi", jacobi, (grid, cp.random.standard_normal((2048, 2048), dtype=f32), JACOBI_STEPS),
             JACOBI_STEPS * 2 * 2 * grid.nbytes)]


def torch_peers(name, fn, args):
    try:
        import torch
    except ImportError:
        return [("torch", "not installed")]
    import torch.nn.functional as F
    equivalents = {
        "chain": lambda x: torch.sin(x) * torch.cos(x) + torch.exp(-x * x) * 0.5 + torch.tanh(x),
        "squared_distance": lambda x, y: ((x - y) ** 2).sum(),
        "softmax": lambda x: torch.softmax(x, -1),
        "layer_norm": lambda x, g, b: F.layer_norm(x, x.shape[-1:], g, b, 1e-5),
        "mlp": lambda x, w1, b1, w2, b2: torch.relu(torch.relu(x @ w1 + b1) @ w2 + b2),
        "standardize": lambda x: (x - x.mean()) / x.std(correction=0),
        "jacobi": jacobi_torch,
    }
    fn_t = equivalents[name.removesuffix("_1024")]
    targs = tuple(torch.from_dlpack(a) if hasattr(a, "__dlpack__") else a for a in args)
    return [("torch eager", lambda: fn_t(*targs)),
            ("torch.compile", (lambda c=torch.compile(fn_t): c(*targs))),
            ("torch.compile reduce-overhead", (lambda c=torch.compile(fn_t, mode="reduce-overhead"): c(*targs)))]


def jax_peer(name, args):
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return [("jax jit", "not installed")]
    fns = {"chain": lambda x: jnp.sin(x) * jnp.cos(x) + jnp.exp(-x * x) * 0.5 + jnp.tanh(x),
           "squared_distance": lambda x, y: ((x - y) ** 2).sum(),
           "softmax": lambda x: jax.nn.softmax(x, -1),
           "layer_norm": lambda x, g, b: (x - x.mean(-1, keepdims=True))
           / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b,
           "mlp": lambda x, w1, b1, w2, b2: jax.nn.relu(jax.nn.relu(x @ w1 + b1) @ w2 + b2),
           "standardize": lambda x: (x - x.mean()) / x.std(),
           "jacobi": jacobi_jax}
    jax.config.update("jax_default_matmul_precision", "highest")   # float32 products as the others (not TF32)
    static = [i for i, a in enumerate(args) if not hasattr(a, "__dlpack__")]   # the step count
    jitted = jax.jit(fns[name.removesuffix("_1024")], static_argnums=static)
    jargs = tuple(jax.dlpack.from_dlpack(a) if hasattr(a, "__dlpack__") else a for a in args)
    return [("jax jit", lambda: jax.block_until_ready(jitted(*jargs)))]


def peers(name, fn, args):
    import cupy as cp
    out = [("numpile triton", (lambda c=numpile.compile(fn, backend="triton"): c(*args))),
           ("numpile triton reduce-overhead",
            (lambda c=numpile.compile(fn, backend="triton", mode="reduce-overhead"): c(*args))),
           ("numpile triton max-autotune",
            (lambda c=numpile.compile(fn, backend="triton", mode="max-autotune"): c(*args))),
           ("cupy eager", lambda: fn(*args))]
    if name.startswith("chain"):   # cupy.fuse traces CuPy's functions, not NumPy's
        fused = cp.fuse(lambda x: cp.sin(x) * cp.cos(x) + cp.exp(-x * x) * 0.5 + cp.tanh(x))
        out.append(("cupy.fuse", lambda: fused(*args)))
    out += torch_peers(name, fn, args) + jax_peer(name, args)
    return out


def device_seconds(run) -> float:
    from triton.testing import do_bench
    return do_bench(run, warmup=100, rep=500, return_mode="median") / 1e3


def call_seconds(run) -> float:
    """Per-call wall time of a small workload: the host waits for the device after each call."""
    import cupy as cp
    times = []
    for _ in range(2000):
        t0 = time.perf_counter()
        run()
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[200:])


def copy_bandwidth(cp) -> float:
    src = cp.ones(1 << 28, cp.float32)
    dst = cp.empty_like(src)
    return 2 * src.nbytes / device_seconds(lambda: cp.copyto(dst, src))


MATMUL_SHAPES = [(128, 128, 128), (512, 512, 512), (16, 4096, 4096), (1024, 1024, 1024), (1024, 2048, 1024),
                 (2048, 2048, 1024), (2048, 2048, 2048), (4096, 1024, 4096), (4096, 4096, 1024)]   # (M, N, K); the last two are the MLP's layers


FIRST_CALL = """\
import json, sys, time
t0 = time.perf_counter()
import numpy as np, cupy as cp, numpile
imported = time.perf_counter() - t0
def ten_ops(x, y):
    return ((np.sin(x) * y + np.exp(-x * x) * 0.5 - np.tanh(y)) / (1.0 + x * x)).sum()
x, y = (cp.asarray(np.random.default_rng(s).standard_normal(1 << 20, dtype=np.float32)) for s in (1, 2))
f = numpile.compile(ten_ops, backend="triton")
cp.cuda.Device().synchronize()
t1 = time.perf_counter()
got = f(x, y)
cp.cuda.Device().synchronize()
first = time.perf_counter() - t1
assert abs(float(got) - float(ten_ops(x, y))) <= 1e-3 * abs(float(ten_ops(x, y))) + 1e-3
print(json.dumps({"import": imported, "first call": first, "torch imported": "torch" in sys.modules}))
"""


def first_calls() -> None:
    """A 12-op graph's first call in new processes on CuPy arrays: with numpile's and Triton's disk
    caches empty (cold), then from what that process left there (warm); the whole process's time
    (interpreter start and imports included), the imports, the call, and whether torch came in."""
    import json
    import subprocess
    import sys
    import tempfile
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMPILE_CACHE_DIR": f"{cache}/numpile", "TRITON_CACHE_DIR": f"{cache}/triton"}
        print(f"{'first call, new process':<26} {'process':>9} {'imports':>9} {'call':>9}  torch imported")
        for label in ("cold disk caches", "warm disk caches", "warm disk caches"):
            t0 = time.perf_counter()
            run = subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, capture_output=True, text=True)
            whole = time.perf_counter() - t0
            if run.returncode:
                print(f"{label:<26} failed: {run.stderr[-800:]}")
                continue
            r = json.loads(run.stdout.splitlines()[-1])
            print(f"{label:<26} {whole:8.2f}s {r['import']:8.2f}s {r['first call']:8.2f}s  {r['torch imported']}")


def relu_linear(x, w, b):
    return np.maximum(x @ w + b, 0)


def matmul_sweep(cp) -> None:
    """See the module's docstring: the measurements behind matmul.use_template."""
    from numpile_triton import matmul
    rule = matmul.use_template
    print(f"{'M x N x K':<18} {'runner':<30} {'device':>10} {'per call':>10} {'TFLOP/s':>8} {'rel. error':>10}")
    for m, n, k in MATMUL_SHAPES:
        x, w = cp.random.standard_normal((m, k), dtype=cp.float32), cp.random.standard_normal((k, n), dtype=cp.float32)
        b = cp.random.standard_normal(n, dtype=cp.float32)
        want = cp.maximum(x.astype(cp.float64) @ w.astype(cp.float64) + b, 0)
        runners = []
        for label, template, mode in (("numpile template", True, None), ("numpile cuBLAS + kernel", False, None),
                                      ("numpile template max-autotune", True, "max-autotune-no-cudagraphs")):
            matmul.use_template = lambda *shape, t=template: t
            compiled = numpile.compile(relu_linear, backend="triton", mode=mode)
            numpile.set_logs(perf=mode is not None)   # what max-autotune chose
            compiled(x, w, b)   # compiled (and tuned) under the forced choice
            numpile.set_logs()
            matmul.use_template = rule
            runners.append((label, lambda c=compiled: c(x, w, b)))
        try:
            import torch
            xt, wt, bt = (torch.from_dlpack(a) for a in (x, w, b))
            runners += [("torch eager", lambda: torch.relu(xt @ wt + bt)),
                        ("torch.compile", lambda c=torch.compile(lambda p, q, r: torch.relu(p @ q + r)): c(xt, wt, bt))]
        except ImportError:
            pass
        for label, run in runners:
            out = cp.asarray(run())
            error = float(cp.linalg.norm(out - want) / cp.linalg.norm(want))
            t = device_seconds(run)
            call = f"{call_seconds(run) * 1e6:8.1f}µs" if t < 2e-4 else ""
            print(f"{f'{m}x{n}x{k}':<18} {label:<30} {t * 1e6:8.1f}µs {call:>10} {2 * m * n * k / t / 1e12:8.1f} "
                  f"{error:10.1e}", flush=True)
        print(f"{'':<18} use_template picks {'the template' if rule(m, n, k) else 'cuBLAS'}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--matmul", action="store_true", help="the matmul template against cuBLAS, by shape")
    parser.add_argument("--first-call", action="store_true", help="a 12-op graph's first call in a new process")
    args = parser.parse_args(argv)
    if args.first_call:
        return first_calls()
    import cupy as cp
    if args.matmul:
        return matmul_sweep(cp)
    bandwidth = copy_bandwidth(cp)
    print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, copy bandwidth {bandwidth / 1e12:.2f} TB/s, "
          f"numpile {numpile.__version__}, CuPy {cp.__version__}")
    print(f"{'workload':<18} {'runner':<32} {'median':>11} {'of floor':>9} {'1st call':>9}")
    for name, fn, fargs, floor_bytes in workloads(cp):
        if args.only and name not in args.only:
            continue
        timer = call_seconds if floor_bytes == "call" else device_seconds
        for peer, run in peers(name, fn, fargs):
            if isinstance(run, str):
                print(f"{name:<18} {peer:<32} ({run})")
                continue
            t0 = time.perf_counter()
            try:
                run()
                cp.cuda.Device().synchronize()
            except Exception as e:   # a peer that cannot run this workload says why; the others go on
                print(f"{name:<18} {peer:<32} (failed: {type(e).__name__}: {str(e).splitlines()[0][:60]})")
                continue
            first = time.perf_counter() - t0
            t = timer(run)
            share = f"{floor_bytes / bandwidth / t:8.0%}" if isinstance(floor_bytes, int) else ""
            print(f"{name:<18} {peer:<32} {t * 1e6:9.1f}µs {share:>9} {first:8.2f}s", flush=True)


if __name__ == "__main__":
    main()
