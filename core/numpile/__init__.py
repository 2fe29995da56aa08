"""numpile: a just-in-time compiler for NumPy programs with pluggable backends."""

from . import config
from .api import ExplainOutput, GraphBreak, compile, disable, explain, export, reset
from .backend import (
    Backend, BackendUnavailableError, CallableBackend, Exporter, InvalidBackendError, InvalidExporterError,
)
from .exc import BackendCompilerFailed, NumpileError, Unsupported
from .graph import Graph, Node
from .hookspecs import API_VERSION as PLUGIN_API_VERSION, hookimpl, hookspec
from .logs import from_environment as _logs_from_environment, set_logs
from .plugins import BackendInfo, backend_info, backend_table, list_backends, register_backend
from .trace_log import from_environment as _trace_from_environment, set_trace_dir
from .version import __version__

__all__ = [
    "__version__", "config", "compile", "disable", "explain", "export", "reset", "set_logs", "set_trace_dir",
    "ExplainOutput", "GraphBreak", "Graph", "Node",
    "NumpileError", "Unsupported", "BackendCompilerFailed",
    "InvalidBackendError", "BackendUnavailableError", "InvalidExporterError",
    "Backend", "CallableBackend", "Exporter", "BackendInfo",
    "PLUGIN_API_VERSION", "hookimpl", "hookspec", "list_backends", "backend_info", "backend_table", "register_backend",
]

_logs_from_environment()
_trace_from_environment()
