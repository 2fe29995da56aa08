"""The plugin module named by the entry point: offers the backend "debug"."""

from __future__ import annotations

import numpile

from .backend import DebugBackend


@numpile.hookimpl
def numpile_backends() -> list[numpile.Backend]:
    return [DebugBackend()]
