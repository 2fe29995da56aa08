"""numpile's built-in backends, each a plugin module registered through the same hooks as any
installed plugin (see plugins.py), before the entry points."""

from . import eager

BUILTIN_PLUGINS = (eager,)
