"""The plugin module named by the entry point: offers the backend "dask"."""

from __future__ import annotations

import numpile

from .backend import DaskBackend


@numpile.hookimpl
def numpile_backends() -> list[numpile.Backend]:
    return [DaskBackend()]


@numpile.hookimpl
def numpile_api_version() -> str:
    return "1.1"  # the plugin API (numpile.PLUGIN_API_VERSION) this plugin is written for
