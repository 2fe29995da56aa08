"""What a conformance case is: an op, its arguments as a NumPy user writes them, array arguments
given as `Arr` specs that make fresh random arrays from the case's own seed."""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field, replace

import numpy as np

from ..graph import Graph
from ..ops import ArrayMeta

DTYPES = ("float32", "float64", "int32", "int64", "bool")
_SHORT = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8", "int32": "i32",
          "int64": "i64", "uint8": "u8", "bool": "b", "complex64": "c64",
          "complex128": "c128"}



@dataclass(frozen=True)
class Arr:
    """An array argument of a case: made fresh from the case's seed, never all zeros.

    Floats are uniform in [low, high], integers uniform in [ceil(low), floor(high)]
    (ilow/ihigh override that range), booleans random. `nonzero` keeps values away from
    zero (divisors); `special` puts NaN, inf, -inf and -0.0 among float values. `layout`
    makes a non-contiguous input: "T" (a transposed view), "rev" (negative strides on
    every axis) or "step" (every other element of the last axis). `scalar` makes a NumPy
    scalar instead of a 0-d array. `spd` makes a stack of symmetric positive definite
    matrices, x @ x.T + n I over the last two axes (cholesky; solve and inv well conditioned).
    `increasing` sorts the values along the last axis, with no repeats (histogram edges).
    """

    shape: tuple
    dtype: str = "float64"
    low: float = -4.0
    high: float = 4.0
    ilow: int | None = None
    ihigh: int | None = None
    nonzero: bool = False
    special: bool = False
    layout: str = "C"
    scalar: bool = False
    spd: bool = False
    increasing: bool = False

    def make(self, rng: np.random.Generator):
        shape = tuple(self.shape)
        if self.layout == "T":
            x = self._values(rng, shape[::-1]).T
        elif self.layout == "step" and shape:
            x = self._values(rng, shape[:-1] + (2 * shape[-1],))[..., ::2]
        elif self.layout == "rev":
            x = self._values(rng, shape)[(slice(None, None, -1),) * len(shape)]
        else:
            x = self._values(rng, shape)
        if self.special and x.dtype.kind in "fc":
            x.flat[:4] = (np.nan, np.inf, -np.inf, -0.0)[:x.size]
        if x.size and not x.any():  # never all zeros
            x.flat[0] = 1
        return x[()] if self.scalar else x

    def _values(self, rng, shape) -> np.ndarray:
        if self.spd:
            x = replace(self, spd=False)._values(rng, shape)
            return x @ x.swapaxes(-1, -2) + shape[-1] * np.eye(shape[-1], dtype=x.dtype)
        if self.increasing:
            x = np.sort(replace(self, increasing=False)._values(rng, shape), axis=-1)
            return x + np.arange(shape[-1], dtype=x.dtype) if shape else x  # repeats (integers) made distinct
        dtype = np.dtype(self.dtype)
        if dtype.kind == "b":
            return np.ones(shape, bool) if self.nonzero else rng.random(shape) < 0.5
        if dtype.kind in "iu":
            low = math.ceil(self.low) if self.ilow is None else self.ilow
            high = math.floor(self.high) if self.ihigh is None else self.ihigh
            values = rng.integers(low, high + 1, size=shape)
            if self.nonzero:
                values[values == 0] = high if high != 0 else low
            return values.astype(dtype)
        values = rng.uniform(self.low, self.high, size=shape)
        if dtype.kind == "c":
            values = values + 1j * rng.uniform(self.low, self.high, size=shape)
        if self.nonzero:
            values[np.abs(values) < 0.1] = 0.5
        return values.astype(dtype)

    def __str__(self) -> str:
        text = f"{_SHORT.get(self.dtype, self.dtype)}[{','.join(map(str, self.shape))}]"
        text += "" if self.layout == "C" else f".{self.layout}"
        flags = (("nan", self.special), ("scalar", self.scalar), ("spd", self.spd), ("inc", self.increasing))
        return text + "".join(f".{name}" for name, on in flags if on)


@dataclass(frozen=True)
class Case:
    """One call of one op. `values=False`: NumPy leaves the values unspecified (np.empty),
    so only the type, dtype and shape are compared."""

    op: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    values: bool = True
    id: str = ""

    @property
    def seed(self) -> int:
        return zlib.crc32(str(self).encode())

    def inputs(self) -> list:
        """The array arguments, fresh from the case's seed, in the order they appear."""
        rng = np.random.default_rng(self.seed)
        specs: list[Arr] = []
        _map_specs((self.args, self.kwargs), lambda s: specs.append(s) or s)
        return [s.make(rng) for s in specs]

    def bind(self, values: list) -> tuple[tuple, dict]:
        """args and kwargs with the Arr specs replaced by `values`, in order."""
        it = iter(values)
        return _map_specs((self.args, self.kwargs), lambda s: next(it))

    def __str__(self) -> str:
        return self.id or describe_case(self)


def metas_of(value):
    """What a meta rule sees for real call arguments: ArrayMeta for arrays and NumPy scalars (the
    tracer makes both graph values), constants unchanged, containers and slices mapped through."""
    if isinstance(value, (np.ndarray, np.generic)):
        return ArrayMeta.of(value)
    if isinstance(value, (tuple, list)):
        return type(value)(metas_of(v) for v in value)
    if isinstance(value, dict):
        return {k: metas_of(v) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(metas_of(value.start), metas_of(value.stop), metas_of(value.step))
    return value


def _map_specs(value, fn):
    if isinstance(value, Arr):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_map_specs(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map_specs(v, fn) for k, v in value.items()}
    return value


def _render(value) -> str:
    if isinstance(value, Arr):
        return str(value)
    if isinstance(value, tuple):
        return "(" + ",".join(map(_render, value)) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, list):
        return "[" + ",".join(map(_render, value)) + "]"
    if isinstance(value, slice):
        text = ":".join("" if b is None else str(b) for b in (value.start, value.stop))
        return text if value.step is None else f"{text}:{value.step}"
    if value is Ellipsis:
        return "..."
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, Graph):   # a loop's body
        return "body[" + ",".join(n.target for n in value.calls) + "]"
    return str(value)


def describe_case(case: Case) -> str:
    parts = [_render(a) for a in case.args] + [f"{k}={_render(v)}" for k, v in case.kwargs.items()]
    return f"{case.op}({','.join(parts)})"
