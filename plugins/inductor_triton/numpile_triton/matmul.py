"""matmul and dot of two float32 matrices as a Triton template: a tiled product (tl.dot, float32
accumulation) whose epilogue is the pointwise kernel that follows the product in the Program (a
bias, a ReLU, a scale, a cast), so that the product goes from registers to its consumer's output
instead of to memory, back, and out again, in one launch instead of a cuBLAS call and a kernel.

The scheduler makes every matmul an Extern; `with_templates` rewrites a Program afterwards: an
Extern matmul (or dot) of two 2-D float32 buffers of static shape becomes a `MatmulKernel`, which
swallows the next step when that is a pointwise kernel over the product's shape reading the product
only element for element, and nothing else reads the product. The epilogue's stages are rendered by
kernel.Renderer over the output tile, the product's loads answered by the accumulator.

[Note: precision] NumPy's float32 matmul accumulates in float32 (BLAS's sgemm): so does the
template, with `input_precision="ieee"`. TF32 (Triton's default for a float32 dot on tensor cores)
rounds the operands to 10 bits of mantissa, about 3e-4 relative, over numpile's 1e-5 float32
tolerance. float64 stays cuBLAS's (its DGEMM runs on the fp64 tensor cores), and so do float16,
integers, batched and symbolic shapes.

[Note: template or cuBLAS] `use_template` decides by the product's size, from
`benchmarks/gpu.py --matmul` on the H100 (`np.maximum(x @ w + b, 0)`, float32, device time, two
runs): the template won up to 2**31 multiply-adds (128^3: 7-9 µs against 13-83 for cuBLAS and the
epilogue kernel; 512^3: 17-21 against 85-110; 16x4096x4096: 74 against 94; 1024^3: 58-59 against
68-102; 1024x2048x1024: 105 against 108-113) and lost from 2**32 on (2048x2048x1024: 205 against
186; the MLP's layers, 4096x1024x4096 and 4096x4096x1024: 788 and 803 against 685 and 736). There
cuBLAS's sgemm runs at 46-50 TFLOP/s and Triton's float32 FMA dot at 42-44 whatever the tiles
(max-autotune found nothing faster), more than fusing the epilogue saves. A product whose tiles
fill less than half the SMs (few rows and columns) along a long K (NPBench mlp's 8x30000 @
30000x2000: 63 tiles, each walking K in 938 steps of 32) stays cuBLAS's too, which splits K over
the SMs: the template ran mlp at 0.72x CuPy eager on the H200.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numpile.lowering import Affine, BufferArg, Extern, Kernel, Load, Program, Stage, walk

from .kernel import KernelPlan, Renderer, IndexSpace, next_power_of_2, plan
from .plans import reads
from .scalar import F32, Unlowerable, Val

OPS = ("matmul", "dot")
SMS = 132   # streaming multiprocessors of the H100 and the H200: programs that run at once
TILE = (Affine.var(0), Affine.var(1))   # an element of the product, as the epilogue indexes it


@dataclass
class MatmulKernel(Kernel):
    """`product = operands[0] @ operands[1]` tiled, each tile then run through the stages (the
    fused epilogue; a lone matmul has one stage storing the product)."""

    operands: tuple = ()
    product: str = ""
    k: int = 0

    def __str__(self) -> str:
        m, n = self.outer[0], self.stages[0].inner[0]
        head = f"kernel {self.name} tiles {self.product}[i0<{m}, i1<{n}] = matmul({', '.join(self.operands)}) " \
               f"over k<{self.k}, then:"
        return "\n".join([head] + super().__str__().splitlines()[1:])


# the longest product along K a template takes while its tiles leave SMs idle (the Note)
SHORT_K = 1024


def use_template(m: int, n: int, k: int) -> bool:
    """Whether the template beats cuBLAS and a separate epilogue kernel at this shape (the Note)."""
    blocks, _ = heuristic(m, n, k)
    filled = grid(m, n, blocks)[0] >= SMS // 2
    return m * n * k <= 1 << 31 and (filled or k <= SHORT_K)


def with_templates(program: Program, renders) -> Program:
    """`program` with each matmul `use_template` picks as a MatmulKernel, its epilogue fused where
    the next step is one; `renders(template)` says whether a template has a Triton form (else the
    matmul stays an Extern)."""
    steps, fused = [], set()
    for i, step in enumerate(program.steps):
        if i in fused:
            continue
        shapes = _matrices(program, step)
        template = None
        if shapes is not None and use_template(*shapes):
            after = program.steps[i + 1] if i + 1 < len(program.steps) else None
            tries = [after, None] if _is_epilogue(program, step.output, after) else [None]
            template = next((t for t in (_template(program, step, e, f"matmul{i}") for e in tries) if renders(t)), None)
        steps.append(template or step)
        if template is not None and template.product not in template.outputs:   # the next step is its epilogue
            fused.add(i + 1)
    return Program(program.buffers, program.inputs, steps, program.outputs, program.symbols)


def _matrices(program: Program, step) -> tuple | None:
    """(M, N, K) of a matmul the template computes, or None."""
    if not (isinstance(step, Extern) and step.op in OPS and len(step.args) == 2 and not step.kwargs
            and all(isinstance(a, BufferArg) for a in step.args)):
        return None
    a, b = (program.buffers[x.name] for x in step.args)
    if not (a.dtype == b.dtype == F32 and len(a.shape) == len(b.shape) == 2
            and all(type(d) is int for d in (*a.shape, *b.shape))):
        return None
    return a.shape[0], b.shape[1], a.shape[1]


def _is_epilogue(program: Program, product: str, step) -> bool:
    """Whether `step` can run on the product's tiles: a pointwise kernel over its shape that reads
    it only element for element, the product read by no other step and not returned."""
    if not isinstance(step, Kernel) or product in program.outputs or any(s.reduce or s.scan for s in step.stages):
        return False
    shape = program.buffers[product].shape
    try:
        pointwise = plan(step, program).mode == "pointwise"
    except Unlowerable:
        return False
    if not pointwise or tuple(step.outer) + tuple(step.stages[0].inner) != shape:
        return False
    loads = [e for s in step.stages for e in walk(s.value) if isinstance(e, Load) and e.buffer == product]
    if not loads or any(tuple(e.index) != TILE for e in loads) or product in step.outputs:
        return False
    later = program.steps[program.steps.index(step) + 1:]
    return not any(product in reads(s) for s in later)


def _template(program: Program, step: Extern, epilogue: Kernel | None, name: str) -> MatmulKernel:
    m, n = program.buffers[step.output].shape
    stages = epilogue.stages if epilogue is not None else \
        [Stage((n,), Load(step.output, TILE, F32), output=step.output, output_index=TILE)]
    return MatmulKernel(name, (m,), stages, operands=tuple(a.name for a in step.args), product=step.output,
                        k=program.buffers[step.args[0].name].shape[1])


def matmul_plan(kernel: MatmulKernel, program: Program) -> KernelPlan:
    """The template's plan: its operands, then the epilogue's other buffers; rows M, cols (N, K)."""
    arrays = dict.fromkeys([*kernel.operands, *(b for b in kernel.inputs if b != kernel.product), *kernel.outputs])
    return KernelPlan(kernel, "matmul", list(arrays), rows=kernel.outer[0], cols=[kernel.stages[0].inner[0], kernel.k])


# rows and columns past the matrix's edge load a row or column inside it (wrapped: no mask), and are
# never stored; only the last step along K masks
_PRODUCT = """\
pid = {pid}
programs_m = tl.cdiv({m}, BLOCK_M)
programs_n = tl.cdiv({n}, BLOCK_N)
# grouped order: GROUP_M rows of tiles in turn, so that the columns of B they share stay in L2
width = GROUP_M * programs_n
first = pid // width * GROUP_M
height = tl.minimum(programs_m - first, GROUP_M)
pid_m = first + pid % width % height
pid_n = pid % width // height
rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)[:, None]
rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
rk = tl.arange(0, BLOCK_K)
mmask = rm < {m}
nmask = rn < {n}
mask = mmask & nmask
a_ptrs = {a} + rm % {m} * {k} + rk[None, :]
b_ptrs = {b} + rk[:, None] * {n} + rn % {n}
acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
for start in range(0, {k}, BLOCK_K):
    x = tl.load(a_ptrs, mask=rk[None, :] < {k} - start, other=0.0)
    y = tl.load(b_ptrs, mask=rk[:, None] < {k} - start, other=0.0)
    acc = tl.dot(x, y, acc, input_precision="ieee")
    a_ptrs += BLOCK_K
    b_ptrs += BLOCK_K * {n}"""


class MatmulRenderer(Renderer):
    """The template: the tiled product into `acc`, then the epilogue's stages over the tile."""

    def body(self) -> None:
        kp, kernel = self.kp, self.kp.kernel
        m, n, k = (self.size(s) for s in (kp.rows, *kp.cols))
        a, b = (self.pointers[o] for o in kernel.operands)
        pid = "tl.program_id(0).to(tl.int64)" if self.int64 else "tl.program_id(0)"
        for line in _PRODUCT.format(pid=pid, m=m, n=n, k=k, a=a, b=b).splitlines():
            self.emit(line)
        space = IndexSpace({0: "rm", 1: "rn"}, frozenset({0}), "mmask", "nmask", "mask", "rm * 0 + rn * 0")
        self.spaces.append(space)
        self.stored[(kernel.product, str(tuple(map(str, TILE))), id(space))] = Val("acc", F32)
        for stage in kernel.stages:
            self._store(stage, self.value(stage.value, space), space)

    def launch_params(self) -> list[str]:
        return [f"{c}: tl.constexpr" for c in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "GROUP_M")]


