"""numpile: a just-in-time compiler for NumPy programs with pluggable backends."""

__version__ = "0.1.0"

from . import config  # noqa: E402
from .api import ExplainOutput, GraphBreak, compile, disable, explain, export, reset  # noqa: E402
from .backend import (  # noqa: E402
    Backend, BackendUnavailableError, CallableBackend, Exporter, InvalidBackendError, InvalidExporterError,
)
from .exc import BackendCompilerFailed, NumpileError, Unsupported  # noqa: E402
from .graph import Graph, Node  # noqa: E402
from .hookspecs import API_VERSION as PLUGIN_API_VERSION, hookimpl, hookspec  # noqa: E402
from .logs import set_logs  # noqa: E402
from .plugins import BackendInfo, backend_info, backend_table, list_backends, register_backend  # noqa: E402
from .trace_log import set_trace_dir  # noqa: E402

__all__ = [
    "__version__", "config", "compile", "disable", "explain", "export", "reset", "set_logs", "set_trace_dir",
    "ExplainOutput", "GraphBreak", "Graph", "Node",
    "NumpileError", "Unsupported", "BackendCompilerFailed",
    "InvalidBackendError", "BackendUnavailableError", "InvalidExporterError",
    "Backend", "CallableBackend", "Exporter", "BackendInfo",
    "PLUGIN_API_VERSION", "hookimpl", "hookspec", "list_backends", "backend_info", "backend_table", "register_backend",
]

from .logs import from_environment as _logs_from_environment  # noqa: E402
from .trace_log import from_environment as _trace_from_environment  # noqa: E402

_logs_from_environment()
_trace_from_environment()
