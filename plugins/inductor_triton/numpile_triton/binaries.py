"""Compiled kernels numpile finds again itself: a new process launches them without Triton's JIT.

[Note: warm starts] Given a kernel it compiled in an earlier process, Triton's JIT still computes
its cache key, which hashes Triton's own sources and its 300 MB library (0.46 s of a 0.63 s first
call on the H100 box, once per process), imports its gluon packages to specialise the arguments
(0.1 s) and starts torch's CUDA state for the tensors it reads dtypes from. So when the JIT has
compiled (or loaded) a kernel, numpile records which entry of Triton's cache holds it and how it
was specialised, under a key of its own: the kernel module's source and the kernel's name, the
dtypes of its arrays (Triton types pointers by the arguments, not by the source), the launch's
configuration and specialisation (launch.py's key: warps, block values, integers,
alignment), Triton's version and the size and time of its library (two builds of one version
differ), Triton's cache-invalidating environment and debug settings, and the device's compute
capability. A later process with that key builds Triton's `CompiledKernel` from the entry's files
directly. The files are Triton's own cache entry, named by Triton's hash of all the above: one
missing is a miss (the JIT again, said under `perf`), never another kernel.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from numpile import disk_cache, logs

HEADER = b"numpile-triton kernel record 1\n"


@functools.cache
def _triton_build() -> str:
    """Triton's version and its library's size and time: what tells one build from another cheaply."""
    import triton
    library = Path(triton.__file__).parent / "_C" / "libtriton.so"
    stat = library.stat()
    return f"{triton.__version__} {stat.st_size} {stat.st_mtime_ns}"


def _environment() -> str:
    from triton import knobs
    from triton._C.libtriton import get_cache_invalidating_env_vars
    return repr((sorted(get_cache_invalidating_env_vars().items()), knobs.runtime.debug,
                 knobs.compilation.instrumentation_mode))


class Records:
    """The records of a kernel of module `source` taking arrays of `dtypes`, on a device of compute
    capability `capability`."""

    def __init__(self, source: str, capability: str, dtypes: tuple):
        self.prefix = "\0".join((source, capability, repr(dtypes), _triton_build()))

    def _name(self, fn, key) -> str:
        text = "\0".join((self.prefix, _environment(), fn.__name__, repr(key)))
        return f"triton/kernels/{hashlib.sha256(text.encode()).hexdigest()}.json"

    def load(self, fn, key):
        """Triton's compiled kernel for `fn` (a JITFunction) launched with `key`, or None."""
        payload = disk_cache.read(self._name(fn, key), HEADER)
        if payload is None:
            return None
        from triton.compiler.compiler import ASTSource, CompiledKernel
        record = json.loads(payload)
        source = ASTSource(fn, record["signature"], {tuple(k): v for k, v in record["constexprs"]},
                           {tuple(k): v for k, v in record["attrs"]})
        try:
            return CompiledKernel(source, record["group"], record["hash"])
        except (OSError, StopIteration, KeyError) as e:   # Triton's cache entry is gone or partial
            logs.get("perf").debug("triton: %s's record names a Triton cache entry that is gone (%s): compiled again",
                                   fn.__name__, e)
            return None

    def save(self, fn, key, kernel) -> None:
        """Records where Triton keeps `kernel` (a CompiledKernel from the JIT) and its specialisation."""
        source = kernel.src
        record = {"hash": kernel.hash, "group": kernel.metadata_group, "signature": source.signature,
                  "constexprs": [[list(k), v] for k, v in source.constants.items()],
                  "attrs": [[list(k), v] for k, v in source.attrs.items()]}
        try:
            payload = json.dumps(record).encode()
        except TypeError as e:   # a constant JSON cannot hold: the JIT finds this kernel each process
            logs.get("perf").debug("triton: %s is not recorded for later processes: %s", fn.__name__, e)
            return
        disk_cache.write(self._name(fn, key), HEADER, payload)