# (BLOCK_M, BLOCK_N, BLOCK_K, warps) max-autotune times besides the heuristic's; tl.dot needs 16 at least
TILES = ((16, 16, 16, 1), (32, 32, 32, 4), (64, 32, 32, 4), (64, 64, 16, 4), (64, 64, 32, 4), (128, 64, 32, 4),
         (128, 64, 32, 8), (64, 128, 32, 4), (128, 128, 16, 8), (128, 128, 32, 8))


def heuristic(m: int, n: int, k: int) -> tuple[dict, int]:
    """Block sizes and warps from the shape: 128x128 tiles where the matrix fills them, the larger
    side halved (down to 32) while fewer tiles than SMS would run (16x4096x4096 in 32 tiles of
    16x128 took 118 µs on the H100, in 128 of 16x32 74, cuBLAS 94); 4 warps up to 64x64 tiles, 8
    above (what max-autotune chose at 128^3, 512^3, 16x4096x4096 and 1024^3)."""
    bm, bn = (max(16, min(128, next_power_of_2(d))) for d in (m, n))
    while math.ceil(m / bm) * math.ceil(n / bn) < SMS and max(bm, bn) > 32:
        bm, bn = (bm // 2, bn) if bm >= bn else (bm, bn // 2)
    return {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": max(16, min(32, next_power_of_2(k))), "GROUP_M": 8}, \
        4 if bm * bn <= 64 * 64 else 8


def candidates(m: int, n: int, k: int) -> list[tuple[dict, int]]:
    tiles = [({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8}, w) for bm, bn, bk, w in TILES]
    return [heuristic(m, n, k)] + [t for t in tiles if t != heuristic(m, n, k)]


def grid(m: int, n: int, blocks: dict) -> tuple:
    return (math.ceil(m / blocks["BLOCK_M"]) * math.ceil(n / blocks["BLOCK_N"]),)

