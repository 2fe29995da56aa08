"""A slice stored in a loop nest (nest.py): `a[slices] = v`, element by element in C order.

NumPy computes a slice's value whole before storing it; storing element by element does the same
unless the value reads elements of the slice's array that the store reaches first
(`buf[1:] = buf[:-1]`). `_in_order` tells at run time; where it might, the value goes through a
buffer first: on the stack up to SCRATCH_BYTES, from malloc past it (a Laplace sweep's
`u[1:-1] = u[2:] + u[:-2]` on 100 x 100 stopped the nest there, and its frame ran as Python).
"""

from __future__ import annotations

from .. import scalar
from ..irbuilder import BOOL, I64, Function, Unlowerable, V, literal
from .nestcall import OVERLAP, SHAPE
from .slices import SCRATCH_BYTES, Lazy, each, element_address, load, store, used


def store_slice(nest, a, address: V, slices: list, v) -> None:
    """`a[slices] = v`: v one value, or a slice expression of the slices' shape (another shape, which
    NumPy may broadcast, stops: SHAPE), stored element by element in C order. NumPy computes v
    whole first: where v reads a's memory and storing as it goes could read what it stored
    already (_in_order), v goes to a buffer first (_scratch). A stop runs the frame as Python."""
    fn = nest.fn
    lengths = [length for _, length in slices]
    nest.inner_loops += 1   # work in each iteration of the outermost loop, which threads may share

    def element(positions: tuple) -> V:
        return scalar.cast(fn, v.at(positions) if isinstance(v, Lazy) else v, a.dtype)

    def into_slice(positions: tuple) -> V:
        return element_address(fn, address, [stride for stride, _ in slices], positions)
    overlaps = []
    if isinstance(v, Lazy):
        v = used(nest, v)
        if len(v.dims) != len(slices):
            raise Unlowerable("a slice stored from a value of another number of dims in a loop nest")
        for d, length in zip(v.dims, lengths):
            nest.check(fn.compare("icmp", "eq", d, length), SHAPE)
        overlaps = [_in_order(fn, address, slices, base, region, a.dtype.itemsize)
                    for root, _, base, region in v.reads if root == a.root]
    if not overlaps:
        each(fn, lengths, lambda p: store(fn, into_slice(p), element(p)))
        return
    in_order = overlaps[0]
    for ok in overlaps[1:]:
        in_order = fn.binary("and", in_order, ok)
    direct, copied, done = fn.label("direct"), fn.label("copied"), fn.label("stored")
    fn.emit(f"br i1 {in_order.ref}, label %{direct}, label %{copied}")
    fn.start_block(direct)
    each(fn, lengths, lambda p: store(fn, into_slice(p), element(p)))
    fn.emit(f"br label %{done}")
    fn.start_block(copied)
    dense, count = [], literal(a.dtype.itemsize, I64)   # the buffer's strides, C order
    for length in reversed(lengths):
        dense.insert(0, count)
        count = fn.binary("mul", count, length)
    scratch, release = _scratch(nest, count)
    each(fn, lengths, lambda p: store(fn, element_address(fn, scratch, dense, p), element(p)))
    each(fn, lengths, lambda p: store(fn, into_slice(p), load(fn, element_address(fn, scratch, dense, p), a.dtype)))
    release()
    fn.emit(f"br label %{done}")
    fn.start_block(done)


