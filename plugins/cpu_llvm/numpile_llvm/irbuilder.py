"""A small builder of LLVM IR text: typed values, instructions, loops with carried values.

Values are `V(ref, dtype)`: an SSA name or a literal, and the NumPy dtype it holds. Booleans
are `i1` in registers and one byte in memory, as NumPy stores them. A complex value is a struct
of its two float parts (`{double, double}`, NumPy's layout in memory too): ops take it apart
(`parts`) and put it together (`pack`), which LLVM's InstCombine folds away, so loops over
complex data vectorise as loops over their floats.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

import numpy as np

from . import mathlib

BOOL = np.dtype(bool)
F32, F64, I32, I64 = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.int32), np.dtype(np.int64)
_FLOAT_TYPES = {"float32": "float", "float64": "double"}
_COMPLEX_PARTS = {"complex64": F32, "complex128": F64}
_FLOAT_ARITHMETIC = frozenset({"fadd", "fsub", "fmul", "fdiv", "frem"})


# a loop LLVM must not unroll (the vectoriser still widens it): see the users for why
NOT_UNROLLED = '!{!"llvm.loop.unroll.disable"}'

class Unlowerable(Exception):
    """Something kernel codegen has no LLVM lowering for: the kernel runs with NumPy instead."""


class V(NamedTuple):
    ref: str
    dtype: np.dtype
    weak: bool = False  # a Python float or int (float64/int64 in the register): NEP 50 weak where an op uses it


def reg_type(dtype: np.dtype) -> str:
    dtype = np.dtype(dtype)
    if not dtype.isnative:  # kernels load and store in the machine's order
        raise Unlowerable(f"dtype {dtype.str} is not in this machine's byte order")
    if dtype.kind == "b":
        return "i1"
    if dtype.kind in "iu":
        return f"i{8 * dtype.itemsize}"
    if dtype.name in _FLOAT_TYPES:
        return _FLOAT_TYPES[dtype.name]
    if dtype.name in _COMPLEX_PARTS:
        part = _FLOAT_TYPES[_COMPLEX_PARTS[dtype.name].name]
        return f"{{{part}, {part}}}"
    raise Unlowerable(f"dtype {dtype} has no LLVM lowering")


def part_dtype(dtype: np.dtype) -> np.dtype:
    """The float dtype of a complex dtype's real and imaginary parts."""
    return _COMPLEX_PARTS[np.dtype(dtype).name]


def mem_type(dtype: np.dtype) -> str:
    return "i8" if np.dtype(dtype).kind == "b" else reg_type(dtype)


def literal(value, dtype: np.dtype) -> V:
    """A constant of a dtype, converted the way NumPy converts a scalar to it."""
    dtype = np.dtype(dtype)
    reg_type(dtype)
    if dtype.kind == "b":
        return V("true" if bool(value) else "false", dtype)
    if dtype.kind in "iu":
        return V(str(int(np.asarray(value).astype(dtype))), dtype)
    if dtype.kind == "c":
        z = complex(np.asarray(value).astype(dtype))
        part = part_dtype(dtype)
        return V("{ " + ", ".join(f"{reg_type(part)} {literal(x, part).ref}" for x in (z.real, z.imag)) + " }", dtype)
    # LLVM spells float constants as the hex bits of the (exactly representable) double
    as_double = float(np.asarray(value).astype(dtype))
    return V("0x%016X" % struct.unpack("<Q", struct.pack("<d", as_double))[0], dtype)


def int_limits(dtype: np.dtype) -> tuple[int, int]:
    reg_type(dtype)  # datetime64 and timedelta64 have limits but no lowering
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


