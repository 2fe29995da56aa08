"""Kernel shares run by a native thread team: GCC's OpenMP runtime (libgomp), through its C ABI.

A kernel split over threads gets a driver next to it in its module:

    i32 @kernel.team(PyArrayObject* b0, ..., i64 s0, ..., ptr ranges, i64 n)   ; OR of the shares' statuses
    void @kernel.share(ptr block)                                             ; one thread's shares

The entry stores its arguments in a block on its stack and calls
`GOMP_parallel(@kernel.share, block, n, 0)`: libgomp runs the share function on the calling
thread and n - 1 threads of its pool and returns when all are done. Thread t runs shares t,
t + team size, ... (one each, unless libgomp made a smaller team): share c is
`@kernel(b0, ..., s0, ..., ranges[c].lo, ranges[c].hi, slot c)`, exactly the call the Python
thread pool makes, so results are the same to the bit. Statuses are OR-ed into one word.

One ctypes call per kernel run, so one GIL release, instead of a future per share (~70 µs each
on 16 threads, as the workers hand the GIL to each other). The team size is passed explicitly:
OMP_NUM_THREADS does not change it. Each calling thread has a pool of its own (libgomp keeps one
per initial thread), so Python threads calling kernels at once run independent teams.

[Note: spinning] A libgomp thread that waits (a worker for the next team, the caller for the
team's last share) polls GOMP_SPINCOUNT times, then sleeps on a futex. libgomp's default is
300,000 polls, up to 15 ms (a poll with its `pause` took 50 ns on a 2-core EPYC). Spinning pays
only where every thread of the team has a core to itself: on an idle 16-core Xeon the default ran
2*x + y on 2**17 in 21 µs against 101 µs with 300 polls, a Jacobi-2d step on 2000x2000 in 1.0 ms
against 1.8 ms (benchmarks/team_dispatch.py; 3,000 and 30,000 polls were worse than either
there). Where another process holds a core, a thread that spins keeps the one its team-mate waits
for, and each kernel run took a scheduler slice, 8 ms, on 2 cores (2*x + y on 2**17: 8 ms against
74 µs on the Python pool). So when libgomp loads, a machine whose 1-minute load average is under
half a core keeps libgomp's default; any other gets GOMP_SPINCOUNT=300 (up to 15 µs: long enough
for a team's shares to meet at the end, and for the next kernel of a program to find its threads
awake), set only while it loads. OMP_WAIT_POLICY or GOMP_SPINCOUNT in the environment win, and a
libgomp already loaded by another library keeps its settings.

libgomp keeps no fork handler: a child process forked after a team ran would wait for pool
threads it does not have, so a child runs its shares on the Python pool instead (`usable`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
from functools import cache

import numpy as np

from numpile import logs

from .irbuilder import Module

_FUNCTIONS = ("GOMP_parallel", "omp_get_thread_num", "omp_get_num_threads")
# how many times a waiting thread polls before it sleeps on a busy machine: up to 15 µs
# (see [Note: spinning])
BUSY_SPIN_COUNT = "300"
# the ticks of work (time stamp counter, about 2-4 per ns) below which a range runs on one thread
SPLIT_MIN_TICKS = 300_000
# how often crowded() looks at the run queue again, in seconds
CROWDED_CHECK_SECONDS = 0.05
_crowding = [float("-inf"), False]   # when crowded() last looked, and what it saw
#: False in a forked child: its drivers' shares run on the Python pool (see the module docstring)
usable = True
# the same for native code: a split range (render_range) runs alone where it is 0 (also while
# crowded() last saw a crowded machine)
_USABLE = ctypes.c_int32(1)
_USABLE_SYMBOL = "numpile.team_usable"


def _forked() -> None:
    global usable
    usable = False
    _USABLE.value = 0


if hasattr(os, "register_at_fork"):   # not on Windows, which has no fork
    os.register_at_fork(after_in_child=_forked)


def _candidates() -> list[str]:
    return [name for name in (ctypes.util.find_library("gomp"), "libgomp.so.1") if name]


def _busy() -> bool:
    """Whether another process seems to hold a core: a 1-minute load average of half a core or
    more (or no load average to read)."""
    try:
        return os.getloadavg()[0] >= 0.5
    except (AttributeError, OSError):
        return True


def _load(name: str) -> ctypes.CDLL:
    """libgomp, loaded with BUSY_SPIN_COUNT on a busy machine unless the process has it already or
    the environment says how its threads wait (see [Note: spinning])."""
    if hasattr(os, "RTLD_NOLOAD"):
        try:
            return ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_NOW)   # loaded: its settings stand
        except OSError:
            pass
    ours = not {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"} & set(os.environ) and _busy()
    if ours:   # read once, by libgomp's constructor
        os.environ["GOMP_SPINCOUNT"] = BUSY_SPIN_COUNT
    try:
        return ctypes.CDLL(name)
    finally:
        if ours:
            del os.environ["GOMP_SPINCOUNT"]


@cache
def _library() -> ctypes.CDLL | None:
    """libgomp, its functions made resolvable by the JIT; None where the process cannot load it."""
    for name in _candidates():
        try:
            lib = _load(name)
        except OSError:
            continue
        if all(hasattr(lib, f) for f in _FUNCTIONS):
            import llvmlite.binding as llvm
            for f in _FUNCTIONS:
                llvm.add_symbol(f, ctypes.cast(getattr(lib, f), ctypes.c_void_p).value)
            llvm.add_symbol(_USABLE_SYMBOL, ctypes.addressof(_USABLE))
            return lib
    logs.get("perf").debug("llvm: libgomp not found: kernel shares run on a Python thread pool")
    return None


def crowded() -> bool:
    """Whether more threads are runnable now than there are cores (the fourth field of
    /proc/loadavg, read at most every CROWDED_CHECK_SECONDS; the caller and its team's spinning
    threads make one a core): a split kernel's caller would wait at the team's end for a thread
    the scheduler set aside. Then it runs the kernel alone (and a split nest its range, through
    _USABLE): `2 * x + y` on 2**18 float64 on 2
    cores with 3 to 5 threads runnable took 112-126 µs (p90 300-1000 µs) split, 79 µs (p90
    118 µs) alone, NumPy 91 µs. False where there is no /proc/loadavg."""
    now = time.monotonic()
    if now - _crowding[0] > CROWDED_CHECK_SECONDS:
        try:
            with open("/proc/loadavg") as loadavg:
                runnable = int(loadavg.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            runnable = 0
        _crowding[:] = [now, runnable > threads()]
        _USABLE.value = int(usable and not _crowding[1])   # what a split nest's range reads
    return _crowding[1]


def threads() -> int:
    """How many threads a split kernel or loop nest runs on: one per core."""
    return os.cpu_count() or 1


def available() -> bool:
    """Whether split kernels run on libgomp's teams in this process."""
    return usable and _library() is not None


