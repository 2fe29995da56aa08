"""LLVM IR text in, callable machine code out: the host target, the optimisation pipeline,
and the on-disk cache of object code.

Every module is optimised at -O3 for the host CPU (its name and features) with the loop
and SLP vectorisers on, emitted as an object file, and loaded into one process-wide MCJIT
engine. Object files are cached under `config.cache_dir`, keyed by the IR and the target,
so a second process compiles nothing; a cache file that is unreadable, truncated or made
for another key is ignored and rebuilt.

LLVM's global context, the target machine and the engine are not thread-safe: every use of
llvmlite here holds `_lock`. Kernels already loaded keep running on other threads meanwhile
(adding an object maps new pages; it never touches the code of earlier ones).
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm

from numpile import disk_cache

from . import mathlib, pycall

_FORMAT = b"numpile-llvm-object-1\n"  # bump when the layout of cached objects changes
_lock = threading.RLock()  # re-entrant: compile_ir holds it across optimize and the engine
_loaded: dict[str, dict[str, int]] = {}  # cache key -> symbol addresses, for modules already in the engine


@dataclass(frozen=True)
class Target:
    triple: str
    cpu: str
    features: str

    @property
    def description(self) -> str:
        return f"{self.triple} {self.cpu}"


def _llvm() -> tuple[Target, "llvm.TargetMachine", "llvm.ExecutionEngine"]:
    with _lock:
        return _start_llvm()


@cache
def _start_llvm() -> tuple[Target, "llvm.TargetMachine", "llvm.ExecutionEngine"]:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    target = Target(llvm.get_process_triple(), llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten())
    machine = llvm.Target.from_triple(target.triple).create_target_machine(
        cpu=target.cpu, features=target.features, opt=3, reloc="default", codemodel="jitdefault", jit=True)
    mathlib.register_symbols(llvm)
    pycall.register_symbols(llvm)
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), machine)
    return target, machine, engine


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
    _, machine, _ = _llvm()
    with _lock:
        module = llvm.parse_assembly(ir)
        module.verify()
        tuning = llvm.create_pipeline_tuning_options(speed_level=3)
        tuning.loop_vectorization = True
        tuning.slp_vectorization = True
        builder = llvm.create_pass_builder(machine, tuning)
        builder.getModulePassManager().run(module, builder)
        return module


def cache_key(ir: str) -> str:
    target = host()
    text = "\n".join([_FORMAT.decode(), llvmlite.__version__, target.triple, target.cpu, target.features, ir])
    return hashlib.sha256(text.encode()).hexdigest()


def compile_ir(ir: str, symbols: list[str]) -> tuple[dict[str, int], str]:
    """Compile a module and return the addresses of `symbols`, and where the object came from
    ("disk cache" or "compiled in N ms")."""
    _, machine, engine = _llvm()
    key = cache_key(ir)
    with _lock:  # one thread at a time in LLVM, and a module loaded once however many threads ask
        return _load(key, ir, symbols, machine, engine)


def _load(key: str, ir: str, symbols: list[str], machine, engine) -> tuple[dict[str, int], str]:
    if key in _loaded:  # the same module again (another function with the same graph): same code
        return _loaded[key], "already loaded"
    entry, header = f"llvm/{key}.o", _FORMAT + key.encode() + b"\n"  # a file renamed to another key is a miss
    obj = disk_cache.read(entry, header)
    origin = "disk cache"
    if obj is None:
        start = time.perf_counter()
        obj = machine.emit_object(optimize(ir))
        origin = f"compiled in {(time.perf_counter() - start) * 1e3:.1f} ms"
        disk_cache.write(entry, header, obj)
    engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    addresses = {name: engine.get_function_address(name) for name in symbols}
    _loaded[key] = addresses
    missing = [n for n, a in addresses.items() if not a]
    if missing:
        raise RuntimeError(f"the compiled object defines no {', '.join(missing)}")
    return addresses, origin


def optimized_ir(ir: str) -> str:
    """The module after optimisation, as `NUMPILE_LOGS=output_code` shows it."""
    with _lock:  # printing a module walks LLVM's context too
        return str(optimize(ir))


def function(address: int, nargs_arrays: int, extra: int = 0):
    """A ctypes function taking `nargs_arrays` ndarrays (as PyObject*) and `extra` int64s, returning int32.

    ctypes releases the GIL around the call, so threads can run kernels side by side."""
    proto = ctypes.CFUNCTYPE(ctypes.c_int32, *([ctypes.py_object] * nargs_arrays + [ctypes.c_int64] * extra))
    return proto(address)
