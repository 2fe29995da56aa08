"""What becomes one Dask task per chunk: the graph cut into steps.

Every call node gets a role (`ROLES`):

  pointwise  fused: computed inside a chunk kernel, wherever its users are
  row        a reduction along the last axes, whose rows fit in one chunk (softmax's max and sum),
             keepdims, with a pointwise user: fused too; the step's chunks span those axes whole
  tree       a reduction done as a Dask tree reduction: a chunk kernel (its pointwise producers
             fused in front of it, when nothing else reads them) then compiled combine steps
  numpy      anything else: its op's NumPy function on the Dask arrays, so dask.array's own
             implementation (`__array_function__`: matmul, views, sorting, ...)

Fused nodes are grouped into regions: connected through their arguments and at the same
*stage*, where a tree or numpy node is one stage past what it reads and a fused node at the
stage of its latest argument. A region then never reads itself through a step outside it (that
step would be a later stage). Each region becomes one `blockwise` step per distinct shape of
the values read outside it (nearly always one): one task per chunk, whatever the number of ops.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from numpile import ops
from numpile.graph import Graph, Node, map_nodes
from numpile.ops.reductions import reduced_axes
from numpile.shapes import is_unbacked

# reductions whose partial results combine with the reduction itself
COMBINING = frozenset({"sum", "prod", "max", "min", "any", "all"})
FUSED = frozenset({"pointwise", "row"})


@dataclass
class Step:
    kind: str                          # "blockwise", "tree" or "numpy"
    outputs: list[Node]                # the values it makes (read by later steps or returned)
    nodes: list[Node]                  # the nodes its kernel computes, in graph order
    inputs: list[Node] = field(default_factory=list)   # the values its kernel reads
    row_axes: tuple = ()               # axes reduced within a chunk by its row reductions (of its
                                       # outputs; of a tree reduction's operand)
    kernel: object = None              # set by build.Program: the chunk kernel (blockwise, tree)
    combine: object = None             # and a tree's combine and aggregate kernels
    aggregate: object = None


def axes_of(n: Node) -> tuple:
    """The axes a reduction node reduces, of its operand."""
    return tuple(reduced_axes(n.args[1] if len(n.args) > 1 else n.kwargs.get("axis"), len(n.args[0].shape)))


def roles(graph: Graph, lazy: set, is_row) -> dict[Node, str]:
    """Each call node's role. `lazy`: the inputs that are Dask arrays; `is_row(node)`: whether a
    reduction is along rows that fit in one chunk (row_fits)."""
    users: dict[Node, list[Node]] = {}
    for n in graph.calls:
        for a in n.inputs:
            users.setdefault(a, []).append(n)
    lazy = set(lazy)   # and the values computed from them
    found = {}
    for n in graph.calls:
        if any(a in lazy for a in n.inputs):
            lazy.add(n)
        found[n] = _role(n, n in lazy, users.get(n, []), is_row)
    return found


def _role(n: Node, lazy: bool, users: list[Node], is_row) -> str:
    op = ops.get(n.target)
    if not lazy or n.results is not None or n.meta.get("weak") or _sizes_in(n):
        return "numpy"   # NumPy on constants and Python scalars; ops with several results; sizes
    if op.kind == ops.POINTWISE:
        return "pointwise"
    if n.target in COMBINING and n.args[0].shape and axes_of(n):
        keepdims = n.kwargs.get("keepdims", False)
        kept = len(axes_of(n)) < len(n.args[0].shape)
        pointwise_user = any(ops.get(u.target).kind == ops.POINTWISE for u in users)
        return "row" if keepdims and kept and pointwise_user and is_row(n) else "tree"
    return "numpy"


def _sizes_in(n: Node) -> bool:
    """n has a symbolic size among its arguments (a kernel sees blocks, not the whole array's sizes)."""
    found = []
    map_nodes((n.args, n.kwargs), lambda a: a, lambda sym: found.append(sym) or sym)
    return bool(found)


def partition(graph: Graph, lazy: set, is_row) -> list[Step]:
    """The steps that compute `graph`, in an order where each comes after what it reads."""
    role = roles(graph, lazy, is_row)
    stage: dict[Node, int] = {}
    for n in graph.nodes:
        if n.op == "call":
            latest = max((stage[a] for a in n.inputs), default=0)
            stage[n] = latest if role[n] in FUSED else latest + 1
        elif n.op != "output":
            stage[n] = 0
    region = _regions(graph, role, stage)
    returned = {v for v in graph.outputs if isinstance(v, Node)}
    users: dict[Node, list[Node]] = {}
    for n in graph.calls:
        for a in n.inputs:
            users.setdefault(a, []).append(n)

    members: dict[int, list[Node]] = {}
    for n in graph.calls:
        if role[n] in FUSED:
            members.setdefault(region[n], []).append(n)
    outs = {rid: [n for n in nodes if n in returned or any(region.get(u) != rid and not
                  (role[u] == "tree" and _only_trees(n, users, role, returned)) for u in users.get(n, []))]
            for rid, nodes in members.items()}
    stored = {o for group in outs.values() for o in group}   # made by a blockwise step anyway

    steps = []
    for n in graph.calls:
        if role[n] == "tree":   # its chunk step computes its operand's producers, up to values stored
            p = n.args[0]
            fuse = p in region and role.get(p) in FUSED and _only_trees(p, users, role, returned)
            prologue = _cone_of([p], members[region[p]], region, stored) if fuse else []
            steps.append(Step("tree", [n], [*prologue, n], row_axes=_row_axes(prologue, len(p.shape), role)))
        elif role[n] == "numpy":
            steps.append(Step("numpy", [n], [n]))
    for rid, nodes in members.items():
        by_shape: dict[str, list[Node]] = {}
        for o in outs[rid]:
            by_shape.setdefault(str(o.shape), []).append(o)
        for group in by_shape.values():
            cone = _cone_of(group, nodes, region)
            steps.append(Step("blockwise", group, cone, row_axes=_row_axes(cone, len(group[0].shape), role)))
    for s in steps:
        inside = set(s.nodes)
        s.inputs = list(dict.fromkeys(a for n in s.nodes for a in n.inputs if a not in inside))
    return _ordered(steps)


def _regions(graph: Graph, role: dict, stage: dict) -> dict[Node, int]:
    """Fused nodes -> region id: union of fused nodes and their fused arguments at one stage."""
    parent: dict[Node, Node] = {}

    def find(n):
        while parent[n] is not n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n
    for n in graph.calls:
        if role[n] in FUSED:
            parent[n] = n
            for a in n.inputs:
                if a in parent and stage[a] == stage[n]:
                    parent[find(a)] = find(n)
    roots: dict[Node, int] = {}
    return {n: roots.setdefault(find(n), len(roots)) for n in parent}


def _only_trees(n: Node, users: dict, role: dict, returned: set) -> bool:
    """n is read only by tree reductions (each computes it in its chunk kernel)."""
    return n not in returned and all(role[u] == "tree" for u in users.get(n, []))


def _cone_of(outs: list[Node], nodes: list[Node], region: dict, stored: set = frozenset()) -> list[Node]:
    """The nodes of a region that `outs` need, in graph order; values in `stored` are read, not
    computed again (a blockwise step computes the values of its region it returns, whatever
    other steps have, so that two shapes of outputs never read each other)."""
    rid = region[outs[0]]
    need, stack = set(), list(outs)
    while stack:
        n = stack.pop()
        if n not in need:
            need.add(n)
            stack += [a for a in n.inputs if region.get(a) == rid and a not in stored]
    return [n for n in nodes if n in need]


def _row_axes(cone: list[Node], ndim: int, role: dict) -> tuple:
    """The axes (of a step's `ndim`-dim outputs) that its row reductions reduce within a chunk."""
    found = set()
    for n in cone:
        if role[n] == "row":
            shift = ndim - len(n.args[0].shape)
            found |= {a + shift for a in axes_of(n)}
    return tuple(sorted(found))


def _ordered(steps: list[Step]) -> list[Step]:
    """Steps after the steps whose outputs they read (a depth-first topological order)."""
    maker = {o: s for s in steps for o in s.outputs}
    done, order = set(), []

    def visit(s):
        if id(s) in done:
            return
        done.add(id(s))
        for a in s.inputs:
            if a in maker:
                visit(maker[a])
        order.append(s)
    for s in steps:
        visit(s)
    return order


def row_fits(n: Node, limit: int) -> bool:
    """A reduction is along rows: its axes are the operand's last ones (softmax, layer norm),
    which arrays are seldom chunked along, and one row of them takes at most `limit` bytes. A
    reduction along the first axes (column statistics of a tall array, chunked by rows) is a
    tree instead: gathering those into one chunk would move the whole array; so is one along
    a dim whose size only the data knows (Dask cannot rechunk chunks of unknown size)."""
    shape, axes = n.args[0].shape, axes_of(n)
    if axes != tuple(range(len(shape) - len(axes), len(shape))) or any(is_unbacked(shape[a]) for a in axes):
        return False
    sizes = [shape[a] if isinstance(shape[a], int) else (shape[a].hint or 0) for a in axes]
    return math.prod(sizes) * np.dtype(n.args[0].dtype).itemsize <= limit
