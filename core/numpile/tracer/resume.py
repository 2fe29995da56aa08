"""Resume functions: the original bytecode, restarted at an instruction after a graph break.

A resume function's code is the original code object with a short prologue in
front: the original preamble (MAKE_CELL, COPY_FREE_VARS, RESUME), then loads
that rebuild the live value stack from extra parameters, stores that refill
closure cells, deletes of the locals that were unbound, and a jump to the
instruction to resume at. Its parameters are all the original locals, then the
stack slots, then the cell contents. CPython 3.11+ jumps are relative, so the
original instructions are copied unchanged after the prologue; only the
exception table and the line table move, and the arguments of local and cell
instructions that index past the original locals shift by the new parameters.
"""

from __future__ import annotations

import dis
import types
import weakref
from dataclasses import dataclass

from ..exc import Unsupported
from . import bytecode_compat as bc

_CO_VARARGS, _CO_VARKEYWORDS = 0x04, 0x08
_CO_GENERATOR_LIKE = 0x20 | 0x80 | 0x100 | 0x200
_NO_LOCATION = 15  # a line-table entry code: instructions with no source position

_SLOT_OPS = frozenset(dis.opname[o] for o in (*dis.haslocal, *dis.hasfree))
_PACKED_SLOT_OPS = frozenset({"LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"})


@dataclass(frozen=True)
class ResumeLayout:
    """What the residual code passes to a resume function, besides the original locals."""

    offset: int                 # the instruction to resume at
    stack: tuple                # per stack slot, bottom first: True for a value, False for a NULL
    unbound: tuple              # original locals unbound at the break (passed as None, deleted)
    cells: tuple                # closure cells of the frame (not parameters) whose contents are passed


def stack_param(i: int) -> str:
    return f"___stack{i}"


def cell_param(name: str) -> str:
    return f"___cell_{name}"


# id(resume code) -> (the original code, how many bytes its prologue adds), for as long as the
# resume code lives: a break inside a resume function resumes the original code. Keyed by identity
# (not a WeakKeyDictionary: code objects compare by value, so a rebuilt equal code would share the
# entry its dead twin's callback then deletes). Resume codes are not cached here: the compiled
# function that calls one keeps it (cache.ResumePoint), so it lives as long as that function.
_ORIGIN: dict = {}


def resume_code(code: types.CodeType, layout: ResumeLayout) -> types.CodeType:
    """The code object of a function that resumes `code` as `layout` says."""
    new = _build(code, layout)
    _ORIGIN[id(new)] = (code, len(new.co_code) - len(code.co_code))
    weakref.finalize(new, _ORIGIN.pop, id(new), None)
    return new


def origin(code: types.CodeType) -> tuple[types.CodeType, int]:
    """The original code a (resume) code object runs, and the offset of that code within it:
    a break in a resume function resumes the original code, never a resume of a resume."""
    return _ORIGIN.get(id(code), (code, 0))


def resume_params(code: types.CodeType, layout: ResumeLayout) -> list[str]:
    """The resume function's parameter names, in order."""
    values = [stack_param(i) for i, is_value in enumerate(layout.stack) if is_value]
    return [*map(_parameter_name, code.co_varnames), *values, *(cell_param(c) for c in layout.cells)]


def _parameter_name(local: str) -> str:
    """A local as a parameter name: those that are not identifiers (pytest's `@py_assert1`) get one
    (the bytecode reads locals by slot, so the name is only a label); inspect itself renames ".0"."""
    if local.isidentifier() or (local.startswith(".") and local[1:].isdigit()):
        return local
    return "_local_" + "".join(c if c.isalnum() else "_" for c in local)


