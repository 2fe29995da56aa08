"""Chunk kernels: the function a Dask task calls on its blocks, compiled by an inner backend.

A `ChunkKernel` holds a `Template`, the part of the graph one task computes, written without
shapes (ops, arguments, which values are returned). Called on blocks, it builds that part as a
numpile Graph for those blocks' shapes and dtypes, compiles it with the inner backend ("llvm"
by default) and keeps the compiled function for the next block of the same shapes: the last
chunk along an axis is often smaller, so a kernel is compiled once per distinct block shape
in each process (the llvm backend keeps object code on disk, so a second process loads it).

A dim whose size only the data knows (the chunks of `x[mask]`, nan to Dask) differs in every
block: there the graph has a symbol, and one compile serves every size of 2 and more for which
the decisions its meta rules took hold (0 and 1, which change broadcasting, compile as they are).

[Note: pickled by key] Dask ships a task's function to a worker by pickling it. A kernel
pickles as its key and its template, never as compiled code or closures: unpickling looks the
key up in this process's table, and a worker compiles (or loads from its own disk cache) the
kernel the first time it sees the key. Only `numpile` and the inner backend's distribution
must be installed on the workers; a missing inner backend is an error from the worker that
names the distribution to install.
"""

from __future__ import annotations

import hashlib
import os
import socket
import threading
from dataclasses import dataclass

import numpy as np

from numpile import ops, shapes
from numpile.graph import Graph, Node, map_nodes
from numpile.ops import ArrayMeta
from numpile.shapes import SYMBOL_PATTERN, ShapeEnv, is_unbacked

# the distribution that offers each inner backend, for the error a worker without it raises
DISTRIBUTIONS = {"llvm": "numpile-llvm", "triton": "numpile-triton", "eager": "numpile", "debug": "numpile-debug"}


@dataclass(frozen=True)
class Ref:
    """An argument that is value `index` of a template: its inputs first, then its nodes."""

    index: int


@dataclass(frozen=True)
class InputSpec:
    dtype: np.dtype
    weak: bool = False           # a Python scalar (a dynamic float or int of the caller)
    unknown: tuple = ()          # dims whose size only the data knows (symbolic in the kernel)

    @classmethod
    def of(cls, n: Node) -> "InputSpec":
        return cls(n.dtype, bool(n.meta.get("weak")), tuple(i for i, d in enumerate(n.shape) if is_unbacked(d)))


@dataclass(frozen=True)
class Template:
    """Part of a graph, shape-free: inputs, (target, args, kwargs) rows whose Node arguments are
    Refs, and the values returned."""

    inputs: tuple[InputSpec, ...]
    rows: tuple[tuple, ...]
    returns: tuple[int, ...]

    @classmethod
    def of(cls, inputs: list[Node], nodes: list[Node], returns: list[Node]) -> "Template":
        index = {n: i for i, n in enumerate([*inputs, *nodes])}
        ref = lambda n: Ref(index[n])  # noqa: E731
        rows = tuple((n.target, map_nodes(n.args, ref), map_nodes(n.kwargs, ref)) for n in nodes)
        return cls(tuple(map(InputSpec.of, inputs)), rows, tuple(index[n] for n in returns))

    def signature(self, blocks) -> tuple:
        """What a compiled kernel is kept by: the blocks' shapes and dtypes, None for a size of
        2 or more along a dim of unknown size (the kernel's symbol)."""
        return tuple((tuple(None if i in s.unknown and d > 1 else d for i, d in enumerate(np.shape(b))),
                      getattr(b, "dtype", type(b))) for b, s in zip(blocks, self.inputs))

    def graph(self, blocks, signature) -> tuple[Graph, list[str]]:
        """The template as a Graph over these blocks (their dtypes, and their shapes where the
        signature has them), and the decisions on its symbols that the meta rules took."""
        g, env = Graph(), ShapeEnv()
        values = []
        with shapes.active(env):
            for i, (b, s, (shape, _)) in enumerate(zip(blocks, self.inputs, signature)):
                dims = tuple(env.new_symbol(f"b{i}", j, np.shape(b)[j]) if d is None else d
                             for j, d in enumerate(shape))
                values.append(g.input(f"b{i}", ArrayMeta((), s.dtype, scalar=True, weak=True) if s.weak
                                      else ArrayMeta(dims, s.dtype)))
                g.symbols += [(values[-1], j) for j, d in enumerate(shape) if d is None]
            look = lambda v: values[v.index] if isinstance(v, Ref) else v  # noqa: E731
            for target, args, kwargs in self.rows:
                args, kwargs = _deref(args, look), _deref(kwargs, look)
                metas = map_nodes((args, kwargs), lambda n: n.array_meta)
                values.append(g.call(target, args, kwargs, ops.get(target).meta(*metas[0], **metas[1])))
        g.output([values[i] for i in self.returns])
        return g, env.guards


