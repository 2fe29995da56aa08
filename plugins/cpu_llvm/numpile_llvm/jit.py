"""LLVM IR text in, callable machine code out: the host target, the optimisation pipeline,
the on-disk cache of object code, and the lifetime of loaded code.

Every module is optimised at -O3 for the host CPU (its name and features) with the loop
and SLP vectorisers on and emitted as an object file. Object files are cached under
`config.cache_dir`, keyed by the IR and the target, so a second process compiles nothing; a
cache file that is unreadable, truncated or made for another key is ignored and rebuilt.

[Note: unloading] Each object file is loaded into an MCJIT engine of its own, owned by a `Code`;
every callable into the module holds its Code, so the code stays while anything can call it
(a call running on another thread holds its callable) and the engine is closed, its pages
freed, when the last holder goes. One engine per module because MCJIT cannot unload part of
an engine: `remove_module` leaves the code in its memory manager (Numba disabled it for
crashes and leaks), and llvmlite's OrcJIT keeps every library's JITDylib (about 10 KB each,
and linking slows as they pile up). An engine costs about 0.1 ms and 35 KB of its own.

[Note: leak] Optimising a module leaves 3 to 5 KB behind, and no more: llvmlite's pass builder
allocates instrumentation callbacks that nothing deletes, and each run registers one more into
them. Reusing one pass builder is no way out: a run's callbacks point into that run's stack, and
later runs call all of them (a tiny kernel's 9 ms optimisation took 58 ms after 3,000 others).
The pipeline itself, 70 to 140 KB a module, is deleted here (`_free`): llvmlite's close() does not.

LLVM's global context, the target machines and the engines are not thread-safe: every use of
llvmlite here holds `_lock`. Kernels already loaded keep running on other threads meanwhile.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
import time
import weakref
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

from numpile import disk_cache

from . import mathlib, pycall

_FORMAT = b"numpile-llvm-object-1\n"  # bump when the layout of cached objects changes
_lock = threading.RLock()  # re-entrant: compile_ir holds it across optimize and the engine
_loaded: weakref.WeakValueDictionary[str, Code] = weakref.WeakValueDictionary()  # cache key -> its Code, while held
_retired: list = []  # engines whose Code is gone, closed when a thread next holds _lock


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str
    features: str

    @property
    def description(self) -> str:
        return f"{self.triple} {self.cpu}"


class Code:
    """One module's machine code, loaded into an engine of its own, and the addresses of the
    functions asked for. The code stays loaded while this object lives (see [Note: unloading])."""

    def __init__(self, engine: "llvm.ExecutionEngine", addresses: dict[str, int]):
        self.addresses = addresses
        # not at exit: a daemon thread may still be in a kernel while the interpreter ends
        weakref.finalize(self, _retire, engine).atexit = False

    def function(self, name: str, proto):
        """The function `name` as a ctypes function of prototype `proto`; it holds this Code."""
        native = proto(self.addresses[name])
        native.code = self
        return native


def _llvm() -> tuple[Target, "llvm.TargetMachine"]:
    with _lock:
        return _start_llvm()


@cache
def _start_llvm() -> tuple[Target, "llvm.TargetMachine"]:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = Target(llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
    machine = llvm.Target.from_triple(target.triple).create_target_machine(
        cpu=target.cpu, features=target.features, opt=3, reloc="default", codemodel="jitdefault", jit=True)
    mathlib.register_symbols(llvm)
    pycall.register_symbols(llvm)
    return target, machine


def host() -> Target:
    return _llvm()[0]


def host_features() -> frozenset:
    """The CPU features LLVM sees on this host, e.g. {"avx2", "avx512f", ...}."""
    return frozenset(f[1:] for f in host().features.split(",") if f.startswith("+"))


@cache
def last_level_cache_bytes() -> int | None:
    """The size of this CPU's largest cache, where Linux says (sysfs); else None."""
    sizes = []
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        try:
            text = entry.read_text().strip()
        except OSError:
            continue
        unit = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * unit)
    return max(sizes, default=None)


def optimize(ir: str) -> "llvm.ModuleRef":
    _, machine = _llvm()
    with _lock:
        module = llvm.parse_assembly(ir)
        module.verify()
        tuning = llvm.create_pipeline_tuning_options(speed_level=3)
        tuning.loop_vectorization = True
        tuning.slp_vectorization = True
        builder = llvm.create_pass_builder(machine, tuning)
        passes = builder.getModulePassManager()
        try:
            passes.run(module, builder)
        finally:
            _free(passes)
        return module


