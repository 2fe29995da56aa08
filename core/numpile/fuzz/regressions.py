"""Failing programs saved as regression tests: one self-contained pytest file per shrunk program.

The file holds the program's source, made into `f` by `make_function` after PRELUDE (the helpers
it calls) as the fuzzer ran it, its inputs written literally (values from a seed), and a test
that runs `check_program` with the backend that failed: it fails while the bug is there. Its name is a hash of backend, program and
inputs, so finding the same failure again does not save it twice.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from .check import Inputs

MESSAGE_LINES = 20  # of the mismatch, quoted in the file's header


def file_name(backend: str, source: str, inputs: Inputs) -> str:
    digest = hashlib.sha256(f"{backend}\n{source}\n{inputs!r}".encode()).hexdigest()[:12]
    return f"test_fuzz_{re.sub(r'[^0-9A-Za-z]', '_', backend)}_{digest}.py"


def render(backend: str, source: str, inputs: Inputs, message: str, command: str) -> str:
    lines = message.splitlines() or [""]
    quoted = "\n".join(f"# {line}".rstrip() for line in lines[:MESSAGE_LINES])
    if len(lines) > MESSAGE_LINES:
        quoted += f"\n# ... ({len(lines) - MESSAGE_LINES} more lines)"
    return (f'"""A program that backend {backend!r} compiles to something other than NumPy eager does.\n\n'
            f'Found by `{command}`; the test fails while the bug is there.\n"""\n'
            f"{quoted}\n\n"
            f"from numpile.fuzz.check import Inputs, check_program, make_function\n\n"
            f"# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it\n"
            f"f = make_function({_literal(source)})\n\n"
            f"INPUTS = {inputs!r}\n\n\n"
            f"def test_compiled_equals_numpy_eager():\n"
            f"    check_program(f, INPUTS, backend={backend!r})\n")


def _literal(source: str) -> str:
    """The program's source as a string literal that reads as the program."""
    if "'''" in source or "\\" in source:   # a backslash would be read as an escape
        return repr(source)
    return "'''\\\n" + source + "'''"


def save(save_dir: Path, backend: str, source: str, inputs: Inputs, message: str, command: str) -> tuple[Path, bool]:
    """Write the regression file unless it exists; returns its path and whether it is new."""
    path = Path(save_dir) / file_name(backend, source, inputs)
    if path.exists():
        return path, False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(backend, source, inputs, message, command))
    return path, True
