"""The op registry (see registry.py); importing this package fills the table."""

from . import creation, indexing, linalg, pointwise, reductions, shape  # noqa: F401  (each registers its rows)
from .registry import (
    CREATION, INDEXING, KINDS, MATMUL, POINTWISE, REDUCTION, REGISTRY, SHAPE, VIEW,
    ArrayMeta, OpDef, get, lookup_callable, lookup_method, lookup_property, register,
)

__all__ = [
    "ArrayMeta", "OpDef", "REGISTRY", "register", "get",
    "lookup_callable", "lookup_method", "lookup_property",
    "POINTWISE", "REDUCTION", "MATMUL", "VIEW", "SHAPE", "CREATION", "INDEXING", "KINDS",
]