class Module:
    """Functions plus the declarations and globals they need, rendered as one module."""

    def __init__(self, cpu_features: frozenset = frozenset(), fast_math: bool = False):
        self.cpu_features = cpu_features
        self.fast_math = fast_math      # let LLVM assume no NaN/inf and reassociate: NumPy's results no longer
        self.declarations: dict[str, str] = {}     # symbol -> declare line
        self.compiler_used: list[str] = []         # vector math functions LLVM must keep visible
        self.attributes: dict[str, int] = {}       # attribute group text -> number
        self.metadata_nodes: dict[str, int] = {}   # metadata node text -> number
        self.functions: list[str] = []

    def declare(self, symbol: str, line: str) -> None:
        self.declarations.setdefault(symbol, line)

    def attribute_group(self, text: str) -> str:
        number = self.attributes.setdefault(text, len(self.attributes))
        return f"#{number}"

    def metadata(self, text: str) -> str:
        number = self.metadata_nodes.setdefault(text, len(self.metadata_nodes))
        return f"!{number}"

    def loop_properties(self, *properties: str) -> str:
        """A fresh `!llvm.loop` node (distinct: it names itself) holding these property nodes."""
        refs = [self.metadata(p) for p in properties]
        number = len(self.metadata_nodes)
        self.metadata_nodes[f"distinct !{{!{number}{''.join(', ' + r for r in refs)}}}"] = number
        return f"!{number}"

    def render(self) -> str:
        parts = list(self.declarations.values())
        if self.compiler_used:
            refs = ", ".join(f"ptr @{s}" for s in self.compiler_used)
            parts.append(f'@llvm.compiler.used = appending global [{len(self.compiler_used)} x ptr] [{refs}], '
                         f'section "llvm.metadata"')
        parts += self.functions
        parts += [f"attributes #{n} = {{ {text} }}" for text, n in self.attributes.items()]
        parts += [f"!{n} = {text}" for text, n in self.metadata_nodes.items()]
        return "\n".join(parts) + "\n"


