"""The loop-level kernel IR that code-generating backends render.

A `Program` runs `steps` in order over named buffers: `Kernel`s (loop nests the
scheduler fused from graph nodes) and `Extern`s (a graph node run by its NumPy
implementation: matmul through BLAS, concatenate, anything not lowered).

A kernel has parallel `outer` loops and, inside them, `stages` run one after the
other for each outer index (a "row"): a stage loops over its own `inner` sizes
and either stores an expression into a buffer or reduces it to a row value that
later stages read. Loop variables are numbered outer first, then the stage's
inner loops. Every load and store addresses its buffer by an `Affine` index per
buffer dimension; views (slices, transposes, broadcasts) are folded into these
indices, so buffers are always whole arrays with their own strides. A gather (`x[idx]`)
addresses a dimension by an `Indirect` instead: a position read from an index array.

Scalar expressions name registry ops (`Call("add", ...)`) and carry the NumPy
dtype the op computes in, so a renderer knows each value's type exactly; a `weak`
Load or Call is a Python scalar, which the ops using it treat as NEP 50 says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..shapes import identical


@dataclass(frozen=True)
class Affine:
    """sum(coeff * loop_var) + const, the index of one buffer dimension. Coefficients and the
    constant are ints or, in a graph with dynamic shapes, SymInts; two Affines are equal when
    they are the same expression."""

    terms: tuple = ()        # (loop var, coefficient) pairs, by var
    const: Any = 0

    def _key(self) -> str:
        return str(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Affine) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    @staticmethod
    def var(v: int) -> "Affine":
        return Affine(((v, 1),), 0)

    @staticmethod
    def constant(c) -> "Affine":
        return Affine((), c)

    def scaled(self, k) -> "Affine":
        return Affine(tuple((v, c * k) for v, c in self.terms), self.const * k)

    def __add__(self, other: "Affine") -> "Affine":
        coeffs = dict(self.terms)
        for v, c in other.terms:
            coeffs[v] = coeffs.get(v, 0) + c
        return Affine(tuple(sorted((v, c) for v, c in coeffs.items() if not (isinstance(c, int) and c == 0))),
                      self.const + other.const)

    def offset(self, k) -> "Affine":
        return Affine(self.terms, self.const + k)

    def __str__(self) -> str:
        parts = [(f"i{v}" if identical(c, 1) else f"{c}*i{v}") for v, c in self.terms]
        if not isinstance(self.const, int) or self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts)


@dataclass(frozen=True, eq=False)
class Indirect:
    """A load's index along one buffer dimension taken from data: `scale * p + offset`, where p is
    the integer `value` (an expression, usually a load of an index array) made a position as NumPy
    does: a negative value counts from the end of the dimension (`size`). A value outside
    [-size, size) is NumPy's IndexError: a renderer never reads there, and the program raises.
    `inside`: the value is a position in [0, size) whatever the data (a mask's positions, which the
    tracer checked against the array it selects from): a renderer reads it as it is, unchecked.
    `scaled` and `offset` are Affine's, so views of a gathered array fold into it as into any index."""

    value: "Expr"
    size: Any
    scale: Any = 1
    shift: Any = 0
    inside: bool = False

    def scaled(self, k) -> "Indirect":
        return Indirect(self.value, self.size, self.scale * k, self.shift * k, self.inside)

    def offset(self, k) -> "Indirect":
        return Indirect(self.value, self.size, self.scale, self.shift + k, self.inside)

    def __str__(self) -> str:
        text = f"{'inside' if self.inside else 'at'}({self.value}, {self.size})"
        if not identical(self.scale, 1):
            text = f"{self.scale}*{text}"
        return text if isinstance(self.shift, int) and not self.shift else f"{text} + {self.shift}"


def gathers(load: "Load") -> bool:
    """Whether a load addresses a dimension through data (see Indirect)."""
    return any(isinstance(i, Indirect) for i in load.index)


class Expr:
    dtype: np.dtype


@dataclass(frozen=True, eq=False)
class Load(Expr):
    buffer: str
    index: tuple             # Affine (or Indirect) per buffer dimension
    dtype: np.dtype
    weak: bool = False       # a Python scalar (see Graph): NEP 50 weak in the ops that use it

    def __str__(self) -> str:
        return _weak(self, f"{self.buffer}[{', '.join(map(str, self.index))}]")


@dataclass(frozen=True, eq=False)
class Const(Expr):
    """A constant operand. A Python scalar stays Python (NEP 50 weak) with dtype None."""

    value: Any
    dtype: np.dtype | None

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, eq=False)
class Call(Expr):
    """A pointwise registry op applied elementwise; `dtype` is its result dtype."""

    op: str
    args: tuple              # Exprs
    kwargs: tuple            # (name, constant or Expr) pairs, the op's canonical keyword arguments
    dtype: np.dtype
    weak: bool = False       # Python arithmetic on Python scalars: its value is weak too

    def __str__(self) -> str:
        inner = [str(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs]
        return _weak(self, f"{self.op}({', '.join(inner)})")


@dataclass(frozen=True, eq=False)
class RowValue(Expr):
    """The result of an earlier reduce stage of the same kernel, for the current outer index."""

    name: str
    dtype: np.dtype

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=False)
class LoopIndex(Expr):
    """The value of an affine expression of the loop variables (arange, eye)."""

    index: Affine
    dtype: np.dtype

    def __str__(self) -> str:
        return f"({self.index})"


