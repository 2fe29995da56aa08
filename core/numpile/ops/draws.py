"""random_bits: the counter-based generator numpile's random draws are made of.

A draw in a captured function is no mutable state: it is a pure function of a key and a counter
(tracer/variables/draws.py chains the call's seed, the draw's place in the trace and the
indices of the loops around it), so a loop body stays functional and every backend computes the
same stream. The function is splitmix64's finaliser (Steele, Lea and Flood, "Fast splittable
pseudorandom number generators", 2014) of key + (counter + 1) * golden ratio, a bijection of that
sum, wrapping as uint64 arithmetic does.
"""

from __future__ import annotations

import numpy as np

from .meta import as_meta, broadcast_shapes
from .registry import POINTWISE, ArrayMeta, register

GOLDEN = 0x9E3779B97F4A7C15
# the finaliser's (shift, multiplier) steps; a last xor-shift by FINAL
MIX = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB))
FINAL = 31


def random_bits(key, counter):
    with np.errstate(over="ignore"):
        z = np.asarray(key).astype(np.uint64) + (np.asarray(counter).astype(np.uint64) + np.uint64(1)) * np.uint64(GOLDEN)
        for shift, multiplier in MIX:
            z = (z ^ (z >> np.uint64(shift))) * np.uint64(multiplier)
        return z ^ (z >> np.uint64(FINAL))


def _signature(key, counter): ...


def _meta(key, counter):
    scalar = all(m.scalar for m in (key, counter) if isinstance(m, ArrayMeta))   # of NumPy scalars, a NumPy scalar
    key, counter = as_meta(key), as_meta(counter)
    if key.dtype.kind not in "iu" or counter.dtype.kind not in "iu":
        raise NotImplementedError(f"random_bits of {key.dtype} and {counter.dtype} (integers)")
    shape = broadcast_shapes(key.shape, counter.shape)
    return ArrayMeta(shape, np.dtype(np.uint64), scalar=scalar and shape == ())


register("random_bits", POINTWISE, impl=random_bits, meta=_meta, signature=_signature,
         doc="64 random bits of (key, counter), splitmix64 (emitted by the tracer for random draws)")
