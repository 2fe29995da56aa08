"""The program generator: hypothesis draws small Python functions of NumPy code.

Each program is `def f(x, y, n)` (see numpile.fuzz.check) with branches on array data and on
Python values, loops over ranges, constants, arrays and rows, break/continue, early returns,
try/with blocks, in-place updates, views, Python containers around arrays, calls to the
PRELUDE helpers and graph breaks (prints, scipy, .tolist(), data-dependent sizes). Every array
variable holds a float64 array of the arguments' shape (or a view of one), so every program
is valid NumPy; hypothesis shrinks a failing one to a few lines.
"""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from .check import Inputs

LOCALS = ("a", "b", "c")          # array locals a program may define
CONSTS = ("0.5", "2.5", "-1.5", "0.25", "3.0")
# Branches on a sum or mean compare it past a margin: such a value can be rounding-sized
# (`(x - x.mean()).sum()`), and numpile's float sums are NumPy's to the bit only for C-ordered data
# (docs/performance.md), so without it a transposed x could take the other branch.
MARGIN = "1e-9"


class ProgramGen:
    """Writes one program's source from hypothesis draws."""

    def __init__(self, draw, ndim: int):
        self.draw, self.ndim = draw, ndim
        self.lines: list[str] = []
        self.loop_vars: list[str] = []          # Python ints of enclosing range loops
        self.scalar_vars: list[str] = []        # Python floats of enclosing loops over constants
        self.row_vars: list[str] = []           # rows of an array (a view, or a scalar when 1-d)
        self.in_loop = 0
        self.fresh = itertools.count()
        self.use_acc = draw(st.booleans())
        self.budget = 14                        # statements in all, at most

    # -- small pieces -------------------------------------------------------------------------
    def pick(self, options):
        return self.draw(st.sampled_from(list(options)))

    def chance(self, p: float) -> bool:
        return self.draw(st.floats(0, 1)) < p

    def emit(self, indent: int, text: str) -> None:
        for line in text.split("\n"):
            self.lines.append("    " * indent + line)

    def print_call(self, args: str) -> str:
        return f"print({args}, file=_buf)"

    def var(self, defined) -> str:
        return self.pick(sorted(defined))

    def scalar(self) -> str:
        options = list(CONSTS) + ["G", "n", "(n * 0.25)"] + self.scalar_vars
        options += [f"({k} * 0.5)" for k in self.loop_vars]
        return self.pick(options)

    def expr(self, defined, depth: int = 2) -> str:
        """A float64 array expression of the program's shape."""
        if depth <= 0 or self.chance(0.3):
            return self.var(defined)
        e = lambda: self.expr(defined, depth - 1)  # noqa: E731
        kind = self.draw(st.integers(0, 27))
        if kind == 0:
            return f"({e()} + {e()})"
        if kind == 1:
            return f"({e()} - {e()})"
        if kind == 2:
            return f"(np.tanh({e()}) * {e()})"
        if kind == 3:
            return f"({e()} * {self.scalar()})"
        if kind == 4:
            return f"({e()} / (np.abs({e()}) + 1.0))"
        if kind == 5:
            return f"(-{e()})"
        if kind == 6:
            return f"np.{self.pick(['sin', 'cos', 'tanh', 'abs', 'negative', 'square'])}(np.tanh({e()}))"
        if kind == 7:
            return f"np.exp(np.tanh({e()}))"
        if kind == 8:
            return f"np.sqrt(np.abs({e()}))"
        if kind == 9:
            return f"np.{self.pick(['maximum', 'minimum', 'fmax', 'hypot'])}({e()}, {e()})"
        if kind == 10:
            return f"np.where({e()} > {e()}, {e()}, {e()})"
        if kind == 11:
            return f"np.clip({e()}, -1.0, {self.pick(['1.0', '0.5', '2.0'])})"
        if kind == 12:   # a reduction broadcast back
            axis = self.pick(["0", "-1"])
            red = self.pick(["sum", "mean", "max", "min"])
            return f"({e()}.{red}(axis={axis}, keepdims=True) * 0.25 + {e()})"
        if kind == 13:
            return f"({e()} - {e()}.mean())"
        if kind == 14:
            return f"{e()}[::-1]"
        if kind == 15:
            return f"{e()}[:, ::-1]" if self.ndim == 2 else f"{e()}[::-1][::-1]"
        if kind == 16:
            return f"np.transpose(np.sin({e()}).T)" if self.ndim == 2 else f"{e()}.T"
        if kind == 17:
            return f"{e()}.reshape(-1)[::-1].reshape(x.shape)"
        if kind == 18:
            return f"({e()} > {e()}).astype(np.float64)"
        if kind == 19:
            return f"(np.tanh({e()}) * {e()}.std())"
        if kind == 20:
            return f"({e()} + np.ones_like({e()}) * {self.scalar()})"
        if kind == 21:
            return f"(np.zeros(x.shape) + {e()})"
        if kind == 22:
            return f"np.arcsin(np.clip({e()}, -1.0, 1.0))"
        if kind == 23:
            return f"np.{self.pick(['floor', 'rint', 'sign', 'trunc'])}({e()})"
        if kind == 24:
            return f"({e()} * np.tanh(np.dot({e()}.ravel(), {e()}.ravel())))"
        if kind == 25:
            return f"np.squeeze(np.expand_dims({e()}, 0), 0)"
        if kind == 26:
            return f"np.where({e()} > 0, {e()}, 0.0)"
        return f"({e()} * 2 ** {self.pick(['-1', '1', '0'])})"

    def data_cond(self, defined) -> str:
        e = lambda: self.expr(defined, 1)  # noqa: E731
        kind = self.draw(st.integers(0, 9))
        return [
            lambda: f"{e()}.sum() > {MARGIN}",
            lambda: f"({e()} > {e()}).any()",
            lambda: f"np.all({e()} > -1.0)",
            lambda: f"{e()}.max() < 1.0",
            lambda: f"{e()}.ravel()[0] > 0",
            lambda: f"float({e()}.mean()) > 0.1",
            lambda: f"{e()}.sum() > {MARGIN} and {e()}.min() < 0",
            lambda: f"not ({e()}.mean() > {MARGIN})",
            lambda: f"bool({e()}.std() > 1.0)",
            lambda: f"{e()}.mean() > {e()}.mean() + {MARGIN} or {self.py_cond(defined)}",
        ][kind]()

    def py_cond(self, defined) -> str:
        options = ["n > 2", "n % 2 == 0", "x.shape[0] > 2", "x.ndim == 2", "len(y) >= 3", "G > 0", "n == 0",
                   "x.shape == y.shape", "x.size > 4"]
        options += [f"{k} > 0" for k in self.loop_vars] + [f"{k} % 2 == 1" for k in self.loop_vars]
        # identity of arrays: Python values too (x is y in the call where both are one array)
        options += [f"{self.var(defined)} is {self.var(defined)}", f"{self.var(defined)} is not x"]
        return self.pick(options)

    def ret(self, defined) -> str:
        e = lambda: self.expr(defined, 1)  # noqa: E731
        v = lambda: self.var(defined)  # noqa: E731
        options = [
            lambda: f"return {e()}",
            lambda: f"return {v()}, {e()}",
            lambda: f"return {v()}, {v()}, {e()}",
            lambda: f"return {{'p': {e()}, 'q': {v()}}}",
            lambda: f"return [{v()}, {e()}]",
            lambda: f"return {e()}.sum()",
            lambda: f"return {e()}, float({v()}.sum())",
            lambda: f"return {e()}, n",
        ]
        if self.use_acc:
            options.append(lambda: f"return {e()}, acc")
        return self.draw(st.sampled_from(options))()

    # -- statements -------------------------------------------------------------------------
    def another(self, one_in: int) -> bool:
        """Whether a block gets one more statement; it ends one time in `one_in`. Drawn before each
        statement rather than as a count up front, so that hypothesis shrinks a program by deleting
        one statement's draws (a count would refill the program with the simplest statements)."""
        return self.draw(st.integers(0, one_in - 1)) > 0

    def block(self, indent: int, defined: set, depth: int, most: int = 3, one_in: int = 3) -> tuple[set, bool]:
        """Emit one to `most` statements; returns the variables surely defined after them and
        whether the block always returns."""
        defined = set(defined)
        for i in range(most):
            if i and not self.another(one_in):
                break
            self.budget -= 1
            returned = self.statement(indent, defined, depth)
            if returned:
                return defined, True
            if self.budget <= 0:
                break
        return defined, False

    def assign_target(self, defined) -> str:
        if self.chance(0.25):
            return self.pick(["x", "y"])
        return self.pick(LOCALS)

    def statement(self, indent: int, defined: set, depth: int) -> bool:
        """Emit one statement; update `defined`; True if it always returns."""
        nested = depth > 0 and self.budget > 1
        kind = self.draw(st.integers(0, 19 if nested else 9))
        e = lambda d=2: self.expr(defined, d)  # noqa: E731
        if kind in (0, 1, 2):                             # assignment
            target = self.assign_target(defined)
            self.emit(indent, f"{target} = {e()}")
            defined.add(target)
        elif kind == 3:                                   # alias or view of another array
            target = self.pick(LOCALS)
            src = self.var(defined)
            view = self.pick([src, f"{src}[::-1]", f"{src}[:]",
                              f"{src}.reshape(x.shape)", f"{src}.T.T"]
                             + ([f"{src}[:, ::-1]"] if self.ndim == 2 else []))
            self.emit(indent, f"{target} = {view}")
            defined.add(target)
        elif kind in (4, 5):                              # in-place update
            t = self.var(defined)
            self.emit(indent, self.pick([
                f"{t} += {e(1)}", f"{t} -= {e(1)}", f"{t} *= {self.scalar()}",
                f"{t} /= (np.abs({e(1)}) + 1.0)", f"{t}[1:] *= 2.0", f"{t}[::2] = {e(1)}[::2]",
                f"{t}[0] = {self.scalar()}", f"{t}[...] = {e(1)}", f"{t}[:] += 1.0",
                f"np.add({t}, {e(1)}, out={t})", f"np.multiply({t}, 0.5, out={t})",
                f"{t}[-1] -= {e(1)}[0]", f"{t}.fill({self.scalar()})", f"np.copyto({t}, {e(1)})",
            ]))
        elif kind == 6:                                   # a break in the middle of straight code
            self.graph_break(indent, defined)
        elif kind == 7:                                   # helpers
            target = self.pick(LOCALS)
            self.emit(indent, self.pick([
                f"{target} = _mix({e(1)}, {e(1)})",
                f"{target} = _branchy({e(1)}, {e(1)})",
                f"{target} = _noisy({e(1)}, _buf)",
                f"{target} = (lambda u: u * 0.5 + 1.0)({e(1)})",
                f"{target} = sum([{e(1)}, {e(1)}])",
            ]))
            defined.add(target)
        elif kind == 8:
            if self.use_acc and self.chance(0.4):
                self.emit(indent, f"acc.append({e(1)}.sum())")
            else:                                         # Python structures around arrays
                t, u = self.pick(LOCALS), self.pick(LOCALS)
                self.emit(indent, self.pick([
                    f"{t}, {u} = {self.var(defined)}, {e(1)}",
                    f"{t}, {u} = ({e(1)}, {self.var(defined)})[::-1]",
                    f"d = {{'u': {e(1)}, 'v': {self.var(defined)}}}\n{t} = d['u'] + d['v'] * 0.5\n{u} = d['v']",
                    f"{t} = sum([np.sin(v) for v in ({e(1)}, {self.var(defined)})])\n{u} = {t}",
                    f"{t} = np.stack([{e(1)}, {e(1)}]).mean(axis=0)\n{u} = {t}",
                    f"{t}, *rest = [{e(1)}, {e(1)}, x]\n{u} = rest[-1]",
                    f"h = lambda u, s={self.scalar()}: u * s + {self.var(defined)}\n{t} = h({e(1)})\n{u} = h({t})",
                    f"{t} = {{k: v for k, v in zip('pq', ({e(1)}, {e(1)}))}}['q']\n{u} = {t}",
                ]))
                defined |= {t, u}
        elif kind == 9:
            if self.in_loop and self.chance(0.5):         # break / continue, under a condition
                cond = self.data_cond(defined) if self.chance(0.5) else self.py_cond(defined)
                self.emit(indent, f"if {cond}:\n    {self.pick(['break', 'continue'])}")
            elif self.chance(0.4):
                cond = self.data_cond(defined) if self.chance(0.6) else self.py_cond(defined)
                self.emit(indent, f"if {cond}:")
                self.emit(indent + 1, self.ret(defined))
            else:
                self.emit(indent, f"{self.var(defined)} = {e()}")
        elif kind in (10, 11, 12):                        # if / else on data or Python values
            cond = self.data_cond(defined) if kind != 12 else self.py_cond(defined)
            self.emit(indent, f"if {cond}:")
            d1, r1 = self.block(indent + 1, defined, depth - 1)
            if self.chance(0.6):
                self.emit(indent, "else:")
                d2, r2 = self.block(indent + 1, defined, depth - 1)
            else:
                d2, r2 = defined, False
            if r1 and r2:
                return True
            defined |= d1 & d2 if not (r1 or r2) else (d2 if r1 else d1)
        elif kind in (13, 14):                            # for over range(n) / range(len(x))
            k = f"k{next(self.fresh)}"
            rng = self.pick(["range(n)", "range(1, n + 1)", "range(len(x))", "range(2)"])
            self.emit(indent, f"for {k} in {rng}:")
            self.loop_vars.append(k)
            self.in_loop += 1
            if self.chance(0.3):
                t = self.var(defined)
                self.emit(indent + 1, f"{t}[{k} % len({t})] = {t}[{k} % len({t})] * 0.5 + {k}")
            self.block(indent + 1, defined, depth - 1)
            self.in_loop -= 1
            self.loop_vars.pop()
        elif kind == 15:                                  # for over constants, arrays or rows
            c = f"c{next(self.fresh)}"
            how = self.draw(st.integers(0, 3))
            self.in_loop += 1
            if how == 0:
                self.emit(indent, f"for {c} in {self.pick(['(0.5, -1.0, 2.0)', '[1.5, 0.25]', '(G,)'])}:")
                self.scalar_vars.append(c)
                self.block(indent + 1, defined, depth - 1)
                self.scalar_vars.pop()
            elif how == 1:                                # the loop variable is one of the arrays
                self.emit(indent, f"for {c} in ({self.var(defined)}, {self.var(defined)}):")
                self.block(indent + 1, defined | {c}, depth - 1)
            elif how == 2:                                # zip / enumerate
                i, c2 = f"i{next(self.fresh)}", f"c{next(self.fresh)}"
                self.emit(indent, f"for {i}, ({c}, {c2}) in enumerate(zip((0.5, 1.5), ({self.var(defined)}, {self.var(defined)}))):")
                self.scalar_vars.append(c)
                self.loop_vars.append(i)
                self.block(indent + 1, defined | {c2}, depth - 1)
                self.loop_vars.pop()
                self.scalar_vars.pop()
            else:                                         # the rows of an array: views (2-d) or scalars (1-d)
                t = self.var(defined)
                self.emit(indent, f"for {c} in {t}:")
                self.emit(indent + 1, self.pick([f"{c} *= 0.5", f"{self.pick(LOCALS)} = {self.var(defined)} + {c}",
                                                 self.print_call(f"np.round({c}, 6)")]))
                self.row_vars.append(c)
                self.block(indent + 1, defined, depth - 1, most=2)
                self.row_vars.pop()
            self.in_loop -= 1
        elif kind in (16, 17):                            # while with a counter (on data or not)
            w = f"w{next(self.fresh)}"
            self.emit(indent, f"{w} = 0")
            cond = f"{w} < n" if kind == 16 else f"({self.data_cond(defined)}) and {w} < 3"
            self.emit(indent, f"while {cond}:")
            self.emit(indent + 1, f"{w} += 1")             # first, so that `continue` cannot loop forever
            self.loop_vars.append(w)
            self.in_loop += 1
            self.block(indent + 1, defined, depth - 1)
            self.in_loop -= 1
            self.loop_vars.pop()
        elif kind == 18:                                  # try / with blocks
            if self.chance(0.5):
                self.emit(indent, "try:")
                self.block(indent + 1, defined, depth - 1)
                self.emit(indent, "except ZeroDivisionError:\n    pass")
            else:
                self.emit(indent, "with np.errstate(all='ignore'):")
                self.block(indent + 1, defined, depth - 1)
        else:                                             # an early return
            cond = self.data_cond(defined) if self.chance(0.6) else self.py_cond(defined)
            self.emit(indent, f"if {cond}:")
            self.emit(indent + 1, self.ret(defined))
        return False

    def graph_break(self, indent: int, defined: set) -> None:
        e = lambda d=1: self.expr(defined, d)  # noqa: E731
        t = self.pick(LOCALS)
        kind = self.draw(st.integers(0, 10))
        if kind == 0:
            self.emit(indent, self.print_call(f"'sum', np.round({e()}.sum(), 6)"))
            return
        if kind == 1:
            extra = self.loop_vars[-1] if self.loop_vars else "n"
            self.emit(indent, self.print_call(f"'step', {extra}, {e()}.shape"))
            return
        if kind == 8:       # boolean-mask update of an existing array
            v = self.var(defined)
            self.emit(indent, f"{v}[{e()} > 0] = {self.scalar()}")
            return
        self.emit(indent, f"{t} = " + [
            None, None,
            lambda: f"{e()} * float({e()}.sum() > {MARGIN})",
            lambda: f"{e()} + 0.1 * np.count_nonzero({e()} > 0)",
            lambda: f"{e()} * (len(np.nonzero({e()} > 0)[0]) + 1)",
            lambda: f"np.asarray({e()}.tolist())",
            lambda: f"scipy.special.expit({e()})",
            lambda: f"{e()} * math.tanh(float({e()}.mean()))",
            None,
            lambda: f"np.{self.pick(['sort', 'cumsum'])}({e()}, axis=-1) * 0.5",
            lambda: f"{e()}.copy() + {e()}.max().item()",
        ][kind]())
        defined.add(t)


@st.composite
def programs(draw) -> tuple[str, Inputs]:
    """A program's source and the inputs of its six calls."""
    ndim = draw(st.integers(1, 2))
    gen = ProgramGen(draw, ndim)
    if gen.use_acc:
        gen.emit(1, "acc = []")
    defined, returned = gen.block(1, {"x", "y"}, depth=2, most=gen.budget, one_in=6)
    if not returned:
        gen.emit(1, gen.ret(defined))
    src = "def f(x, y, n):\n" + "\n".join(gen.lines) + "\n"
    dims = st.lists(st.integers(1, 5), min_size=ndim, max_size=ndim)
    inputs = Inputs(shape=tuple(draw(dims)), other=tuple(draw(dims)), n1=draw(st.integers(0, 4)),
                    n2=draw(st.integers(0, 4)), layout=draw(st.sampled_from(["C", "C", "T", "rev"])),
                    seed=draw(st.integers(0, 2**32 - 1)))
    return src, inputs
