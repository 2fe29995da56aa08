"""The lowering toolkit shared by code-generating backends: decompositions of composite ops,
a scheduler that fuses a graph into kernels, the loop-level kernel IR, and a NumPy reference
renderer for that IR."""

from .decompose import ARG_EXTREMES, DECOMPOSITIONS, decompose
from .ir import (
    Affine, Buffer, BufferArg, Call, Const, Expr, Extern, Indirect, Kernel, Load, LoopIndex, Program, RowValue, Stage, gathers,
    walk,
)
from .node_kinds import kind_of
from .reference import compile_program, run
from .schedule import schedule

__all__ = [
    "decompose", "DECOMPOSITIONS", "ARG_EXTREMES", "schedule", "kind_of", "run", "compile_program",
    "Affine", "Buffer", "BufferArg", "Call", "Const", "Expr", "Extern", "Indirect", "Kernel", "Load", "LoopIndex",
    "Program", "RowValue", "Stage", "gathers", "walk",
]
