"""What each op of a loop body becomes in a loop nest (nest.py walks the body's Graph and calls
these, `CALLS` by op name, `pointwise` for the rest): element and slice reads and writes, pointwise
ops on elements or slices, and the control flow inside a nest: inner loops, while loops (as
do-whiles) and conds (both sides, their values merged by phis). Each handler takes the walker (a
nest.py `_Nest`: its function, operands, versions of arrays, checks), the node, the values of the
graph so far and the sizes, and returns the node's value.
"""

from __future__ import annotations

from numpile import ops
from numpile.graph import Node
from numpile.lowering import Const

from .. import scalar
from . import pynumbers
from . import slice_stores, slices as slices_
from ..irbuilder import BOOL, Unlowerable, V, literal, reg_type
from ..sizes import Sizes
from .nestcall import CHECK
from .values import NestArray, as_index


def _getitem(nest, n: Node, env: dict, sizes: Sizes):
    array, index = n.args
    if isinstance(env[array], V) and index == ():   # x[()] of a 0-d value: the value (a NumPy scalar)
        return V(env[array].ref, n.dtype, bool(n.meta.get("weak")))
    if isinstance(env[array], slices_.Lazy):   # an element or a slice of a slice expression: still lazy
        return slices_.indexed(nest, slices_.used(nest, env[array]), index, env, sizes, n)
    a = nest.version(array, env[array])
    if n.target == "index" and len(index) == 1 == len(a.dims) and isinstance(env.get(index[0]), slices_.Lazy):
        return slices_.gathered(nest, a, slices_.used(nest, env[index[0]]), nest.positions)
    address, slices = nest.place(a, index, env, sizes)
    if len(slices) != len(n.shape):
        raise Unlowerable("a getitem of more than one element, not by slices, in a loop nest")
    if not slices:
        return V(slices_.load(nest.fn, address, a.dtype).ref, n.dtype, bool(n.meta.get("weak")))
    return slices_.sliced(nest, a, address, slices)


def _slice_positions(nest, n: Node, env: dict, sizes: Sizes) -> slices_.Lazy:
    """The positions a slice with bounds computed in the graph picks (`x[a[i]:a[i + 1]]`), clamped
    as Python's are: a slice expression of integers, its length bound here."""
    size, start, stop, step = n.args
    span = nest.positions((slice(start, stop, step),), (sizes(size),), env, sizes)[0]
    fn = nest.fn
    return slices_.Lazy((span.length,), lambda p: fn.binary("add", span.start, fn.binary("mul", p[0], span.stride())), ())


def _setitem(nest, n: Node, env: dict, sizes: Sizes) -> NestArray:
    array, index, value = n.args
    a = nest.version(array, env[array])
    v = nest.operand(value, env, sizes)
    if isinstance(v, NestArray):
        raise Unlowerable("an array stored into one element in a loop nest")
    address, slices = nest.place(a, index, env, sizes, written=True)
    if slices:
        slice_stores.store_slice(nest, a, address, slices, v)
    elif isinstance(v, slices_.Lazy):
        raise Unlowerable("a slice stored into one element in a loop nest")
    else:
        slices_.store(nest.fn, address, scalar.cast(nest.fn, v, a.dtype))
    nest.current[a.root] = n
    return a


def pointwise(nest, n: Node, env: dict, sizes: Sizes):
    if n.results is not None:
        raise Unlowerable(f"{n.target} with several results in a loop nest")
    args = n.args[:1] if n.target == "astype" else n.args   # astype's dtype is the result's
    operands = [nest.operand(a, env, sizes) for a in args]
    operands = [_whole(nest, a, o, env, sizes) if isinstance(o, NestArray) else o for a, o in zip(args, operands)]
    lazy = [o for o in operands if isinstance(o, slices_.Lazy)]
    if lazy or n.shape:   # elements of slices of one shape, or scalars with them
        if not lazy or any(isinstance(a, Node) and a.shape and a.shape != n.shape for a in args):
            raise Unlowerable(f"{n.target} of arrays of other shapes (broadcast) in a loop nest")
        slices_.same_dims(nest, lazy)
        return slices_.Lazy(lazy[0].dims, lambda p: _element(nest, n, [o.at(p) if isinstance(o, slices_.Lazy) else o
                                                                       for o in operands]),
                            tuple(r for o in lazy for r in o.reads))
    return _element(nest, n, operands)


