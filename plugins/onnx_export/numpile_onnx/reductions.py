"""Reductions and scans: axes as an input tensor (opset 18), keepdims as NumPy's, NaNs as NumPy's
(max, min and argmax see them), mean/var/std summed in NumPy's accumulator dtype with `ddof`."""

from __future__ import annotations

import math

import numpy as np

from numpile.ops.reductions import reduced_axes

from . import numerics
from .emit import BOOL, FLOAT64, INT64, Emitter, OnnxUnsupported, Value
from .pointwise import wide

INT32 = np.dtype(np.int32)


def _reduce(cx: Emitter, onnx_op: str, x: Value, axes: tuple, keepdims: bool) -> Value:
    """`onnx_op` over `axes`; no axes (a 0-d input, axis=()) is no reduction at all."""
    if not axes:
        return x
    return cx.op(onnx_op, x, cx.ints(axes), dtype=x.dtype, keepdims=int(bool(keepdims)))


def _summable(dtype) -> np.dtype:
    """Where onnxruntime sums `dtype`: narrow integers in int64, uint64 as int64 (the same bits)."""
    dtype = wide(dtype)
    return INT64 if dtype == np.uint64 else dtype


def _sum_like(onnx_op):
    def convert(cx, node, a, axis=None, dtype=None, keepdims=False):
        axes = reduced_axes(axis, a.ndim)
        x = cx.cast(a, _summable(node.dtype))
        return cx.cast(_reduce(cx, onnx_op, x, axes, keepdims), node.dtype)
    return convert


def _extreme(onnx_op):
    """max/min: a NaN anywhere in a slice is that slice's result, as in NumPy."""
    def convert(cx, node, a, axis=None, keepdims=False):
        axes = reduced_axes(axis, a.ndim)
        dt = node.dtype
        if dt == np.uint64:
            raise OnnxUnsupported("the order of uint64 values (onnxruntime has no uint64 ReduceMax/ReduceMin)")
        compute = INT32 if dt == BOOL else INT64 if dt.kind in "iu" and dt.itemsize < 4 or dt == np.uint32 else wide(dt)
        x = cx.cast(a, compute)
        out = _reduce(cx, onnx_op, x, axes, keepdims)
        if compute.kind == "f" and axes:
            nans = _reduce(cx, "ReduceMax", cx.cast(cx.op("IsNaN", x, dtype=BOOL), INT32), axes, keepdims)
            out = numerics.where(cx, cx.cast(nans, BOOL), cx.const(np.array(np.nan, compute)), out)
        return cx.cast(out, dt)
    return convert


def _truth(all_):
    """any/all as counts (ReduceMax of an empty slice is not False): any has a nonzero, all no zero."""
    def convert(cx, node, a, axis=None, keepdims=False):
        axes = reduced_axes(axis, a.ndim)
        truth = cx.cast(a, BOOL)
        if not axes:
            return truth
        counted = cx.op("Not", truth, dtype=BOOL) if all_ else truth
        count = _reduce(cx, "ReduceSum", cx.cast(counted, INT64), axes, keepdims)
        return numerics.cmp(cx, "Equal" if all_ else "Greater", count, 0)
    return convert


def _count(cx: Emitter, a: Value, axes: tuple, dtype) -> Value:
    """How many elements each slice of `axes` has, as a scalar of `dtype`."""
    n = math.prod([a.shape[i] for i in axes]) if axes else 1
    if isinstance(n, int):
        return cx.const(np.array(n, dtype=dtype))
    return cx.cast(cx.op("Squeeze", cx.size(n), dtype=INT64), dtype)


def _accumulator(a: Value, dtype) -> np.dtype:
    """The dtype NumPy's mean and var sum in: dtype= if given, float64 for integers and booleans."""
    if dtype is not None:
        return np.dtype(dtype)
    return FLOAT64 if a.dtype.kind in "biu" else a.dtype


def _mean_of(cx, a: Value, axes, acc, keepdims) -> Value:
    x = cx.cast(a, wide(acc))
    total = _reduce(cx, "ReduceSum", x, axes, keepdims)
    return cx.op("Div", total, _count(cx, a, axes, total.dtype), dtype=total.dtype)


def _mean(cx, node, a, axis=None, dtype=None, keepdims=False):
    axes = reduced_axes(axis, a.ndim)
    if _accumulator(a, dtype).kind != "f":
        raise OnnxUnsupported(f"mean in {np.dtype(dtype)} (NumPy truncates each step)")
    return cx.cast(_mean_of(cx, a, axes, _accumulator(a, dtype), keepdims), node.dtype)


