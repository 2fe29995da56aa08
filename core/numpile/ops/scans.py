"""Scans: cumsum and cumprod, the running sum and product along one axis.

The result has the input's shape, or is 1-D over the flattened input when `axis` is None
(a 0-d input too: NumPy hands back a 1-element array, never a scalar). The dtype is the
one NumPy's sum would pick (small integers and booleans accumulate in the platform
integer), read off the same scan of a probe.
"""

from __future__ import annotations

import numpy as np

from . import params
from .meta import as_meta, probe_call
from .registry import SCAN, ArrayMeta, register


def _scan_sig(a, axis=None, dtype=None): ...


def scan_meta(fn):
    def meta(a, axis=None, dtype=None):
        a = as_meta(a)
        # NumPy's dtype, and its refusals of a bad axis or dtype (a 0-d input scans as 1-D)
        dtype = probe_call(fn, a, axis=axis, dtype=dtype).dtype
        return ArrayMeta((a.size,) if axis is None else a.shape or (1,), dtype)
    return meta


for _fn in (np.cumsum, np.cumprod):
    register(_fn.__name__, SCAN, impl=_fn, meta=scan_meta(_fn), signature=_scan_sig, numpy=(_fn,),
             methods={_fn.__name__: None}, convert={"axis": params.axis_index, "dtype": params.dtype},
             doc=f"np.{_fn.__name__}, x.{_fn.__name__}()")
