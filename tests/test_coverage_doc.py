"""docs/coverage.md is what `python -m numpile.coverage` generates from the registry today."""

import re
from pathlib import Path

import numpy as np
import pytest

from numpile import coverage

PAGE = Path(__file__).resolve().parents[1] / "docs" / "coverage.md"


def test_coverage_page_is_current():
    recorded = re.search(r"with NumPy (\S+);", PAGE.read_text()).group(1)
    if recorded != np.__version__:  # the lists of NumPy's own functions differ between versions
        pytest.skip(f"the page was generated with NumPy {recorded}, this is {np.__version__}")
    assert PAGE.read_text() == coverage.render(), "docs/coverage.md is stale: run `python -m numpile.coverage`"
