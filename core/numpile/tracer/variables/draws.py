"""One random draw (no size: one value) from NumPy's global generator (`np.random.random()`,
`np.random.randint(a, b)`) or a `np.random.Generator`'s methods (`rng.integers(a, b)`), captured as
graph values: numpile's own counter-based stream (ops/draws.py), not NumPy's.

[Note: numpile's random stream]
A draw is `random_bits` chained over (the call's seed, the draw's place in the trace, the index
of each loop around it, outermost first): a pure function, so a loop body stays functional and
every iteration draws anew, without state carried through the loop. The seed is a graph input
drawn from the NumPy generator the code names, at each call (`SeedSource`: 7 bytes of it): NumPy's
state advances at every call, and seeding it (`np.random.seed(s)`, `np.random.default_rng(s)`
passed in) makes numpile's results the same at every run. Distributions are NumPy's: uniform
doubles in [0, 1) from 53 bits, integers in [low, high) as low + floor(u * (high - low)), normals
by Box-Muller; the values are not NumPy's, and the same on every backend.
"""

from __future__ import annotations

import inspect
import math
import operator

import numpy as np

from ... import ops
from ...exc import Unsupported
from ...shapes import SymInt
from ..sources import AttrSource, SeedSource
from .arrays import ArrayVariable
from .objects import ConstantVariable

_UNIT = 2.0 ** -53   # a uniform double from the top 53 of 64 bits


# The parameters of each method, as NumPy's (extras: size, dtype, out, endpoint, rand's dims).
def _unit(size=None, dtype=np.float64, out=None): ...
def _dims(*dims): ...
def _uniform(low=0.0, high=1.0, size=None): ...
def _normal(loc=0.0, scale=1.0, size=None): ...
def _randint(low, high=None, size=None, dtype=int): ...
def _integers(low, high=None, size=None, dtype=np.int64, endpoint=False): ...


def _bits_uniform(tx, bits):
    """A float64 in [0, 1) from 64 random bits."""
    top = tx.apply_operator(operator.rshift, [bits, ConstantVariable(11)])
    return tx.apply_operator(operator.mul, [top, ConstantVariable(_UNIT)])


def _float(tx, var):
    """A draw's parameter as NumPy takes it, a float64: a number known when compiling, or a graph value."""
    if var.is_constant() and isinstance(var.as_constant(), SymInt):   # a loop's index
        var = tx.output.control.index_value(var.as_constant())
    if isinstance(var, ArrayVariable) and var.python_type() in (int, float):   # a Python number: weak
        return tx.apply_operator(operator.add, [var, ConstantVariable(0.0)])
    if isinstance(var, ArrayVariable):
        return tx.output.call_op(ops.get("astype"), (var, ConstantVariable(np.dtype(np.float64))), {})
    if var.is_constant() and isinstance(var.as_constant(), (int, float, np.integer, np.floating)):
        return ConstantVariable(float(var.as_constant()))
    raise Unsupported(f"a draw's parameter {var.describe()}: a number or a graph value is captured")


def _draw_uniform(tx, bits, low=ConstantVariable(0.0), high=ConstantVariable(1.0)):
    u = _bits_uniform(tx, bits)
    if low.is_constant() and high.is_constant() and (low.as_constant(), high.as_constant()) == (0.0, 1.0):
        return u
    low, high = _float(tx, low), _float(tx, high)
    return tx.apply_operator(operator.add, [low, tx.apply_operator(operator.mul, [tx.apply_operator(operator.sub, [high, low]), u])])


def _draw_normal(tx, bits, loc=ConstantVariable(0.0), scale=ConstantVariable(1.0)):
    """Box-Muller: sqrt(-2 log(1 - u1)) cos(2 pi u2), u1 from the bits, u2 from the bits mixed once more."""
    if not scale.is_constant() or not isinstance(scale.as_constant(), (int, float, np.integer, np.floating)) \
            or not scale.as_constant() >= 0:
        raise Unsupported("a normal draw's scale must be a number known when compiling, and not negative "
                          "(NumPy raises ValueError for a negative one)")
    call = tx.output.call_op
    u1 = _bits_uniform(tx, bits)
    u2 = _bits_uniform(tx, call(ops.get("random_bits"), (bits, ConstantVariable(0)), {}))
    radius = call(ops.get("sqrt"), (tx.apply_operator(operator.mul, [ConstantVariable(-2.0), call(
        ops.get("log1p"), (tx.apply_operator(operator.neg, [u1]),), {})]),), {})
    z = tx.apply_operator(operator.mul, [radius, call(ops.get("cos"), (
        tx.apply_operator(operator.mul, [ConstantVariable(2 * math.pi), u2]),), {})])
    if (loc.is_constant() and loc.as_constant() == 0.0) and scale.as_constant() == 1.0:
        return z
    return tx.apply_operator(operator.add, [_float(tx, loc), tx.apply_operator(operator.mul, [_float(tx, scale), z])])