def table(ranges: list) -> tuple:
    """The threads' ranges as the driver reads them: (ranges, int64 [lo, hi] pairs, their address)."""
    pairs = np.array(ranges, np.int64).reshape(-1, 2)
    return ranges, pairs, pairs.ctypes.data


def function(code, name: str, narrays: int, nsymbols: int):
    """The ctypes entry of driver `name` of `code` (a jit.Code): ndarrays, symbols, the ranges
    table's address and its length."""
    proto = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.py_object] * narrays + [ctypes.c_int64] * nsymbols),
                             ctypes.c_void_p, ctypes.c_int64)
    return code.function(name, proto)


def _loaded(fields: list, base: str) -> list:
    """IR loading each (type, name) field from the block at `base` (one 8-byte slot each), into its name."""
    size = len(fields)
    return [line for i, (kind, name) in enumerate(fields)
            for line in (f"  %f{i} = getelementptr inbounds [{size} x i64], ptr {base}, i64 0, i64 {i}",
                         f"  {name} = load {kind}, ptr %f{i}")]


def _stored(fields: list, base: str) -> list:
    """IR storing each (type, name) field into its slot of the block at `base` (see _loaded)."""
    size = len(fields)
    return [line for i, (kind, name) in enumerate(fields)
            for line in (f"  %b{i} = getelementptr inbounds [{size} x i64], ptr {base}, i64 0, i64 {i}",
                         f"  store {kind} {name}, ptr %b{i}")]


def _declare(module: Module) -> None:
    module.declare("GOMP_parallel", "declare void @GOMP_parallel(ptr, ptr, i32, i32)")
    module.declare("omp_get_thread_num", "declare i32 @omp_get_thread_num() nounwind")
    module.declare("omp_get_num_threads", "declare i32 @omp_get_num_threads() nounwind")


