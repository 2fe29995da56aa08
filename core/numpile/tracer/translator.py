"""The bytecode tracer: a symbolic interpreter over CPython bytecode.

One `InstructionTranslator` per frame (the compiled function, and one per
inlined call) runs the frame's instructions over Variables. Each opcode has a
handler, found by name in `DISPATCH`, which asks the Variables what the
instruction means for them (variables/: attributes, calls, truth, iteration,
items); array work becomes Graph nodes through the op registry, Python values
are computed at compile time and guarded.
Anything it cannot capture raises `Unsupported` with the reason and the
user's source line.
"""

from __future__ import annotations

import builtins
import operator
import sys
import types

import numpy as np

from .. import ops
from ..exc import Unsupported
from ..graph import SourceLoc
from ..shapes import DataDependent, SymInt
from . import bytecode_compat as bc, control
from .dispatch import BREAKS, DISPATCH
from .python_scalars import operator_result_is_weak, unspecialised_operands
from .output_graph import OutputGraph
from .sources import AttrSource, ItemSource, ModuleSource, Source
from .variables import (
    CONSTANT_TYPES, NULL, ArrayVariable, CellVariable, ConstantVariable, DictVariable, IteratorVariable,
    NestedFunctionVariable, ObjectVariable, TupleVariable, Variable, call_known, constant_result,
)
from .variables.builtins import call_builtin

MAX_INLINE_DEPTH = 32
_CO_GENERATOR = 0x20
_CO_ASYNC_LIKE = 0x80 | 0x100 | 0x200  # coroutine, iterable coroutine, async generator
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08