@dataclass
class Stage:
    inner: tuple                       # sizes of this stage's inner loops
    value: Expr
    reduce: str | None = None          # None: store each element; else "sum", "prod", "max", "min", "any",
                                       # "all", "argmax", "argmin" (the first extreme's flat C-order index)
    row_name: str | None = None        # a reduce stage's row value, for later stages
    output: str | None = None          # buffer stored into (a reduce stores its row value), or None
    output_index: tuple = ()           # Affine per output dimension
    dtype: np.dtype | None = None      # a reduce stage's accumulator and result dtype (an arg reduction's: intp)
    # how many of a reduce stage's inner loops, from the last, walk the source's last axes:
    # NumPy reduces those as one block (float sums pairwise), the others one step at a time
    trailing: int = 0
    # a scan stage ("sum", "prod") stores, along its first inner loop, the running total of its
    # values (each cast to `dtype` first, as NumPy's accumulate does), in order: out[t] = out[t-1] op v[t]
    scan: str | None = None

    @property
    def down_columns(self) -> bool:
        """A reduction none of whose inner loops walks the source's last axis (a sum over axis 0 of
        a matrix): each row value reads a column, one element a row apart."""
        return self.reduce is not None and self.scan is None and bool(self.inner) and not self.trailing


@dataclass
class Kernel:
    name: str
    outer: tuple                       # sizes of the parallel loops
    stages: list = field(default_factory=list)

    @property
    def inputs(self) -> list[str]:
        found: dict[str, None] = {}   # in order of first use
        for stage in self.stages:
            scattered = [walk(i.value) for i in stage.output_index if isinstance(i, Indirect)]
            for values in (walk(stage.value), *scattered):
                for e in values:
                    if isinstance(e, Load):
                        found[e.buffer] = None
        return list(found)

    @property
    def outputs(self) -> list[str]:
        return [s.output for s in self.stages if s.output is not None]

    def __str__(self) -> str:
        loops = " ".join(f"i{v}<{n}" for v, n in enumerate(self.outer))
        lines = [f"kernel {self.name} parallel over [{loops}]:"]
        for stage in self.stages:
            first = len(self.outer)
            inner = " ".join(f"i{first + k}<{n}" for k, n in enumerate(stage.inner))
            target = f"{stage.output}[{', '.join(map(str, stage.output_index))}]" if stage.output else ""
            if stage.reduce:
                name = stage.row_name + (f" -> {target}" if target else "")
                lines.append(f"  for [{inner}]: {name} = {stage.reduce}({stage.value})")
            elif stage.scan:
                lines.append(f"  for [{inner}]: {target} = running {stage.scan} along i{first}: {stage.value}")
            else:
                lines.append(f"  for [{inner}]: {target} = {stage.value}")
        return "\n".join(lines)


@dataclass
class Extern:
    """A graph node run by its eager implementation; args hold buffer names (as BufferArg) and
    constants. `output` is the buffer it fills, or for an op with several results (np.divmod) a
    tuple of buffers, one per result."""

    op: str
    args: tuple
    kwargs: dict
    output: str | tuple

    @property
    def outputs(self) -> tuple:
        return self.output if isinstance(self.output, tuple) else (self.output,)

    def __str__(self) -> str:
        return f"{', '.join(self.outputs)} = extern {self.op}({', '.join(map(str, self.args))})"


@dataclass(frozen=True)
class BufferArg:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass
class Buffer:
    name: str
    shape: tuple
    dtype: np.dtype
    kind: str                           # "input", "temp", "output"
    scalar: bool = False                # a graph output NumPy returns as a NumPy scalar


@dataclass
class Program:
    """Sizes (buffer shapes, loop sizes, index constants) are ints or SymInts over the graph's
    symbols; symbol i is dimension `symbols[i][1]` of buffer `symbols[i][0]`: an input's, or for
    a size only the data knows (shapes.py: unbacked) an extern's result, which binds it when the
    extern has run (`binds`). Buffers sized by one are allocated after."""

    buffers: dict                       # name -> Buffer
    inputs: list                        # buffer names of the graph inputs, in order
    steps: list                         # Kernels and Externs
    outputs: list                       # buffer names of the graph outputs, in order
    symbols: list = field(default_factory=list)   # symbol i -> (buffer, dim)

    def binds(self, step) -> list[tuple[int, str, int]]:
        """(symbol, buffer, dim) for each unbacked symbol the results of extern `step` bind."""
        return [(k, s[0], s[1]) for k, s in enumerate(self.symbols) if s is not None and s[0] in step.outputs]

    @property
    def kernels(self) -> list[Kernel]:
        return [s for s in self.steps if isinstance(s, Kernel)]

    def __str__(self) -> str:
        head = [f"buffer {b.name}: {b.kind} {b.dtype}{list(b.shape)}" for b in self.buffers.values()]
        return "\n".join(head + [str(s) for s in self.steps] + [f"return {', '.join(self.outputs)}"])


def _weak(e, text: str) -> str:
    return f"python({text})" if e.weak else text


def walk(expr: Expr):
    """Every sub-expression of expr, children first (a gather's index values too)."""
    if isinstance(expr, Call):
        for a in (*expr.args, *(v for _, v in expr.kwargs)):
            if isinstance(a, Expr):
                yield from walk(a)
    elif isinstance(expr, Load):
        for i in expr.index:
            if isinstance(i, Indirect):
                yield from walk(i.value)
    yield expr
