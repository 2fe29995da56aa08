"""What a program of device arrays runs with NumPy's functions rather than Triton kernels, on the
device arrays themselves: NumPy hands a call on CuPy arrays to CuPy (`__array_function__`,
`__array_ufunc__`; torch tensors are viewed as CuPy arrays), so matmul is cuBLAS's and a kernel the
renderer has no form for (complex values, a scan, a gather) runs through the lowering's reference
renderer as CuPy operations, with no copy to the host. What CuPy cannot run goes to host copies from
then on, said once under `perf`.
"""

from __future__ import annotations

from numpile import logs, ops
from numpile.lowering import Kernel
from numpile.lowering.reference import run_kernel

from .device import cupy_copy


def _each(value, convert, is_array):
    """`value` with each device array in it (through tuples and lists) converted."""
    if is_array(value):
        return convert(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_each(v, convert, is_array) for v in value)
    return value


def _defaults(op: str) -> dict:
    """The keyword arguments of the op's NumPy signature that have plain defaults. A graph node spells
    every one out; on the device those still at their default are left out, since CuPy's function
    may predate them (`np.linalg.cholesky(a, upper=False)`: NumPy 2.0's keyword, not CuPy's)."""
    plain = (bool, int, float, str, type(None))
    return {p.name: p.default for p in ops.get(op).signature.parameters.values()
            if p.default is not p.empty and isinstance(p.default, plain)}


class DeviceExtern:
    """An extern run by its NumPy implementation on the device arrays. If its first run fails there
    (CuPy lacks the function, refuses the implicit conversion to NumPy, or is stricter than NumPy:
    `min(axis=-1)` of a 0-d array), it runs on host copies: an error there is the op's own, NumPy's,
    and propagates; else it runs there from then on (through the arrays' own operator where they
    have one: `arrays.operators`). An error of a later device run is the op's own."""

    def __init__(self, impl, op: str, arrays, graph_name: str):
        self.impl, self.op, self.arrays, self.graph_name = impl, op, arrays, graph_name
        self.defaults = _defaults(op)
        self.state = "untried"   # then "device" or "host"
        self.operator = arrays.operators.get(op)   # once it ran on the device, a call with no keywords

    def __call__(self, *args, **kwargs):
        if self.state == "device" and self.operator is not None and not kwargs:
            return self.operator(*args)
        if self.state != "host":
            d = self.defaults
            given = {k: v for k, v in kwargs.items() if not (k in d and type(v) is type(d[k]) and v == d[k])}
            try:
                result = self._call(self.arrays.numpy_view, args, given)
            except Exception as e:
                if self.state == "device":
                    raise
                result = self._call(self.arrays.to_host, args, kwargs)
                self.state = "host"
                logs.get("perf").debug("triton: %s of %s runs with NumPy on host copies: CuPy cannot run it (%s: %s)",
                                       self.op, self.graph_name, type(e).__name__, e)
                return result
            self.state = "device"
            return result
        return self._call(self.arrays.to_host, args, kwargs)

    def _call(self, convert, args, kwargs):
        is_array = self.arrays.is_array
        return self.impl(*_each(args, convert, is_array), **{k: _each(v, convert, is_array) for k, v in kwargs.items()})


class DeviceFallback:
    """A kernel the renderer has no Triton form for, run by the reference renderer on the device
    arrays (`buffers`: name -> device array, its outputs allocated or holding the values it updates).
    If its first run fails there (an op CuPy lacks), the buffers it updates get their values back and
    it runs on host copies from then on, its results copied into the device buffers; an error of a
    later device run, or of the host run, is the program's own."""

    def __init__(self, kernel: Kernel, arrays, graph_name: str):
        self.kernel, self.arrays, self.graph_name = kernel, arrays, graph_name
        self.state = "untried"   # then "device" or "host"

    def __call__(self, buffers: dict, symbols: list) -> None:
        views = {name: self.arrays.numpy_view(b) for name, b in buffers.items()}
        if self.state != "host":
            updated = set(self.kernel.outputs) & set(self.kernel.inputs)
            kept = {n: views[n].copy() for n in updated} if self.state == "untried" else {}
            try:
                run_kernel(self.kernel, views, symbols)
                self.state = "device"
                return
            except Exception as e:
                if self.state == "device":
                    raise
                self.state = "host"
                logs.get("perf").debug("triton: %s of %s runs with NumPy on host copies: CuPy cannot run it (%s: %s)",
                                       self.kernel.name, self.graph_name, type(e).__name__, e)
                for name, value in kept.items():
                    views[name][...] = value
        host = {name: self.arrays.to_host(b) for name, b in buffers.items()}
        run_kernel(self.kernel, host, symbols)
        for name in self.kernel.outputs:
            views[name][...] = cupy_copy(self.arrays.cupy, host[name])