def _var_of(cx, node, a, axis, dtype, ddof, keepdims) -> Value:
    """The mean of squared deviations over count - ddof (at least 0: NumPy's inf or NaN)."""
    axes = reduced_axes(axis, a.ndim)
    acc = _accumulator(a, dtype)
    if acc.kind != "f":
        raise OnnxUnsupported(f"{node.target} in {acc} (NumPy truncates each step)")
    mean = _mean_of(cx, a, axes, acc, True)
    dev = cx.op("Sub", cx.cast(a, mean.dtype), mean, dtype=mean.dtype)
    total = _reduce(cx, "ReduceSum", cx.op("Mul", dev, dev, dtype=dev.dtype), axes, keepdims)
    n = cx.op("Sub", _count(cx, a, axes, total.dtype), cx.const(np.array(ddof, total.dtype)), dtype=total.dtype)
    n = cx.op("Max", n, cx.const(np.array(0, total.dtype)), dtype=total.dtype)
    return cx.op("Div", total, n, dtype=total.dtype)


def _var(cx, node, a, axis=None, dtype=None, ddof=0, keepdims=False):
    return cx.cast(_var_of(cx, node, a, axis, dtype, ddof, keepdims), node.dtype)


def _std(cx, node, a, axis=None, dtype=None, ddof=0, keepdims=False):
    var = _var_of(cx, node, a, axis, dtype, ddof, keepdims)
    return cx.cast(cx.op("Sqrt", var, dtype=var.dtype), node.dtype)


def _arg(onnx_op):
    """argmax/argmin: the first extreme, or the first NaN where a slice has one (NumPy's)."""
    def convert(cx, node, a, axis=None, keepdims=False):
        dt = a.dtype
        if dt == np.uint64:
            raise OnnxUnsupported("the order of uint64 values (onnxruntime has no uint64 ArgMax)")
        x = cx.cast(a, INT32 if dt == BOOL else INT64 if dt.kind in "iu" and dt.itemsize < 4 or dt == np.uint32 else wide(dt))
        if axis is None:   # over the flattened array
            x = cx.op("Reshape", x, cx.ints([-1]), dtype=x.dtype)
            ax, keep = 0, False
        else:
            ax, keep = reduced_axes(axis, a.ndim)[0] if a.ndim else 0, keepdims
        if a.ndim == 0 and axis is not None:
            x = cx.op("Reshape", x, cx.ints([1]), dtype=x.dtype)
        out = cx.op(onnx_op, x, dtype=INT64, axis=ax, keepdims=int(bool(keep)))
        if x.dtype.kind == "f":
            nan = cx.cast(cx.op("IsNaN", x, dtype=BOOL), INT32)
            first_nan = cx.op("ArgMax", nan, dtype=INT64, axis=ax, keepdims=int(bool(keep)))
            has_nan = cx.cast(cx.op("ReduceMax", nan, cx.ints([ax]), dtype=INT32, keepdims=int(bool(keep))), BOOL)
            out = numerics.where(cx, has_nan, first_nan, out)
        if axis is None and keepdims and a.ndim:
            out = cx.op("Reshape", out, cx.ints([1] * a.ndim), dtype=INT64)
        if a.ndim == 0 and axis is not None:
            out = cx.op("Reshape", out, cx.ints([]), dtype=INT64)
        return out
    return convert


def _cumsum(cx, node, a, axis=None, dtype=None):
    x = cx.cast(a, _summable(node.dtype))
    if axis is None or a.ndim == 0:
        x, ax = cx.op("Reshape", x, cx.ints([-1]), dtype=x.dtype), 0
    else:
        ax = reduced_axes(axis, a.ndim)[0]
    out = cx.op("CumSum", x, cx.const(np.array(ax, np.int64)), dtype=x.dtype)
    return cx.cast(out, node.dtype)


# the longest axis a cumulative product is unrolled along (one Mul per element)
CUMPROD_UNROLL = 1024


