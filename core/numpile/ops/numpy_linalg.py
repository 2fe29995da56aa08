"""np.linalg: solve, inv, cholesky, det and matrix_power, and eigh, slogdet, qr and svd, which return several
results in NumPy's named tuples (LAPACK calls through NumPy, over stacks of matrices), and norm
(a reduction, vector or matrix by its axes).

Dtypes and most of NumPy's refusals (too few dims, an unknown norm order, repeated axes) come
from the same call on probes; what a 1x1 probe cannot show (square matrices, matching
sizes) is checked here. A singular matrix is a fact of the data: NumPy raises LinAlgError
when the graph runs.
"""

from __future__ import annotations

import numpy as np

from . import params
from .meta import as_meta, broadcast_shapes, normalize_axis_tuple, probe_call
from .registry import LINALG, REDUCTION, ArrayMeta, register


def _square(a: ArrayMeta) -> None:
    if a.shape[-2] != a.shape[-1]:
        raise np.linalg.LinAlgError("Last 2 dimensions of the array must be square")


# -- solve, inv, cholesky ------------------------------------------------------------------

def _solve_sig(a, b): ...


def _solve_meta(a, b):
    """a (..., M, M); b (..., M, K), or (M,) when it is 1-D (NumPy 2's rule): the batch dims broadcast."""
    a, b = as_meta(a), as_meta(b)
    dtype = probe_call(np.linalg.solve, a, b).dtype
    _square(a)
    m = a.shape[-1]
    rows = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if rows != m:
        raise ValueError(f"solve: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
                         f"(m,m),(m{',n' if b.ndim > 1 else ''})->(m{',n' if b.ndim > 1 else ''}) "
                         f"(size {rows} is different from {m})")
    if b.ndim == 1:
        return ArrayMeta(a.shape[:-2] + (m,), dtype)
    return ArrayMeta(broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (m, b.shape[-1]), dtype)


register("solve", LINALG, impl=np.linalg.solve, meta=_solve_meta, signature=_solve_sig,
         numpy=(np.linalg.solve,), doc="np.linalg.solve")


def _square_meta(fn):
    """inv, cholesky: a stack of square matrices to one of the same shape."""
    def meta(a, **kwargs):
        a = as_meta(a)
        dtype = probe_call(fn, a, **kwargs).dtype
        _square(a)
        return ArrayMeta(a.shape, dtype)
    return meta


def _inv_sig(a): ...
def _cholesky_sig(a, /, *, upper=False): ...


register("inv", LINALG, impl=np.linalg.inv, meta=_square_meta(np.linalg.inv), signature=_inv_sig,
         numpy=(np.linalg.inv,), doc="np.linalg.inv")
register("cholesky", LINALG, impl=np.linalg.cholesky, meta=_square_meta(np.linalg.cholesky),
         signature=_cholesky_sig, numpy=(np.linalg.cholesky,), doc="np.linalg.cholesky")


# -- eigh, slogdet, qr, svd: several results -----------------------------------------------

def _results(probed, shapes):
    """NumPy's result (its named tuple, a plain tuple or one array, as `probed`, the result on
    probes) with the metas of `shapes`, in the probed dtypes; 0-d results are NumPy scalars."""
    if not isinstance(probed, tuple):
        (shape,) = shapes
        return ArrayMeta(tuple(shape), probed.dtype)
    metas = [ArrayMeta(tuple(shape), r.dtype, scalar=isinstance(r, np.generic)) for shape, r in zip(shapes, probed)]
    return type(probed)(*metas) if hasattr(probed, "_fields") else tuple(metas)


def _eigh_sig(a, UPLO="L"): ...


def _eigh_meta(a, UPLO="L"):
    a = as_meta(a)
    probed = probe_call(np.linalg.eigh, a, UPLO)  # NumPy's refusals (too few dims, a bad UPLO) first
    _square(a)
    return _results(probed, (a.shape[:-1], a.shape))


def _slogdet_sig(a): ...


def _slogdet_meta(a):
    a = as_meta(a)
    probed = probe_call(np.linalg.slogdet, a)
    _square(a)
    return _results(probed, (a.shape[:-2], a.shape[:-2]))


def _qr_sig(a, mode="reduced"): ...


