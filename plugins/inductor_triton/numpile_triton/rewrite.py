"""Kernel IR rewriting for the renderer's own passes (stages.py, pairs.py): an expression rebuilt
bottom-up with some of its nodes replaced."""

from __future__ import annotations

from numpile.lowering import Call, Indirect, Load


def mapped(expr, fn):
    """`expr` with every sub-expression e (children first) replaced by `fn(e)`; `fn` returns
    None to keep a node (rebuilt over its rewritten children). A gather's index values too."""
    if isinstance(expr, Call):
        args = tuple(mapped(a, fn) for a in expr.args)
        kwargs = tuple((k, mapped(v, fn)) for k, v in expr.kwargs)
        if any(a is not b for a, b in zip(args, expr.args)) or any(a[1] is not b[1] for a, b in zip(kwargs, expr.kwargs)):
            expr = Call(expr.op, args, kwargs, expr.dtype, expr.weak)
    elif isinstance(expr, Load) and any(isinstance(i, Indirect) for i in expr.index):
        index = tuple(Indirect(mapped(i.value, fn), i.size, i.scale, i.shift) if isinstance(i, Indirect) else i
                      for i in expr.index)
        expr = Load(expr.buffer, index, expr.dtype, expr.weak)
    if not hasattr(expr, "dtype"):   # a constant keyword argument (not an Expr)
        return expr
    replaced = fn(expr)
    return expr if replaced is None else replaced