def _cumprod(cx, node, a, axis=None, dtype=None):
    """ONNX has no cumulative product: along an axis of known length, the running products of
    its slices, one after another, in NumPy's order."""
    x = cx.cast(a, _summable(node.dtype))
    if axis is None or a.ndim == 0:
        x, ax, n = cx.op("Reshape", x, cx.ints([-1]), dtype=x.dtype), 0, math.prod(a.shape)
    else:
        ax = reduced_axes(axis, a.ndim)[0]
        n = a.shape[ax]
    if not isinstance(n, int) or n > CUMPROD_UNROLL:
        raise OnnxUnsupported(f"cumprod along an axis of {n} elements (ONNX has no cumulative product; "
                              f"up to {CUMPROD_UNROLL} known ones are unrolled)")
    if n <= 1:
        return cx.cast(cx.op("Identity", x, dtype=x.dtype), node.dtype)
    parts = cx.op("Split", x, cx.ints([1] * n), dtype=x.dtype, outputs=n, axis=ax)
    running = [parts[0]]
    for part in parts[1:]:
        running.append(cx.op("Mul", running[-1], part, dtype=x.dtype))
    return cx.cast(cx.op("Concat", *running, dtype=x.dtype, axis=ax), node.dtype)


def _norm(cx, node, x, ord=None, axis=None, keepdims=False):
    """np.linalg.norm over one axis (or a 1-D array): max/min of |x| (ord inf/-inf), the count of
    nonzeros (0), sum(|x|**p)**(1/p); over two axes the Frobenius norm, or the largest/smallest
    column (1/-1) or row (inf/-inf) sum of |x|. Integers are norms of floats, as in NumPy."""
    dt = wide(node.dtype)
    v = cx.cast(x, dt)
    two_axes = isinstance(axis, tuple) and len(axis) == 2 or axis is None and x.ndim == 2 and ord is not None
    if axis is None and (ord is None or x.ndim == 1):   # the 2-norm of the flattened array, or a vector's norm
        axes = tuple(range(x.ndim))
    else:
        axes = reduced_axes(axis, x.ndim)
    if ord is None or ord == "fro" and (two_axes or axis is None) or ord == 2 and not two_axes:
        total = _reduce(cx, "ReduceSum", cx.op("Mul", v, v, dtype=dt), axes, keepdims)
        return cx.cast(cx.op("Sqrt", total, dtype=dt), node.dtype)
    magnitude = cx.op("Abs", v, dtype=dt)
    if two_axes and ord in (1, -1, np.inf, -np.inf):
        rows, cols = axes
        inner, outer = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = _reduce(cx, "ReduceSum", magnitude, (inner,), True)
        out = _reduce(cx, "ReduceMax" if ord > 0 else "ReduceMin", sums, (outer,), True)
        return cx.cast(out if keepdims else cx.op("Squeeze", out, cx.ints(sorted(axes)), dtype=dt), node.dtype)
    if two_axes or isinstance(ord, str):
        raise OnnxUnsupported(f"norm with ord={ord!r} over two axes (it needs singular values)")
    if ord in (np.inf, -np.inf):
        return cx.cast(_reduce(cx, "ReduceMax" if ord > 0 else "ReduceMin", magnitude, axes, keepdims), node.dtype)
    if ord == 0:
        nonzero = cx.cast(cx.cast(v, BOOL), dt)
        return cx.cast(_reduce(cx, "ReduceSum", nonzero, axes, keepdims), node.dtype)
    if ord == 1:
        return cx.cast(_reduce(cx, "ReduceSum", magnitude, axes, keepdims), node.dtype)
    p = cx.const(np.array(float(ord), dt))
    total = _reduce(cx, "ReduceSum", cx.op("Pow", magnitude, p, dtype=dt), axes, keepdims)
    inverse = cx.const(np.array(1.0 / float(ord), dt))
    return cx.cast(cx.op("Pow", total, inverse, dtype=dt), node.dtype)


ROWS = {
    "sum": _sum_like("ReduceSum"),
    "prod": _sum_like("ReduceProd"),
    "max": _extreme("ReduceMax"),
    "min": _extreme("ReduceMin"),
    "any": _truth(False),
    "all": _truth(True),
    "mean": _mean,
    "var": _var,
    "std": _std,
    "argmax": _arg("ArgMax"),
    "argmin": _arg("ArgMin"),
    "cumsum": _cumsum,
    "cumprod": _cumprod,
    "norm": _norm,
}

UNSUPPORTED = {
    "histogram": "its bin edges and counts are computed from the data's range in NumPy's own order",
    "histogram_bin_edges": "its bin edges are computed from the data's range in NumPy's own order",
    "bincount": "its length is known only from the data",
}
