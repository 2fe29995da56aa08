"""The `numpile` command: `numpile --version`, `numpile backends`, `numpile demo [ARGS]`."""

from __future__ import annotations

import argparse

from . import __version__, plugins


def backends_table(rows: list[plugins.BackendInfo]) -> str:
    """The backends as an aligned text table, one row each."""
    cells = [("name", "distribution", "version", "api", "available", "description")]
    cells += [(r.name, r.distribution, r.version, r.api_version, "yes" if r.available else f"no: {r.reason}",
               r.description) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def run_backends(extra_args: list[str]) -> int:
    print(backends_table(plugins.backend_table()))
    return 0


def run_demo(extra_args: list[str]) -> int:
    from . import demo  # imported only when asked for: nothing else needs it

    return demo.main(extra_args) or 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="numpile", description="numpile: a JIT compiler for NumPy programs")
    parser.add_argument("--version", action="version", version=f"numpile {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)
    commands.add_parser("backends", help="list every backend: distribution, version, plugin API, availability") \
        .set_defaults(run=run_backends, passes_args_on=False)
    # the demo parses its own arguments (numpile demo --help)
    commands.add_parser("demo", help="run the tutorial's scenarios", add_help=False) \
        .set_defaults(run=run_demo, passes_args_on=True)
    args, extra_args = parser.parse_known_args(argv)
    if extra_args and not args.passes_args_on:
        parser.error(f"unrecognized arguments: {' '.join(extra_args)}")
    return args.run(extra_args)