def _scratch(nest, count: V) -> tuple:
    """A buffer of `count` bytes for a value computed before it is stored: on the stack up to
    SCRATCH_BYTES, else from malloc (a Laplace sweep's `u[1:-1] = u[2:] + u[:-2]` on 100 x 100;
    none: OVERLAP), and the function that gives it back."""
    fn, module = nest.fn, nest.fn.module
    module.declare("llvm.stacksave", "declare ptr @llvm.stacksave.p0()")
    module.declare("llvm.stackrestore", "declare void @llvm.stackrestore.p0(ptr)")
    module.declare("malloc", "declare noalias ptr @malloc(i64)")
    module.declare("free", "declare void @free(ptr)")
    large = fn.compare("icmp", "ugt", count, literal(SCRATCH_BYTES, I64))
    on_heap, on_stack, joined = fn.label("heap"), fn.label("stack"), fn.label("scratch")
    fn.emit(f"br i1 {large.ref}, label %{on_heap}, label %{on_stack}")
    fn.start_block(on_heap)
    allocated = fn.emit(f"call ptr @malloc(i64 {count.ref})", I64, "heap")
    nest.check(fn.emit(f"icmp ne ptr {allocated.ref}, null", BOOL), OVERLAP)
    from_heap = fn.block
    fn.emit(f"br label %{joined}")
    fn.start_block(on_stack)
    top = fn.emit("call ptr @llvm.stacksave.p0()", I64, "sp")
    alloca = fn.emit(f"alloca i8, i64 {count.ref}, align 16", I64, "stack")
    fn.emit(f"br label %{joined}")
    fn.start_block(joined)
    scratch = fn.emit(f"phi ptr [ {allocated.ref}, %{from_heap} ], [ {alloca.ref}, %{on_stack} ]", I64, "scratch")
    saved = fn.emit(f"phi ptr [ null, %{from_heap} ], [ {top.ref}, %{on_stack} ]", I64, "sp")

    def release() -> None:
        freed, restored, back = fn.label("free"), fn.label("restore"), fn.label("released")
        fn.emit(f"br i1 {large.ref}, label %{freed}, label %{restored}")
        fn.start_block(freed)
        fn.emit(f"call void @free(ptr {scratch.ref})")
        fn.emit(f"br label %{back}")
        fn.start_block(restored)
        fn.emit(f"call void @llvm.stackrestore.p0(ptr {saved.ref})")
        fn.emit(f"br label %{back}")
        fn.start_block(back)
    return scratch, release


def _in_order(fn: Function, stored: V, slices: list, read: V, region: tuple, itemsize: int) -> V:
    """Whether storing `slices` from `stored` on, in C order, reads region (from `read` on) only
    where nothing was stored yet: the two are apart in memory, the same elements, or, along one
    dim of one stride, the read is k elements ahead of the store (k >= 0) or not on its grid."""
    def bounds(base: V, dims: list) -> tuple:
        lo = hi = fn.emit(f"ptrtoint ptr {base.ref} to i64", I64)
        for stride, length in dims:
            extent = fn.binary("mul", fn.binary("sub", length, literal(1, I64)), stride)
            lo = fn.binary("add", lo, fn.intrinsic("smin", [extent, literal(0, I64)], I64))
            hi = fn.binary("add", hi, fn.intrinsic("smax", [extent, literal(0, I64)], I64))
        return lo, fn.binary("add", hi, literal(itemsize, I64))
    (w_lo, w_hi), (r_lo, r_hi) = bounds(stored, slices), bounds(read, list(region))
    ok = fn.binary("or", fn.compare("icmp", "sle", w_hi, r_lo), fn.compare("icmp", "sle", r_hi, w_lo))
    for _, length in (*slices, *region):   # nothing stored or nothing read
        ok = fn.binary("or", ok, fn.compare("icmp", "sle", length, literal(0, I64)))
    if len(slices) != len(region):
        return ok
    delta = fn.binary("sub", fn.emit(f"ptrtoint ptr {read.ref} to i64", I64), fn.emit(f"ptrtoint ptr {stored.ref} to i64", I64))
    same_grid = literal(True, BOOL)
    for (s, _), (t, _) in zip(slices, region):
        same_grid = fn.binary("and", same_grid, fn.compare("icmp", "eq", s, t))
    same = fn.binary("and", same_grid, fn.compare("icmp", "eq", delta, literal(0, I64)))
    ok = fn.binary("or", ok, same)
    if len(slices) == 1:
        stride, length = slices[0]
        step = fn.select(fn.compare("icmp", "eq", stride, literal(0, I64)), literal(1, I64), stride)
        k = fn.binary("sdiv", delta, step)
        off_grid = fn.compare("icmp", "ne", fn.binary("mul", k, step), delta)
        ahead = fn.binary("or", fn.compare("icmp", "sge", k, literal(0, I64)),
                          fn.compare("icmp", "sle", k, fn.binary("sub", literal(0, I64), length)))
        ok = fn.binary("or", ok, fn.binary("and", same_grid, fn.binary("or", off_grid, ahead)))
    return ok
