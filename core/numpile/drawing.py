"""Pictures of what `numpile.explain` captured: each graph with its ops, the fused kernels the
lowering toolkit makes of it, and the graph breaks between graphs, each with its reason and the
user's source line.

`to_dot(report)` writes Graphviz's DOT language; `draw(report, path)` renders it to an SVG through
the `graphviz` package when it and Graphviz's `dot` are installed, and otherwise writes the text
picture, `to_text(report)`, beside it. A compile entry is one "segment": the graph captured (or
none) and the break that ended it (or none); segments are drawn in compile order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from .graph import Graph

_BREAK_STYLE = 'shape=box, style="rounded,filled", fillcolor="#fde2e1", color="#c0392b"'
_KERNEL_STYLE = 'shape=box, style="rounded,filled", fillcolor="#e3f0fb"'
_EXTERN_STYLE = 'shape=box, style="rounded,dashed"'


def kernels_of(graph: Graph) -> list[tuple[str, list[str], list[str], list[str]]]:
    """(step name, ops it runs, buffers read, buffers written) per step of the graph's fused
    program, as numpile.lowering schedules it; [] when the graph cannot be lowered here."""
    from .lowering import Kernel, schedule, walk
    from .lowering.ir import Call

    try:
        program = schedule(graph)
    except Exception:  # a graph with decisions its trace did not guard: drawn without kernels
        return []
    steps = []
    for step in program.steps:
        if isinstance(step, Kernel):
            ops = list(dict.fromkeys(op for s in step.stages for op in (
                *(e.op for e in walk(s.value) if isinstance(e, Call)), s.reduce, s.scan) if op))
            steps.append((step.name, ops, step.inputs, step.outputs))
        else:
            reads = [str(a) for a in step.args if hasattr(a, "name")]
            steps.append((f"extern {step.op}", [step.op], reads, list(step.outputs)))
    return steps


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _where(brk) -> str:
    return f"{brk.loc}: {brk.loc.line}" if brk.loc is not None else "<unknown place>"


def to_dot(report) -> str:
    """The report as a DOT digraph: a cluster per graph (its nodes and, beside them, its fused
    kernels), and a red box per graph break, linked in compile order."""
    lines = ["digraph numpile {", "  rankdir=TB; compound=true; node [fontname=Helvetica, fontsize=10];"]
    after_break = None  # the break box the next segment resumes from
    for i, (graph, brk) in enumerate(report.segments):
        first = None
        if graph is not None:
            first = f"g{i}_{graph.nodes[0].name}"
            lines += _graph_cluster(i, graph)
        if brk is not None:
            label = f"graph break: {brk.reason}\n{_where(brk)}"
            lines.append(f"  b{i} [label={_quote(label)}, {_BREAK_STYLE}];")
            if first is not None:
                lines.append(f'  {first} -> b{i} [ltail=cluster_g{i}, style=bold, color="#c0392b"];')
        if after_break is not None:
            lines.append(f'  {after_break} -> {first or f"b{i}"} [style=dashed, label="resumes"];')
        after_break = f"b{i}" if brk is not None else None
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_text(report) -> str:
    """The text picture: per graph its ops and fused kernels, and each break with its line."""
    out = []
    for i, (graph, brk) in enumerate(report.segments):
        if graph is not None:
            inputs = ", ".join(n.name for n in graph.inputs) or "(no inputs)"
            outputs = ", ".join(getattr(v, "name", repr(v)) for v in graph.outputs)
            out.append(f"[graph {i + 1}] {inputs} -> {outputs}  ({len(graph.calls)} ops)")
            kernels = kernels_of(graph)
            out += [f"    {name}: {', '.join(ops)}   ({', '.join(reads)} -> {', '.join(writes)})"
                    for name, ops, reads, writes in kernels]
            if not kernels:
                out.append(f"    ops: {', '.join(n.target for n in graph.calls)}")
        if brk is not None:
            out.append(f"  x graph break: {brk.reason}")
            out.append(f"    at {_where(brk)}")
    return "\n".join(out) + "\n"


def draw(report, path) -> Path:
    """Render the report's picture to `path` (.svg through Graphviz when the `graphviz` package
    and the `dot` program are installed; else the text picture at `path` with the suffix .txt).
    Returns the file written."""
    path = Path(path)
    try:
        import graphviz
    except ImportError:
        graphviz = None
    if graphviz is not None and shutil.which("dot"):
        svg = graphviz.Source(to_dot(report)).pipe(format="svg")
        path.with_suffix(".svg").write_bytes(svg)
        return path.with_suffix(".svg")
    path.with_suffix(".txt").write_text(to_text(report))
    return path.with_suffix(".txt")


def _graph_cluster(i: int, graph: Graph) -> list[str]:
    """DOT lines of graph i: its nodes and edges, and beside them its fused kernels."""
    lines = [f"  subgraph cluster_g{i} {{", f"    label={_quote(f'graph {i + 1}: {len(graph.calls)} ops')};"]
    for n in graph.nodes:
        label = n.name if n.op in ("input", "output") else f"{n.name} = {n.target}"
        if n.op != "output" and "shape" in n.meta:
            label += f"\n{n.dtype}{list(n.shape)}"
        shape = {"input": "ellipse", "output": "plaintext", "constant": "note"}.get(n.op, "box")
        lines.append(f"    g{i}_{n.name} [label={_quote(label)}, shape={shape}];")
        sources = n.inputs if n.op != "output" else [v for v in n.args[0] if hasattr(v, "op")]
        lines += [f"    g{i}_{src.name} -> g{i}_{n.name};" for src in sources]
    kernels = kernels_of(graph)
    if kernels:
        lines.append(f"    subgraph cluster_k{i} {{ label={_quote('fused kernels')}; style=dashed;")
        for k, (name, ops, reads, writes) in enumerate(kernels):
            style = _KERNEL_STYLE if not name.startswith("extern") else _EXTERN_STYLE
            text = f"{name}\n{', '.join(ops)}\n{', '.join(reads)} -> {', '.join(writes)}"
            lines.append(f"      k{i}_{k} [label={_quote(text)}, {style}];")
            if k:
                lines.append(f"      k{i}_{k - 1} -> k{i}_{k} [style=dotted];")
        lines.append("    }")
    return lines + ["  }"]
