"""Slices in a loop nest (nest.py): a slice of an array (any constant step), and pointwise ops on
slices of one shape, are a `Lazy` value, how to compute one element, looped over where it is used:
stored into a slice, reduced by max, min or an integer sum, or a matmul's operand. No array is made
(but a vector-matrix product's row sums, in a stack buffer): PolyBench's nussinov, trisolv, seidel-2d, adi and jacobi-1d write such statements on a few
elements per iteration, each a kernel call otherwise.

A slice stored is slice_stores.py's. Which functions take a `nest`: a nest.py `_Nest` (its
function, checks, versions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from numpile.graph import Node

from .. import scalar
from ..irbuilder import BOOL, I64, NOT_UNROLLED, Function, Unlowerable, V, literal, mem_type, reg_type
from .nestcall import EMPTY, SHAPE
from ..sizes import Sizes

# the stack buffer of a vector-matrix product's row sums
SCRATCH_BYTES = 1 << 16
# the stack buffers of a nest's vector-matrix products, at most (threads' stacks are 8 MB)
_STACK_BYTES = 1 << 20
# rows a vector-matrix product adds into its buffer per pass (in order: the same sums, fewer loads and stores)
_ROWS_AT_ONCE = 4
# LLVM unrolled every loop of constant trip count over a slice (NOT_UNROLLED): cnn's max-pool nest
# (five window statements of 4 x 16 x 2 x 2 elements, two copies for the layouts) went from 31 kB of
# IR to 693 kB and 5 s to compile; the vectoriser still widens them


@dataclass(frozen=True)
class Lazy:
    """A few elements in a loop nest (a slice, pointwise ops on slices of one shape): how to compute
    an element, `compute(positions)`, for the reduction, product or store that loops over them.
    `reads`: the slices it reads, (root, the node of the version read, where the slice starts,
    its (stride, length) per dim), their arrays' newest versions still where it is used."""
    dims: tuple
    compute: object
    reads: tuple
    made: dict = field(default_factory=dict, compare=False)

    def at(self, positions: tuple) -> V:
        """Element `positions`, computed once where they are (positions are a loop's registers):
        an expression reading one value twice (`where(x > 0, x, 0)` of a window's max) would
        otherwise emit it twice, and nested ones exponentially often."""
        key = tuple(p.ref for p in positions)
        if key not in self.made:
            self.made[key] = self.compute(positions)
        return self.made[key]


@dataclass(frozen=True)
class Span:
    """A slice's positions along one dim: `length` of them from `start` by `step` (a positive V
    where the graph computes it: the sieve's `mask[j * j::j]`)."""
    start: V
    step: int | V
    length: V

    def stride(self) -> V:
        return self.step if isinstance(self.step, V) else literal(self.step, I64)


def load(fn: Function, address: V, dtype: np.dtype) -> V:
    value = fn.emit(f"load {mem_type(dtype)}, ptr {address.ref}", dtype if dtype.kind != "b" else np.dtype(np.int8))
    return fn.emit(f"icmp ne i8 {value.ref}, 0", BOOL) if dtype.kind == "b" else value


def store(fn: Function, address: V, v: V) -> None:
    if v.dtype.kind == "b":   # a byte in memory
        v = fn.emit(f"zext i1 {v.ref} to i8", np.dtype(np.int8))
    fn.emit(f"store {reg_type(v.dtype) if v.dtype.kind != 'b' else 'i8'} {v.ref}, ptr {address.ref}")


def element_address(fn: Function, base: V, strides: list, positions: tuple) -> V:
    offset = literal(0, I64)
    for p, stride in zip(positions, strides):
        offset = fn.binary("add", offset, fn.binary("mul", p, stride))
    return fn.emit(f"getelementptr inbounds i8, ptr {base.ref}, i64 {offset.ref}", I64, "p")


def each(fn: Function, lengths: list, body) -> None:
    """body(positions) for every position of an array of these lengths, in C order."""
    over(fn, lengths, [], lambda acc, positions: body(positions) or [])