def _deref(value, look):
    if isinstance(value, Ref):
        return look(value)
    if isinstance(value, (tuple, list)):
        return type(value)(_deref(v, look) for v in value)
    if isinstance(value, dict):
        return {k: _deref(v, look) for k, v in value.items()}
    return value


_TABLE: dict[str, "ChunkKernel"] = {}   # this process's kernels by key
_TABLE_LOCK = threading.Lock()
# one inner compile at a time in a process (a worker's threads may meet new block shapes together,
# and a backend need not be thread-safe while compiling); compiled kernels run concurrently
_COMPILE_LOCK = threading.Lock()


def kernel(key: str, template: Template, inner: str, options: tuple) -> "ChunkKernel":
    """The kernel of `key` in this process (what unpickling a ChunkKernel calls)."""
    with _TABLE_LOCK:
        found = _TABLE.get(key)
        if found is None:
            found = _TABLE[key] = ChunkKernel(template, inner, options, key)
        return found


def make_kernel(template: Template, inner: str, options: dict, name: str = "chunk") -> "ChunkKernel":
    opts = tuple(sorted(options.items()))
    key = name + "-" + hashlib.sha256(repr((template, inner, opts)).encode()).hexdigest()[:24]
    return kernel(key, template, inner, opts)


class ChunkKernel:
    """Called with a task's blocks (and Dask's reduction keywords, which the template fixes
    already): the template's values for them, one array, or a tuple for several."""

    def __init__(self, template: Template, inner: str, options: tuple, key: str):
        self.template, self.inner, self.options, self.key = template, inner, options, key
        self._compiled: dict = {}
        self.__name__ = key   # Dask names tasks after their function

    def __call__(self, *blocks, axis=None, keepdims=None):   # axis, keepdims: dask's reduction protocol
        results = tuple(r if isinstance(r, np.ndarray) or not isinstance(r, np.generic) and hasattr(r, "shape")
                        else np.asarray(r)   # NumPy scalars as 0-d blocks; CuPy blocks as they are
                        for r in self._function(blocks)(*blocks))
        return results if len(results) > 1 else results[0]

    def _function(self, blocks):
        """The compiled kernel for these blocks: by their signature; where a kernel of symbolic
        sizes was compiled under decisions that these sizes fail, by their exact shapes."""
        signature = self.template.signature(blocks)
        found = self._compiled.get(signature)
        if found is not None and not found[1](blocks):
            signature = tuple((np.shape(b), dtype) for b, (_, dtype) in zip(blocks, signature))
            found = self._compiled.get(signature)
        return found[0] if found is not None else self._compile(signature, blocks)

    def _compile(self, signature, blocks):
        _quiet_waits()
        with _COMPILE_LOCK:
            if signature not in self._compiled:
                graph, decisions = self.template.graph(blocks, signature)
                compiled = inner_backend(self.inner).compile(graph, list(blocks), dict(self.options))
                self._compiled[signature] = (compiled, _holds(graph, decisions))
            return self._compiled[signature][0]

    def __reduce__(self):
        return kernel, (self.key, self.template, self.inner, self.options)

    def __dask_tokenize__(self):   # Dask names the tasks of a kernel after its key, not its pickle
        return self.key

    def __repr__(self) -> str:
        return f"<numpile-dask kernel {self.key} ({self.inner}, {len(self._compiled)} block shapes compiled)>"


def _holds(graph: Graph, decisions: list[str]):
    """blocks -> whether the decisions a kernel was compiled under hold for their sizes."""
    if not decisions:
        return lambda blocks: True
    sizes = [f"np.shape(b[{graph.inputs.index(n)}])[{d}]" for n, d in graph.symbols]
    test = " and ".join(f"({SYMBOL_PATTERN.sub(lambda m: sizes[int(m.group(1))], e)})" for e in decisions)
    return eval(f"lambda b: {test}", {"np": np})


def _quiet_waits() -> None:
    """Where Dask runs chunk tasks, other tasks (this worker's threads, the other workers) want the
    cores: an OpenMP thread of a kernel team that waits should sleep soon, not spin for up to
    15 ms (libgomp's default, which numpile-llvm keeps on an idle machine: its team.py, [Note:
    spinning]). Set before libgomp loads in this process; the user's own setting wins."""
    if not {"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"} & set(os.environ):
        os.environ["GOMP_SPINCOUNT"] = "300"


def inner_backend(name: str):
    """The inner backend `name`, or an error naming the distribution this machine lacks (or why
    the one it has cannot run here: no CUDA device for "triton")."""
    import numpile.plugins
    try:
        return numpile.plugins.lookup(name)
    except numpile.BackendUnavailableError as e:
        raise RuntimeError(f"numpile-dask on {socket.gethostname()}: the inner backend {name!r} cannot run "
                           f"here: {e}") from None
    except numpile.InvalidBackendError as e:
        dist = DISTRIBUTIONS.get(name, f"the distribution that offers backend {name!r}")
        raise RuntimeError(f"numpile-dask on {socket.gethostname()}: the inner backend {name!r} is not "
                           f"available here; install {dist} on every Dask worker ({e})") from None
