"""Dask benchmark: the same NumPy function on dask.array alone, on dask.array compiled by
numpile (backend "dask", chunk kernels by "llvm"), and with NumPy on one core.

    python benchmarks/dask.py [--log2 27] [--repeat 3] [--workers 2] [--chunk-mb 32]

The arrays are 2**log2 float32 elements (2-d: rows of 2**13), made on the workers of a
LocalCluster (`--workers` processes, one thread each) and persisted there before timing. A
timed run builds the graph, then persists its result on the workers and waits (an array
result stays there, as in real use; a reduction's scalar comes back). NumPy runs the same
function on the whole arrays in this process, single-threaded. Times are medians after a
warm-up run (which compiles the kernels on each worker), dask.array's and numpile's runs taken in
turn so that both meet the same load of the machine. The task counts are those of the
graph built for one call, per input chunk, as built (dask.array: one task per op per chunk)
and after Dask's own optimisation (which fuses blockwise layers into one task per chunk,
still one NumPy call and one temporary per op inside it). The per-chunk kernel time (one
chunk in this process, numpile "llvm" as a worker runs it) feeds the estimate for 100 workers
in docs/dask.md. The last workload gives dask.array the tree numpile builds for the sum (16
partial sums to a task where each is small; dask.array's default is 4, over every axis): what
is left between them is the chunk kernels. A second table says where one more run of each spent its time: the busiest
worker inside tasks (the rest of the wall time is Dask's own: scheduling, messages, waiting),
all workers inside tasks, moving data between workers, and the tasks it ran.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

_HERE = sys.path.pop(0)         # benchmarks/, whose dask.py (this file) would shadow the package dask
import dask                     # noqa: E402
import dask.array as da         # noqa: E402
import numpy as np              # noqa: E402
from distributed import Client, LocalCluster, get_task_stream, wait  # noqa: E402
import numpile                  # noqa: E402

sys.path.append(_HERE)       # after site-packages: worker processes get this sys.path
from host import cpu_name       # noqa: E402


def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)


def squared_distance(x, y):
    return ((x - y) ** 2).sum()


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def squared_distance_same_tree(x, y):
    """squared_distance as dask.array runs it with the tree numpile builds for it here: the 16
    partial sums combined in one task (dask.array's default: 4 to a task, over both axes)."""
    return ((x - y) ** 2).sum(split_every={0: 16, 1: 1})


# name -> (the function, its number of arrays, what dask.array alone runs)
WORKLOADS = {"chain": (chain, 1, chain), "squared_distance": (squared_distance, 2, squared_distance),
             "row softmax": (softmax, 1, softmax),
             "squared_distance, dask.array with numpile's tree": (squared_distance, 2, squared_distance_same_tree)}


def median_seconds(run, repeat: int, settle=lambda: None) -> float:
    """The median time of `run()` after a warm-up (kernels compiled on the workers, NumPy's pages
    touched); `settle()`, untimed, after each run."""
    return medians([(run, settle)], repeat)[0]


def medians(runs: list, repeat: int) -> list[float]:
    """The median time of each (run, settle) of `runs` after a warm-up of each, the runs taken in
    turn (A, B, A, B, ...) so that a change in the machine's load meets every one of them alike."""
    times = [[] for _ in runs]
    for round_ in range(repeat + 1):
        for (run, settle), took in zip(runs, times):
            t0 = time.perf_counter()
            run()
            if round_:   # the first round warms up
                took.append(time.perf_counter() - t0)
            settle()
    return [statistics.median(t) for t in times]


def scheduler_tasks(dask_scheduler=None) -> int:
    return len(dask_scheduler.tasks)


def on_cluster(client, fn, args) -> tuple:
    """(run, settle) for `medians`: a run builds the graph and persists the result on the workers
    (a scalar comes back); settling drops it and waits until the scheduler has forgotten it, so
    that the next run, whose keys are the same, computes again."""
    baseline = client.run_on_scheduler(scheduler_tasks)
    held = []

    def run():
        out = fn(*args)
        if out.ndim:
            held.append(client.persist(out))
            wait(held[-1])
        else:
            client.compute(out, sync=True)

    def settle():
        held.clear()
        while client.run_on_scheduler(scheduler_tasks) > baseline:
            time.sleep(0.005)
    return run, settle


def tasks_per_chunk(out, inputs, chunks: int) -> tuple[float, float]:
    """Tasks of a result's graph per input chunk, less the inputs' own: as built, and after
    Dask's optimisation."""
    names = {x.name for x in inputs}
    count = lambda graph: sum(1 for k in dict(graph) if (k[0] if isinstance(k, tuple) else k) not in names)  # noqa: E731
    (optimised,) = dask.optimize(out)
    return count(out.__dask_graph__()) / chunks, count(optimised.__dask_graph__()) / chunks


def where_time_goes(client, run, settle) -> tuple:
    """One more run under Dask's task stream: its wall time, the busiest worker's time inside
    tasks (the rest of the wall is Dask's: scheduling, messages, waiting), the time all workers
    spent in tasks and moving data between them, and the tasks run."""
    with get_task_stream(client) as stream:
        t0 = time.perf_counter()
        run()
        wall = time.perf_counter() - t0
    settle()
    spent: dict = {}
    for task in stream.data:
        for part in task["startstops"]:
            key = (part["action"], task["worker"] if part["action"] == "compute" else "")
            spent[key] = spent.get(key, 0.0) + part["stop"] - part["start"]
    computing = [t for (action, _), t in spent.items() if action == "compute"]
    moving = sum(t for (action, _), t in spent.items() if action == "transfer")
    return wall, max(computing), sum(computing), moving, len(stream.data)


def chunk_kernel_ms(fn, shape, nargs: int, repeat: int) -> float:
    """One chunk's kernel (numpile "llvm", the whole function) in this process, in ms."""
    rng = np.random.default_rng(0)
    block = [rng.standard_normal(shape, dtype=np.float32) for _ in range(nargs)]
    f = numpile.compile(fn, backend="llvm")
    return median_seconds(lambda: f(*block), repeat) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=27, help="elements per array: 2**LOG2 (default 27)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk-mb", type=int, default=32, help="chunk size in MiB (default 32)")
    args = parser.parse_args()
    cols = 1 << 13
    rows = (1 << args.log2) // cols
    chunk_rows = max(1, args.chunk_mb * (1 << 20) // (cols * 4))
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        rng = da.random.default_rng(0)
        inputs = [rng.standard_normal((rows, cols), dtype=np.float32, chunks=(chunk_rows, cols)).persist()
                  for _ in range(2)]
        wait(inputs)
        chunks = inputs[0].npartitions
        print(f"# benchmarks/dask.py: {cpu_name()}, Python {platform.python_version()}, NumPy {np.__version__}, "
              f"dask {dask.__version__}, numpile {numpile.__version__}")
        print(f"# arrays of {rows}x{cols} float32 (2**{args.log2} elements, {rows * cols * 4 >> 20} MiB each), "
              f"{chunks} chunks of {chunk_rows}x{cols}; LocalCluster of {args.workers} worker processes x 1 thread; "
              f"medians of {args.repeat}")
        print("| workload | dask.array s | numpile dask s | NumPy 1 core s | numpile vs dask.array | "
              "tasks/chunk dask.array (built, optimised) | tasks/chunk numpile (built, optimised) | kernel ms/chunk |")
        print("|---|---:|---:|---:|---:|---|---|---:|")
        breakdown = []
        for name, (fn, nargs, alone) in WORKLOADS.items():
            xs = inputs[:nargs]
            compiled = numpile.compile(fn)
            runs = [on_cluster(client, alone, xs), on_cluster(client, compiled, xs)]
            t_dask, t_numpile = medians(runs, args.repeat)
            breakdown += [(name, side, where_time_goes(client, *run))
                          for side, run in zip(("dask.array", "numpile"), runs)]
            local = [x.compute() for x in xs]
            t_numpy = median_seconds(lambda: fn(*local), args.repeat)
            del local
            theirs = tasks_per_chunk(alone(*xs), xs, chunks)
            mine = tasks_per_chunk(compiled(*xs), xs, chunks)
            kernel = chunk_kernel_ms(fn, (chunk_rows, cols), nargs, args.repeat)
            print(f"| {name} | {t_dask:.2f} | {t_numpile:.2f} | {t_numpy:.2f} | {t_dask / t_numpile:.1f}x | "
                  f"{theirs[0]:.1f}, {theirs[1]:.1f} | {mine[0]:.1f}, {mine[1]:.1f} | {kernel:.1f} |", flush=True)
        print("\n| workload | run | wall s | busiest worker in tasks s | all workers in tasks s | moving data s | tasks |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for name, side, (wall, busiest, busy, moving, tasks) in breakdown:
            print(f"| {name} | {side} | {wall:.3f} | {busiest:.3f} | {busy:.3f} | {moving:.3f} | {tasks} |")


if __name__ == "__main__":
    main()
