"""The op registry (see registry.py); importing this package fills the table."""

from . import (  # noqa: F401  (each registers its rows)
    control, creation, draws, einsum, histograms, indexing, nanfunctions, numerics, numpy_linalg, ordering, pointwise, products, reductions, results,
    scans, selection, shape, spectral, statistics, tiling,
)
from .registry import (
    CONTROL, CREATION, INDEXING, KINDS, LINALG, MATMUL, POINTWISE, REDUCTION, REGISTRY, RESULT, SCAN, SHAPE, VIEW,
    ArrayMeta, OpDef, get, lookup_callable, lookup_method, lookup_property, register,
)
from .results import TUPLE_GETITEM

__all__ = [
    "ArrayMeta", "OpDef", "REGISTRY", "register", "get",
    "lookup_callable", "lookup_method", "lookup_property",
    "POINTWISE", "REDUCTION", "MATMUL", "VIEW", "SHAPE", "CREATION", "INDEXING", "SCAN", "LINALG", "RESULT", "CONTROL", "KINDS",
    "TUPLE_GETITEM",
]