def render_range(module: Module, symbol: str, entry: str, params: list, step: int, threads: int, least: int) -> None:
    """Add `@{symbol}`, which takes `entry`'s parameters `params` (types and names, the last two
    `i64 %start, i64 %stop` of a range with constant `step`) and runs `entry` over the range split
    in `threads` equal runs of iterations, one per thread of a libgomp team. It runs on the calling
    thread alone where the range has fewer than `least` iterations, an index below 0 (a negative
    index counts from the end: two iterations could then touch one element), too little work
    (see [Note: split ranges]), or in a forked child (libgomp's pool is the parent's). The status
    is the largest of the runs' (0 where all ran through).

    [Note: split ranges] How long an iteration takes is known only by running it (a while loop's
    trips, an inner range read from data), so the calling thread runs the range alone first and
    keeps the time stamp counter's ticks per iteration; a later call splits only where that many
    ticks times its iterations reach SPLIT_MIN_TICKS. Waking a team whose threads sleep cost about
    50 µs on a busy 2-core VM: an escape-time fractal of 30 x 40 points (55 µs alone) took 110 µs
    split, one of 300 x 400 10 ms alone and 5.3 ms split. Each run alone measures again, so
    the estimate follows the sizes a program calls with."""
    _declare(module)
    nounwind = module.attribute_group("nounwind")
    fields = [tuple(p.split(" ")) for p in params]   # (type, name)
    block = fields + [("ptr", "%status")]            # and the status word's address

    def count(lo: str, hi: str) -> list:   # iterations of range(lo, hi, step) into %count
        span = f"sub i64 {hi}, {lo}" if step > 0 else f"sub i64 {lo}, {hi}"
        return [f"  %span = {span}", f"  %up = add i64 %span, {abs(step) - 1}", f"  %whole = sdiv i64 %up, {abs(step)}",
                "  %some = icmp sgt i64 %span, 0", "  %count = select i1 %some, i64 %whole, i64 0"]

    names = [name for _, name in fields]
    share = ["entry:", *_loaded(block, "%data"), *count(names[-2], names[-1]),
              "  %tid = call i32 @omp_get_thread_num()", "  %team = call i32 @omp_get_num_threads()",
              "  %t = sext i32 %tid to i64", "  %n = sext i32 %team to i64",
              "  %per0 = add i64 %count, %n", "  %per1 = sub i64 %per0, 1", "  %per = sdiv i64 %per1, %n",
              "  %first = mul i64 %t, %per", "  %end0 = add i64 %first, %per",
              "  %short = icmp slt i64 %count, %end0", "  %end = select i1 %short, i64 %count, i64 %end0",
              "  %any = icmp slt i64 %first, %end", "  br i1 %any, label %run, label %done", "run:",
              f"  %lo0 = mul i64 %first, {step}", f"  %lo = add i64 {names[-2]}, %lo0",
              f"  %hi0 = mul i64 %end, {step}", f"  %hi = add i64 {names[-2]}, %hi0"]
    args = ", ".join(f"{k} {n}" for k, n in fields[:-2])
    share += [f"  %s = call i32 @{entry}({args}, i64 %lo, i64 %hi)", "  %old = atomicrmw umax ptr %status, i32 %s monotonic",
              "  br label %done", "done:", "  ret void"]
    module.functions.append(f"define internal void @{symbol}.share(ptr %data) {nounwind} {{\n" + "\n".join(share) + "\n}\n")

    module.declare("llvm.readcyclecounter", "declare i64 @llvm.readcyclecounter()")
    module.declare(f"{symbol}.ticks", f"@{symbol}.ticks = internal global i64 -1, align 8")
    module.declare(_USABLE_SYMBOL, f"@{_USABLE_SYMBOL} = external global i32")
    body = ["entry:", *count(names[-2], names[-1]),
            "  %last0 = sub i64 %count, 1", f"  %last1 = mul i64 %last0, {step}", f"  %last = add i64 {names[-2]}, %last1",
            f"  %many = icmp sge i64 %count, {least}", f"  %above = icmp sge i64 {names[-2] if step > 0 else '%last'}, 0",
            f"  %per = load atomic i64, ptr @{symbol}.ticks monotonic, align 8", "  %measured = icmp sge i64 %per, 0",
            "  %work = mul i64 %per, %count", f"  %long = icmp sge i64 %work, {SPLIT_MIN_TICKS}",
            f"  %usable = load atomic i32, ptr @{_USABLE_SYMBOL} monotonic, align 4", "  %pool = icmp ne i32 %usable, 0",
            "  %split0 = and i1 %many, %above", "  %split1 = and i1 %measured, %long", "  %split2 = and i1 %split0, %split1",
            "  %split = and i1 %split2, %pool",
            "  br i1 %split, label %team, label %alone", "alone:",
            "  %t0 = call i64 @llvm.readcyclecounter()",
            f"  %r = call i32 @{entry}({', '.join(params)})",
            "  %t1 = call i64 @llvm.readcyclecounter()", "  %took = sub i64 %t1, %t0",
            "  %ran = icmp sgt i64 %count, 0", "  %runs = select i1 %ran, i64 %count, i64 1",
            "  %each = udiv i64 %took, %runs", f"  store atomic i64 %each, ptr @{symbol}.ticks monotonic, align 8",
            "  ret i32 %r", "team:",
            f"  %block = alloca [{len(block)} x i64], align 8", "  %status = alloca i32, align 4", "  store i32 0, ptr %status",
            *_stored(block, "%block"),
            f"  call void @GOMP_parallel(ptr @{symbol}.share, ptr %block, i32 {threads}, i32 0)",
            "  %result = load i32, ptr %status", "  ret i32 %result"]
    module.functions.append(f"define internal i32 @{symbol}({', '.join(params)}) {nounwind} {{\n" + "\n".join(body) + "\n}\n")


