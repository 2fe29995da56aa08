"""The plugin module named by the entry point: offers the exporter "onnx" and the backend "onnxrt"."""

from __future__ import annotations

import numpile

from .backend import OnnxrtBackend
from .program import OnnxExporter


@numpile.hookimpl
def numpile_backends() -> list[numpile.Backend]:
    return [OnnxrtBackend()]


@numpile.hookimpl
def numpile_exporters() -> list[numpile.Exporter]:
    return [OnnxExporter()]


@numpile.hookimpl
def numpile_api_version() -> str:
    return "1.1"  # the plugin API (numpile.PLUGIN_API_VERSION) this plugin is written for
