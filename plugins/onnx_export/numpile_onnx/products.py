"""Products: matmul (ONNX's MatMul broadcasts as NumPy's does), dot, outer, ufunc.outer and
einsum (written out in explicit form, NumPy's implicit output order made explicit)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .emit import BOOL, INT64, Emitter, OnnxUnsupported, Value
from .pointwise import ROWS as POINTWISE, wide


def _product_dtype(dtype) -> np.dtype:
    """Where onnxruntime multiplies `dtype`: booleans and narrow integers in int64 (a boolean
    product is then "any pair both true"), uint64 as int64 (the same bits), float16 in float32."""
    dtype = np.dtype(dtype)
    return INT64 if dtype == BOOL or dtype == np.uint64 else wide(dtype)


def _back(cx: Emitter, v: Value, dtype) -> Value:
    if np.dtype(dtype) == BOOL:
        return cx.op("Not", cx.op("Equal", v, cx.const(np.array(0, v.dtype)), dtype=BOOL), dtype=BOOL)
    return cx.cast(v, dtype)


def _matmul(cx, node, x1, x2):
    dt = _product_dtype(node.dtype)
    return _back(cx, cx.op("MatMul", *cx.operands((x1, x2), dt), dtype=dt), node.dtype)


def _scalar_product(cx, node, a, b):
    dt = _product_dtype(node.dtype)
    return _back(cx, cx.op("Mul", *cx.operands((a, b), dt), dtype=dt), node.dtype)


def _dot(cx, node, a, b):
    """Vectors and matrices: matmul; a scalar: a product; else the sum over a's last axis and
    b's second to last, as an einsum."""
    nd = [x.ndim if isinstance(x, Value) else 0 for x in (a, b)]
    if 0 in nd:
        return _scalar_product(cx, node, a, b)
    if max(nd) <= 2:
        return _matmul(cx, node, a, b)
    letters = "abcdefghijklmnopqrstuvwxyz"
    left = letters[:nd[0] - 1] + "z"
    rest = letters[nd[0] - 1:nd[0] - 1 + nd[1] - 1]
    right = rest[:-1] + "z" + rest[-1:] if nd[1] > 1 else "z"
    spec = f"{left},{right}->{left[:-1]}{rest[:-1]}{rest[-1:] if nd[1] > 1 else ''}"
    return _einsum_of(cx, node, spec, (a, b))


def _outer(cx, node, a, b):
    dt = _product_dtype(node.dtype)
    col = cx.op("Reshape", cx.cast(a, dt), cx.ints([-1, 1]), dtype=dt)
    row = cx.op("Reshape", cx.cast(b, dt), cx.ints([1, -1]), dtype=dt)
    return _back(cx, cx.op("Mul", col, row, dtype=dt), node.dtype)


def _ufunc_outer(cx, node, ufunc, A, B):
    """ufunc.outer(A, B): A reshaped to A.shape + (1,) * B.ndim, then the ufunc's own row."""
    name = ufunc if isinstance(ufunc, str) else ufunc.__name__
    if name not in POINTWISE or getattr(np, name).nin != 2:
        raise OnnxUnsupported(f"{name}.outer")
    nb = B.ndim if isinstance(B, Value) else np.ndim(B)
    if isinstance(A, Value):
        A = cx.op("Reshape", A, cx.ints(list(A.shape) + [1] * nb), dtype=A.dtype, shape=tuple(A.shape) + (1,) * nb)
    else:
        A = np.reshape(A, np.shape(A) + (1,) * nb)
    return POINTWISE[name](cx, SimpleNamespace(target=name, dtype=node.dtype, shape=node.shape), A, B)


def _explicit(subscripts: str, ndims: list[int]) -> str:
    """`subscripts` with its output written out as NumPy infers it: '...' first, then the labels
    used once, in sorted order (capitals first)."""
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        return spec
    labels = spec.replace("...", "").replace(",", "")
    once = sorted(c for c in set(labels) if labels.count(c) == 1)
    return f"{spec}->{'...' if '...' in spec else ''}{''.join(once)}"


def _einsum_of(cx, node, subscripts: str, operands) -> Value:
    dt = _product_dtype(node.dtype)
    values = cx.operands(operands, dt)
    spec = _explicit(subscripts, [v.ndim if v.shape is not None else 0 for v in values])
    out = cx.op("Einsum", *values, dtype=dt, equation=spec)
    return _back(cx, out, node.dtype)


def _einsum(cx, node, subscripts, *operands, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(subscripts, str):
        raise OnnxUnsupported("einsum with operands given as (array, sublist) pairs")
    if len(set(subscripts.split("->")[-1])) != len(subscripts.split("->")[-1]) and "->" in subscripts:
        raise OnnxUnsupported("einsum with a label repeated in the output")
    return _einsum_of(cx, node, subscripts, operands)


def _cov(cx, node, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """np.cov without weights: rows as variables, each centred on its mean, X @ X.T / (N - ddof)."""
    if fweights is not None or aweights is not None:
        raise OnnxUnsupported("cov with fweights or aweights")
    dt = wide(node.dtype)

    def rows(a):
        v = cx.cast(a, dt)
        shape = a.shape if isinstance(a, Value) else np.shape(a)
        if len(shape) < 2:
            v = cx.op("Reshape", v, cx.ints([1, -1]), dtype=dt)
        elif not rowvar:
            v = cx.op("Transpose", v, dtype=dt, perm=[1, 0])
        return v
    x = rows(m)
    if y is not None:
        x = cx.op("Concat", x, rows(y), dtype=dt, axis=0)
    shape = m.shape if isinstance(m, Value) else np.shape(m)
    observations = (shape[-1] if len(shape) < 2 or rowvar else shape[0])
    if not isinstance(observations, int):
        raise OnnxUnsupported("cov of a symbolic number of observations")
    ddof = (0 if bias else 1) if ddof is None else ddof
    if observations - ddof <= 0:   # NumPy divides by 0 (inf, NaN); onnxruntime refuses MatMul * inf
        raise OnnxUnsupported(f"cov of {observations} observations with ddof={ddof} (NumPy divides by zero)")
    mean = cx.op("ReduceMean", x, cx.ints([1]), dtype=dt, keepdims=1)
    centred = cx.op("Sub", x, mean, dtype=dt)
    product = cx.op("MatMul", centred, cx.op("Transpose", centred, dtype=dt, perm=[1, 0]), dtype=dt)
    scaled = cx.op("Div", product, cx.const(np.array(observations - ddof, dt)), dtype=dt)
    return cx.cast(cx.op("Reshape", scaled, cx.ints(node.shape), dtype=dt), node.dtype)


ROWS = {
    "matmul": _matmul,
    "dot": _dot,
    "outer": _outer,
    "ufunc_outer": _ufunc_outer,
    "einsum": _einsum,
    "cov": _cov,
}

_LAPACK = "ONNX has no LAPACK-style linear algebra op (opset 18 and later alike)"
UNSUPPORTED = {
    "solve": _LAPACK, "inv": _LAPACK, "cholesky": _LAPACK, "eigh": _LAPACK, "slogdet": _LAPACK,
    "qr": _LAPACK, "svd": _LAPACK,
}