def _qr_meta(a, mode="reduced"):
    a = as_meta(a)
    probed = probe_call(np.linalg.qr, a, mode)
    *batch, m, n = a.shape
    k = min(m, n)
    shapes = {"reduced": ((m, k), (k, n)), "complete": ((m, m), (m, n)), "r": ((k, n),), "raw": ((n, m), (k,))}[mode]
    return _results(probed, [(*batch, *s) for s in shapes])


def _svd_sig(a, full_matrices=True, compute_uv=True, hermitian=False): ...


def _svd_meta(a, full_matrices=True, compute_uv=True, hermitian=False):
    a = as_meta(a)
    probed = probe_call(np.linalg.svd, a, full_matrices, compute_uv, hermitian)
    if hermitian:
        _square(a)
    *batch, m, n = a.shape
    k = min(m, n)
    u, vh = ((m, m), (n, n)) if full_matrices else ((m, k), (k, n))
    return _results(probed, [(*batch, *s) for s in ((u, (k,), vh) if compute_uv else ((k,),))])


register("eigh", LINALG, impl=np.linalg.eigh, meta=_eigh_meta, signature=_eigh_sig, numpy=(np.linalg.eigh,),
         doc="np.linalg.eigh: (eigenvalues, eigenvectors)")
register("slogdet", LINALG, impl=np.linalg.slogdet, meta=_slogdet_meta, signature=_slogdet_sig,
         numpy=(np.linalg.slogdet,), doc="np.linalg.slogdet: (sign, logabsdet)")
register("qr", LINALG, impl=np.linalg.qr, meta=_qr_meta, signature=_qr_sig, numpy=(np.linalg.qr,),
         doc="np.linalg.qr: (Q, R), or R alone for mode='r'")
register("svd", LINALG, impl=np.linalg.svd, meta=_svd_meta, signature=_svd_sig, numpy=(np.linalg.svd,),
         doc="np.linalg.svd: (U, S, Vh), or S alone without compute_uv")


# -- norm ----------------------------------------------------------------------------------

def _norm_sig(x, ord=None, axis=None, keepdims=False): ...


def _norm_meta(x, ord=None, axis=None, keepdims=False):
    """The norm over `axis` (None: all of them, flattened when ord is None); one axis is a vector
    norm, two a matrix norm. A 0-d result is a NumPy scalar unless keepdims."""
    x = as_meta(x)
    result = probe_call(np.linalg.norm, x, ord, axis, keepdims)  # dtype; bad orders, axes and ndims
    axes = tuple(range(x.ndim)) if axis is None else normalize_axis_tuple(axis, x.ndim)
    if keepdims:
        shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return ArrayMeta(shape, result.dtype, scalar=isinstance(result, np.generic))


register("norm", REDUCTION, impl=np.linalg.norm, meta=_norm_meta, signature=_norm_sig,
         numpy=(np.linalg.norm,), convert={"axis": params.axis}, doc="np.linalg.norm")


# -- det, matrix_power ---------------------------------------------------------------------

def _det_sig(a): ...


def _det_meta(a):
    """A determinant per matrix of the stack: a's shape less its last two dims."""
    a = as_meta(a)
    dtype = probe_call(np.linalg.det, a).dtype
    _square(a)
    return ArrayMeta(a.shape[:-2], dtype, scalar=a.ndim == 2)


register("det", LINALG, impl=np.linalg.det, meta=_det_meta, signature=_det_sig, numpy=(np.linalg.det,),
         doc="np.linalg.det")


def _matrix_power_sig(a, n): ...


def _matrix_power_meta(a, n):
    """a's shape; NumPy's dtype for the power n (an integer: its sign decides an inverse)."""
    a = as_meta(a)
    if not isinstance(n, int):
        raise TypeError("exponent must be an integer")
    dtype = probe_call(np.linalg.matrix_power, a, n).dtype
    _square(a)
    return ArrayMeta(a.shape, dtype)


register("matrix_power", LINALG, impl=np.linalg.matrix_power, meta=_matrix_power_meta, signature=_matrix_power_sig,
         numpy=(np.linalg.matrix_power,), doc="np.linalg.matrix_power (n a Python int)")
