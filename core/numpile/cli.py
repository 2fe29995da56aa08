"""The `numpile` command: `numpile --version`, `numpile backends`, `numpile demo [ARGS]`,
`numpile export MODULE:FUNCTION --arg float32[8,784] ... [--dynamic 0] -o model.onnx`,
`numpile report TRACE_DIR [-o report.html]`."""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path

from . import plugins
from .version import __version__
from .exc import NumpileError


def backends_table(rows: list[plugins.BackendInfo]) -> str:
    """The backends as an aligned text table, one row each."""
    cells = [("name", "distribution", "version", "api", "available", "description")]
    cells += [(r.name, r.distribution, r.version, r.api_version, "yes" if r.available else f"no: {r.reason}",
               r.description) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def run_backends(args) -> int:
    print(backends_table(plugins.backend_table()))
    return 0


def run_demo(args) -> int:
    from . import demo  # imported only when asked for: nothing else needs it

    return demo.main(args.extra) or 0


def run_report(args) -> int:
    from . import report

    try:
        written = report.write(args.directory, args.output or Path(args.directory) / "report.html")
    except FileNotFoundError as e:
        print(f"numpile report: {e}", file=sys.stderr)
        return 1
    print(f"wrote {written}")
    return 0


_ARG = re.compile(r"^(\w+)\[([\d,\s]*)\]$")


def example_arg(spec: str, rng):
    """An example array from `float32[8,784]`: random values (never all zeros) of that dtype and shape."""
    import numpy as np
    m = _ARG.match(spec.strip())
    if not m:
        raise ValueError(f"--arg {spec!r}: expected DTYPE[DIM,...], e.g. float32[8,784]")
    dtype = np.dtype(m.group(1))
    shape = tuple(int(d) for d in m.group(2).split(",") if d.strip())
    if dtype.kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    return rng.integers(1, 10, size=shape).astype(dtype)


def target(spec: str):
    """MODULE:ATTRIBUTE[.ATTRIBUTE...]: a function or a model object, imported (the current
    directory first on the path)."""
    module_name, _, attrs = spec.partition(":")
    if not module_name or not attrs:
        raise ValueError(f"{spec!r}: expected MODULE:FUNCTION, e.g. mymodels:mlp")
    sys.path.insert(0, "")
    obj = importlib.import_module(module_name)
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def run_export(args) -> int:
    import numpy as np

    from .exporting import export
    rng = np.random.default_rng(0)
    examples = [example_arg(a, rng) for a in args.arg]
    dynamic = None
    if args.dynamic and examples:
        # dim d of the first argument, and of every other whose dim d has its size (the batch they
        # share), is one symbol: "batch" for dim 0
        names = {d: "batch" if d == 0 else f"dim{d}" for d in args.dynamic}
        first = examples[0]
        dynamic = [{d: names[d] for d in args.dynamic if d < x.ndim and d < first.ndim and x.shape[d] == first.shape[d]}
                   for x in examples]
    try:
        program = export(target(args.function), *examples, dynamic_shapes=dynamic, format=args.format)
    except NumpileError as e:   # what cannot be exported, and why: no traceback of numpile's own
        print(f"numpile export: {e}", file=sys.stderr)
        return 1
    program.save(args.output)
    print(f"wrote {args.output} ({args.format})")
    print(program.describe() if hasattr(program, "describe") else
          f"inputs: {program.input_names}\noutputs: {program.output_names}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="numpile", description="numpile: a JIT compiler for NumPy programs")
    parser.add_argument("--version", action="version", version=f"numpile {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    commands.add_parser("backends", help="list every backend: distribution, version, plugin API, availability") \
        .set_defaults(run=run_backends, passes_args_on=False)
    # the demo parses its own arguments (numpile demo --help)
    commands.add_parser("demo", help="run the tutorial's scenarios", add_help=False) \
        .set_defaults(run=run_demo, passes_args_on=True)
    exporting = commands.add_parser("export", help="export a function or model whole (numpile.export)")
    exporting.add_argument("function", help="MODULE:FUNCTION (or MODULE:MODEL_OBJECT)")
    exporting.add_argument("--arg", action="append", default=[], metavar="DTYPE[DIMS]",
                           help="an example argument, e.g. float32[8,784]; once per parameter, in order")
    exporting.add_argument("--dynamic", action="append", type=int, default=[], metavar="DIM",
                           help="leave dim DIM symbolic in the first argument and in every argument whose dim "
                                "DIM has the same example size (0: the batch)")
    exporting.add_argument("--format", default="onnx", help="the exporter (default: onnx)")
    exporting.add_argument("-o", "--output", required=True, help="the file to write")
    exporting.set_defaults(run=run_export, passes_args_on=False)
    reporting = commands.add_parser("report", help="a web page of the compiles recorded under NUMPILE_TRACE_DIR")
    reporting.add_argument("directory", help="the trace directory (NUMPILE_TRACE_DIR of the runs)")
    reporting.add_argument("-o", "--output", help="the page to write (default: DIRECTORY/report.html)")
    reporting.set_defaults(run=run_report, passes_args_on=False)
    args, extra = parser.parse_known_args(argv)
    args.extra = extra
    if args.extra and not args.passes_args_on:
        parser.error(f"unrecognized arguments: {' '.join(args.extra)}")
    return args.run(args)