def _draw_integer(tx, bits, low, high=ConstantVariable(None)):
    """low + floor(u * (high - low)): bounds known when compiling (an empty range raises in NumPy)."""
    if not (low.is_constant() and high.is_constant()):
        raise Unsupported("an integer draw's bounds must be numbers known when compiling "
                          "(NumPy raises ValueError for an empty range)")
    low, high = (0, low.as_constant()) if high.as_constant() is None else (low.as_constant(), high.as_constant())
    if not (isinstance(low, (int, np.integer)) and isinstance(high, (int, np.integer)) and -2**63 <= low < high < 2**63):
        raise Unsupported(f"an integer draw from [{low}, {high}): not a range of int64 (NumPy raises ValueError "
                          "for an empty one)")
    span = tx.apply_operator(operator.mul, [_bits_uniform(tx, bits), ConstantVariable(float(high - low))])
    offset = tx.output.call_op(ops.get("astype"), (span, ConstantVariable(np.dtype(np.int64))), {})
    return tx.apply_operator(operator.add, [offset, ConstantVariable(np.int64(low))]) if low else offset


_UNIFORM = (_draw_uniform, np.float64, float)
_NORMAL = (_draw_normal, np.float64, float)
# (generator type, method) -> (its parameters, the draw, the result's dtype, its Python type if
# it is a Python number, the parameters the draw takes)
DRAWS = {
    **{(np.random.RandomState, name): (params, *_UNIFORM, names) for name, params, names in (
        ("random", _unit, ()), ("random_sample", _unit, ()), ("rand", _dims, ()), ("uniform", _uniform, ("low", "high")))},
    **{(np.random.RandomState, name): (params, *_NORMAL, names) for name, params, names in (
        ("standard_normal", _unit, ()), ("randn", _dims, ()), ("normal", _normal, ("loc", "scale")))},
    (np.random.RandomState, "randint"): (_randint, _draw_integer, np.int64, int, ("low", "high")),
    (np.random.Generator, "random"): (_unit, *_UNIFORM, ()),
    (np.random.Generator, "uniform"): (_uniform, *_UNIFORM, ("low", "high")),
    (np.random.Generator, "standard_normal"): (_unit, *_NORMAL, ()),
    (np.random.Generator, "normal"): (_normal, *_NORMAL, ("loc", "scale")),
    (np.random.Generator, "integers"): (_integers, _draw_integer, np.int64, None, ("low", "high")),
}


def _row(value):
    generator = getattr(value, "__self__", None)
    name = getattr(value, "__name__", None)
    return DRAWS.get((type(generator), name)) if isinstance(name, str) else None


def call_draw(tx, fn, value, args: list, kwargs: dict):
    """The value a draw gives, or None where `value` is not a method of DRAWS."""
    row = _row(value)
    if row is None:
        return None
    params, draw, dtype, python, names = row
    name = f"{type(value.__self__).__name__}.{value.__name__}"
    if fn.source is None:
        raise Unsupported(f"{name}: a generator numpile cannot fetch at each call draws as Python")
    try:
        bound = inspect.signature(params).bind(*args, **kwargs)
    except TypeError as e:
        raise Unsupported(f"{name}: {e}") from None
    defaults = {k: p.default for k, p in inspect.signature(params).parameters.items()}
    for key, var in bound.arguments.items():
        if key not in names and (var if isinstance(var, tuple) else
                                 not var.is_constant() or var.as_constant() is not defaults[key]):
            raise Unsupported(f"{name} with {key}: random draws of an array, or of another dtype, run as Python "
                              "(one value per call is captured)")
    parameters = {k: bound.arguments[k] for k in names if k in bound.arguments}
    result = draw(tx, _bits(tx, AttrSource(fn.source, "__self__")), **parameters)
    return tx.output.call_op(ops.get("astype"), (result, ConstantVariable(np.dtype(dtype))), {}, weak=python is not None)


def _bits(tx, generator) -> ArrayVariable:
    """The key of a draw: the seed of `generator` this call, mixed with the draw's place in the
    trace, then with the index of each loop around it (a while loop has none: a break)."""
    out = tx.output
    if None in out.control.iterations:
        raise Unsupported("a random draw in a while loop: numpile's stream needs a loop index to draw anew at each "
                          "iteration (the draw runs as Python)")
    seed = out.seeds.get(generator)
    if seed is None:
        seed = out.seeds[generator] = out.fresh_input(0, SeedSource(generator), np.dtype(np.int64))
    key = seed
    out.draws += 1
    for counter in (ConstantVariable(out.draws), *(ArrayVariable(i) for i in out.control.iterations)):
        key = out.call_op(ops.get("random_bits"), (key, counter), {})
    return key