REDUCED = {"max": "maximum", "min": "minimum", "sum": "add", "all": "logical_and", "any": "logical_or"}   # its step
IDENTITIES = {"sum": 0, "all": True, "any": False}   # where a reduction starts; max and min start at the first element


def reduction(nest, n: Node, env: dict, sizes: Sizes):
    """max, min or sum of a slice expression (sum: of integers, booleans; a float sum would have to
    add in NumPy's pairwise order): of all its elements, a loop over them; along some axes, a slice
    expression of the others whose elements are such loops. An empty max or min stops (status
    EMPTY: the frame runs again as Python, which raises NumPy's error)."""
    lazy, fn = used(nest, nest.operand(n.args[0], env, sizes)), nest.fn
    kwargs = dict(n.kwargs)
    axis = kwargs.pop("axis", None)
    if n.target in ("sum", "mean") and n.dtype.kind == "f" and not any(v not in (None, False) for v in kwargs.values()) \
            and len(lazy.dims) == 1 and _at_most(n.args[0].shape[0], PAIRWISE_LEAF):
        total = small_pairwise_sum(fn, lazy, n.dtype)   # a mean: NumPy's sum in its dtype, over the count
        if n.target == "mean":
            total = fn.binary("fdiv", total, fn.convert("sitofp", lazy.dims[0], n.dtype))
        return V(total.ref, n.dtype, bool(n.meta.get("weak")))
    if n.target == "mean":
        raise Unlowerable("mean of other than a short 1-d slice of numbers in a loop nest")
    if any(v not in (None, False) for v in kwargs.values()) or n.target == "sum" and n.dtype.kind not in "iub":
        raise Unlowerable(f"{n.target} with arguments, or of floats, in a loop nest")
    ndim = len(lazy.dims)
    axes = range(ndim) if axis is None else sorted({a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))})
    kept = [k for k in range(ndim) if k not in axes]

    def step(acc: list, positions: tuple) -> list:
        x = scalar.cast(fn, lazy.at(positions), n.dtype)
        combined = scalar.emit(fn, REDUCED[n.target], [acc[0], x], {}, n.dtype)
        return [combined] if n.target in IDENTITIES else [fn.select(acc[1], combined, x), literal(True, BOOL)]

    def at(outer: tuple) -> V:   # the reduction of the elements at these positions of the kept dims
        def merged(acc: list, inner: tuple) -> list:
            positions = dict(zip(kept, outer)) | dict(zip(axes, inner))
            return step(acc, tuple(positions[k] for k in range(ndim)))
        # a max or min starts from the first element (acc[1]: one seen)
        first = not n.target in IDENTITIES
        total = over(fn, [lazy.dims[k] for k in axes], [literal(IDENTITIES.get(n.target, 0), n.dtype)] + [literal(False, BOOL)] * first,
                     merged)
        if first:
            nest.check(total[1], EMPTY)
        return V(total[0].ref, n.dtype, bool(n.meta.get("weak")))
    return at(()) if not kept else Lazy(tuple(lazy.dims[k] for k in kept), at, lazy.reads)


PAIRWISE_LEAF, PAIRWISE_LANES = 128, 8   # NumPy's PW_BLOCKSIZE and its interleaved partial sums


def _at_most(size, bound: int) -> bool:
    """Whether a (symbolic) length is at most `bound` for every size: an int, or a min() one of
    whose sides is (a window `x[i:i + 3]` clamped at the array's end)."""
    if isinstance(size, int):
        return size <= bound
    tree = getattr(size, "tree", None)
    return tree is not None and tree[0] == "min" and (_at_most(tree[1], bound) or _at_most(tree[2], bound))


