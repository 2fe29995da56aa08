"""A kernel of a CuPy program compiled by Triton's compiler without its JIT's `run`, so that the
process does not import torch.

[Note: compiling without the JIT] Triton's JIT (3.6) binds a launch's arguments with a function it
generates (`dynamic_func`), whose native argument specialiser imports torch: 4-5 s of a cold first
call on the lent H200 box, for a program whose arrays are CuPy's (traced there with an import
hook). What the JIT works out from the arguments, launch.py's key already says: which addresses are
16-byte aligned, which integers are 1, multiples of 16 or past 32 bits. So the signature, constants
and attributes are written from the arguments by the JIT's rules (an integer 1 a constant, an
aligned address or a multiple of 16 `tt.divisibility` 16, an integer past 32 bits i64) and handed
to `triton.compile`, which finds Triton's disk cache as the JIT does. Only where torch is not
imported yet (else the JIT costs nothing more) and the launch passes every parameter; any failure
falls back to the JIT, said under `perf`.
"""

from __future__ import annotations

import sys

from numpile import logs

from .cupy_driver import cache_key_ready

# NumPy dtype names -> Triton's pointee types (the JIT's canonical names)
POINTEE = {"bool": "u1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
           "uint16": "u16", "uint32": "u32", "uint64": "u64", "float16": "fp16", "float32": "fp32",
           "float64": "fp64", "complex64": "fp32", "complex128": "fp64"}   # complex: (real, imag) pairs (pairs.py)
DIVISIBLE = [["tt.divisibility", 16]]


def compiled(fn, arrays: tuple, pointers: list, values: tuple, warps: int, cupy: bool):
    """The CompiledKernel of `fn` (a JITFunction) for these arrays (their addresses `pointers`) and
    the values after them (sizes, then block sizes), or None where the JIT is to compile it."""
    if not cupy or "torch" in sys.modules or len(fn.params) != len(arrays) + len(values):
        return None
    try:
        from triton.compiler.compiler import ASTSource, compile
        cache_key_ready()
        signature, constants, attrs = _specialised(fn, arrays, pointers, values)
        return compile(ASTSource(fn, signature, constants, attrs),
                       options={"num_warps": warps, "enable_fp_fusion": False})
    except Exception as e:   # noqa: BLE001  the JIT compiles it then (and imports torch)
        logs.get("perf").debug("triton: %s is compiled through Triton's JIT, which imports torch: %s: %s",
                               fn.__name__, type(e).__name__, e)
        return None


def _specialised(fn, arrays, pointers, values) -> tuple[dict, dict, dict]:
    signature, constants, attrs = {}, {}, {}
    for i, (param, value) in enumerate(zip(fn.params, (*arrays, *values))):
        name, path = param.name, (i,)
        if param.is_constexpr:
            signature[name], constants[path] = "constexpr", value
        elif i < len(arrays):
            signature[name] = "*" + POINTEE[str(value.dtype)]
            if pointers[i] % 16 == 0 and not param.do_not_specialize_on_alignment:
                attrs[path] = DIVISIBLE
        elif type(value) is not int:
            raise TypeError(f"argument {name} is a {type(value).__name__}")
        elif value == 1 and not param.do_not_specialize:
            signature[name], constants[path] = "constexpr", 1
        else:
            signature[name] = "i32" if -2 ** 31 <= value < 2 ** 31 else "i64"
            if value % 16 == 0 and not param.do_not_specialize and not param.do_not_specialize_on_alignment:
                attrs[path] = DIVISIBLE
    return signature, constants, attrs


def launcher(kernel) -> None:
    """Build (into Triton's cache) the launcher of a compiled kernel, on a background thread, so that
    the kernel's first launch finds it built (see cupy_driver's note)."""
    from triton.runtime.driver import driver
    try:
        driver.active.launcher_cls(kernel.src, kernel.metadata)
    except Exception as e:   # noqa: BLE001  its first launch builds it, and raises what is wrong
        logs.get("perf").debug("triton: the launcher of %s was not built ahead: %s: %s", getattr(kernel, "name", "a kernel"),
                               type(e).__name__, e)
