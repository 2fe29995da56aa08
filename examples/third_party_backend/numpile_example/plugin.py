"""The module the entry point names: numpile calls its hook implementations.

Keep it cheap to import: numpile imports every plugin on its first backend
lookup, whichever backend the user asked for.
"""

from __future__ import annotations

import numpile

from .backend import ExampleBackend


@numpile.hookimpl
def numpile_backends() -> list[numpile.Backend]:
    return [ExampleBackend()]
