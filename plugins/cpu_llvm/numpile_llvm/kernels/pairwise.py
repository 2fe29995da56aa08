"""Float sums follow NumPy's pairwise summation exactly (see PairwiseSums._pairwise_sum) and float
products multiply one element after another as NumPy's loop does, on one thread: a sum or a
product is NumPy's to the bit and the same in every kernel.

The pairwise tree's shape (where NumPy splits a range, when its leaves are equal, which nodes
threads take) and the code that adds a range in that order (PairwiseSums, a part of the kernel body).
"""

from __future__ import annotations

import numpy as np

from numpile.shapes import SymInt

from ..irbuilder import BOOL, I64, V, literal, reg_type
from .plan import pairwise
from .streams import LINE

PAIRWISE_LEAF = 128   # NumPy's PW_BLOCKSIZE: pairwise sums split ranges down to this many elements
PAIRWISE_LANES = 8    # and add a leaf in eight interleaved partial sums
PAIRWISE_FILL = 4 * PAIRWISE_LEAF   # elements evaluated into the values buffer at a time (short


def pairwise_split(n: int) -> int:
    """Where NumPy's pairwise summation splits a range of n > PAIRWISE_LEAF elements: half,
    rounded down to a multiple of 8."""
    return n // 2 - n // 2 % PAIRWISE_LANES


def balanced_leaf(n: int) -> int | None:
    """The leaf size when NumPy's pairwise tree over n elements has 2**k >= 4 equal leaves
    (every node then splits into equal halves), else None."""
    leaf = n
    while leaf > PAIRWISE_LEAF and leaf % (2 * PAIRWISE_LANES) == 0:
        leaf //= 2
    return leaf if 0 < leaf <= PAIRWISE_LEAF and n // leaf >= 4 else None


def pairwise_ranges(n: int, parts: int) -> list[tuple[int, int]]:
    """The nodes of the pairwise tree over [0, n) `parts` (a power of two) ranges deep, left to
    right, fewer where a range is a leaf: threads sum these and the partial sums are added
    pairwise, which is the whole sum to the bit."""
    ranges = [(0, n)]
    # halving a balanced tree's nodes keeps them balanced while they have 8 leaves or more
    while len(ranges) < parts and all(hi - lo >= 8 * PAIRWISE_LEAF for lo, hi in ranges):
        ranges = [half for lo, hi in ranges
                  for half in ((lo, lo + pairwise_split(hi - lo)), (lo + pairwise_split(hi - lo), hi))]
    return ranges


