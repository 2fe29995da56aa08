"""Triton's CUDA driver reading the device and stream from CuPy, so that a program of CuPy arrays
does not import torch (4-5 s on the lent box): Triton's own driver imports torch to read them (its
GPUDriver, up to triton 3.6 at least); the rest of it (loading binaries, the launchers) is CUDA's and
is used as it is. It becomes Triton's active driver when a CuPy program is compiled before anything
imported torch; a program of torch tensors gives Triton its own driver back (device.TorchArrays).
Triton's JIT takes `Pointer`s for the CuPy arrays: it reads an argument's address from `data_ptr()`
and its pointer type from `dtype`. The JIT itself imports torch when it compiles (triton 3.6's native
argument specialiser), so a CuPy program's kernels are compiled without it (jitless.py), and a
process whose kernels are recorded (binaries.py) launches them without it too."""

from __future__ import annotations

import sys
from concurrent.futures import Future, ThreadPoolExecutor

# [Note: a cold first call's background work] A new process's first CuPy program pays, before its
# kernels run: the C module of Triton's driver utilities, built by gcc (0.36 s on the H200 box),
# Triton's cache key, a hash of its sources and its 200 MB library (0.37 s), each kernel's compile
# and each kernel's launcher, another C module built by gcc (0.27 s each). One after the other they
# made a 12-op graph's cold first call 1.75-2.5 s there. The driver utilities and the cache key are
# made on these threads from the moment the driver is installed, beside each other and beside the
# rendering; program.py compiles a program's kernels before its first run and builds their launchers
# here while the next kernel compiles (launch.py, `compile_ahead`). What a thread raises is raised
# where its result is needed, or (a launcher) said under `perf`, and the launch builds it again.
BACKGROUND = ThreadPoolExecutor(max_workers=4, thread_name_prefix="numpile-triton")
_KEY: list[Future] = []   # Triton's cache key, computed in the background (see the note)


def cache_key_ready() -> None:
    """Wait for the cache key the background computes (Triton's lru_cache then holds it) instead of
    computing it a second time beside it."""
    if _KEY:
        _KEY[0].result()


def install() -> None:
    """Make a CuPy-reading driver Triton's active one, unless torch is imported (its driver is then
    as cheap) or it already is."""
    from triton.runtime.driver import driver
    if "torch" not in sys.modules and not _ours(driver._active):
        if not _KEY:
            from triton.runtime.cache import triton_key
            _KEY.append(BACKGROUND.submit(triton_key))
        driver.set_active(_driver_class()())


def uninstall() -> None:
    """Triton's own driver active again, where this one is (a program of torch tensors)."""
    from triton.runtime.driver import driver
    if _ours(driver._active):
        driver.reset_active()


def _ours(active) -> bool:
    return bool(_CLASS) and isinstance(active, _CLASS[0])


class Pointer:
    """A CuPy array as Triton's JIT takes a pointer argument."""

    __slots__ = ("address", "dtype")

    def __init__(self, array):
        dtype = array.dtype   # a complex array's kernels read (real, imag) pairs of floats (pairs.py)
        self.address, self.dtype = array.data.ptr, dtype.type(0).real.dtype if dtype.kind == "c" else dtype

    def data_ptr(self) -> int:
        return self.address


_CLASS = []


def _driver_class():
    """The driver class, made on first use (it subclasses Triton's, whose import loads CUDA)."""
    if not _CLASS:
        import cupy
        from triton.backends.nvidia.driver import CudaDriver, CudaLauncher, CudaUtils

        class CupyDriver(CudaDriver):
            def __init__(self):   # Triton's sets what follows, then the torch readers below
                self._utils = BACKGROUND.submit(CudaUtils)   # built beside the first compile (the note above)
                self.launcher_cls = CudaLauncher

            @property
            def utils(self):
                return self._utils.result()

            def get_current_device(self) -> int:
                return cupy.cuda.runtime.getDevice()

            def set_current_device(self, device: int) -> None:
                cupy.cuda.runtime.setDevice(device)

            def get_current_stream(self, device=None) -> int:
                return cupy.cuda.get_current_stream().ptr

            def get_device_capability(self, device=None) -> tuple:
                return divmod(int(cupy.cuda.Device(device).compute_capability), 10)
        _CLASS.append(CupyDriver)
    return _CLASS[0]
