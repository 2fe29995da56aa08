"""`python -m numpile.fuzz --backend NAME --minutes N`: fuzz a backend against NumPy eager.

Prints progress after each batch, each mismatch with the regression file it was saved as, and
last one line, "N programs, M ops, K mismatches"; exits 1 when mismatches were found.

`python -m numpile.fuzz --soak MINUTES --backend NAME [--threads N]`: the soak (soak.py): prints
each failure and last its counts; exits 1 when anything failed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import plugins
from ..exc import NumpileError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numpile.fuzz", description=(
        "Differential fuzzing: hypothesis writes random NumPy programs, the backend compiles them, "
        "NumPy eager is the oracle. Each shrunk failing program is saved as a pytest file."))
    parser.add_argument("--backend", default="eager", help="a registered backend (`numpile backends` lists them)")
    parser.add_argument("--minutes", type=float, help="wall-clock budget (default: 1 minute, unless --examples)")
    parser.add_argument("--examples", type=int, help="stop after this many programs")
    parser.add_argument("--seed", type=int, help="seed of the run, to repeat it (default: random, printed)")
    parser.add_argument("--shrink-seconds", type=float, default=60.0,
                        help="how long hypothesis may shrink each failing program (default: 60)")
    parser.add_argument("--save-dir", type=Path, default=Path("tests/regressions"),
                        help="where failing programs are saved as test files (default: tests/regressions)")
    parser.add_argument("--soak", type=float, metavar="MINUTES",
                        help="instead: two processes of many threads calling compiled functions for MINUTES")
    parser.add_argument("--threads", type=int, default=8, help="threads of each soak process (default: 8)")
    args = parser.parse_args(argv)
    if args.soak is not None:
        return _soak(args)
    try:
        import hypothesis  # noqa: F401
        import scipy.special  # noqa: F401  (programs call it)
    except ImportError as e:
        print(f"python -m numpile.fuzz needs {e.name}, which is not installed: pip install 'numpile[fuzz]'",
              file=sys.stderr)
        return 2
    from .runner import fuzz

    try:
        plugins.lookup(args.backend)
    except NumpileError as e:
        print(f"python -m numpile.fuzz: {e}", file=sys.stderr)
        return 2
    minutes = 1.0 if args.minutes is None and args.examples is None else args.minutes
    report = fuzz(args.backend, minutes=minutes, examples=args.examples, seed=args.seed,
                  shrink_seconds=args.shrink_seconds, save_dir=args.save_dir,
                  log=lambda line: print(line, flush=True))
    if report.interrupted:
        print("interrupted")
    print(report.summary())
    return 1 if report.mismatches else 0


def _soak(args) -> int:
    from .soak import soak
    try:
        plugins.lookup(args.backend)
    except NumpileError as e:
        print(f"python -m numpile.fuzz: {e}", file=sys.stderr)
        return 2
    report = soak(args.backend, args.soak, threads=args.threads, seed=args.seed or 0)
    for failure in report.failures:
        print(failure)
    print(report.curves())
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
