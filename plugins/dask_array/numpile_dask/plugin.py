"""The plugin module named by the entry point: offers the backend "dask"."""

from __future__ import annotations

import numpile

from .backend import DaskBackend


@numpile.hookimpl
def numpile_backends() -> list[numpile.Backend]:
    return [DaskBackend()]
