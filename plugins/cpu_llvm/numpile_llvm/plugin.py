"""What numpile loads through the entry point: the backend, cheap to import (llvmlite loads on first compile)."""

from __future__ import annotations

import numpile

from .backend import LLVMBackend


@numpile.hookimpl
def numpile_backends():
    return [LLVMBackend()]


@numpile.hookimpl
def numpile_api_version() -> str:
    return "1.1"  # the plugin API (numpile.PLUGIN_API_VERSION) this plugin is written for
