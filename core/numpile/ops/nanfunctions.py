"""Reductions that leave NaN out: np.nansum, np.nanprod, np.nanmean, np.nanmax, np.nanmin,
np.nanstd, np.nanvar, np.nanargmax, np.nanargmin, np.nanmedian.

Each is NumPy's own call on the op's buffers (an extern), captured at its own level so that the
function or loop using it stays one graph; an all-NaN slice warns or raises as NumPy's does. The
shape is the reduction's; dtypes and NumPy's refusals (a bad axis, ddof of the wrong type) come
from probes.
"""

from __future__ import annotations

import numpy as np

from . import params
from .reductions import reduction_meta
from .registry import REDUCTION, register


def _sum_sig(a, axis=None, dtype=None, out=None, keepdims=False): ...
def _extreme_sig(a, axis=None, out=None, keepdims=False): ...
def _moment_sig(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False): ...
def _arg_sig(a, axis=None, out=None, *, keepdims=False): ...
def _median_sig(a, axis=None, out=None, overwrite_input=False, keepdims=False): ...


SIGNATURES = {np.nansum: _sum_sig, np.nanprod: _sum_sig, np.nanmean: _sum_sig, np.nanmax: _extreme_sig,
              np.nanmin: _extreme_sig, np.nanstd: _moment_sig, np.nanvar: _moment_sig, np.nanargmax: _arg_sig,
              np.nanargmin: _arg_sig, np.nanmedian: _median_sig}


for _fn, _sig in SIGNATURES.items():
    register(_fn.__name__, REDUCTION, impl=_fn, meta=reduction_meta(_fn, None), signature=_sig, numpy=(_fn,),
             convert={"axis": params.axis, "keepdims": bool}, doc=f"np.{_fn.__name__}")