def small_pairwise_sum(fn: Function, lazy: Lazy, dtype) -> V:
    """The sum of a 1-d slice expression of at most PAIRWISE_LEAF elements in NumPy's order, to the
    bit: under 8 elements one after another from 0; else eight interleaved partial sums from the
    first eight elements, added as ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), then the
    elements past the last whole eight. (Each part is a loop whose trip count is 0 where the other
    applies: no element past the end is read.)"""
    n, zero, lanes = lazy.dims[0], literal(0, I64), literal(PAIRWISE_LANES, I64)
    x = lambda p: scalar.cast(fn, lazy.at((p,)), dtype)  # noqa: E731
    small = fn.compare("icmp", "slt", n, lanes)
    props = fn.module.loop_properties(NOT_UNROLLED)
    one_by_one = fn.loop(zero, fn.select(small, n, zero), [literal(0, dtype)],
                         lambda p, acc: [fn.binary("fadd", acc[0], x(p))], props)[0]
    blocks = fn.select(small, zero, fn.binary("sdiv", n, lanes))
    first = fn.loop(zero, fn.select(small, zero, literal(1, I64)), [literal(0, dtype)] * PAIRWISE_LANES,
                    lambda t, acc: [x(literal(j, I64)) for j in range(PAIRWISE_LANES)])

    def block(b: V, acc: list) -> list:
        base = fn.binary("mul", b, lanes)
        return [fn.binary("fadd", r, x(fn.binary("add", base, literal(j, I64)))) for j, r in enumerate(acc)]
    r = fn.loop(literal(1, I64), blocks, first, block, props)
    tree = fn.binary("fadd", fn.binary("fadd", fn.binary("fadd", r[0], r[1]), fn.binary("fadd", r[2], r[3])),
                     fn.binary("fadd", fn.binary("fadd", r[4], r[5]), fn.binary("fadd", r[6], r[7])))
    whole = fn.binary("mul", blocks, lanes)
    rest = fn.loop(whole, fn.select(small, zero, n), [tree], lambda p, acc: [fn.binary("fadd", acc[0], x(p))], props)[0]
    return fn.select(small, one_by_one, rest)


ARG_REDUCED = {"argmin": "less", "argmax": "greater"}   # the comparison a later element must win by


def arg_reduction(nest, n: Node, env: dict, sizes: Sizes):
    """argmin or argmax of a slice expression: the position of its first best element, over all
    of it in C order or along `axis` (a slice expression of the other dims); a NaN is best, its
    first one, as in NumPy. An empty one stops (status EMPTY: Python raises NumPy's error)."""
    lazy, fn = used(nest, nest.operand(n.args[0], env, sizes)), nest.fn
    kwargs = dict(n.kwargs)
    axis = kwargs.pop("axis", None)
    if any(kwargs.values()):
        raise Unlowerable(f"{n.target} with keepdims in a loop nest")
    ndim, dtype = len(lazy.dims), n.args[0].dtype
    axes = list(range(ndim)) if axis is None else [axis % ndim]
    kept = [k for k in range(ndim) if k not in axes]
    boolean = np.dtype(bool)

    def at(outer: tuple) -> V:
        def step(acc: list, inner: tuple) -> list:
            best, where, seen = acc
            positions = dict(zip(kept, outer)) | dict(zip(axes, inner))
            x = scalar.cast(fn, lazy.at(tuple(positions[k] for k in range(ndim))), dtype)
            flat = literal(0, I64)
            for k, p in zip(axes, inner):   # the position among the reduced dims, in C order
                flat = fn.binary("add", fn.binary("mul", flat, lazy.dims[k]), p)
            wins = scalar.emit(fn, ARG_REDUCED[n.target], [x, best], {}, boolean)
            nan_first = fn.binary("and", scalar.emit(fn, "isnan", [x], {}, boolean),
                                  fn.binary("xor", scalar.emit(fn, "isnan", [best], {}, boolean), literal(True, BOOL)))
            take = fn.binary("or", fn.binary("xor", seen, literal(True, BOOL)), fn.binary("or", wins, nan_first))
            return [fn.select(take, x, best), fn.select(take, flat, where), literal(True, BOOL)]
        best, where, seen = over(fn, [lazy.dims[k] for k in axes], [literal(0, dtype), literal(0, I64), literal(False, BOOL)], step)
        nest.check(seen, EMPTY)
        return V(where.ref, I64, bool(n.meta.get("weak")))
    return at(()) if not kept else Lazy(tuple(lazy.dims[k] for k in kept), at, lazy.reads)