def _whole(nest, node: Node, array: NestArray, env: dict, sizes: Sizes) -> slices_.Lazy:
    """A whole array read by a pointwise op (`E[i] - symbols`): the slice of all of it."""
    a = nest.version(node, array)
    return slices_.sliced(nest, a, *nest.place(a, (slice(None),) * len(a.dims), env, sizes))


def _element(nest, n: Node, operands: list) -> V:
    """Pointwise op n on operands that are single values."""
    if all(isinstance(o, Const) and o.dtype is None or isinstance(o, V) and o.weak for o in operands):
        operands = [pynumbers.python_operand(o) for o in operands]   # Python arithmetic: int64, float64 or bool
    fn = nest.fn
    if all(isinstance(o, Const) for o in operands):   # a constant (a branch's `k = 0`: 0 * 1 in the graph)
        value = ops.get(n.target).impl(*(o.value for o in operands), **n.kwargs)
        return V(literal(value, n.dtype).ref, n.dtype, bool(n.meta.get("weak")))
    if n.meta.get("weak") and n.dtype.kind == "i" and n.target in scalar.PYTHON_INT:
        return pynumbers.checked(nest, n, operands)
    operands = pynumbers.fitted(nest, operands)
    value = scalar.emit(fn, n.target, operands, dict(n.kwargs), n.dtype, scalars=not n.shape)
    return V(value.ref, value.dtype, bool(n.meta.get("weak")))


def _while(nest, n: Node, env: dict, sizes: Sizes) -> list:
    """A while_loop: its body run, then again while its first result says so (a do-while)."""
    body, carried, free = n.args
    fn = nest.fn
    nest.inner_loops += 1
    values = [nest.operand(c, env, sizes) for c in carried]
    for c, value in zip(carried, values):
        if isinstance(value, NestArray):
            nest.version(c, value)
    free_values = [nest.operand(f, env, sizes) for f in free]
    inputs = body.inputs
    carried_in, free_in = inputs[:len(carried)], inputs[len(carried):]
    scalars = [k for k, v in enumerate(values) if not isinstance(v, NestArray)]
    inits = [scalar.cast(fn, values[k], carried_in[k].dtype) for k in scalars]
    pre, head, done = fn.block, fn.label("while"), fn.label("wend")
    fn.emit(f"br label %{head}")
    fn.start_block(head)
    phis = [V(fn.fresh("w"), init.dtype) for init in inits]
    phi_at = len(fn.lines)
    current = list(values)
    for k, phi in zip(scalars, phis):
        current[k] = nest.weak(carried_in[k], phi)
    body_env = {node: nest.enter(node, value) for node, value in zip(carried_in, current)}
    body_env |= {node: nest.enter(node, value) for node, value in zip(free_in, free_values)}
    go, *outs = nest.graph(body, body_env)
    for k, out in enumerate(outs):
        if isinstance(values[k], NestArray) and (not isinstance(out, NestArray) or out.root != values[k].root):
            raise Unlowerable("a while loop's carried array is not updated in place")
    nexts = [scalar.cast(fn, outs[k], carried_in[k].dtype) for k in scalars]
    latch = fn.block
    fn.emit(f"br i1 {scalar.cast(fn, go, BOOL).ref}, label %{head}, label %{done}")
    fn.lines[phi_at:phi_at] = [f"  {p.ref} = phi {reg_type(p.dtype)} [ {i.ref}, %{pre} ], [ {x.ref}, %{latch} ]"
                               for p, i, x in zip(phis, inits, nexts)]
    fn.start_block(done)
    results = list(values)
    for k, x in zip(scalars, nexts):
        results[k] = nest.weak(carried_in[k], x)
    _after_free(nest, free, free_values)
    return results


def _loop(nest, n: Node, env: dict, sizes: Sizes) -> list:
    body, start, stop, step, carried, free = n.args
    if not isinstance(step, int) or step == 0:
        raise Unlowerable("a loop step that is not a constant")
    nest.inner_loops += 1
    carried_values = [nest.operand(c, env, sizes) for c in carried]
    for c, value in zip(carried, carried_values):
        if isinstance(value, NestArray):
            nest.version(c, value)
    bounds = [as_index(nest.fn, nest.operand(b, env, sizes)) for b in (start, stop)]
    free_values = [nest.operand(f, env, sizes) for f in free]
    results = nest.loop(body, *bounds, step, carried_values, free_values)
    _after_free(nest, free, free_values)
    return results