class Function:
    """The body of one function being built: a current block and instructions appended to it."""

    def __init__(self, module: Module):
        self.module = module
        self.lines: list[str] = []
        self.entry: list[str] = []   # allocas of fixed size, rendered first in the entry block
        self.stack_bytes = 0    # of those allocas
        self.count = 0
        self.block = "entry"

    # -- names and blocks ----------------------------------------------------------------
    def fresh(self, stem: str = "t") -> str:
        self.count += 1
        return f"%{stem}{self.count}"

    def emit(self, text: str, dtype: np.dtype | None = None, stem: str = "t") -> V | None:
        if dtype is None:
            self.lines.append(f"  {text}")
            return None
        name = self.fresh(stem)
        self.lines.append(f"  {name} = {text}")
        return V(name, np.dtype(dtype))

    def stack_buffer(self, nbytes: int) -> V:
        """A buffer of `nbytes` on the stack for the whole call: allocated once in the entry block
        (an alloca inside a loop would grow the stack every iteration)."""
        name = self.fresh("stack")
        self.entry.append(f"  {name} = alloca i8, i64 {nbytes}, align 64")
        self.stack_bytes += nbytes
        return V(name, I64)

    def label(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def start_block(self, label: str) -> None:
        self.lines.append(f"{label}:")
        self.block = label

    # -- instructions --------------------------------------------------------------------
    def binary(self, opcode: str, a: V, b: V, dtype: np.dtype | None = None) -> V:
        flags = " fast" if self.module.fast_math and opcode in _FLOAT_ARITHMETIC else ""
        return self.emit(f"{opcode}{flags} {reg_type(a.dtype)} {a.ref}, {b.ref}", dtype or a.dtype)

    def compare(self, opcode: str, predicate: str, a: V, b: V) -> V:
        return self.emit(f"{opcode} {predicate} {reg_type(a.dtype)} {a.ref}, {b.ref}", BOOL)

    def select(self, cond: V, a: V, b: V) -> V:
        if a.dtype.kind == "c":   # part by part: the vectoriser takes selects of floats, not of structs
            return self.pack(*(self.select(cond, x, y) for x, y in zip(self.parts(a), self.parts(b))), a.dtype)
        t = reg_type(a.dtype)
        return self.emit(f"select i1 {cond.ref}, {t} {a.ref}, {t} {b.ref}", a.dtype)

    def parts(self, z: V) -> tuple[V, V]:
        """The real and imaginary parts of a complex value."""
        t, part = reg_type(z.dtype), part_dtype(z.dtype)
        return tuple(self.emit(f"extractvalue {t} {z.ref}, {k}", part) for k in (0, 1))

    def pack(self, real: V, imag: V, dtype: np.dtype) -> V:
        """The complex value of dtype with these parts."""
        t, p = reg_type(dtype), reg_type(real.dtype)
        half = self.emit(f"insertvalue {t} poison, {p} {real.ref}, 0", dtype)
        return self.emit(f"insertvalue {t} {half.ref}, {p} {imag.ref}, 1", dtype)

    def convert(self, opcode: str, v: V, dtype: np.dtype) -> V:
        return self.emit(f"{opcode} {reg_type(v.dtype)} {v.ref} to {reg_type(dtype)}", dtype)

    def intrinsic(self, name: str, args: list[V], dtype: np.dtype) -> V:
        """`llvm.<name>.<type>(args)`, e.g. intrinsic("maximum", [a, b], F32)."""
        t = reg_type(args[0].dtype)
        suffix = {"i1": "i1"}.get(t, "f32" if t == "float" else "f64" if t == "double" else t)
        symbol = f"llvm.{name}.{suffix}"
        self.module.declare(symbol, f"declare {reg_type(dtype)} @{symbol}({', '.join(reg_type(a.dtype) for a in args)})")
        return self.call(symbol, args, dtype)

    def call(self, symbol: str, args: list[V], dtype: np.dtype, attributes: str = "") -> V:
        arg_text = ", ".join(f"{reg_type(a.dtype)} {a.ref}" for a in args)
        return self.emit(f"call {reg_type(dtype)} @{symbol}({arg_text}){attributes}", dtype)

    def math(self, function: str, args: list[V], dtype: np.dtype) -> V:
        """A libm function, with its libmvec versions named for the loop vectoriser."""
        if dtype.kind != "f":
            raise Unlowerable(f"{function} for {dtype}")
        name, arity = mathlib.FUNCTIONS[function]
        symbol = mathlib.symbol(name, dtype)
        t = reg_type(dtype)
        self.module.declare(symbol, f"declare {t} @{symbol}({', '.join([t] * arity)}) "
                                    + self.module.attribute_group("nounwind willreturn memory(none)"))
        variants = []
        for lanes, vector_name in mathlib.vector_variants(name, arity, dtype, self.module.cpu_features):
            vt = f"<{lanes} x {t}>"
            if vector_name not in self.module.declarations:
                self.module.declare(vector_name, f"declare {vt} @{vector_name}({', '.join([vt] * arity)})")
                self.module.compiler_used.append(vector_name)
            variants.append(f"_ZGV_LLVM_N{lanes}{'v' * arity}_{symbol}({vector_name})")
        attributes = ""
        if variants:
            attributes = " " + self.module.attribute_group(f'"vector-function-abi-variant"="{",".join(variants)}"')
        return self.call(symbol, args, dtype, attributes)

    def load(self, pointer: str, offset: V, dtype: np.dtype) -> V:
        address = self.emit(f"getelementptr inbounds {mem_type(dtype)}, ptr {pointer}, i64 {offset.ref}", I64, "p")
        value = self.emit(f"load {mem_type(dtype)}, ptr {address.ref}", dtype if dtype.kind != "b" else np.dtype(np.int8))
        if dtype.kind == "b":
            return self.emit(f"icmp ne i8 {value.ref}, 0", BOOL)
        return value

    def store(self, pointer: str, offset: V, value: V) -> None:
        address = self.emit(f"getelementptr inbounds {mem_type(value.dtype)}, ptr {pointer}, i64 {offset.ref}", I64, "p")
        if value.dtype.kind == "b":
            value = V(self.emit(f"zext i1 {value.ref} to i8", np.dtype(np.int8)).ref, np.dtype(np.int8))
        self.emit(f"store {reg_type(value.dtype)} {value.ref}, ptr {address.ref}")

    # -- loops -----------------------------------------------------------------------------
    def loop(self, start: V, end: V, carried: list[V], body, properties: str | None = None) -> list[V]:
        """for i in [start, end): carried = body(i, carried); returns the carried values after the loop.

        Rotated, with a guard, the shape LLVM's vectoriser expects; `properties`, an `!llvm.loop`
        node (Module.loop_properties) on its latch."""
        pre, head, exit_ = self.block, self.label("loop"), self.label("done")
        enter = self.compare("icmp", "slt", start, end)
        self.emit(f"br i1 {enter.ref}, label %{head}, label %{exit_}")
        self.start_block(head)
        i = V(self.fresh("i"), I64)
        phis = [V(self.fresh("acc"), c.dtype) for c in carried]
        phi_at = len(self.lines)
        results = body(i, phis)
        latch = self.block
        nxt = self.emit(f"add nuw nsw i64 {i.ref}, 1", I64)
        again = self.compare("icmp", "slt", nxt, end)
        self.emit(f"br i1 {again.ref}, label %{head}, label %{exit_}" + (f", !llvm.loop {properties}" if properties else ""))
        header = [f"  {i.ref} = phi i64 [ {start.ref}, %{pre} ], [ {nxt.ref}, %{latch} ]"]
        header += [f"  {p.ref} = phi {reg_type(p.dtype)} [ {c.ref}, %{pre} ], [ {r.ref}, %{latch} ]"
                   for p, c, r in zip(phis, carried, results)]
        self.lines[phi_at:phi_at] = header
        self.start_block(exit_)
        return [self.emit(f"phi {reg_type(c.dtype)} [ {c.ref}, %{pre} ], [ {r.ref}, %{latch} ]", c.dtype)
                for c, r in zip(carried, results)]
