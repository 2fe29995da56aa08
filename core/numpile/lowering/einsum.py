"""np.einsum of two operands as a matrix product: transposes, reshapes and one `matmul`.

Every label of a two-operand contraction is one of: a batch label (in both operands and the
output), a contracted label (in both, not in the output), or a free label of one operand (in it
and the output). Moving each operand's labels into the order (batch, free, contracted) and
(batch, contracted, free), merging each group into one dim, makes the contraction a batched
matrix product, which BLAS runs (what torch.compile does for it, and NumPy's own `optimize`
path where its tensordot applies); the result is reshaped and transposed into the output's
order. Other forms stay NumPy's einsum: one operand or three, "...", a label repeated in an
operand, a label summed in one operand only, dims that broadcast, `dtype=`, and products that
would be a matrix of one row, one column or no sum (outer products, row-wise dots).

Rounding: integer and boolean results are NumPy's exactly. A float contraction adds its products
in BLAS's order, not in the order of NumPy's einsum loop, so results agree within rounding (a few
ulp of the sum of absolute products), as any two BLAS-backed libraries do.
"""

from __future__ import annotations

import math

from ..graph import Node
from ..shapes import identical


def einsum(emit, subscripts, *operands, dtype=None, order="K", casting="safe", optimize=False):
    """The contraction as a matmul in emit's graph where plan() finds one; else None (kept whole)."""
    found = plan(subscripts, operands) if dtype is None and order == "K" else None
    if found is None:
        return None
    (a, b), ((a_labels, b_labels), output) = operands, found
    size = {c: d for labels, x in ((a_labels, a), (b_labels, b)) for c, d in zip(labels, x.shape)}
    batch = [c for c in output if c in a_labels and c in b_labels]
    free_a = [c for c in output if c in a_labels and c not in b_labels]
    free_b = [c for c in output if c in b_labels and c not in a_labels]
    summed = [c for c in a_labels if c not in output]
    if not (free_a and free_b and summed):   # a product of vectors: not worth a BLAS call
        return None
    left = _grouped(emit, a, a_labels, [batch, free_a, summed], size)
    right = _grouped(emit, b, b_labels, [batch, summed, free_b], size)
    product = emit("matmul", left, right)      # (batch..., M, N)
    got = batch + free_a + free_b
    if len(product.shape) != len(got):
        product = emit("reshape", product, tuple(size[c] for c in got))
    if got != list(output):
        product = emit("transpose", product, axes=tuple(got.index(c) for c in output))
    return product


def plan(subscripts, operands) -> tuple | None:
    """(labels of each operand, output labels) of a contraction a matmul can do, or None."""
    if not isinstance(subscripts, str) or len(operands) != 2 or not all(isinstance(x, Node) for x in operands):
        return None
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    if "." in subscripts or len(terms) != 2:
        return None
    if not arrow:   # NumPy's implicit output: the labels used once, in order
        output = "".join(sorted(c for c in set(inputs) - {","} if inputs.count(c) == 1))
    a, b = terms
    ok = (output and len(set(a)) == len(a) and len(set(b)) == len(b) and len(set(output)) == len(output)
          and set(output) <= set(a) | set(b) and all(c in output or c in b for c in a)
          and all(c in output or c in a for c in b)
          and all(len(x.shape) == len(t) for x, t in zip(operands, terms))
          and all(identical(operands[0].shape[a.index(c)], operands[1].shape[b.index(c)]) for c in set(a) & set(b)))
    return ((a, b), output) if ok else None


def _grouped(emit, x: Node, labels: str, groups: list, size: dict) -> Node:
    """x with its dims in the groups' order, the last two groups each merged into one dim."""
    order = [c for g in groups for c in g]
    if order != list(labels):
        x = emit("transpose", x, axes=tuple(labels.index(c) for c in order))
    *lead, rows, cols = groups
    shape = tuple(size[c] for g in lead for c in g) + (math.prod(size[c] for c in rows), math.prod(size[c] for c in cols))
    if len(shape) != len(order) or any(len(g) != 1 for g in (rows, cols)):
        x = emit("reshape", x, shape)
    return x