def _after_free(nest, free: tuple, values: list) -> None:
    """The arrays a loop only read are at their versions before it again (the body's inputs
    stood for them while it ran)."""
    for node, value in zip(free, values):
        if isinstance(value, NestArray):
            nest.current[value.root] = node


def _cond(nest, n: Node, env: dict, sizes: Sizes) -> list:
    pred, then_body, else_body, operands = n.args
    fn = nest.fn
    p = scalar.cast(fn, nest.operand(pred, env, sizes), BOOL)
    values = [nest.operand(o, env, sizes) for o in operands]
    for o, value in zip(operands, values):
        if isinstance(value, NestArray):
            nest.version(o, value)
    before = dict(nest.current)
    sides, labels = [], [fn.label("then"), fn.label("else")]
    merge = fn.label("merge")
    fn.emit(f"br i1 {p.ref}, label %{labels[0]}, label %{labels[1]}")
    for label, side in zip(labels, (then_body, else_body)):
        fn.start_block(label)
        nest.current = dict(before)
        side_env = {node: nest.enter(node, value) for node, value in zip(side.inputs, values)}
        entry = dict(nest.current)
        outs = nest.graph(side, side_env)
        if any(isinstance(o, slices_.Lazy) for o in outs):   # its elements would be computed after the merge
            raise Unlowerable("a side of a cond hands on an array it computes, in a loop nest")
        outs = [scalar.cast(fn, o, node.dtype) if isinstance(o, (V, Const)) else o for o, node in zip(outs, side.outputs)]
        sides.append((outs, fn.block))
        if any(nest.current[r] is not node and all(not isinstance(o, NestArray) or o.root != r for o in outs)
               for r, node in entry.items()):
            raise Unlowerable("a side of a cond updates an array it does not hand on")
        fn.emit(f"br label %{merge}")
    fn.start_block(merge)
    results = []
    for k, ((t, t_block), (f, f_block)) in enumerate(zip(*[[(o, b) for o in outs] for outs, b in sides])):
        meta = n.results[k]
        if isinstance(t, NestArray) or isinstance(f, NestArray):
            if not (isinstance(t, NestArray) and isinstance(f, NestArray) and t.root == f.root):
                raise Unlowerable("the sides of a cond leave different arrays")
            results.append(t)
            continue
        phi = fn.emit(f"phi {reg_type(t.dtype)} [ {t.ref}, %{t_block} ], [ {f.ref}, %{f_block} ]", t.dtype)
        results.append(V(phi.ref, phi.dtype, meta.weak))
    nest.current = before
    return results


def _check(nest, n: Node, env: dict, sizes: Sizes) -> V:
    """An assert: the nest stops where it fails (status CHECK: the frame runs as Python, which raises)."""
    nest.check(scalar.cast(nest.fn, nest.operand(n.args[0], env, sizes), BOOL), CHECK)
    return literal(True, BOOL)


def _stack(nest, n: Node, env: dict, sizes: Sizes) -> slices_.Lazy:
    """np.array((x, y)) of scalars (`fvec = np.array([fmag * cosine, fmag * sine])`): a short vector."""
    items = n.args[0]
    if len(n.shape) != 1 or len(items) > 16:
        raise Unlowerable("a stack of arrays in a loop nest")
    values = [nest.operand(v, env, sizes) for v in items]
    if not all(isinstance(v, (V, Const)) for v in values):
        raise Unlowerable("a stack of arrays in a loop nest")
    return slices_.chosen(nest.fn, [scalar.cast(nest.fn, v, n.dtype) for v in values])


def _tuple_getitem(nest, n: Node, env: dict, sizes: Sizes):
    source, k = n.args
    value = env[source][k]
    if isinstance(value, NestArray):
        nest.current[value.root] = n
    return value


CALLS = {"getitem": _getitem, "index": _getitem, "setitem": _setitem, "loop": _loop, "cond": _cond, "tuple_getitem": _tuple_getitem,
          "python_int": pynumbers.python_int, "python_math": pynumbers.python_math, "while_loop": _while, "check": _check, "stack": _stack, **dict.fromkeys(slices_.REDUCED, slices_.reduction),
          "matmul": slices_.product, "dot": slices_.product, "flip": slices_.flipped, "slice_positions": _slice_positions, "mean": slices_.reduction,
          **dict.fromkeys(slices_.ARG_REDUCED, slices_.arg_reduction)}
