"""One row of the kernel corpus: a NumPy program, the loops Numba compiles for it, its inputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

try:
    from numba import njit
except ImportError:   # the loop versions stay plain Python: still callable, on tiny inputs, by the tests
    def njit(fn):
        return fn


@dataclass(frozen=True)
class Kernel:
    name: str
    numpy: Callable      # the program as its authors write it in NumPy (loops over time steps, rows, pivots)
    loops: Callable      # the same computation written as loops for Numba's @njit
    make: Callable       # make(rng, *dims) -> the arguments; both versions may update them in place
    sizes: dict          # {"tiny": dims, "small": dims, "large": dims}; tiny is for the tests

    def args(self, size: str, rng) -> tuple:
        return self.make(rng, *self.sizes[size])
