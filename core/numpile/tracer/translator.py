"""The bytecode tracer: a symbolic interpreter over CPython bytecode.

One `InstructionTranslator` per frame (the compiled function, and one per
inlined call) runs the frame's instructions over Variables. Each opcode has a
handler, found by name in `DISPATCH`; array work becomes Graph nodes through
the op registry, Python values are computed at compile time and guarded.
Anything it cannot capture raises `Unsupported` with the reason and the
user's source line.
"""

from __future__ import annotations

import builtins
import math
import os
import sysconfig
import operator
import types

import numpy as np

from .. import config, ops
from ..exc import Unsupported
from ..graph import SourceLoc
from ..shapes import DataDependent
from . import bytecode_compat as bc
from .builtins_table import call_builtin, call_container_method, container_method
from .dispatch import BREAKS, DISPATCH
from .contexts import CONTEXT_FACTORIES, ContextExitVariable, call_exit
from .python_scalars import operator_result_is_weak, unspecialised_operands
from .output_graph import OutputGraph
from .sources import AttrSource, ItemSource, Source
from .variables import (
    CONSTANT_TYPES, NULL, ArrayIteratorVariable, ArrayMethodVariable, ArrayVariable, BoundMethodVariable,
    CellVariable, ConstantVariable, DictVariable, IteratorVariable, ListVariable, NestedFunctionVariable,
    ObjectVariable, TupleVariable, Variable, constant_result, unpack_known,
)

MAX_INLINE_DEPTH = 32
_CO_GENERATOR = 0x20
_CO_ASYNC_LIKE = 0x80 | 0x100 | 0x200  # coroutine, iterable coroutine, async generator
_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08

# Array attributes that are facts of the meta, not ops.
_ARRAY_FACTS = {
    "shape": lambda m: m.shape,
    "ndim": lambda m: len(m.shape),
    "dtype": lambda m: m.dtype,
    "size": lambda m: math.prod(m.shape),
    "itemsize": lambda m: m.dtype.itemsize,
    "nbytes": lambda m: math.prod(m.shape) * m.dtype.itemsize,
}


def _fill(tx: "InstructionTranslator", arr: ArrayVariable, args, kwargs) -> Variable:
    (value,) = args
    filled = tx.output.call_op(ops.get("full_like"), (arr, value), {})
    tx.output.mutate(arr, tx.in_place_result(arr, filled, "ndarray.fill"))
    return ConstantVariable(None)