def _free(passes: "llvm.ModulePassManager") -> None:
    """Delete a pipeline that has run. llvmlite's close() does not: from 0.45 on (0.50 still)
    ModulePassManager's bases are (ObjectRef, NewPassManager), so ObjectRef's `_dispose`, which
    does nothing, hides NewPassManager's (see [Note: leak]). This is the call NewPassManager's
    `_dispose` makes, a function of every llvmlite since 0.44."""
    llvm.ffi.lib.LLVMPY_DisposeNewModulePassManger(passes)
    passes.detach()


def cache_key(ir: str) -> str:
    target = host()
    text = "\n".join([_FORMAT.decode(), llvmlite.__version__, target.triple, target.cpu, target.features, ir])
    return hashlib.sha256(text.encode()).hexdigest()


def compile_ir(ir: str, symbols: list[str]) -> tuple[Code, str]:
    """Compile and load a module; return its Code (the addresses of `symbols`) and where the
    object came from ("disk cache", "compiled in N ms" or "already loaded")."""
    _, machine = _llvm()
    key = cache_key(ir)
    with _lock:  # one thread at a time in LLVM, and a module loaded once however many threads ask
        _close_retired()
        return _load(key, ir, symbols, machine)


def _load(key: str, ir: str, symbols: list[str], machine) -> tuple[Code, str]:
    code = _loaded.get(key)
    if code is not None:  # the same module again (another function with the same graph): same code
        return code, "already loaded"
    entry, header = f"llvm/{key}.o", _FORMAT + key.encode() + b"\n"  # a file renamed to another key is a miss
    obj = disk_cache.read(entry, header)
    origin = "disk cache"
    if obj is None:
        start = time.perf_counter()
        obj = machine.emit_object(optimize(ir))
        origin = f"compiled in {(time.perf_counter() - start) * 1e3:.1f} ms"
        disk_cache.write(entry, header, obj)
    engine = _engine(obj)
    addresses = {name: engine.get_function_address(name) for name in symbols}
    missing = [n for n, a in addresses.items() if not a]
    if missing:
        engine.close()
        raise RuntimeError(f"the compiled object defines no {', '.join(missing)}")
    code = _loaded[key] = Code(engine, addresses)
    return code, origin


def _engine(obj: bytes) -> "llvm.ExecutionEngine":
    """An engine with the object file loaded. Its target machine only links (the object is
    compiled already): a generic one, five times quicker to make than the host's."""
    empty = llvm.parse_assembly("")
    machine = llvm.Target.from_triple(host().triple).create_target_machine(reloc="default", codemodel="jitdefault",
                                                                           jit=True)
    engine = llvm.create_mcjit_compiler(empty, machine)
    engine.remove_module(empty)  # else finalize_object compiles it: 0.8 ms an engine
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    return engine


def _retire(engine: "llvm.ExecutionEngine") -> None:
    """A Code's finalizer: close its engine now if no other thread is in LLVM, else at the next
    compile. Never waits for the lock (a finalizer runs wherever the collector does)."""
    _retired.append(engine)
    if _lock.acquire(blocking=False):
        try:
            _close_retired()
        finally:
            _lock.release()


def _close_retired() -> None:
    while _retired:  # under _lock; closing one engine touches nothing another uses
        _retired.pop().close()


def loaded() -> int:
    """How many modules' code is in memory: held by a Code, or waiting to be closed."""
    with _lock:
        return len(_loaded) + len(_retired)


def optimized_ir(ir: str) -> str:
    """The module after optimisation, as `NUMPILE_LOGS=output_code` shows it."""
    with _lock:  # printing a module walks LLVM's context too
        return str(optimize(ir))


def function(code: Code, name: str, nargs_arrays: int, extra: int = 0):
    """Function `name` of `code` taking `nargs_arrays` ndarrays (as PyObject*) and `extra` int64s,
    returning int32.

    ctypes releases the GIL around the call, so threads can run kernels side by side."""
    proto = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.py_object] * nargs_arrays + [ctypes.c_int64] * extra))
    return code.function(name, proto)
