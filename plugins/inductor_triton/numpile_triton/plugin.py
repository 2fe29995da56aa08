"""What numpile loads through the entry point: the backend, cheap to import (torch and triton load
on first use)."""

from __future__ import annotations

import numpile

from .backend import TritonBackend


@numpile.hookimpl
def numpile_backends() -> list[numpile.Backend]:
    return [TritonBackend()]


@numpile.hookimpl
def numpile_api_version() -> str:
    return "1.1"  # the plugin API (numpile.PLUGIN_API_VERSION) this plugin is written for