# ndarray methods that update the array in place: name -> handler(tx, array, args, kwargs)
MUTATING_METHODS = {"fill": _fill}


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
        """Run the instruction at `ip`."""
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

    def getattr(self, obj: Variable, name: str) -> Variable:
        if isinstance(obj, ArrayVariable):
            return self._array_attr(obj, name)
        if isinstance(obj, (ObjectVariable, ConstantVariable)):
            return self._object_attr(obj, name)
        if isinstance(obj, TupleVariable) and name in getattr(obj.cls, "_fields", ()):
            return obj.items[obj.cls._fields.index(name)]  # a named tuple's field (EighResult.eigenvalues)
        if isinstance(obj, (TupleVariable, ListVariable, DictVariable)):
            method = container_method(obj, name)
            if method is not None:
                return BoundMethodVariable(ObjectVariable(method), obj)
        raise Unsupported(f"attribute {name!r} of {obj.describe()} is not supported")

    def _array_attr(self, arr: ArrayVariable, name: str) -> Variable:
        meta = arr.node.array_meta
        if name in _ARRAY_FACTS:
            value = self.output.read_size(_ARRAY_FACTS[name](meta), f"{arr.node.name}.{name}")
            if isinstance(value, tuple):
                return TupleVariable([ConstantVariable(d) for d in value])
            return ConstantVariable(value)
        op = ops.lookup_property(name)
        if op is not None:
            return self.output.call_op(op, (arr,), {}, method=None)
        if ops.lookup_method(name) is not None or name in MUTATING_METHODS or callable(getattr(np.ndarray, name, None)):
            # a method numpile lacks breaks at its call, with the array and arguments rebuilt, not here
            return ArrayMethodVariable(arr, name)
        raise Unsupported(f"ndarray.{name} is not supported by numpile yet")

    def _object_attr(self, obj: Variable, name: str) -> Variable:
        written = self.output.written_attr(obj, name)
        if written is not None:
            return written
        value = obj.as_constant() if obj.is_constant() else obj.value
        if isinstance(value, types.ModuleType):
            try:
                attr = getattr(value, name)  # modules may load attributes lazily (np.random)
            except AttributeError:
                raise Unsupported(f"module {value.__name__} has no attribute {name!r}") from None
            # module attributes that are code or namespaces are taken as constant, like Dynamo does;
            # data (arrays, numbers) read from a module is guarded
            guarded = not isinstance(attr, (types.FunctionType, types.BuiltinFunctionType, type,
                                            types.ModuleType, np.ufunc))
            return self._wrap_attr(obj, name, attr, guard=guarded)
        try:
            static = _getattr_static(value, name)
        except AttributeError:
            raise Unsupported(f"{obj.describe()} has no attribute {name!r}") from None
        if isinstance(static, (types.FunctionType, staticmethod, classmethod)) and name not in getattr(value, "__dict__", {}):
            if isinstance(static, staticmethod):
                return ObjectVariable(static.__func__)
            if isinstance(static, classmethod):
                return BoundMethodVariable(ObjectVariable(static.__func__), ObjectVariable(type(value)))
            return BoundMethodVariable(ObjectVariable(static, None), obj)
        if isinstance(static, (types.MethodDescriptorType, types.WrapperDescriptorType)) \
                and name not in getattr(value, "__dict__", {}):
            # a C method (io.StringIO.getvalue): bound at the call, not guarded as a new object each time
            return BoundMethodVariable(ObjectVariable(static), obj)
        if isinstance(static, property):
            return self.inline_call(static.fget, [obj], {})
        attr = getattr(value, name)
        if obj.is_constant() and not isinstance(value, (types.ModuleType, type)):
            return ConstantVariable(attr) if isinstance(attr, CONSTANT_TYPES) else ObjectVariable(attr)
        return self._wrap_attr(obj, name, attr, guard=True)

    def _wrap_attr(self, obj: Variable, name: str, attr, guard: bool) -> Variable:
        if obj.source is None:
            if isinstance(attr, CONSTANT_TYPES):
                return ConstantVariable(attr)
            if isinstance(attr, (np.ndarray, np.generic)):
                raise Unsupported(f"array attribute {name!r} of an object made inside the compiled code")
            return ObjectVariable(attr)
        return self.output.wrap(attr, AttrSource(obj.source, name), guard=guard)

    def truth(self, var: Variable) -> bool:
        """bool(var) at compile time, or a graph break when it needs array data."""
        if isinstance(var, ArrayVariable):
            raise Unsupported(f"data-dependent jump: branching on the value of {var.describe()} needs its data")
        if isinstance(var, (TupleVariable, ListVariable)):
            return bool(var.items)
        if isinstance(var, DictVariable):
            return bool(var.items)
        if var.is_constant():
            return bool(var.as_constant())
        if isinstance(var, ObjectVariable):
            cls = type(var.value)
            if hasattr(cls, "__bool__") or hasattr(cls, "__len__"):
                raise Unsupported(f"truth value of {var.describe()} (it defines __bool__ or __len__)")
            return True
        if isinstance(var, (NestedFunctionVariable, BoundMethodVariable, ArrayMethodVariable)):
            return True
        raise Unsupported(f"truth value of {var.describe()}")

    # -- operators -----------------------------------------------------------------------
    def apply_operator(self, fn, args: list[Variable]) -> Variable:
        args = unspecialised_operands(self.output, fn, args)
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
            return constant_result(fn(*(a.as_constant() for a in args)))
        return call_builtin(self, fn, args, {}) or _raise(
            Unsupported(f"operator {fn.__name__} on {', '.join(a.describe() for a in args)}"))

    def in_place_result(self, target: ArrayVariable, result: Variable, what: str) -> ArrayVariable:
        """`result` as NumPy writes it into `target` for an in-place op or `out=`: same shape, cast
        to target's dtype under "same_kind" casting."""
        have, want = result.node.array_meta, target.node.array_meta
        if have.shape != want.shape:
            raise Unsupported(f"{what} into an array of shape {want.shape} from shape {have.shape} "
                              "(NumPy raises: non-broadcastable output operand)")
        if have.dtype != want.dtype:
            if not np.can_cast(have.dtype, want.dtype, "same_kind"):
                raise Unsupported(f"{what}: NumPy cannot cast the result from {have.dtype} to {want.dtype} "
                                  "with casting rule 'same_kind' (UFuncTypeError)")
            result = self.output.call_op(ops.get("astype"), (result, ConstantVariable(want.dtype)), {})
        return result

    # -- calls ---------------------------------------------------------------------------
    def call(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        if isinstance(fn, ArrayMethodVariable):
            if fn.name in MUTATING_METHODS:
                return MUTATING_METHODS[fn.name](self, fn.array, args, kwargs)
            op = ops.lookup_method(fn.name)
            if op is None:
                raise Unsupported(f"ndarray.{fn.name}() is not supported by numpile yet")
            return self.output.call_op(op, (fn.array, *args), kwargs, method=fn.name)
        if isinstance(fn, BoundMethodVariable):
            return self.call(fn.fn, [fn.self_var, *args], kwargs)
        if isinstance(fn, NestedFunctionVariable):
            return self.inline_nested(fn, args, kwargs)
        if isinstance(fn, ContextExitVariable):
            return call_exit(self, fn, args)
        if isinstance(fn, ObjectVariable) or fn.is_constant():
            return self.call_object(fn, args, kwargs)
        raise Unsupported(f"calling {fn.describe()} is not supported")

    def call_object(self, fn: Variable, args: list[Variable], kwargs: dict[str, Variable]) -> Variable:
        value = fn.as_constant() if fn.is_constant() else fn.value
        op = ops.lookup_callable(value)
        if op is not None and (_is_numpy(value) or _has_array(args, kwargs)):
            if "out" in kwargs:
                return self.call_with_out(op, args, dict(kwargs))
            if op.updates is not None:
                return self.call_updating(op, args, kwargs)
            return self.output.call_op(op, tuple(args), kwargs)
        if isinstance(value, type) and value in CONTEXT_FACTORIES:
            return CONTEXT_FACTORIES[value](self, args, kwargs)
        result = call_container_method(self, value, args, kwargs)
        if result is not None:
            return result
        result = call_builtin(self, value, args, kwargs)
        if result is not None:
            return result
        if isinstance(value, types.FunctionType) and not is_library_code(value.__code__):
            return self.inline_call(value, args, kwargs, fn.source)
        if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType) \
                and not is_library_code(value.__func__.__code__):
            self_src = AttrSource(fn.source, "__self__") if fn.source else None
            func_src = AttrSource(fn.source, "__func__") if fn.source else None
            self_var = self.output.wrap(value.__self__, self_src) if self_src else ObjectVariable(value.__self__)
            return self.inline_call(value.__func__, [self_var, *args], kwargs, func_src)
        call = getattr(type(value), "__call__", None)
        if not isinstance(value, type) and isinstance(call, types.FunctionType):
            return self.inline_call(call, [fn, *args], kwargs)  # a callable object; its type is guarded
        raise Unsupported(_unsupported_call_reason(value))

    def call_updating(self, op, args, kwargs) -> Variable:
        """`np.add.at(a, i, b)`: the op's result is a's new value, written into a; returns None."""
        position = list(op.signature.parameters).index(op.updates)
        target = args[position] if position < len(args) else kwargs.get(op.updates)
        if not isinstance(target, ArrayVariable) or target.node.meta["scalar"]:
            raise Unsupported(f"{op.name} updates {op.updates}, which must be an array here, not "
                              f"{target.describe() if target is not None else 'missing'}")
        result = self.output.call_op(op, tuple(args), kwargs)
        self.output.mutate(target, self.in_place_result(target, result, op.name))
        return ConstantVariable(None)

    def call_with_out(self, op, args, kwargs) -> Variable:
        """`np.add(a, b, out=c)`: the result written into c, which is returned. An op with several
        results takes a tuple, an array or None for each (`np.divmod(a, b, out=(q, None))`)."""
        out = kwargs.pop("out")
        if out.is_constant() and out.as_constant() is None:
            return self.output.call_op(op, tuple(args), kwargs)
        targets = out.items if isinstance(out, TupleVariable) else [out]
        unused = [t.is_constant() and t.as_constant() is None for t in targets]
        for target, none in zip(targets, unused):
            if not none and (not isinstance(target, ArrayVariable) or target.node.meta["scalar"]):
                raise Unsupported(f"out= of {op.name} must hold arrays or None, not {target.describe()}")
        result = self.output.call_op(op, tuple(args), kwargs)
        results = list(result.items) if isinstance(result, TupleVariable) else [result]
        if len(targets) != len(results):
            raise Unsupported(f"out= of {op.name} holds {len(targets)} values for its {len(results)} results "
                              "(NumPy raises ValueError)")
        for i, (target, none) in enumerate(zip(targets, unused)):
            if not none:
                self.output.mutate(target, self.in_place_result(target, results[i], f"{op.name}(out=...)"))
                results[i] = target
        return TupleVariable(results) if isinstance(result, TupleVariable) else results[0]

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
        else:
            globals_source = None
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

    def read_cell(self, cell: Variable) -> Variable:
        if not isinstance(cell, CellVariable):
            raise Unsupported(f"closure variable holds {cell.describe()}")
        if cell.contents is None:
            if cell.source is None:
                raise Unsupported("free variable referenced before assignment")
            cell.contents = self.output.wrap(self.output.read_source(cell.source), cell.source)
        return cell.contents

    def call_with_kw(self, argc: int, kw_names: tuple) -> None:
        args = self.popn(argc)
        nkw = len(kw_names)
        kwargs = dict(zip(kw_names, args[argc - nkw:])) if nkw else {}
        pos = args[:argc - nkw]
        first, second = self.popn(2)
        fn, self_var = bc.split_call_slots(first, second, lambda v: v is NULL)
        if self_var is not None:
            pos = [self_var, *pos]
        self.push(self.call(fn, pos, kwargs))

    def unpack(self, var: Variable, what: str) -> list[Variable]:
        """The items of a Variable that a statement iterates or unpacks at compile time;
        an array gives its rows (x[0], x[1], ...)."""
        return self.iterate(var, what).rest()

    def iterate(self, var: Variable, what: str) -> IteratorVariable:
        """iter(var), over items known at compile time; an array's rows are made as they are taken."""
        if isinstance(var, IteratorVariable):
            return var
        if not isinstance(var, ArrayVariable):
            return IteratorVariable(unpack_known(var, what))
        shape = var.node.shape
        if not shape:
            raise Unsupported(f"{what} over a 0-d array")
        if shape[0] > config.unroll_limit:
            raise Unsupported(f"{what} over {shape[0]} rows of an array (more than config.unroll_limit={config.unroll_limit})")
        getitem = ops.lookup_callable(operator.getitem)
        return ArrayIteratorVariable(var, operator.index(shape[0]),
                                     lambda i: self.output.call_op(getitem, (var, ConstantVariable(i)), {}))


