"""The backend "dask": a graph over Dask arrays becomes Dask operations whose chunk functions
are kernels compiled by an inner backend (see partition.py for what becomes one task, build.py
for the Dask operations, kernels.py for the chunk functions and how they travel to workers)."""

from __future__ import annotations

import numpile
from numpile import logs

# composite reductions rewritten into sums and pointwise ops (numpile.lowering), so that they fuse
# and reduce as trees; not in a graph that the same rewrite would turn matmuls or einsums into
# broadcast products (those go to dask.array's own)
_DECOMPOSED = frozenset({"mean", "var", "std"})
_KEPT_WHOLE = frozenset({"matmul", "dot", "einsum"})


class DaskBackend(numpile.Backend):
    name = "dask"
    description = "Dask arrays: fused chunk kernels (inner backend, llvm by default) in one task per chunk, tree reductions"
    devices = ("dask",)
    supports_dynamic_shapes = True   # the Dask operations are built per call, from the arrays' own sizes

    #: numpile.compile(..., options={...}) keys this backend reads
    options = {
        "inner": "the backend that compiles each chunk's kernel: 'llvm' (default), 'triton' (CuPy chunks), 'eager'",
        "inner_options": "options for the inner backend (a dict)",
        "split_every": "the fan-in of tree reductions (Dask's split_every; default: Dask's setting, else 4, and 16 "
                       "where each partial result is at most 64 KiB)",
    }

    def is_available(self) -> tuple[bool, str]:
        try:
            import dask.array  # noqa: F401
        except ImportError as e:
            return False, f"dask.array cannot be imported ({e}); pip install 'dask[array]'"
        return True, ""

    def compile(self, graph, example_inputs, options):
        unknown = set(options) - set(self.options) - {"mode"}
        if unknown:
            raise ValueError(f"backend 'dask' has no option {', '.join(sorted(map(repr, unknown)))}; "
                             f"it has {', '.join(map(repr, self.options))}")
        import dask
        import dask.array
        from dask.utils import parse_bytes
        from numpile.lowering import decompose

        from .build import Program
        from .kernels import inner_backend
        from .partition import partition, row_fits

        inner = options.get("inner") or "llvm"
        _check_chunks(inner_backend(inner), example_inputs)   # missing here, or the wrong device: say so now
        targets = {n.target for n in graph.calls}
        if targets & _DECOMPOSED and not targets & _KEPT_WHOLE:
            graph = decompose(graph)
        limit = parse_bytes(dask.config.get("array.chunk-size"))
        lazy = {n for n, v in zip(graph.inputs, example_inputs) if isinstance(v, dask.array.Array)}
        steps = partition(graph, lazy, lambda n: row_fits(n, limit))
        if logs.enabled("perf"):
            logs.get("perf").debug("numpile-dask: %s", describe(steps))
        return Program(graph, steps, inner, dict(options.get("inner_options") or {}), options.get("split_every"))


def _check_chunks(inner, example_inputs) -> None:
    """The inner backend runs on the device of the arrays' chunks (CuPy chunks are "cuda")."""
    import dask.array
    from numpile import array_kinds
    for x in example_inputs:
        if isinstance(x, dask.array.Array):
            kind = array_kinds.kind_of(x._meta)
            device = array_kinds.device_type(kind.location(x._meta)) if kind is not None else "cpu"
            if device not in inner.devices:
                raise ValueError(f"numpile-dask: the inner backend {inner.name!r} runs on {', '.join(inner.devices)}; "
                                 f"these Dask arrays' chunks are {type(x._meta).__module__}.{type(x._meta).__name__} "
                                 f"({device}): 'triton' takes CuPy chunks (x.map_blocks(cupy.asarray)), 'llvm' "
                                 f"NumPy ones")


def describe(steps) -> str:
    """What each step is, in a line: `2 blockwise (7 ops), 1 tree (sum, 3 ops fused), 1 dask.array (matmul)`."""
    parts = []
    for s in steps:
        if s.kind == "blockwise":
            parts.append(f"blockwise of {len(s.nodes)} ops" + (f" (rows along {s.row_axes})" if s.row_axes else ""))
        elif s.kind == "tree":
            parts.append(f"tree {s.outputs[0].target} ({len(s.nodes) - 1} ops fused into its chunks)")
        else:
            parts.append(f"dask.array {s.outputs[0].target}")
    return "; ".join(parts) or "no ops"