def render(module: Module, symbol: str, narrays: int, symbols: list) -> None:
    """Add `@{symbol}.team` and `@{symbol}.share` for the kernel `@{symbol}`, which takes
    `narrays` arrays and the symbols `symbols` (by number) before lo, hi and slot."""
    _declare(module)
    nounwind = module.attribute_group("nounwind")
    # the block: array pointers, symbols, the ranges table, its length, the status word
    fields = [("ptr", f"%a{i}") for i in range(narrays)] + [("i64", f"%s{k}") for k in symbols] \
        + [("ptr", "%ranges"), ("i64", "%n"), ("ptr", "%status")]
    share = ["entry:",
             "  %tid = call i32 @omp_get_thread_num()", "  %team = call i32 @omp_get_num_threads()",
             "  %first = sext i32 %tid to i64", "  %step = sext i32 %team to i64", *_loaded(fields, "%data")]
    args = ", ".join(f"{kind} {name}" for kind, name in fields[:-3])
    share += ["  br label %test", "test:",
              "  %c = phi i64 [ %first, %entry ], [ %next, %body ]",
              "  %more = icmp slt i64 %c, %n", "  br i1 %more, label %body, label %done", "body:",
              "  %at = shl i64 %c, 1", "  %plo = getelementptr inbounds i64, ptr %ranges, i64 %at",
              "  %lo = load i64, ptr %plo", "  %phigh = getelementptr inbounds i64, ptr %plo, i64 1",
              "  %hi = load i64, ptr %phigh",
              f"  %s = call i32 @{symbol}({args}{', ' if args else ''}i64 %lo, i64 %hi, i64 %c)",
              "  %old = atomicrmw or ptr %status, i32 %s monotonic",
              "  %next = add i64 %c, %step", "  br label %test", "done:", "  ret void"]
    module.functions.append(f"define internal void @{symbol}.share(ptr %data) {nounwind} {{\n"
                            + "\n".join(share) + "\n}\n")

    params = ", ".join(f"{kind} {name}" for kind, name in fields[:-1])
    entry = ["entry:", f"  %block = alloca [{len(fields)} x i64], align 8", "  %status = alloca i32, align 4",
             "  store i32 0, ptr %status", *_stored(fields, "%block"),
             "  %threads = trunc i64 %n to i32",
              f"  call void @GOMP_parallel(ptr @{symbol}.share, ptr %block, i32 %threads, i32 0)",
              "  %result = load i32, ptr %status", "  ret i32 %result"]
    module.functions.append(f"define i32 @{symbol}.team({params}) {{\n" + "\n".join(entry) + "\n}\n")
