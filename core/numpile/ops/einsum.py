"""np.einsum, captured at its own level from a subscripts string ("ij,jk->ik").

The meta rule reads the subscripts as NumPy does: each label has one size (a size of 1
broadcasts against the others), "..." stands for the broadcast of the operands' remaining
dims, and without "->" the output is "..." followed by the labels used once, in ASCII
order. The dtype, NumPy's refusals of malformed subscripts, and whether a 0-d result is a
NumPy scalar (it depends on `optimize` and on which dims are 1) come from the same einsum
of probes.
"""

from __future__ import annotations

import numpy as np

from . import params
from .meta import as_meta, broadcast_shapes, probe_call
from .registry import MATMUL, ArrayMeta, register


def _einsum_sig(subscripts, /, *operands, dtype=None, order="K", casting="safe", optimize=False): ...


def _label_dims(term: str, shape: tuple) -> tuple[list, tuple]:
    """(label, dim) pairs of one operand's term, and the dims its "..." stands for."""
    head, ellipsis, tail = term.partition("...")
    if not ellipsis:
        return list(zip(term, shape)), ()
    rest = len(shape) - len(tail)
    return list(zip(head, shape)) + list(zip(tail, shape[rest:])), shape[len(head):rest]


def _shrunk(m: ArrayMeta):
    """A stand-in with every dim cut to at most 2: an optimized einsum picks its steps, and so
    whether a 0-d result is a NumPy scalar, by which dims are 1."""
    return m if m.weak else np.ones(tuple(min(d, 2) for d in m.shape), m.dtype)


def _einsum_meta(subscripts, *operands, dtype=None, order="K", casting="safe", optimize=False):
    if not isinstance(subscripts, str):
        raise NotImplementedError("the interleaved form einsum(a, [0, 1], b, [1]) is not supported; "
                                  "pass a subscripts string")
    metas = [as_meta(x) for x in operands]
    stand_ins = metas if optimize is False else [_shrunk(m) for m in metas]
    result = probe_call(np.einsum, subscripts, *stand_ins, dtype=dtype, order=order, casting=casting, optimize=optimize)
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    sizes: dict[str, int] = {}
    ellipses = []
    for term, m in zip(inputs.split(","), metas):
        pairs, ellipsis = _label_dims(term, m.shape)
        ellipses.append(ellipsis)
        for label, d in pairs:
            if sizes.get(label, 1) == 1:
                sizes[label] = d
            elif d != 1 and d != sizes[label]:
                raise ValueError("operands could not be broadcast together with remapped shapes "
                                 "[original->remapped]: " + " ".join(f"{m.shape}" for m in metas))
    if not arrow:
        output = ("..." if "..." in inputs else "") + "".join(sorted(c for c in sizes if inputs.count(c) == 1))
    if len(metas) == 1 and sorted(output.replace("...", "")) == sorted(set(inputs.replace("...", ""))):
        raise NotImplementedError(f"{subscripts!r} sums nothing: NumPy returns a view of the operand "
                                  "(use transpose or diagonal)")
    head, ellipsis, tail = output.partition("...")
    shape = tuple(sizes[c] for c in head) + (broadcast_shapes(*ellipses) if ellipsis else ()) \
        + tuple(sizes[c] for c in tail)
    return ArrayMeta(shape, result.dtype, scalar=isinstance(result, np.generic))


# Captured whole; code-generating backends get two-operand contractions as a matmul
# (numpile/lowering/einsum.py) and call NumPy's einsum for the rest.
register("einsum", MATMUL, impl=np.einsum, meta=_einsum_meta, signature=_einsum_sig, numpy=(np.einsum,),
         convert={"dtype": params.dtype}, doc='np.einsum("ij,jk->ik", a, b)')
