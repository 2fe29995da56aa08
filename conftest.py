"""For every test of the repository (tests/ and plugins/*/tests): the compiled code is what runs.
The safety net (numpile/safety_net.py) would run an entry as Python after timing it on alternate
calls; tests time nothing, so it is off, except where tests/test_safety_net.py turns it on."""

import pytest

import numpile


@pytest.fixture(autouse=True)
def _compiled_code_runs(monkeypatch):
    monkeypatch.setattr(numpile.config, "safety_net", False)