def product(nest, n: Node, env: dict, sizes: Sizes):
    """matmul or dot of vectors and small matrices of slice expressions of numbers (1-d or 2-d,
    NumPy's matmul shapes): each element its products added, floats side by side (_float_dot),
    others in order (a product's order is BLAS's in NumPy, not one NumPy fixes: equal within
    rounding); a vector product a value, else a slice expression whose elements are computed
    where they are used."""
    a, b = (used(nest, nest.operand(x, env, sizes)) for x in n.args[:2])
    if n.kwargs and any(v is not None for v in dict(n.kwargs).values()) or n.dtype.kind not in "iufc" \
            or not 1 <= len(a.dims) <= 2 or not 1 <= len(b.dims) <= 2:
        raise Unlowerable(f"{n.target} of other than vectors and matrices of numbers in a loop nest")
    fn = nest.fn
    inner = (a.dims[-1], b.dims[0])
    nest.check(fn.compare("icmp", "eq", *inner), SHAPE)

    def element(positions: tuple) -> V:
        row, column = (positions[:1] if len(a.dims) == 2 else ()), (positions[-1:] if len(b.dims) == 2 else ())

        def term(k: V) -> V:
            x, y = scalar.cast(fn, a.at(row + (k,)), n.dtype), scalar.cast(fn, b.at((k,) + column), n.dtype)
            return scalar.emit(fn, "multiply", [x, y], {}, n.dtype)
        if n.dtype.kind == "f":
            return V(_float_dot(fn, inner[0], term, n.dtype).ref, n.dtype, bool(n.meta.get("weak")))
        total = over(fn, [inner[0]], [literal(0, n.dtype)],
                     lambda acc, k: [scalar.emit(fn, "add", [acc[0], term(k[0])], {}, n.dtype)])[0]
        return V(total.ref, n.dtype, bool(n.meta.get("weak")))
    dims = a.dims[:-1] + b.dims[1:]
    if len(a.dims) == 1 and len(b.dims) == 2 and n.dtype.kind in "iuf" and fn.stack_bytes < _STACK_BYTES:
        return _vector_matrix(nest, n, a, b, element)
    return Lazy(dims, element, a.reads + b.reads) if dims else element(())


def _float_dot(fn: Function, length: V, term, dtype) -> V:
    """The sum of `term(k)` over k < length in an order the vectoriser picks, as BLAS's dot does
    (partial sums side by side, added at the end): one after another each add waits for the last
    (NPBench's trisolv, `L[i, :i] @ x[:i]` per row, ran at the adder's latency)."""
    def add(k: V, acc: list) -> list:
        return [fn.emit(f"fadd reassoc {reg_type(dtype)} {acc[0].ref}, {term(k).ref}", dtype)]
    return fn.loop(literal(0, I64), length, [literal(0, dtype)], add)[0]