# -- helpers -------------------------------------------------------------------------------

_LIBRARY_PATHS = tuple(sorted({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
                              | {os.path.dirname(os.path.dirname(__file__))}))


def is_library_code(code: types.CodeType) -> bool:
    """Code of the standard library, an installed package or numpile itself: called, never inlined
    (like Dynamo's skip files), so that a library's internals never become part of a trace."""
    return code.co_filename.startswith(_LIBRARY_PATHS)


def _is_numpy(fn) -> bool:
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy" or isinstance(fn, np.ufunc)


def _has_array(args, kwargs) -> bool:
    """Whether an array is among the arguments (a builtin like abs() of constants stays Python)."""
    def has(v):
        return isinstance(v, ArrayVariable) or isinstance(v, (TupleVariable, ListVariable)) and any(map(has, v.items))
    return any(map(has, (*args, *kwargs.values())))


def _raise(e):
    raise e


def _unguarded_constant(value, func, what) -> Variable:
    """A default or closure value of a function with no Source: only constants can be used."""
    if isinstance(value, CONSTANT_TYPES):
        return ConstantVariable(value)
    if isinstance(value, (types.FunctionType, types.ModuleType, type, np.ufunc, types.BuiltinFunctionType)):
        return ObjectVariable(value)
    raise Unsupported(f"{what} of a function reached without a source holds {type(value).__name__}")


def _getattr_static(value, name):
    import inspect
    return inspect.getattr_static(value, name)


def _unsupported_call_reason(value) -> str:
    module = getattr(value, "__module__", None) or ""
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None) or type(value).__name__
    if module.startswith("numpy.random") or isinstance(getattr(value, "__self__", None), np.random.Generator):
        return f"{name}: random draws run as Python, never captured as constants"
    if getattr(value, "__name__", None) == "__exit__" and hasattr(value, "__self__"):
        return f"the end of a with block entered as Python ({type(value.__self__).__qualname__}.__exit__) runs as Python"
    if module.split(".")[0] == "numpy":
        return f"np.{getattr(value, '__name__', name)} is not supported by numpile yet"
    where = f"{module}.{name}" if module and module != "builtins" else name
    if isinstance(value, type):
        return f"creating a {where} object is not supported"
    return f"call to {where} cannot be compiled"


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


