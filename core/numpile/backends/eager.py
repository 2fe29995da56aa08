"""The built-in backend "eager": runs the graph as the NumPy code it was captured from."""

from __future__ import annotations

from ..backend import Backend
from ..hookspecs import API_VERSION, hookimpl


class EagerBackend(Backend):
    name = "eager"
    description = "runs the graph with NumPy, as the uncompiled code would"
    # whatever NumPy does with the arrays it is given, CUDA arrays included (through
    # __array_ufunc__/__array_function__), eager does the same: it is every device's fallback
    devices = ("cpu", "cuda")
    supports_dynamic_shapes = True
    supports_loops = True
    supports_conditionals = True

    def compile(self, graph, example_inputs, options):
        return graph.compile_python()


@hookimpl
def numpile_backends() -> list[Backend]:
    return [EagerBackend()]


@hookimpl
def numpile_api_version() -> str:
    return API_VERSION  # built in: always the contract of the numpile it ships with