def _vector_matrix(nest, n: Node, a: Lazy, b: Lazy, by_column) -> Lazy:
    """`v @ m` the way BLAS reads m: its rows scaled by v's elements and added into a buffer on the
    stack, each row read along. Computed element by element (`by_column`), each reads a column of m,
    a row's length apart (NPBench's covariance, `data[:, i] @ data[:, i:M]` in a loop, ran at 0.07x
    NumPy). A result longer than the buffer is computed by column."""
    fn, dtype = nest.fn, n.dtype
    length, size = b.dims[1], literal(dtype.itemsize, I64)
    buffer = fn.stack_buffer(SCRATCH_BYTES)
    fits = fn.compare("icmp", "ule", fn.binary("mul", length, size), literal(SCRATCH_BYTES, I64))

    def slot(j: V) -> V:
        return element_address(fn, buffer, [size], (j,))

    def add_rows(first: V, count: int) -> None:
        """Rows first, first + 1, ... (count of them) added in order, one load and store a slot."""
        ks = [fn.binary("add", first, literal(t, I64)) for t in range(count)]
        xs = [scalar.cast(fn, a.at((k,)), dtype) for k in ks]

        def add(j: V) -> None:
            total = load(fn, slot(j), dtype)
            for k, x in zip(ks, xs):
                term = scalar.emit(fn, "multiply", [x, scalar.cast(fn, b.at((k, j)), dtype)], {}, dtype)
                total = scalar.emit(fn, "add", [total, term], {}, dtype)
            store(fn, slot(j), total)
        each(fn, [length], lambda p: add(p[0]))
    rows, done = fn.label("rows"), fn.label("rows_done")
    fn.emit(f"br i1 {fits.ref}, label %{rows}, label %{done}")
    fn.start_block(rows)
    each(fn, [length], lambda p: store(fn, slot(p[0]), literal(0, dtype)))
    blocks = fn.binary("sdiv", a.dims[0], literal(_ROWS_AT_ONCE, I64))
    each(fn, [blocks], lambda p: add_rows(fn.binary("mul", p[0], literal(_ROWS_AT_ONCE, I64)), _ROWS_AT_ONCE))
    fn.loop(fn.binary("mul", blocks, literal(_ROWS_AT_ONCE, I64)), a.dims[0], [], lambda k, _: add_rows(k, 1) or [])
    fn.emit(f"br label %{done}")
    fn.start_block(done)

    def element(positions: tuple) -> V:
        buffered, computed, joined = fn.label("buffered"), fn.label("by_column"), fn.label("element")
        fn.emit(f"br i1 {fits.ref}, label %{buffered}, label %{computed}")
        fn.start_block(buffered)
        loaded = load(fn, slot(positions[0]), dtype)
        fn.emit(f"br label %{joined}")
        fn.start_block(computed)
        value = by_column(positions)
        end = fn.block
        fn.emit(f"br label %{joined}")
        fn.start_block(joined)
        merged = fn.emit(f"phi {reg_type(dtype)} [ {loaded.ref}, %{buffered} ], [ {value.ref}, %{end} ]", dtype)
        return V(merged.ref, dtype, bool(n.meta.get("weak")))
    return Lazy((length,), element, a.reads + b.reads)


def same_dims(nest, lazies: list) -> None:
    """Stop (SHAPE) unless these slice expressions, of one shape in the graph, have the same lengths
    as they run: one is looped over by another's positions."""
    for other in lazies[1:]:
        for d, e in zip(lazies[0].dims, other.dims):
            nest.check(nest.fn.compare("icmp", "eq", d, e), SHAPE)


def used(nest, value) -> Lazy:
    """A slice expression where it is used: the arrays it reads not updated since it was made."""
    if not isinstance(value, Lazy):
        raise Unlowerable("a reduction of other than slices in a loop nest")
    if any(nest.current.get(root) is not node for root, node, *_ in value.reads):
        raise Unlowerable("an array updated between its slice and the slice's use in a loop nest")
    return value


def over(fn: Function, lengths, start: list, step) -> list:
    """The values `step(acc, positions)` carries over every position of an array of these lengths,
    in C order."""
    def from_dim(k: int, positions: tuple, acc: list) -> list:
        if k == len(lengths):
            return step(acc, positions)
        return fn.loop(literal(0, I64), lengths[k], acc, lambda p, c: from_dim(k + 1, positions + (p,), c),
                       fn.module.loop_properties(NOT_UNROLLED))
    return from_dim(0, (), start)


def chosen(fn: Function, values: list) -> Lazy:
    """A short vector of values (registers or literals of one dtype): element p chosen among them."""
    def element(positions: tuple) -> V:
        (p,) = positions
        value = values[-1]
        for k in range(len(values) - 2, -1, -1):
            value = fn.select(fn.compare("icmp", "eq", p, literal(k, I64)), values[k], value)
        return value
    return Lazy((literal(len(values), I64),), element, ())


