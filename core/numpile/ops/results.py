"""Ops with several results, and `tuple_getitem`, the op that reads one of them.

NumPy returns a tuple from np.divmod, np.modf, np.frexp, np.histogram and np.meshgrid. Such an
op is one row whose meta rule returns a tuple of ArrayMetas; in a graph it is one call node
whose value is that tuple, followed by a `tuple_getitem(node, i)` node per result (the tracer
makes them all, so `q, r = np.divmod(a, b)` and `np.divmod(a, b)[0]` are ordinary tuples of
arrays to the rest of the trace). The eager interpreter runs the op's implementation and
indexes the tuple; the lowering scheduler runs the op as an extern that fills a buffer per
result, or its decomposition (lowering/decompose.py), which gives one node per result.

This module holds the projection and the two-output ufuncs; np.histogram is in histograms.py,
np.meshgrid in shape.py.
"""

from __future__ import annotations

import operator

import numpy as np

from .meta import broadcast_shapes, probe_call, shape_of
from .registry import POINTWISE, RESULT, ArrayMeta, reflected, register

TUPLE_GETITEM = "tuple_getitem"


def _tuple_getitem_sig(results, index): ...


def _tuple_getitem_meta(results, index):
    """`results` is the tuple of ArrayMetas of the op with several results."""
    return results[index]


register(TUPLE_GETITEM, RESULT, impl=operator.getitem, meta=_tuple_getitem_meta, signature=_tuple_getitem_sig,
         doc="one result of an op with several (np.divmod(a, b)[0]), emitted by the tracer")


# -- two-output ufuncs ---------------------------------------------------------------------

def ufunc_results_meta(ufunc):
    """Meta of a ufunc with several outputs: each the broadcast shape of the operands, in the
    dtype NumPy's loop gives it (read off probes); NumPy scalars when 0-d."""
    def meta(*args):
        shape = broadcast_shapes(*map(shape_of, args))
        return tuple(ArrayMeta(shape, r.dtype, scalar=not shape) for r in probe_call(ufunc, *args))
    return meta


_SIGNATURES = {1: lambda x: None, 2: lambda x1, x2: None}
# ufunc -> (other callables that mean it, ndarray methods): the builtin divmod(a, b) calls a.__divmod__(b)
TWO_OUTPUT_UFUNCS = {
    np.divmod: ((divmod,), {"__divmod__": None, "__rdivmod__": reflected}),
    np.modf: ((), {}),
    np.frexp: ((), {}),
}

for _ufunc, (_others, _methods) in TWO_OUTPUT_UFUNCS.items():
    register(_ufunc.__name__, POINTWISE, impl=_ufunc, meta=ufunc_results_meta(_ufunc), signature=_SIGNATURES[_ufunc.nin],
             numpy=(_ufunc, *_others), methods=_methods, doc=f"np.{_ufunc.__name__}: {_ufunc.nout} results")
