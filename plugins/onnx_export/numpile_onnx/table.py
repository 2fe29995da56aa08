"""The op mapping: one table keyed by registry op names (tests check its keys against the registry).

`TABLE[op]` converts a call of `op`: `convert(emitter, node, *args, **kwargs)` with the node's
arguments in the registry's canonical layout, graph values as `emit.Value`s, returning the
result's Value (a tuple for an op with several results). A form it cannot express raises
`emit.OnnxUnsupported` saying which. `UNSUPPORTED[op]` says why an op has no row.
"""

from __future__ import annotations

from . import pointwise, products, reductions, shape_ops

TABLE = {**pointwise.ROWS, **reductions.ROWS, **shape_ops.ROWS, **products.ROWS}

UNSUPPORTED = {
    **pointwise.UNSUPPORTED, **reductions.UNSUPPORTED, **shape_ops.UNSUPPORTED, **products.UNSUPPORTED,
    "tuple_getitem": "",   # handled by the driver (convert.py): it picks one result of an op with several
    "loop": "",            # handled by the driver (convert.py, loops.py): its body is a graph it converts
    "cond": "a branch on a graph value is not exported yet (ONNX If); the exporter does not declare "
            "supports_conditionals, so capture breaks there instead",
    "while_loop": "a while loop on a graph value is not exported yet (ONNX Loop with a condition); the exporter "
                  "does not declare supports_conditionals",
    "check": "an assert on a graph value raises, which no ONNX operator does; the exporter does not declare "
             "supports_conditionals, so capture breaks there instead",
    "python_int": "int() of a float as Python's int (raising on NaN and inf) has no ONNX operator",
    "python_math": "math.exp() and its kin raise outside their domains, which no ONNX operator does",
    # the long tail's ops (numpile.ops.tiling, shape, statistics): each has an ONNX form (Tile, Trilu,
    # Concat of reshaped pieces, Expand and Reshape for repeat, a weighted ReduceSum), not written yet
    **dict.fromkeys(("tile", "repeat", "triu", "tril", "hstack", "vstack", "column_stack", "dstack", "average"),
                    "not exported yet (ONNX has the operators to express it: not written)"),
    # orderings and order statistics (numpile.ops.ordering): TopK over a whole axis sorts
    **dict.fromkeys(("sort", "argsort", "median", "percentile", "quantile"),
                    "not exported yet (ONNX TopK over the whole axis would express it: not written)"),
    **dict.fromkeys(("interp", "convolve", "correlate", "diag", "trace"), "not exported yet (no ONNX rule written for it)"),
    **dict.fromkeys(("count_nonzero", "ptp", "trapezoid", "polyval", "digitize", "isin", "cross", "kron", "nan_to_num",
                     "det", "matrix_power", "corrcoef", "partition", "argpartition", "take_along_axis", "select", "gradient"),
                    "not exported yet (no ONNX rule written for it)"),
    "pad": "not exported yet (ONNX Pad has the constant, edge, reflect and wrap modes: not written)",
    "isclose": "not exported yet (Abs, Sub, LessOrEqual and IsNaN would express it: not written)",
    **dict.fromkeys(("nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar", "nanargmax", "nanargmin",
                     "nanmedian"), "not exported yet (IsNaN and Where before the reduction would express it: not written)"),
    # np.fft (numpile.ops.spectral): ONNX's DFT takes one axis of a real or complex-as-pairs tensor
    **dict.fromkeys(("fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
                     "irfftn"), "not exported yet (ONNX DFT, one axis at a time, would express it: not written)"),
    **dict.fromkeys(("fftshift", "ifftshift", "vdot"), "not exported yet (no ONNX rule written for it)"),
    "searchsorted": "no ONNX operator searches a sorted array (a comparison with every element and a ReduceSum would)",
    "random_bits": "numpile's random stream (a random draw in a loop) is not exported yet (splitmix64 in uint64 "
                   "Mul, BitwiseXor and BitShift would write it)",
}
