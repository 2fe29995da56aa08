"""`python -m numpile.testing --backend NAME`: the conformance kit on a backend, with its per-op report."""

from __future__ import annotations

import argparse
import sys

from ..exc import NumpileError
from .kit import PROGRAMS, run_kit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numpile.testing", description=(
        "numpile's conformance kit: every op as a one-op graph, then random multi-op programs, "
        "compiled by the backend and compared with NumPy."))
    parser.add_argument("--backend", required=True, help="a registered backend (`numpile backends` lists them)")
    parser.add_argument("--programs", type=int, default=PROGRAMS,
                        help=f"random programs to run (default {PROGRAMS}; 0: the one-op cases alone)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random programs (default 0)")
    parser.add_argument("--ops", help="only the cases of these ops, comma-separated")
    args = parser.parse_args(argv)
    try:
        report = run_kit(args.backend, programs=args.programs, seed=args.seed,
                         ops=args.ops.split(",") if args.ops else None)
    except (NumpileError, ImportError) as e:
        print(f"python -m numpile.testing: {e}", file=sys.stderr)
        return 2
    print(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