class InstructionTranslator:
    def __init__(self, output: OutputGraph, code: types.CodeType, f_globals: dict,
                 symbolic_locals: dict, globals_source, parent: "InstructionTranslator | None" = None):
        self.output = output
        self.code = code
        self.f_globals = f_globals
        self.f_builtins = f_globals.get("__builtins__", builtins)
        if isinstance(self.f_builtins, types.ModuleType):
            self.f_builtins = self.f_builtins.__dict__
        self.globals_source = globals_source  # name -> Source of that global, or None if unreachable
        self.locals: dict[str, Variable] = symbolic_locals
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.stack: list[Variable] = []
        self.instructions = bc.instructions(code)
        self.index_of = {inst.offset: i for i, inst in enumerate(self.instructions)}
        self.ip = 0
        self.exec_counts: dict[int, int] = {}
        self.current: tuple | None = None    # (offset, how many times reached) of the instruction running
        self.stop_at: tuple | None = None    # the root frame stops there: the graph break found last pass
        self.break_inst = None
        self.kw_names: tuple = ()
        self.return_value: Variable | None = None
        self.yields: list[Variable] = []  # what a generator frame yielded
        self.loop_counts: dict[int, int] = {}
        self.while_heads = control.while_heads(self)   # where while loops' bodies start -> where they end
        self.lineno = code.co_firstlineno

    # -- the loop ------------------------------------------------------------------------
    def run(self) -> Variable | None:
        """Interpret until the frame returns (its value) or, for the root frame, until it reaches
        `stop_at`, the graph break found by an earlier pass (None, with `break_inst` set)."""
        while self.return_value is None:
            inst = self.instructions[self.ip]
            if self.parent is None:
                count = self.exec_counts[inst.offset] = self.exec_counts.get(inst.offset, 0) + 1
                self.current = (inst.offset, count)
                if self.current == self.stop_at:
                    self.break_inst = inst
                    return None
            self.step()
        return self.return_value

    def step(self) -> None:
        """Run the instruction at `ip`; at the start of a while loop's body, the loop as one node
        where it can be (tracer/control/)."""
        if self.ip in self.while_heads and control.while_body(self):
            return
        inst = self.instructions[self.ip]
        self.ip += 1
        if inst.positions is not None and inst.positions.lineno is not None:
            self.lineno = inst.positions.lineno
        self.output.loc = self.loc
        handler = DISPATCH.get(inst.opname)
        if handler is None:
            raise Unsupported(BREAKS.get(inst.opname, f"bytecode {inst.opname} is not supported yet")).at(self.loc)
        try:
            handler(self, inst)
        except DataDependent as e:  # Python code asked a question about a size only the data knows
            error = Unsupported(self.output.shape_env.describe(e))
            error.user_stack = self.user_stack()
            raise error.at(self.loc) from None
        except Unsupported as e:
            if e.user_stack is None:
                e.user_stack = self.user_stack()
            raise e.at(self.loc)

    @property
    def loc(self) -> SourceLoc:
        return SourceLoc(self.code.co_filename, self.lineno, self.code.co_name)

    def user_stack(self) -> list[SourceLoc]:
        """The user frames being traced, outermost first."""
        frames, tx = [], self
        while tx is not None:
            frames.append(tx.loc)
            tx = tx.parent
        return frames[::-1]

    # -- stack helpers -------------------------------------------------------------------
    def push(self, var: Variable) -> None:
        self.stack.append(var)

    def pop(self) -> Variable:
        return self.stack.pop()

    def popn(self, n: int) -> list[Variable]:
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def jump(self, inst) -> None:
        self.ip = self.index_of[inst.argval]

    # -- values --------------------------------------------------------------------------
    def load_global(self, name: str) -> Variable:
        if name in self.f_globals:
            source = self.globals_source(name) if self.globals_source else None
            if source is None:
                raise Unsupported(f"global {name!r} of an inlined function cannot be guarded")
            return self.output.wrap(self.f_globals[name], source)
        if name in self.f_builtins:
            return ObjectVariable(self.f_builtins[name])  # builtins: shadowing them is not guarded
        raise Unsupported(f"name {name!r} is not defined")

    # -- operators -----------------------------------------------------------------------
    def apply_operator(self, fn, args: list[Variable]) -> Variable:
        args = unspecialised_operands(self.output, fn, args)
        if fn is operator.pow and _squares_bools(args):   # ndarray.__pow__'s fast path: np.square, an int8
            return self.output.call_op(ops.get("square"), (args[0],), {})
        if any(isinstance(a, ArrayVariable) for a in args):
            op = ops.lookup_callable(fn)
            if op is None:
                raise Unsupported(f"operator {fn.__name__} on arrays is not supported")
            weak, bound = operator_result_is_weak(fn, args)
            result = self.output.call_op(op, tuple(args), {}, weak=weak)
            if bound is not None:
                result.node.meta["bound"] = bound
            return result
        if all(a.is_constant() for a in args):
            try:
                return constant_result(fn(*(a.as_constant() for a in args)))
            except DataDependent:
                found = self.output.control.compared_in_graph(fn, args)
                if found is None:
                    raise
                return found
            except TypeError:   # j >> i of a loop's index: SymInt has no rule for it, the graph has
                values = self.indices_in_graph(args)
                if values is None:
                    raise
                return self.apply_operator(fn, values)
        return call_builtin(self, fn, args, {}) or _raise(
            Unsupported(f"operator {fn.__name__} on {', '.join(a.describe() for a in args)}"))

    def indices_in_graph(self, args: list) -> list | None:
        """args with each expression of loop indices (a SymInt) made a graph value (a weak int),
        for arithmetic SymInt has no rule for (`abs(i - c)`, `j >> i`); None where there is none."""
        def symbolic(a):
            return a.is_constant() and isinstance(a.as_constant(), SymInt)
        if not any(map(symbolic, args)):
            return None
        return [self.output.control.index_value(a.as_constant()) if symbolic(a) else a for a in args]

    # -- calls ---------------------------------------------------------------------------
    def call_known(self, fn: ObjectVariable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        """`ObjectVariable.call`'s way to the table of known callables, a module above its own."""
        return call_known(self, fn, args, kwargs)

    def constant_result(self, value) -> Variable:
        """The Variable of a value computed at compile time (for Variables below containers.py)."""
        return constant_result(value)

    def inline_call(self, func: types.FunctionType, args, kwargs, source: Source | None = None) -> Variable:
        """Trace a call of a user Python function in place."""
        if getattr(func, "_numpile_disable", False):
            raise Unsupported(f"{func.__qualname__} is marked numpile.disable")
        code = func.__code__
        defaults = tuple(self._wrap_fn_part(v, source, "__defaults__", i) for i, v in enumerate(func.__defaults__ or ()))
        kwdefaults = {k: self._wrap_fn_part(v, source, "__kwdefaults__", k) for k, v in (func.__kwdefaults__ or {}).items()}
        closure = tuple(
            CellVariable(source=AttrSource(ItemSource(AttrSource(source, "__closure__"), i), "cell_contents") if source else None,
                         contents=None if source else _unguarded_constant(cell.cell_contents, func, code.co_freevars[i]))
            for i, cell in enumerate(func.__closure__ or ()))
        if func.__globals__ is self.root.f_globals:
            globals_source = self.root.globals_source
        elif source is not None:
            globals_source = lambda name, s=source: ItemSource(AttrSource(s, "__globals__"), name)
        else:   # a method reached through an object (its class in another module): the module's names
            globals_source = _module_globals(func)
        nested = NestedFunctionVariable(code, func.__globals__, defaults, kwdefaults, closure, globals_source)
        return self.inline_nested(nested, args, kwargs)

    def _wrap_fn_part(self, value, fn_source, attr, key) -> Variable:
        if fn_source is None:
            return _unguarded_constant(value, None, attr)
        return self.output.wrap(value, ItemSource(AttrSource(fn_source, attr), key))

    def inline_nested(self, fn: NestedFunctionVariable, args, kwargs) -> Variable:
        code = fn.code
        if code.co_flags & _CO_ASYNC_LIKE:
            raise Unsupported(f"coroutine or async generator function {code.co_name} cannot be inlined")
        if self.depth >= MAX_INLINE_DEPTH:
            raise Unsupported(f"calls nested deeper than {MAX_INLINE_DEPTH} (recursion?)")
        symbolic_locals = bind_arguments(code, fn.defaults, fn.kwdefaults, args, kwargs)
        for name, cell in zip(code.co_freevars, fn.closure):
            symbolic_locals[name] = cell
        child = InstructionTranslator(self.output, code, fn.f_globals, symbolic_locals, fn.globals_source, parent=self)
        try:
            result = child.run()
            # a generator (a generator expression, mostly) runs to its end when called: what it
            # yields is known, and the trace has no side effects that its laziness could reorder
            return IteratorVariable(child.yields) if code.co_flags & _CO_GENERATOR else result
        except Unsupported:
            raise
        except Exception as e:  # the callee raised at compile time: calling it for real will too
            raise Unsupported(f"{code.co_name}() raised {type(e).__name__} while being traced: {e}") from e

    @property
    def root(self) -> "InstructionTranslator":
        tx = self
        while tx.parent is not None:
            tx = tx.parent
        return tx

    def call_with_kw(self, argc: int, kw_names: tuple) -> None:
        args = self.popn(argc)
        nkw = len(kw_names)
        kwargs = dict(zip(kw_names, args[argc - nkw:])) if nkw else {}
        pos = args[:argc - nkw]
        first, second = self.popn(2)
        fn, self_var = bc.split_call_slots(first, second, lambda v: v is NULL)
        if self_var is not None:
            pos = [self_var, *pos]
        self.push(fn.call(self, pos, kwargs))


# -- helpers -------------------------------------------------------------------------------

def _raise(e):
    raise e


def _unguarded_constant(value, func, what) -> Variable:
    """A default or closure value of a function with no Source: only constants can be used."""
    if isinstance(value, CONSTANT_TYPES):
        return ConstantVariable(value)
    if isinstance(value, (types.FunctionType, types.ModuleType, type, np.ufunc, types.BuiltinFunctionType)):
        return ObjectVariable(value)
    raise Unsupported(f"{what} of a function reached without a source holds {type(value).__name__}")


def bind_arguments(code, defaults: tuple, kwdefaults: dict, args: list, kwargs: dict) -> dict:
    """Map call arguments to a code object's parameters, as CPython does; an error is Unsupported
    (the eager run will raise Python's own TypeError)."""
    nargs, nkwonly = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    params, kwonly = names[:nargs], names[nargs:nargs + nkwonly]
    rest = nargs + nkwonly
    varargs = names[rest] if code.co_flags & _CO_VARARGS else None
    varkw = names[rest + (1 if varargs else 0)] if code.co_flags & _CO_VARKEYWORDS else None
    bound: dict[str, Variable] = {}
    for name, value in zip(params, args):
        bound[name] = value
    extra = list(args[nargs:])
    if extra and varargs is None:
        raise Unsupported(f"{code.co_name}() takes {nargs} positional arguments but {len(args)} were given")
    extra_kw = {}
    posonly = set(params[:code.co_posonlyargcount])
    for k, v in kwargs.items():
        if (k in params and k not in posonly) or k in kwonly:
            if k in bound:
                raise Unsupported(f"{code.co_name}() got multiple values for argument {k!r}")
            bound[k] = v
        elif varkw is not None:
            extra_kw[k] = v
        else:
            raise Unsupported(f"{code.co_name}() got an unexpected keyword argument {k!r}")
    first_default = nargs - len(defaults)
    for i, name in enumerate(params):
        if name not in bound:
            if i >= first_default:
                bound[name] = defaults[i - first_default]
            else:
                raise Unsupported(f"{code.co_name}() missing required argument {name!r}")
    for name in kwonly:
        if name not in bound:
            if name not in kwdefaults:
                raise Unsupported(f"{code.co_name}() missing required keyword argument {name!r}")
            bound[name] = kwdefaults[name]
    if varargs:
        bound[varargs] = TupleVariable(extra)
    if varkw:
        bound[varkw] = DictVariable(extra_kw)
    return bound


def _squares_bools(args) -> bool:
    """`b ** 2` of a boolean array (not a NumPy scalar) and the Python int 2, which NumPy's
    ndarray.__pow__ computes as np.square(b): int8, where np.power gives int64."""
    base, exponent = args
    return isinstance(base, ArrayVariable) and base.node.dtype == np.bool_ and not base.node.meta["scalar"] \
        and exponent.is_constant() and type(exponent.as_constant()) is int and exponent.as_constant() == 2


def _module_globals(func):
    """Sources of `func`'s globals where they are the names of a module in sys.modules (read there
    at each call, as the guards do), else None."""
    module = sys.modules.get(getattr(func, "__module__", None) or "")
    if module is None or getattr(module, "__dict__", None) is not func.__globals__:
        return None
    return lambda name, m=func.__module__: AttrSource(ModuleSource(m), name)