def per_dim(index, ndim: int) -> tuple:
    """An index as one item per dimension: `x[i]` of a matrix is its row `x[i, :]`."""
    index = index if isinstance(index, tuple) else (index,)
    if len(index) < ndim and not any(i is None or i is Ellipsis for i in index):
        index += (slice(None),) * (ndim - len(index))
    if len(index) != ndim:
        raise Unlowerable("an index that is not one item per dimension")
    return index


def indexed(nest, lazy: Lazy, index, env: dict, sizes: Sizes, n: Node):
    """`lazy[index]`: its element (integers in every dim), or a slice expression of it."""
    value = remapped(nest, lazy, nest.positions(per_dim(index, len(lazy.dims)), lazy.dims, env, sizes))
    return value if isinstance(value, Lazy) else V(value.ref, n.dtype, bool(n.meta.get("weak")))


def flipped(nest, n: Node, env: dict, sizes: Sizes) -> Lazy:
    """np.flip of a slice expression (along `axis`, or all): position p of a flipped dim is
    length - 1 - p of the expression."""
    lazy, fn = used(nest, nest.operand(n.args[0], env, sizes)), nest.fn
    axis = dict(n.kwargs).get("axis", n.args[1] if len(n.args) > 1 else None)
    ndim = len(lazy.dims)
    axes = set(range(ndim)) if axis is None else {a % ndim for a in (axis if isinstance(axis, tuple) else (axis,))}
    return remapped(nest, lazy, [Span(fn.binary("sub", d, literal(1, I64)), -1, d) if k in axes else Span(literal(0, I64), 1, d)
                                 for k, d in enumerate(lazy.dims)])


def remapped(nest, lazy: Lazy, plan: list):
    """The slice expression whose positions map into lazy's by `plan` (per dim of lazy: a Span of
    its positions, or one position), or its one element where no Span is left. Its reads are
    remapped alike: where a store checks what it overlaps (_in_order), a reversed or shifted read
    is seen as one."""
    fn = nest.fn
    if any(len(slices) != len(plan) for *_, slices in lazy.reads):
        raise Unlowerable("a slice of a reduced slice expression in a loop nest")

    def element(positions: tuple) -> V:
        taken = iter(positions)
        return lazy.at(tuple(fn.binary("add", p.start, fn.binary("mul", next(taken), p.stride()))
                             if isinstance(p, Span) else p for p in plan))
    kept = [p for p in plan if isinstance(p, Span)]
    if not kept:
        return element(())
    starts = [p.start if isinstance(p, Span) else p for p in plan]
    reads = tuple((root, node, element_address(fn, address, [stride for stride, _ in slices], starts),
                   tuple((fn.binary("mul", stride, p.stride()), p.length)
                         for (stride, _), p in zip(slices, plan) if isinstance(p, Span)))
                  for root, node, address, slices in lazy.reads)
    return Lazy(tuple(p.length for p in kept), element, reads)


def gathered(nest, a, positions: Lazy, place) -> Lazy:
    """`a[positions]` of a 1-d array a by a slice expression of integers: each position counted
    from the end where negative and checked as NumPy's (`place`, nest.positions). Its reads: all
    of a (a store over a checks what it overlaps against all of it)."""
    fn = nest.fn

    def element(p: tuple) -> V:
        (at,) = place((positions.at(p),), a.dims, {}, None)
        return load(fn, element_address(fn, a.data, a.strides, (at,)), a.dtype)
    whole = (a.root, nest.current[a.root], a.data, ((a.strides[0], literal(a.dims[0], I64) if isinstance(a.dims[0], int) else a.dims[0]),))
    return Lazy(positions.dims, element, (whole,))


def sliced(nest, a, address: V, slices: list) -> Lazy:
    """The slice of array a starting at `address` with (stride, length) per dim (nest.place)."""
    strides = [stride for stride, _ in slices]
    return Lazy(tuple(length for _, length in slices),
                lambda positions: load(nest.fn, element_address(nest.fn, address, strides, positions), a.dtype),
                ((a.root, nest.current[a.root], address, tuple(slices)),))