class PairwiseSums:
    """KernelBody's float sums in NumPy's pairwise order."""

    def _plan_pairwise(self) -> None:
        """Where pairwise sums keep their state, allocated once per call: a stack of tree nodes
        to visit, a stack of finished sums, and a buffer of up to PAIRWISE_FILL element values."""
        if any(pairwise(stage) for stage in self.kp.kernel.stages):
            emit = self.fn.emit
            self.pairwise_stack = {name: emit("alloca i64, i64 64, align 8", I64, name).ref for name in ("node", "size", "phase")}
            self.pairwise_stack["sum"] = emit("alloca double, i64 64, align 8", I64, "sums").ref
            self.pairwise_stack["value"] = emit(f"alloca double, i64 {PAIRWISE_FILL}, align {LINE}", I64, "values").ref
            self.pairwise_stack["chunk"] = emit("alloca i64, i64 2, align 8", I64, "chunk").ref

    def _slot(self, name: str, index: V, dtype: np.dtype) -> V:
        t = reg_type(dtype) if name in ("sum", "value") else "i64"
        base = self.values_in_scratch if name == "value" and self.values_in_scratch else self.pairwise_stack[name]
        return self.fn.emit(f"getelementptr inbounds {t}, ptr {base}, i64 {index.ref}", I64, "p")

    def _put(self, name: str, index: V, value: V) -> None:
        self.fn.store(self._slot(name, index, value.dtype).ref, literal(0, I64), value)

    def _get(self, name: str, index: V, dtype: np.dtype = I64) -> V:
        return self.fn.load(self._slot(name, index, dtype).ref, literal(0, I64), dtype)

    def _add_sums(self, left_at: V, right_at: V, dtype: np.dtype) -> None:
        """A node's sum from its halves': the stack of sums at left_at becomes left + right."""
        self._put("sum", left_at, self.fn.binary("fadd", self._get("sum", left_at, dtype), self._get("sum", right_at, dtype)))

    def _pairwise_sum(self, start: V, end: V, n: int, value_at, dtype: np.dtype) -> V:
        """The sum of value_at(i) for i in [start, end), added exactly as NumPy's pairwise_sum
        does: a range of more than PAIRWISE_LEAF elements is the sum of its two halves (split
        by pairwise_split); a leaf's elements go to eight partial sums (element j to sum j % 8),
        which are added ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the last n % 8
        elements one by one. [start, end) is the loop's whole length n, or a node of its tree
        (a thread's share, see pairwise_ranges). A balanced tree of at least four equal leaves
        (4096 elements: 32 leaves of 128) sums its leaves left to right, adding the last two
        finished sums as a binary counter carries; any other walks the tree with a stack. For a
        symbolic n both are compiled and the tree's shape at run time picks one."""
        fn = self.fn
        self._put("chunk", literal(1, I64), start)   # no values buffered yet
        size = fn.binary("sub", end, start)
        if not isinstance(n, SymInt):
            if n <= PAIRWISE_LEAF:   # one leaf: no tree to walk (a comprehension's 900 short sums, 10 s of LLVM)
                return self._leaf_sum(start, size, end, value_at, dtype)
            leaf = balanced_leaf(n)
            if leaf:
                return self._balanced_sum(start, end, size, literal(leaf, I64), value_at, dtype)
            return self._tree_walk_sum(start, end, size, value_at, dtype)
        leaf = self.size.at_entry(lambda: self._balanced_leaf(self.size(n)))
        balanced, walk, joined = fn.label("pw.balanced"), fn.label("pw.walk"), fn.label("pw.summed")
        fn.emit(f"br i1 {fn.compare('icmp', 'ne', leaf, literal(0, I64)).ref}, label %{balanced}, label %{walk}")
        fn.start_block(balanced)
        by_leaves = self._balanced_sum(start, end, size, leaf, value_at, dtype)
        from_balanced = fn.block
        fn.emit(f"br label %{joined}")
        fn.start_block(walk)
        by_walk = self._tree_walk_sum(start, end, size, value_at, dtype)
        from_walk = fn.block
        fn.emit(f"br label %{joined}")
        fn.start_block(joined)
        return fn.emit(f"phi {reg_type(dtype)} [ {by_leaves.ref}, %{from_balanced} ], [ {by_walk.ref}, %{from_walk} ]", dtype)

    def _balanced_leaf(self, n: V) -> V:
        """balanced_leaf(n) for n known at run time, 0 for None, without a loop: the halving stops
        at k = min(a, b) steps, a = cttz(n) - 3 (where the leaf stops being a multiple of 16) and
        b = bit_length((n - 1) >> 7) (where it reaches 128 or less); balanced when k >= 2 and
        0 < n >> k <= PAIRWISE_LEAF."""
        fn, no = self.fn, literal(False, BOOL)
        zeros = fn.intrinsic("cttz", [n, no], I64)
        a = fn.intrinsic("smax", [fn.binary("sub", zeros, literal(3, I64)), literal(0, I64)], I64)
        above = fn.binary("lshr", fn.binary("sub", n, literal(1, I64)), literal(PAIRWISE_LEAF.bit_length() - 1, I64))
        b = fn.binary("sub", literal(64, I64), fn.intrinsic("ctlz", [above, no], I64))
        k = fn.intrinsic("umin", [a, b], I64)
        leaf = fn.binary("lshr", n, k)
        ok = fn.binary("and", fn.compare("icmp", "uge", k, literal(2, I64)),
                       fn.binary("and", fn.compare("icmp", "ugt", leaf, literal(0, I64)),
                                 fn.compare("icmp", "ule", leaf, literal(PAIRWISE_LEAF, I64))))
        return fn.select(ok, leaf, literal(0, I64))

    def _balanced_sum(self, start, end, size, leaf, value_at, dtype) -> V:
        """A balanced tree of 4 * 2**k leaves: four leaves at a time (a node two levels up),
        each finished node pushed on the stack of sums and the last two added while the count
        of nodes so far has a trailing zero bit, as a binary counter carries."""
        fn = self.fn
        zero, one = literal(0, I64), literal(1, I64)
        unit = fn.binary("mul", leaf, literal(4, I64))

        def each_unit(k, carried):
            sums = carried[0]
            node = fn.binary("add", start, fn.binary("mul", k, unit))
            base = self._buffered(node, unit, end, value_at)
            groups = fn.binary("udiv", leaf, literal(PAIRWISE_LANES, I64))
            a, b, c, d = self._lane_sums([fn.binary("add", base, fn.binary("mul", leaf, literal(q, I64))) for q in range(4)],
                                         groups, dtype)
            self._put("sum", sums, fn.binary("fadd", fn.binary("fadd", a, b), fn.binary("fadd", c, d)))
            before, carry, done = fn.block, fn.label("pw.carry"), fn.label("pw.carried")
            count = fn.binary("add", k, one)
            fn.emit(f"br i1 {fn.compare('icmp', 'eq', fn.binary('and', count, one), zero).ref}, label %{carry}, label %{done}")
            fn.start_block(carry)
            bits, top = V(fn.fresh("bits"), I64), V(fn.fresh("top"), I64)
            phi_at = len(fn.lines)
            left_at = fn.binary("sub", top, one)
            self._add_sums(left_at, top, dtype)
            shifted = fn.binary("lshr", bits, one)
            fn.emit(f"br i1 {fn.compare('icmp', 'eq', fn.binary('and', shifted, one), zero).ref}, label %{carry}, label %{done}")
            fn.lines[phi_at:phi_at] = [f"  {bits.ref} = phi i64 [ {count.ref}, %{before} ], [ {shifted.ref}, %{carry} ]",
                                       f"  {top.ref} = phi i64 [ {sums.ref}, %{before} ], [ {left_at.ref}, %{carry} ]"]
            fn.start_block(done)
            after = fn.emit(f"phi i64 [ {sums.ref}, %{before} ], [ {left_at.ref}, %{carry} ]", I64)
            return [fn.binary("add", after, one)]
        fn.loop(zero, fn.binary("udiv", size, unit), [zero], each_unit)
        return self._get("sum", zero, dtype)

    def _tree_walk_sum(self, start, end, size, value_at, dtype) -> V:
        fn = self.fn
        zero, one = literal(0, I64), literal(1, I64)
        self._put("node", zero, start)
        self._put("size", zero, size)
        self._put("phase", zero, zero)
        before, head, body, leaf, inner, push, combine, done = (
            fn.block, fn.label("pw"), fn.label("pw.node"), fn.label("pw.leaf"), fn.label("pw.inner"),
            fn.label("pw.push"), fn.label("pw.combine"), fn.label("pw.done"))
        nodes, sums = V(fn.fresh("nodes"), I64), V(fn.fresh("sums"), I64)
        fn.emit(f"br label %{head}")
        fn.start_block(head)
        phi_at = len(fn.lines)
        fn.emit(f"br i1 {fn.compare('icmp', 'sgt', nodes, zero).ref}, label %{body}, label %{done}")
        fn.start_block(body)
        top = fn.binary("sub", nodes, one)
        node, node_size = self._get("node", top), self._get("size", top)
        fn.emit(f"br i1 {fn.compare('icmp', 'sle', node_size, literal(PAIRWISE_LEAF, I64)).ref}, label %{leaf}, label %{inner}")
        fn.start_block(leaf)
        self._put("sum", sums, self._leaf_sum(node, node_size, end, value_at, dtype))
        after_leaf = fn.binary("add", sums, one)
        leaf_end = fn.block
        fn.emit(f"br label %{head}")
        # an inner node: visit its left half, then its right half, then add their sums
        fn.start_block(inner)
        phase = self._get("phase", top)
        fn.emit(f"br i1 {fn.compare('icmp', 'ult', phase, literal(2, I64)).ref}, label %{push}, label %{combine}")
        fn.start_block(push)
        half = fn.binary("sub", fn.binary("udiv", node_size, literal(2, I64)),
                         fn.binary("urem", fn.binary("udiv", node_size, literal(2, I64)), literal(PAIRWISE_LANES, I64)))
        left = fn.compare("icmp", "eq", phase, zero)
        self._put("node", nodes, fn.select(left, node, fn.binary("add", node, half)))
        self._put("size", nodes, fn.select(left, half, fn.binary("sub", node_size, half)))
        self._put("phase", nodes, zero)
        self._put("phase", top, fn.binary("add", phase, one))
        pushed = fn.binary("add", nodes, one)
        fn.emit(f"br label %{head}")
        fn.start_block(combine)
        right_at, left_at = fn.binary("sub", sums, one), fn.binary("sub", sums, literal(2, I64))
        self._add_sums(left_at, right_at, dtype)
        fn.emit(f"br label %{head}")
        fn.lines[phi_at:phi_at] = [
            f"  {nodes.ref} = phi i64 [ 1, %{before} ], [ {top.ref}, %{leaf_end} ], [ {pushed.ref}, %{push} ], [ {top.ref}, %{combine} ]",
            f"  {sums.ref} = phi i64 [ 0, %{before} ], [ {after_leaf.ref}, %{leaf_end} ], [ {sums.ref}, %{push} ], [ {right_at.ref}, %{combine} ]",
        ]
        fn.start_block(done)
        return self._get("sum", zero, dtype)

    def _leaf_sum(self, node: V, size: V, end: V, value_at, dtype: np.dtype) -> V:
        """A leaf's sum, from the values buffer."""
        fn = self.fn
        base = self._buffered(node, size, end, value_at)
        groups = fn.binary("udiv", size, literal(PAIRWISE_LANES, I64))
        (lanes,) = self._lane_sums([base], groups, dtype)
        return fn.loop(fn.binary("mul", groups, literal(PAIRWISE_LANES, I64)), size, [lanes],
                       lambda i, c: [fn.binary("fadd", c[0], self._get("value", fn.binary("add", base, i), dtype))])[0]

    def _buffered(self, node: V, size: V, end: V, value_at) -> V:
        """Where [node, node + size) starts in the values buffer, filling it from node when the
        range is not all there: up to PAIRWISE_FILL elements (a scratch row: all of it), by one
        loop LLVM vectorises."""
        fn = self.fn
        zero, one = literal(0, I64), literal(1, I64)
        fill, have = fn.label("pw.fill"), fn.label("pw.have")
        fn.emit(f"br i1 {fn.compare('icmp', 'sgt', fn.binary('add', node, size), self._get('chunk', one)).ref}, "
                f"label %{fill}, label %{have}")
        fn.start_block(fill)
        if self.values_in_scratch:   # the whole row, which evaluating its values keeps in the scratch
            filled = end
            fn.loop(node, filled, [], lambda i, c: value_at(i) and [])
        else:
            filled = fn.intrinsic("smin", [fn.binary("add", node, literal(PAIRWISE_FILL, I64)), end], I64)

            def put(i: V, value: V) -> None:
                self._put("value", fn.binary("sub", i, node), value)
            if self.values_by_rows:   # one position split into indices a row, not an element (body.flat_sum)
                self.values_by_rows(node, filled, put)
            else:
                fn.loop(node, filled, [], lambda i, c: put(i, value_at(i)) or [])
        self._put("chunk", zero, node)
        self._put("chunk", one, filled)
        fn.emit(f"br label %{have}")
        fn.start_block(have)
        return fn.binary("sub", node, self._get("chunk", zero))

    def _lane_sums(self, bases: list, groups: V, dtype: np.dtype) -> list[V]:
        """For each base in the values buffer, its `groups` groups of eight added lane by lane
        and the lanes added as NumPy does: several leaves in one loop, so that their chains of
        dependent additions overlap."""
        fn, t = self.fn, reg_type(dtype)
        lanes = f"<{PAIRWISE_LANES} x {t}>"
        start = f"splat ({t} {literal(-0.0, dtype).ref})"   # -0.0 + x is x, for every x
        before, head, done = fn.block, fn.label("lanes"), fn.label("lanes.done")
        group = fn.fresh("g")
        totals, added = [fn.fresh("lanes") for _ in bases], [fn.fresh("lanes") for _ in bases]
        fn.emit(f"br i1 {fn.compare('icmp', 'sgt', groups, literal(0, I64)).ref}, label %{head}, label %{done}")
        fn.start_block(head)
        fn.lines.append(f"  {group} = phi i64 [ 0, %{before} ], [ {group}.next, %{head} ]")
        for total, new in zip(totals, added):
            fn.lines.append(f"  {total} = phi {lanes} [ {start}, %{before} ], [ {new}, %{head} ]")
        step = fn.binary("mul", V(group, I64), literal(PAIRWISE_LANES, I64))
        for base, total, new in zip(bases, totals, added):
            at = self._slot("value", fn.binary("add", base, step), dtype)
            value = fn.emit(f"load {lanes}, ptr {at.ref}, align {dtype.itemsize}", I64)
            fn.lines.append(f"  {new} = fadd {lanes} {total}, {value.ref}")
        fn.lines.append(f"  {group}.next = add nuw nsw i64 {group}, 1")
        again = fn.compare("icmp", "slt", V(f"{group}.next", I64), groups)
        fn.emit(f"br i1 {again.ref}, label %{head}, label %{done}")
        fn.start_block(done)
        vectors = [fn.emit(f"phi {lanes} [ {start}, %{before} ], [ {new}, %{head} ]", I64).ref for new in added]
        if len(vectors) == 1:
            parts = [fn.emit(f"extractelement {lanes} {vectors[0]}, i64 {j}", dtype) for j in range(PAIRWISE_LANES)]
            while len(parts) > 1:
                parts = [fn.binary("fadd", x, y) for x, y in zip(parts[::2], parts[1::2])]
            return parts
        return [s for a, b in zip(vectors[::2], vectors[1::2]) for s in self._lane_trees(a, b, dtype)]

    def _lane_trees(self, a: str, b: str, dtype: np.dtype) -> list[V]:
        """The lanes of two leaves added ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), both at
        once: each level adds the even lanes to the odd ones (the same additions, in vectors)."""
        fn, t = self.fn, reg_type(dtype)
        width = 2 * PAIRWISE_LANES
        both = fn.emit(f"shufflevector <{PAIRWISE_LANES} x {t}> {a}, <{PAIRWISE_LANES} x {t}> {b}, "
                       f"<{width} x i32> <{', '.join(f'i32 {j}' for j in range(width))}>", I64).ref
        while width > 2:
            half = width // 2
            picks = [", ".join(f"i32 {j}" for j in range(first, width, 2)) for first in (0, 1)]
            even, odd = (fn.emit(f"shufflevector <{width} x {t}> {both}, <{width} x {t}> poison, <{half} x i32> <{p}>", I64).ref
                         for p in picks)
            both = fn.emit(f"fadd <{half} x {t}> {even}, {odd}", I64).ref
            width = half
        return [fn.emit(f"extractelement <2 x {t}> {both}, i64 {j}", dtype) for j in range(2)]