def _build(code: types.CodeType, layout: ResumeLayout) -> types.CodeType:
    if code.co_flags & _CO_GENERATOR_LIKE:
        raise Unsupported("graph breaks in generators and coroutines cannot resume")
    nvar = len(code.co_varnames)
    params = resume_params(code, layout)
    shift = len(params) - nvar  # new locals pushed in between varnames and cells
    original = _shift_slots(bytearray(code.co_code), nvar, shift)
    insts = bc.instructions(code)
    resume_at = next(i.offset for i in insts if i.opname == "RESUME") + 2
    preamble = bytes(original[:resume_at])

    body = bytearray()
    slot = nvar
    for is_value in layout.stack:
        if is_value:
            body += _emit("LOAD_FAST", slot)
            slot += 1
        else:
            body += _emit("PUSH_NULL", 0)
    localsplus = (*code.co_varnames, *[c for c in code.co_cellvars if c not in code.co_varnames], *code.co_freevars)
    for name in layout.cells:
        body += _emit("LOAD_FAST", slot)
        body += _emit("STORE_DEREF", localsplus.index(name) + shift)
        slot += 1
    for name in layout.unbound:
        body += _emit("DELETE_FAST", code.co_varnames.index(name))
    # the jump ends the prologue and the original code follows it, so its distance is the offset
    jump = _emit("JUMP_FORWARD", layout.offset // 2)
    prologue = preamble + bytes(body) + jump
    new_code = prologue + bytes(original)
    shift_units = len(prologue) // 2
    return code.replace(
        co_code=new_code,
        co_argcount=len(params),
        co_posonlyargcount=0,
        co_kwonlyargcount=0,
        co_nlocals=len(params),
        co_varnames=tuple(params),
        co_flags=code.co_flags & ~(_CO_VARARGS | _CO_VARKEYWORDS),
        co_name=f"__resume_{code.co_name}_at_{layout.offset}",
        co_qualname=f"{code.co_qualname}.<resume at {layout.offset}>",
        co_linetable=_no_location(shift_units) + code.co_linetable,
        co_exceptiontable=_shift_exception_table(code, shift_units),
    )


def _emit(opname: str, arg: int) -> bytes:
    op = dis.opmap[opname]
    out = bytearray()
    for shift in (24, 16, 8):
        if arg >> shift:
            out += bytes([dis.opmap["EXTENDED_ARG"], (arg >> shift) & 0xFF])
    out += bytes([op, arg & 0xFF])
    out += b"\x00\x00" * bc.cache_entries(opname)
    return bytes(out)


def _shift_slots(raw: bytearray, nvar: int, shift: int) -> bytearray:
    """Add `shift` to the arguments that index cells and free variables (they follow the locals)."""
    if shift == 0:
        return raw
    i, ext = 0, False
    while i < len(raw):
        name = dis.opname[raw[i]]
        arg = raw[i + 1]
        if name in _PACKED_SLOT_OPS:
            hi, lo = arg >> 4, arg & 15
            hi, lo = (hi + shift if hi >= nvar else hi), (lo + shift if lo >= nvar else lo)
            if hi > 15 or lo > 15:
                raise Unsupported("too many locals to resume this function after a graph break")
            raw[i + 1] = (hi << 4) | lo
        elif name in _SLOT_OPS and arg >= nvar:
            if ext or arg + shift > 255:
                raise Unsupported("too many locals to resume this function after a graph break")
            raw[i + 1] = arg + shift
        ext = name == "EXTENDED_ARG"
        i += 2 + 2 * bc.cache_entries(name)
    return raw


def _no_location(units: int) -> bytes:
    out = bytearray()
    while units > 0:
        n = min(units, 8)
        out.append(0x80 | (_NO_LOCATION << 3) | (n - 1))
        units -= n
    return bytes(out)


def _shift_exception_table(code: types.CodeType, units: int) -> bytes:
    out = bytearray()
    for e in dis._parse_exception_table(code):
        start, end, target = e.start // 2 + units, e.end // 2 + units, e.target // 2 + units
        for i, value in enumerate((start, end - start, target, (e.depth << 1) | int(e.lasti))):
            out += _varint(value, first=i == 0)
    return bytes(out)


def _varint(value: int, first: bool) -> bytes:
    chunks = [value & 63]
    value >>= 6
    while value:
        chunks.append(value & 63)
        value >>= 6
    chunks.reverse()
    out = bytearray(c | 0x40 for c in chunks[:-1])
    out.append(chunks[-1])
    if first:
        out[0] |= 0x80
    return bytes(out)


def make_resume_function(fn: types.FunctionType, code: types.CodeType) -> types.FunctionType:
    """A function object for resume code, sharing the original's globals and closure."""
    return types.FunctionType(code, fn.__globals__, code.co_name, None, fn.__closure__)
