"""The module the entry point names: numpile calls its hook implementations.

Keep it cheap to import: numpile imports every plugin on its first backend
lookup, whichever backend the user asked for.
"""

from __future__ import annotations

import numpile

from .backend import ExampleBackend


@numpile.hookimpl
def numpile_backends() -> list[numpile.Backend]:
    return [ExampleBackend()]


@numpile.hookimpl
def numpile_api_version() -> str:
    return "1.1"  # the plugin API (numpile.PLUGIN_API_VERSION) this plugin is written for
