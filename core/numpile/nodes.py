"""The nodes of the Graph IR (graph.py): a `Node` is an input, a call of a registry op, a constant
or the output, with its meta (shape, dtype, scalar, weak, loc; an op with several results has one
ArrayMeta per result); `SourceLoc` is the user's line that made it. `map_nodes` and `symbols_of` walk
a node's arguments, which are Nodes or Python constants nested in tuples, lists, dicts and slices.
A control-flow node's Graphs (a loop's body, a cond's sides) are among its arguments: `BODY_NAMES`.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

import numpy as np

from .ops import ArrayMeta
from .shapes import SYMBOL_PATTERN, SymInt

# The Graphs a control-flow op's node holds, by the names generated code gives them.
BODY_NAMES = {"loop": ("body",), "cond": ("then", "else"), "while_loop": ("body",)}


@dataclass(frozen=True)
class SourceLoc:
    """Where in the user's code a value was made."""

    filename: str
    lineno: int
    function: str = ""

    @property
    def line(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"


class Node:
    __slots__ = ("graph", "op", "target", "args", "kwargs", "name", "meta")

    def __init__(self, graph, op: str, target, args: tuple, kwargs: dict, name: str, meta: dict):
        """`graph`: the Graph (graph.py) the node belongs to."""
        self.graph, self.op, self.target = graph, op, target
        self.args, self.kwargs, self.name, self.meta = args, kwargs, name, meta

    @property
    def shape(self) -> tuple:
        return self.meta["shape"]

    @property
    def dtype(self) -> np.dtype:
        return self.meta["dtype"]

    @property
    def array_meta(self) -> ArrayMeta | tuple:
        """The node's ArrayMeta; for an op with several results, the tuple of theirs."""
        if "results" in self.meta:
            return self.meta["results"]
        return ArrayMeta(self.meta["shape"], self.meta["dtype"], self.meta.get("scalar", False), self.meta.get("weak", False))

    @property
    def results(self) -> tuple | None:
        """The ArrayMeta of each result of an op with several (np.divmod), else None."""
        return self.meta.get("results")

    @property
    def bodies(self) -> tuple:
        """The Graphs of a control-flow node (a loop's body, a cond's two sides); () for others.
        A body is a Graph as the node's own graph is."""
        return tuple(a for a in self.args if isinstance(a, type(self.graph))) if self.target in BODY_NAMES else ()

    @property
    def inputs(self) -> list["Node"]:
        """The nodes this node reads, in argument order."""
        found: list[Node] = []
        map_nodes((self.args, self.kwargs), lambda n: found.append(n) or n)
        return found

    def __repr__(self) -> str:
        return self.name


def symbols_of(nodes, shapes: bool = True) -> set[int]:
    """The indices of the symbols the nodes use in their arguments and, with `shapes`, their shapes."""
    found: set[int] = set()

    def note(sym):
        found.update(int(i) for i in SYMBOL_PATTERN.findall(sym.expr))
        return sym
    for n in nodes:
        map_nodes((n.args, n.kwargs), lambda node: node, note)
        for d in (n.meta.get("shape") or ()) if shapes else ():
            if isinstance(d, SymInt):
                note(d)
    return found


def map_nodes(value, fn, sym_fn=None):
    """Apply fn to every Node (and sym_fn, if given, to every SymInt) inside a possibly nested
    tuple/list/dict/slice of arguments."""
    if isinstance(value, Node):
        return fn(value)
    if sym_fn is not None and isinstance(value, SymInt):
        return sym_fn(value)
    if isinstance(value, tuple):
        return tuple(map_nodes(v, fn, sym_fn) for v in value)
    if isinstance(value, list):
        return [map_nodes(v, fn, sym_fn) for v in value]
    if isinstance(value, dict):
        return {k: map_nodes(v, fn, sym_fn) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(map_nodes(value.start, fn, sym_fn), map_nodes(value.stop, fn, sym_fn), map_nodes(value.step, fn, sym_fn))
    return value
